<?php

declare(strict_types=1);

// The kit without Composer (Packagist is out of reach here), plus the tests' HTTP receiver.
require __DIR__ . '/../autoload.php';
require __DIR__ . '/Receiver.php';
