<?php

declare(strict_types=1);

namespace Gable\Exception;

/** 404: no such record (or not in this tenant). */
class NotFoundException extends GableException
{
}
