<?php

declare(strict_types=1);

namespace Gable\Exception;

/** A webhook delivery that is not from Gable, was changed, or is too old to trust. */
class SignatureVerificationException extends GableException
{
    public function __construct(string $message)
    {
        parent::__construct(0, 'signature_verification_failed', $message);
    }
}
