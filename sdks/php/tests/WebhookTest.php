<?php

declare(strict_types=1);

namespace Gable\Tests;

use Gable\Exception\GableException;
use Gable\Exception\SignatureVerificationException;
use Gable\Webhook;
use PHPUnit\Framework\TestCase;

/** Webhook::verify against signatures computed here, as Gable computes them. */
final class WebhookTest extends TestCase
{
    private const SECRET = 'whsec_unit_test_secret';
    private const TIMESTAMP = 1_800_000_000;
    private const PAYLOAD = '{"id":"evt_1","type":"lead.created","data":{"name":"Lee"}}';

    private static function sign(string $payload, int $timestamp = self::TIMESTAMP, string $secret = self::SECRET): string
    {
        return hash_hmac('sha256', "{$timestamp}.{$payload}", $secret);
    }

    /** @testdox Accepts any matching v1= among several, whatever the header case */
    public function testAcceptsAnyMatchingV1AmongSeveralWhateverTheHeaderCase(): void
    {
        $headers = [
            'gable-SIGNATURE' => 'v1=' . str_repeat('0', 64) . ' v0=' . self::sign(self::PAYLOAD) . ' v1=' . self::sign(self::PAYLOAD) . ' v1=' . self::sign(self::PAYLOAD, secret: 'whsec_rotated'),
            'GABLE-TIMESTAMP' => (string) self::TIMESTAMP,
        ];
        $event = Webhook::verify(self::PAYLOAD, $headers, self::SECRET, now: self::TIMESTAMP + 299);
        $this->assertSame('lead.created', $event['type']);
        $this->assertSame('Lee', $event['data']['name']);
        // The rotated secret's signature matches too.
        $this->assertSame('evt_1', Webhook::verify(self::PAYLOAD, $headers, 'whsec_rotated', now: self::TIMESTAMP)['id']);
    }

    /** @testdox Reads PSR-7 and $_SERVER style headers */
    public function testReadsPsr7AndServerStyleHeaders(): void
    {
        $psr7 = ['Gable-Signature' => ['v1=' . self::sign(self::PAYLOAD)], 'Gable-Timestamp' => [(string) self::TIMESTAMP]];
        $this->assertSame('evt_1', Webhook::verify(self::PAYLOAD, $psr7, self::SECRET, now: self::TIMESTAMP)['id']);
        $server = ['HTTP_GABLE_SIGNATURE' => 'v1=' . self::sign(self::PAYLOAD), 'HTTP_GABLE_TIMESTAMP' => (string) self::TIMESTAMP];
        $this->assertSame('evt_1', Webhook::verify(self::PAYLOAD, $server, self::SECRET, now: self::TIMESTAMP)['id']);
    }

    /** @return iterable<string, array{string, array<string, string>, int}> */
    public function refusals(): iterable
    {
        $good = 'v1=' . self::sign(self::PAYLOAD);
        $ts = (string) self::TIMESTAMP;
        yield 'a tampered body' => [str_replace('Lee', 'Eve', self::PAYLOAD), ['Gable-Signature' => $good, 'Gable-Timestamp' => $ts], self::TIMESTAMP];
        yield 'another secret' => [self::PAYLOAD, ['Gable-Signature' => 'v1=' . self::sign(self::PAYLOAD, secret: 'whsec_other'), 'Gable-Timestamp' => $ts], self::TIMESTAMP];
        yield 'a stale timestamp' => [self::PAYLOAD, ['Gable-Signature' => $good, 'Gable-Timestamp' => $ts], self::TIMESTAMP + 301];
        yield 'a timestamp from the future' => [self::PAYLOAD, ['Gable-Signature' => $good, 'Gable-Timestamp' => $ts], self::TIMESTAMP - 301];
        yield 'a changed timestamp' => [self::PAYLOAD, ['Gable-Signature' => $good, 'Gable-Timestamp' => (string) (self::TIMESTAMP + 1)], self::TIMESTAMP];
        yield 'no timestamp' => [self::PAYLOAD, ['Gable-Signature' => $good], self::TIMESTAMP];
        yield 'no signature' => [self::PAYLOAD, ['Gable-Timestamp' => $ts], self::TIMESTAMP];
        yield 'no v1 signature' => [self::PAYLOAD, ['Gable-Signature' => 'v0=' . self::sign(self::PAYLOAD), 'Gable-Timestamp' => $ts], self::TIMESTAMP];
    }

    /** @dataProvider refusals */
    public function testRefuses(string $payload, array $headers, int $now): void
    {
        try {
            Webhook::verify($payload, $headers, self::SECRET, now: $now);
            $this->fail('verified a delivery it should refuse');
        } catch (SignatureVerificationException $e) {
            $this->assertInstanceOf(GableException::class, $e);
            $this->assertSame('signature_verification_failed', $e->errorCode);
        }
    }
}
