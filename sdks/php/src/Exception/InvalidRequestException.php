<?php

declare(strict_types=1);

namespace Gable\Exception;

/** 400: the request is malformed or a field is invalid ($param names it). */
class InvalidRequestException extends GableException
{
}
