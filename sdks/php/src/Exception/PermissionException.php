<?php

declare(strict_types=1);

namespace Gable\Exception;

/** 403: the credential lacks the scope (or the property) this needs. */
class PermissionException extends GableException
{
}
