<?php

declare(strict_types=1);

namespace Gable\Tests;

/**
 * A real HTTP receiver for the tests: `php -S 127.0.0.1:0 receiver-router.php` in a child process
 * (the test process is single-threaded, so it cannot serve while it waits on Gable), which
 * records every request it gets in a temporary directory.
 */
final class Receiver
{
    public readonly string $url;
    private string $dir;
    /** @var resource */
    private $process;

    public function __construct()
    {
        $this->dir = sys_get_temp_dir() . '/gable-php-receiver-' . bin2hex(random_bytes(6));
        mkdir($this->dir);
        $log = "{$this->dir}/server.log";
        $this->process = proc_open(
            [PHP_BINARY, '-S', '127.0.0.1:0', __DIR__ . '/receiver-router.php'],
            [0 => ['file', '/dev/null', 'r'], 1 => ['file', $log, 'a'], 2 => ['file', $log, 'a']],
            $pipes,
            null,
            getenv() + ['GABLE_RECEIVER_DIR' => $this->dir],
        );
        // Port 0: the server picks a free port and prints it ("… (http://127.0.0.1:PORT) started").
        $deadline = microtime(true) + 10;
        while (!preg_match('#\((http://127\.0\.0\.1:\d+)\) started#', (string) @file_get_contents($log), $m)) {
            if (microtime(true) > $deadline || !proc_get_status($this->process)['running']) {
                $this->stop();
                throw new \RuntimeException('the receiver did not start: ' . @file_get_contents($log));
            }
            usleep(20_000);
        }
        $this->url = $m[1];
    }

    /**
     * The requests received so far, oldest first.
     *
     * @return list<array{method: string, path: string, headers: array<string, string>, body: string}>
     */
    public function requests(): array
    {
        $files = glob("{$this->dir}/*.json");
        sort($files);

        return array_map(static function (string $file): array {
            $r = json_decode(file_get_contents($file), true, 512, JSON_THROW_ON_ERROR);
            $r['body'] = base64_decode($r['body']);

            return $r;
        }, $files);
    }

    /** The first request to $path, waiting for it up to $seconds. */
    public function waitFor(string $path, float $seconds): ?array
    {
        $deadline = microtime(true) + $seconds;
        do {
            foreach ($this->requests() as $request) {
                if ($request['path'] === $path) {
                    return $request;
                }
            }
            usleep(100_000);
        } while (microtime(true) < $deadline);

        return null;
    }

    public function stop(): void
    {
        if (is_resource($this->process)) {
            proc_terminate($this->process);
            proc_close($this->process);
        }
        array_map('unlink', glob("{$this->dir}/*") ?: []);
        @rmdir($this->dir);
    }
}
