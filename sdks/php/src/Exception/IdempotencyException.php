<?php

declare(strict_types=1);

namespace Gable\Exception;

/**
 * 422 `idempotency_key_reused`: the `Idempotency-Key` was already used for a different request
 * (another body, path or method). Use a fresh key for a new request.
 */
class IdempotencyException extends GableException
{
}
