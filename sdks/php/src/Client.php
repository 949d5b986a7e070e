<?php

declare(strict_types=1);

namespace Gable;

use Gable\Exception\GableException;

/**
 * A client for one Gable environment: a base address and a credential (an API key
 * `gbl_test_…` / `gbl_live_…` or an OAuth access token), standard library only.
 *
 * Every collection is a property (`$client->leases`, `$client->purchaseOrders` for
 * `purchase-orders`) with list (auto-paginating), page, get, create, update, delete and
 * action. Every POST carries an Idempotency-Key (one per call, reused by its retries); 429,
 * 5xx and network errors are retried with full-jitter exponential backoff, honouring
 * Retry-After.
 *
 * BEGIN GENERATED properties: `make generate` writes these from `gable collections`.
 * @property-read Collection $organizations
 * @property-read Collection $companies
 * @property-read Collection $users
 * @property-read Collection $roles
 * @property-read Collection $owners
 * @property-read Collection $properties
 * @property-read Collection $buildings
 * @property-read Collection $units
 * @property-read Collection $rooms
 * @property-read Collection $beds
 * @property-read Collection $listings
 * @property-read Collection $leads
 * @property-read Collection $viewings
 * @property-read Collection $applications
 * @property-read Collection $screening
 * @property-read Collection $leases
 * @property-read Collection $signatures
 * @property-read Collection $tenancies
 * @property-read Collection $bookings
 * @property-read Collection $guests
 * @property-read Collection $charges
 * @property-read Collection $invoices
 * @property-read Payments   $payments
 * @property-read Collection $refunds
 * @property-read Collection $accountingEntries
 * @property-read Collection $workorders
 * @property-read Collection $inspections
 * @property-read Collection $assets
 * @property-read Collection $vendors
 * @property-read Collection $purchaseOrders
 * @property-read Collection $documents
 * @property-read Collection $tasks
 * @property-read Collection $messages
 * @property-read Collection $events
 * @property-read Collection $reports
 * @property-read Collection $webhooks
 * @property-read Collection $webhookDeliveries
 * @property-read Collection $flowTokens
 * @property-read Collection $requestLogs
 * @property-read Collection $imports
 * END GENERATED properties
 */
final class Client
{
    /** The API version this kit is written against (sent as Gable-Version). */
    public const API_VERSION = '2026-11-22';
    public const VERSION = '0.1.0';

    /** Base addresses of a default local installation (`gable serve`). */
    public const LIVE = 'http://127.0.0.1:8080/v1';
    public const SANDBOX = 'http://127.0.0.1:8081/v1';

    /** Property name => the collection's API name: every collection of the API. */
    public const COLLECTIONS = [
        // BEGIN GENERATED collections: `make generate` writes these from `gable collections`.
        'organizations' => 'organizations',
        'companies' => 'companies',
        'users' => 'users',
        'roles' => 'roles',
        'owners' => 'owners',
        'properties' => 'properties',
        'buildings' => 'buildings',
        'units' => 'units',
        'rooms' => 'rooms',
        'beds' => 'beds',
        'listings' => 'listings',
        'leads' => 'leads',
        'viewings' => 'viewings',
        'applications' => 'applications',
        'screening' => 'screening',
        'leases' => 'leases',
        'signatures' => 'signatures',
        'tenancies' => 'tenancies',
        'bookings' => 'bookings',
        'guests' => 'guests',
        'charges' => 'charges',
        'invoices' => 'invoices',
        'payments' => 'payments',
        'refunds' => 'refunds',
        'accountingEntries' => 'accounting-entries',
        'workorders' => 'workorders',
        'inspections' => 'inspections',
        'assets' => 'assets',
        'vendors' => 'vendors',
        'purchaseOrders' => 'purchase-orders',
        'documents' => 'documents',
        'tasks' => 'tasks',
        'messages' => 'messages',
        'events' => 'events',
        'reports' => 'reports',
        'webhooks' => 'webhooks',
        'webhookDeliveries' => 'webhook-deliveries',
        'flowTokens' => 'flow-tokens',
        'requestLogs' => 'request-logs',
        'imports' => 'imports',
        // END GENERATED collections
    ];

    public readonly string $baseUrl;

    /** @var array<string, Collection> */
    private array $collections = [];

    /**
     * @param string $apiKey     an API key (`gbl_live_…`, `gbl_test_…`) or an OAuth access token
     * @param string $baseUrl    the environment's API address (`/v1` is added when missing)
     * @param int    $maxRetries retries of a 429, 5xx or network failure (0 disables them)
     * @param float  $timeout    seconds per attempt
     * @param float  $backoff    the first retry's upper bound in seconds, doubled per retry
     * @param float  $maxBackoff the largest upper bound in seconds
     */
    public function __construct(
        #[\SensitiveParameter] private readonly string $apiKey,
        string $baseUrl = self::SANDBOX,
        public readonly int $maxRetries = 3,
        public readonly float $timeout = 30.0,
        public readonly float $backoff = 0.5,
        public readonly float $maxBackoff = 8.0,
    ) {
        if ($apiKey === '') {
            throw new \InvalidArgumentException('an API key or access token is required');
        }
        $base = rtrim($baseUrl, '/');
        $this->baseUrl = str_ends_with($base, '/v1') ? $base : $base . '/v1';
    }

    /** A client for the sandbox (test keys, test payments). */
    public static function sandbox(
        #[\SensitiveParameter] string $apiKey,
        string $baseUrl = self::SANDBOX,
        int $maxRetries = 3,
        float $timeout = 30.0,
    ): self {
        return new self($apiKey, $baseUrl, $maxRetries, $timeout);
    }

    /** A client for live data (live keys). */
    public static function live(
        #[\SensitiveParameter] string $apiKey,
        string $baseUrl = self::LIVE,
        int $maxRetries = 3,
        float $timeout = 30.0,
    ): self {
        return new self($apiKey, $baseUrl, $maxRetries, $timeout);
    }

    /** A collection by its API name (`'purchase-orders'`). */
    public function collection(string $name): Collection
    {
        return $this->collections[$name] ??= $name === 'payments' ? new Payments($this, $name) : new Collection($this, $name);
    }

    public function __get(string $property): Collection
    {
        if (!isset(self::COLLECTIONS[$property])) {
            throw new \OutOfRangeException("Gable has no collection named \${$property}; see Client::COLLECTIONS");
        }

        return $this->collection(self::COLLECTIONS[$property]);
    }

    public function __isset(string $property): bool
    {
        return isset(self::COLLECTIONS[$property]);
    }

    /** Keeps the credential out of var_dump() and print_r(). */
    public function __debugInfo(): array
    {
        return ['baseUrl' => $this->baseUrl, 'maxRetries' => $this->maxRetries, 'timeout' => $this->timeout];
    }

    /**
     * Sends one request, retrying 429, 5xx and network failures; returns the decoded answer.
     *
     * @param list<array{string, string}> $query name/value pairs, in order
     * @param array<string, mixed>|null   $body  sent as JSON
     *
     * @throws GableException
     */
    public function request(string $method, string $path, array $query = [], ?array $body = null, ?string $idempotencyKey = null): array
    {
        $url = $this->baseUrl . $path;
        if ($query !== []) {
            $url .= '?' . implode('&', array_map(static fn (array $p) => rawurlencode($p[0]) . '=' . rawurlencode($p[1]), $query));
        }
        $headers = [
            'Authorization' => "Bearer {$this->apiKey}",
            'Gable-Version' => self::API_VERSION,
            'Accept' => 'application/json',
            'User-Agent' => 'gable-php/' . self::VERSION,
        ];
        $content = null;
        if ($body !== null) {
            // An empty PHP array is a JSON object here: every body of the API is one.
            $content = $body === [] ? '{}' : json_encode($body, JSON_THROW_ON_ERROR | JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION);
            $headers['Content-Type'] = 'application/json';
        }
        if ($method === 'POST') {
            // One key per call, reused by its retries, so a retried POST takes effect once.
            $headers['Idempotency-Key'] = $idempotencyKey ?? self::uuid4();
        }

        for ($attempt = 0; ; $attempt++) {
            $response = $this->send($method, $url, $headers, $content);
            if (is_string($response)) {
                if ($attempt < $this->maxRetries) {
                    $this->pause($attempt, null);
                    continue;
                }
                throw new GableException(0, 'network_error', "could not reach Gable: {$response}");
            }
            [$status, $responseHeaders, $raw] = $response;
            if ($status >= 200 && $status < 300) {
                return $raw === '' ? [] : self::decode($raw, $status);
            }
            if (($status === 429 || $status >= 500) && $attempt < $this->maxRetries) {
                $this->pause($attempt, $responseHeaders['retry-after'] ?? null);
                continue;
            }
            throw GableException::fromResponse($status, $raw, $responseHeaders['request-id'] ?? null);
        }
    }

    /** A random (version 4) UUID, the kit's default Idempotency-Key. */
    public static function uuid4(): string
    {
        $b = random_bytes(16);
        $b[6] = chr((ord($b[6]) & 0x0f) | 0x40);
        $b[8] = chr((ord($b[8]) & 0x3f) | 0x80);

        return vsprintf('%s%s-%s-%s-%s-%s%s%s', str_split(bin2hex($b), 4));
    }

    /**
     * One attempt over PHP's http stream wrapper (ext-curl may be absent).
     *
     * @return array{int, array<string, string>, string}|string the status, the headers
     *         (lower-case names) and the body; or why the request did not get an answer
     */
    private function send(string $method, string $url, array $headers, ?string $content): array|string
    {
        $http = [
            'method' => $method,
            'header' => array_map(static fn (string $k, string $v) => "{$k}: {$v}", array_keys($headers), $headers),
            'ignore_errors' => true, // an error status is an answer to read, not a failed fopen
            'follow_location' => 0,
            'protocol_version' => 1.1,
            'timeout' => $this->timeout,
        ];
        if ($content !== null) {
            $http['content'] = $content;
        }
        $failure = 'no answer';
        set_error_handler(static function (int $severity, string $message) use (&$failure): bool {
            $failure = $message;

            return true;
        });
        try {
            $stream = fopen($url, 'rb', false, stream_context_create(['http' => $http]));
            if ($stream === false) {
                return $failure;
            }
            $raw = stream_get_contents($stream);
            $meta = stream_get_meta_data($stream);
            fclose($stream);
        } finally {
            restore_error_handler();
        }
        if ($raw === false || $meta['timed_out']) {
            return "no answer within {$this->timeout} s";
        }

        $status = 0;
        $responseHeaders = [];
        foreach ($meta['wrapper_data'] ?? [] as $line) {
            if (preg_match('#^HTTP/\S+\s+(\d{3})#', $line, $m)) {
                // A new status line (after a 100 Continue) starts the headers afresh.
                $status = (int) $m[1];
                $responseHeaders = [];
            } elseif (str_contains($line, ':')) {
                [$name, $value] = explode(':', $line, 2);
                $responseHeaders[strtolower(trim($name))] = trim($value);
            }
        }

        return [$status, $responseHeaders, $raw];
    }

    private function pause(int $attempt, ?string $retryAfter): void
    {
        if ($retryAfter !== null && ctype_digit(trim($retryAfter))) {
            $delay = (float) trim($retryAfter);
        } else {
            // Full jitter: a random wait up to the exponential bound.
            $bound = min($this->maxBackoff, $this->backoff * 2 ** $attempt);
            $delay = $bound * mt_rand() / mt_getrandmax();
        }
        usleep((int) ($delay * 1_000_000));
    }

    private static function decode(string $raw, int $status): array
    {
        try {
            $decoded = json_decode($raw, true, 512, JSON_THROW_ON_ERROR);
        } catch (\JsonException $e) {
            throw new GableException($status, 'invalid_response', 'Gable answered with something other than JSON', null, null, $e);
        }

        return is_array($decoded) ? $decoded : [];
    }
}
