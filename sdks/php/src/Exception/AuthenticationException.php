<?php

declare(strict_types=1);

namespace Gable\Exception;

/** 401: no credential, an unknown one, or the other environment's. */
class AuthenticationException extends GableException
{
}
