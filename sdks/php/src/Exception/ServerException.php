<?php

declare(strict_types=1);

namespace Gable\Exception;

/** 5xx, after the retries ran out. */
class ServerException extends GableException
{
}
