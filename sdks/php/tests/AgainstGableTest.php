<?php

declare(strict_types=1);

namespace Gable\Tests;

use Gable\Client;
use Gable\Exception\AuthenticationException;
use Gable\Exception\ConflictException;
use Gable\Exception\GableException;
use Gable\Exception\IdempotencyException;
use Gable\Exception\InvalidRequestException;
use Gable\Exception\NotFoundException;
use Gable\Exception\RateLimitException;
use Gable\Exception\SignatureVerificationException;
use Gable\Webhook;
use PHPUnit\Framework\TestCase;

/**
 * The kit against a real Gable (started by sdks/run.sh, which exports GABLE_SANDBOX_URL and
 * GABLE_TEST_KEY: a sandbox key with every scope).
 */
final class AgainstGableTest extends TestCase
{
    private const ADDRESS = ['line1' => '1 Kit Street', 'city' => 'Portland', 'country' => 'US'];

    private static Client $g;
    private static string $run;
    private static array $property;

    public static function setUpBeforeClass(): void
    {
        self::$run = bin2hex(random_bytes(4));
        self::$g = self::client();
        self::$property = self::$g->properties->create(['name' => 'Kit Court ' . self::$run, 'kind' => 'residential', 'address' => self::ADDRESS]);
    }

    /** Every collection has a record path, /v1/{name}/{id}; nothing else has one. */
    public function testTheCollectionsAreTheServedDescriptions(): void
    {
        $described = [];
        foreach (array_keys(self::$g->request('GET', '/openapi.json')['paths']) as $path) {
            if (preg_match('#^/v1/([a-z-]+)/\{id\}$#', $path, $m) === 1) {
                $described[] = $m[1];
            }
        }
        $this->assertNotEmpty($described);
        $kit = array_values(Client::COLLECTIONS);
        sort($described);
        sort($kit);
        $this->assertSame($described, $kit, 'the list is generated from the registry: run `make generate`');
    }

    public function testCreateListWithAutoPaginationAndFilters(): void
    {
        $g = self::$g;
        $own = $g->properties->create(['name' => 'Paging Court ' . self::$run, 'kind' => 'residential', 'address' => self::ADDRESS]);
        $made = [];
        for ($i = 0; $i < 5; $i++) {
            $made[] = $g->units->create(['property_id' => $own['id'], 'number' => self::$run . "-{$i}", 'bedrooms' => $i % 2]);
        }

        $seen = iterator_to_array($g->units->list(filters: ['property_id' => $own['id']], limit: 2, sort: 'number'));
        $this->assertSame(array_column($made, 'id'), array_column($seen, 'id'), 'three pages of two, in order');

        $twoBeds = iterator_to_array($g->units->list(filters: ['property_id' => $own['id'], 'bedrooms' => 1], fields: ['id', 'bedrooms']), false);
        $this->assertCount(2, $twoBeds);
        foreach ($twoBeds as $unit) {
            $this->assertSame([], array_diff(array_keys($unit), ['id', 'bedrooms', 'object']), json_encode($unit));
            $this->assertSame(1, $unit['bedrooms']);
        }

        $page = $g->units->page(filters: ['property_id' => $own['id']], limit: 2);
        $this->assertTrue($page['meta']['has_more']);
        $this->assertCount(2, $page['data']);
    }

    public function testActionsAndTypedErrors(): void
    {
        $g = self::$g;
        $unit = $g->units->create(['property_id' => self::$property['id'], 'number' => self::$run . '-L']);
        $listing = $g->listings->create(['unit_id' => $unit['id'], 'title' => 'Bright', 'rent' => '1450.00', 'currency' => 'USD']);
        $this->assertSame('published', $g->listings->action($listing['id'], 'publish')['status']);

        $conflict = self::caught(ConflictException::class, fn () => $g->listings->action($listing['id'], 'publish'));
        $this->assertSame([409, 'invalid_state_transition'], [$conflict->status, $conflict->errorCode]);
        $this->assertNotEmpty($conflict->requestId);

        $missing = self::caught(NotFoundException::class, fn () => $g->units->get(Client::uuid4()));
        $this->assertSame(404, $missing->status);

        $invalid = self::caught(InvalidRequestException::class, fn () => $g->units->create(['property_id' => self::$property['id'], 'number' => self::$run . '-X', 'bedrooms' => -1]));
        $this->assertSame('bedrooms', $invalid->param);

        $unknown = self::caught(AuthenticationException::class, fn () => Client::sandbox('gbl_test_' . str_repeat('x', 43), self::env('GABLE_SANDBOX_URL'))->units->page());
        $this->assertSame(401, $unknown->status);
    }

    public function testExpandAnswersReferencesWithTheirRecords(): void
    {
        $g = self::$g;
        $run = self::$run;
        $own = $g->properties->create(['name' => "Expand Court {$run}", 'kind' => 'residential', 'address' => self::ADDRESS]);
        $unit = $g->units->create(['property_id' => $own['id'], 'number' => "{$run}-E"]);
        $terms = ['unit_id' => $unit['id'], 'rent' => '100.00', 'currency' => 'USD'];
        $lease = $g->leases->create($terms + ['start_date' => '2027-01-01'], expand: ['unit']);
        $this->assertIsArray($lease['unit_id'], 'create answers the unit itself');
        $this->assertSame(['unit', $unit['id']], [$lease['unit_id']['object'], $lease['unit_id']['id']]);
        $this->assertSame($own['id'], $lease['property_id'], 'what was not asked for stays an id');
        $second = $g->leases->create($terms + ['start_date' => '2027-02-01']);
        $this->assertSame($unit['id'], $second['unit_id'], 'without expand, an id');

        $got = $g->leases->get($lease['id'], expand: ['unit', 'unit.property']);
        $this->assertIsArray($got['unit_id']);
        $this->assertSame('unit', $got['unit_id']['object']);
        $this->assertSame("{$run}-E", $got['unit_id']['number']);
        $this->assertIsArray($got['unit_id']['property_id']);
        $this->assertSame('property', $got['unit_id']['property_id']['object']);
        $this->assertSame("Expand Court {$run}", $got['unit_id']['property_id']['name']);

        // Two pages of one: the second page must be asked with expand[] too.
        $listed = iterator_to_array($g->leases->list(filters: ['unit_id' => $unit['id']], sort: 'start_date', limit: 1, expand: ['unit']), false);
        $this->assertSame([$lease['id'], $second['id']], array_column($listed, 'id'));
        foreach ($listed as $n => $each) {
            $this->assertIsArray($each['unit_id'], 'page ' . ($n + 1) . ' answers the unit itself');
            $this->assertSame(['unit', "{$run}-E"], [$each['unit_id']['object'], $each['unit_id']['number']]);
        }
        $page = $g->leases->page(filters: ['unit_id' => $unit['id']], limit: 1, expand: ['unit']);
        $this->assertSame($unit['id'], $page['data'][0]['unit_id']['id'] ?? null);

        // Fieldsets of the expanded collections; an update and an action answer expanded too.
        $trimmed = $g->leases->get($lease['id'], expand: ['unit'], fields: ['leases' => ['rent'], 'units' => ['number']]);
        $keys = array_keys($trimmed);
        sort($keys);
        $this->assertSame(['id', 'object', 'rent', 'unit_id'], $keys, 'the expanded reference is shown');
        $unitKeys = array_keys($trimmed['unit_id']);
        sort($unitKeys);
        $this->assertSame(['id', 'number', 'object'], $unitKeys);
        $updated = $g->leases->update($lease['id'], ['rent' => '120.00'], expand: ['unit.property']);
        $this->assertEquals(120, $updated['rent']);
        $this->assertSame($own['id'], $updated['unit_id']['property_id']['id'] ?? null);
        $invoice = $g->invoices->create(['lease_id' => $lease['id'], 'amount_due' => '120.00', 'currency' => 'USD', 'due_date' => '2027-01-01']);
        $opened = $g->invoices->action($invoice['id'], 'open', expand: ['lease.unit']);
        $this->assertSame('open', $opened['status']);
        $this->assertSame("{$run}-E", $opened['lease_id']['unit_id']['number'] ?? null);

        $unknown = self::caught(InvalidRequestException::class, fn () => $g->leases->get($lease['id'], expand: ['unit', 'nope']));
        $this->assertSame([400, 'invalid_parameter', 'expand[]'], [$unknown->status, $unknown->errorCode, $unknown->param]);
    }

    public function testARetriedTestPaymentPaysOnce(): void
    {
        $g = self::$g;
        // A test invoice paid safely twice: only an open invoice takes payments.
        $unit = $g->units->create(['property_id' => self::$property['id'], 'number' => self::$run . '-P']);
        $lease = $g->leases->create(['unit_id' => $unit['id'], 'start_date' => '2027-01-01', 'rent' => '100.00', 'currency' => 'USD']);
        $invoice = $g->invoices->create(['lease_id' => $lease['id'], 'amount_due' => '100.00', 'currency' => 'USD', 'due_date' => '2027-01-01']);
        $this->assertSame('draft', $invoice['status']);
        $this->assertSame('open', $g->invoices->action($invoice['id'], 'open')['status']);

        $before = iterator_count($g->payments->list(limit: 100));
        $key = Client::uuid4();
        $first = $g->payments->createTestPayment('succeeded', '100.00', 'USD', ['invoice_id' => $invoice['id']], idempotencyKey: $key);
        $again = $g->payments->createTestPayment('succeeded', '100.00', 'USD', ['invoice_id' => $invoice['id']], idempotencyKey: $key);
        $this->assertSame($first['id'], $again['id']);
        $this->assertSame(['succeeded', 'succeeded'], [$first['status'], $again['status']]);
        $this->assertSame($before + 1, iterator_count($g->payments->list(limit: 100)), 'one payment for the retried request');
        $paid = $g->invoices->get($invoice['id']);
        $this->assertSame('paid', $paid['status']);
        $this->assertContains(get_debug_type($paid['amount_paid']), ['int', 'float'], 'amounts are JSON numbers');
        $this->assertEquals(100, $paid['amount_paid']);

        $other = $g->payments->createTestPayment('failed', 3, 'USD');
        $this->assertNotSame($first['id'], $other['id']);
        $this->assertSame('failed', $other['status']);
    }

    /** @testdox A reused idempotency key with another amount is a 422 IdempotencyException */
    public function testAReusedIdempotencyKeyIsAnIdempotencyException(): void
    {
        $g = self::$g;
        $key = Client::uuid4();
        $first = $g->payments->createTestPayment('succeeded', '21.00', 'USD', idempotencyKey: $key);
        $before = iterator_count($g->payments->list(limit: 100));

        $reused = self::caught(IdempotencyException::class, fn () => $g->payments->createTestPayment('succeeded', '22.00', 'USD', idempotencyKey: $key));
        $this->assertSame([422, 'idempotency_key_reused'], [$reused->status, $reused->errorCode]);
        $this->assertNotInstanceOf(ConflictException::class, $reused);
        $this->assertNotEmpty($reused->requestId);

        $this->assertSame($first, $g->payments->get($first['id']), 'the first payment is unchanged');
        $this->assertSame($before, iterator_count($g->payments->list(limit: 100)), 'no second payment');
    }

    /** @testdox A 429 is raised with retries off, and absorbed by retries after Retry-After */
    public function testA429IsRetriedAfterRetryAfter(): void
    {
        // The server runs with a low sandbox rate limit (sdks/run.sh); this burst exceeds it.
        $impatient = self::client(maxRetries: 0);
        $limited = self::caught(RateLimitException::class, function () use ($impatient): void {
            // Up to 400, stopping at the first 429: on a loaded machine answers come
            // slower, and the limit (10 a second after a burst of 10) is passed later.
            for ($i = 0; $i < 400; $i++) {
                $impatient->units->page(limit: 1);
            }
        });
        $this->assertSame(429, $limited->status);

        $patient = self::client(maxRetries: 5);
        $started = microtime(true);
        for ($i = 0; $i < 20; $i++) {
            $patient->units->page(limit: 1);
        }
        $this->assertGreaterThan(0.5, microtime(true) - $started, 'the burst had to wait for Retry-After');
    }

    public function testWebhookVerificationOfARealDelivery(): void
    {
        $g = self::$g;
        $receiver = new Receiver();
        try {
            $hook = $g->webhooks->create(['url' => "{$receiver->url}/hook", 'events' => ['lead.created']]);
            $secret = $hook['secret'];
            $g->leads->create(['name' => 'Lee', 'email' => 'lee.' . self::$run . '@example.com']);

            $delivery = $receiver->waitFor('/hook', 30);
            $this->assertNotNull($delivery, 'Gable delivered the event');
            ['body' => $body, 'headers' => $headers] = $delivery;
            $event = Webhook::verify($body, $headers, $secret);
            $this->assertSame('lead.created', $event['type']);

            self::caught(SignatureVerificationException::class, fn () => Webhook::verify(str_replace('Lee', 'Eve', $body), $headers, $secret));
            self::caught(SignatureVerificationException::class, fn () => Webhook::verify($body, $headers, 'whsec_wrong'));
            self::caught(SignatureVerificationException::class, fn () => Webhook::verify($body, $headers, $secret, now: time() + 3600));
            $g->webhooks->delete($hook['id']);
        } finally {
            $receiver->stop();
        }
    }

    /**
     * `gable listen --forward-to` signs each event as a delivery, under the secret that
     * `gable listen --print-secret` prints: what a developer configures in their app.
     *
     * @testdox A `gable listen` forward verifies with the kit's verifier (the secret it prints)
     */
    public function testAGableListenForwardVerifiesWithTheKitsVerifier(): void
    {
        $bin = getenv('GABLE_BIN');
        if ($bin === false || $bin === '') {
            $this->markTestSkipped('GABLE_BIN (the gable binary) is not set: sdks/run.sh sets it to run `gable listen`');
        }
        $receiver = new Receiver();
        // The children write into files here, not into pipes: this process is single-threaded,
        // and a pipe nobody reads while it waits could fill.
        $home = sys_get_temp_dir() . '/gable-cli-home-' . bin2hex(random_bytes(6));
        mkdir($home, 0700);
        $listen = null;
        try {
            $env = ['GABLE_API_URL' => self::env('GABLE_SANDBOX_URL'), 'GABLE_API_KEY' => self::env('GABLE_TEST_KEY'), 'GABLE_CLI_HOME' => $home] + getenv();

            $printing = self::spawn([$bin, 'listen', '--print-secret'], $env, "{$home}/print-secret");
            $deadline = microtime(true) + 20;
            while (($status = proc_get_status($printing))['running'] && microtime(true) < $deadline) {
                usleep(50_000);
            }
            self::stop($printing);
            $this->assertSame(0, $status['exitcode'], 'gable listen --print-secret: ' . file_get_contents("{$home}/print-secret.err"));
            $secret = trim(file_get_contents("{$home}/print-secret.out"));
            $this->assertStringStartsWith('whsec_', $secret);

            $listen = self::spawn(
                [$bin, 'listen', '--forward-to', "{$receiver->url}/webhooks", '--events', 'lead.created'],
                $env,
                "{$home}/listen",
            );
            $said = static fn (): string => file_get_contents("{$home}/listen.err") . file_get_contents("{$home}/listen.out");
            $deadline = microtime(true) + 20;
            while (!str_contains(file_get_contents("{$home}/listen.err"), 'Forwarding each event to')) {
                if (microtime(true) > $deadline || !proc_get_status($listen)['running']) {
                    $this->fail('gable listen was not forwarding within 20 s: ' . $said());
                }
                usleep(50_000);
            }

            $lead = self::$g->leads->create(['name' => 'Lee Listen', 'email' => 'lee.listen.' . self::$run . '@example.com']);
            $forwarded = null;
            $deadline = microtime(true) + 30;
            while ($forwarded === null && microtime(true) < $deadline) {
                foreach ($receiver->requests() as $request) {
                    if (json_decode($request['body'], true)['data']['object']['id'] === $lead['id']) {
                        $forwarded = $request;
                    }
                }
                usleep(100_000);
            }
            $this->assertNotNull($forwarded, "gable listen forwarded no lead.created about {$lead['id']} within 30 s: " . $said());
            ['path' => $path, 'body' => $body, 'headers' => $headers] = $forwarded;
            $this->assertSame('/webhooks', $path);

            $event = Webhook::verify($body, $headers, $secret);
            $this->assertSame('lead.created', $event['type']);
            $eventId = null;
            foreach ($headers as $name => $value) {
                if (strcasecmp($name, 'Gable-Event-Id') === 0) {
                    $eventId = $value;
                }
            }
            $this->assertSame($event['id'], $eventId, "Gable-Event-Id is the event's id");
            $tampered = str_replace('Lee Listen', 'Eve Listen', $body);
            $this->assertNotSame($body, $tampered);
            self::caught(SignatureVerificationException::class, fn () => Webhook::verify($tampered, $headers, $secret));
        } finally {
            if ($listen !== null) {
                self::stop($listen);
            }
            $receiver->stop();
            array_map('unlink', glob("{$home}/*") ?: []);
            @rmdir($home);
        }
    }

    /**
     * $command in a child process (no shell), its output in "$log.out" and "$log.err".
     *
     * @param list<string>          $command
     * @param array<string, string> $env
     *
     * @return resource
     */
    private static function spawn(array $command, array $env, string $log)
    {
        $process = proc_open($command, [0 => ['file', '/dev/null', 'r'], 1 => ['file', "{$log}.out", 'w'], 2 => ['file', "{$log}.err", 'w']], $pipes, null, $env);
        if ($process === false) {
            self::fail('could not start ' . implode(' ', $command));
        }

        return $process;
    }

    /**
     * Ends a child process: Ctrl-C (SIGINT), then SIGKILL when it is still there after 10 s.
     *
     * @param resource $process
     */
    private static function stop($process): void
    {
        if (proc_get_status($process)['running']) {
            proc_terminate($process, 2);
            $deadline = microtime(true) + 10;
            while (proc_get_status($process)['running'] && microtime(true) < $deadline) {
                usleep(50_000);
            }
            if (proc_get_status($process)['running']) {
                proc_terminate($process, 9);
            }
        }
        proc_close($process);
    }

    private static function client(int $maxRetries = 3): Client
    {
        return Client::sandbox(self::env('GABLE_TEST_KEY'), self::env('GABLE_SANDBOX_URL'), maxRetries: $maxRetries);
    }

    private static function env(string $name): string
    {
        $value = getenv($name);
        if ($value === false || $value === '') {
            self::fail("{$name} is not set: run the suite with sdks/run.sh php");
        }

        return $value;
    }

    /**
     * The exception of $class that $call throws (a failure when it throws none).
     *
     * @template T of GableException
     *
     * @param class-string<T> $class
     *
     * @return T
     */
    private static function caught(string $class, callable $call): GableException
    {
        try {
            $call();
        } catch (GableException $e) {
            self::assertInstanceOf($class, $e, "expected {$class}, got " . get_class($e) . ": {$e->getMessage()}");

            return $e;
        }
        self::fail("expected {$class}, nothing was thrown");
    }
}
