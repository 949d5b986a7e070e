<?php

declare(strict_types=1);

namespace Gable\Exception;

/** 429, after the retries ran out. */
class RateLimitException extends GableException
{
}
