<?php

declare(strict_types=1);

namespace Gable\Exception;

/**
 * Every refusal of the API: the HTTP status and the error body's code, message, request id
 * and param. A subclass names the status class; a network failure (after the retries) is this
 * base class with status 0 and code `network_error`.
 *
 * Like PDOException, getCode() returns the API's string code (`invalid_state_transition`).
 */
class GableException extends \RuntimeException
{
    public function __construct(
        public readonly int $status,
        public readonly string $errorCode,
        string $message,
        public readonly ?string $requestId = null,
        public readonly ?string $param = null,
        ?\Throwable $previous = null,
    ) {
        parent::__construct($message, 0, $previous);
        $this->code = $errorCode;
    }

    /** The typed exception for an error answer (`{"error": {code, message, request_id, param}}`). */
    public static function fromResponse(int $status, string $body, ?string $requestId = null): self
    {
        $decoded = json_decode($body, true);
        $error = is_array($decoded) && is_array($decoded['error'] ?? null) ? $decoded['error'] : [];
        $class = match (true) {
            $status === 400 => InvalidRequestException::class,
            $status === 401 => AuthenticationException::class,
            $status === 403 => PermissionException::class,
            $status === 404 => NotFoundException::class,
            $status === 409 => ConflictException::class,
            $status === 422 => IdempotencyException::class,
            $status === 429 => RateLimitException::class,
            $status >= 500 => ServerException::class,
            default => self::class,
        };

        return new $class(
            $status,
            (string) ($error['code'] ?? 'unknown_error'),
            (string) ($error['message'] ?? substr($body, 0, 200)),
            $error['request_id'] ?? $requestId,
            $error['param'] ?? null,
        );
    }
}
