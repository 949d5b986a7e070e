<?php

declare(strict_types=1);

namespace Gable\Exception;

/** 409: a state transition not allowed now, an idempotency key in use, a conflict with other records. */
class ConflictException extends GableException
{
}
