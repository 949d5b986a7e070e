<?php

declare(strict_types=1);

namespace Gable\Exception;

/**
 * 409: a state transition not allowed now, a conflict with other records, or an
 * `Idempotency-Key` whose first request is still running (`idempotency_key_in_use`: retry it
 * later). A key reused for a different request is an IdempotencyException (422).
 */
class ConflictException extends GableException
{
}
