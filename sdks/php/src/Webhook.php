<?php

declare(strict_types=1);

namespace Gable;

use Gable\Exception\SignatureVerificationException;

/**
 * Webhook verification. `Gable-Signature: v1=<hex> [v1=<hex> …]` is the HMAC-SHA256, keyed
 * with the whole secret (`whsec_…`), of `<Gable-Timestamp>.<raw body>`. Verify the body as
 * received (`file_get_contents('php://input')`), before parsing it.
 */
final class Webhook
{
    public const DEFAULT_TOLERANCE = 300;

    /**
     * Checks a delivery's signature (any of its v1= values, in constant time) and its
     * timestamp (within $tolerance seconds of $now); returns the parsed event.
     *
     * @param array<string, string|list<string>> $headers any case: getallheaders(), a PSR-7
     *                                                    getHeaders(), or $_SERVER (HTTP_GABLE_SIGNATURE)
     *
     * @throws SignatureVerificationException
     * @throws \JsonException when a correctly signed body is not JSON
     */
    public static function verify(
        string $payload,
        array $headers,
        #[\SensitiveParameter] string $secret,
        int $tolerance = self::DEFAULT_TOLERANCE,
        ?int $now = null,
    ): array {
        $timestamp = self::header($headers, 'Gable-Timestamp') ?? '';
        $signatures = [];
        foreach (preg_split('/\s+/', self::header($headers, 'Gable-Signature') ?? '', -1, PREG_SPLIT_NO_EMPTY) as $part) {
            if (str_starts_with($part, 'v1=')) {
                $signatures[] = substr($part, 3);
            }
        }
        if (!ctype_digit($timestamp)) {
            throw new SignatureVerificationException('no Gable-Timestamp');
        }
        if ($signatures === []) {
            throw new SignatureVerificationException('no v1 signature in Gable-Signature');
        }
        if (abs(($now ?? time()) - (int) $timestamp) > $tolerance) {
            throw new SignatureVerificationException('the timestamp is outside the tolerance: a replay, or a clock far off');
        }
        $expected = hash_hmac('sha256', "{$timestamp}.{$payload}", $secret);
        $matched = false;
        foreach ($signatures as $signature) {
            // No early exit: every candidate is compared, each in constant time.
            $matched = hash_equals($expected, $signature) || $matched;
        }
        if (!$matched) {
            throw new SignatureVerificationException('no signature matches this secret and body');
        }

        return json_decode($payload, true, 512, JSON_THROW_ON_ERROR);
    }

    /** A header by name, whatever its case, also in $_SERVER's HTTP_NAME form. */
    private static function header(array $headers, string $name): ?string
    {
        $wanted = strtolower($name);
        foreach ($headers as $key => $value) {
            $key = strtolower(str_replace('_', '-', (string) $key));
            if ($key === $wanted || $key === "http-{$wanted}") {
                return is_array($value) ? implode(' ', $value) : (string) $value;
            }
        }

        return null;
    }
}
