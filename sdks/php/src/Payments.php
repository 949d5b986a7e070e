<?php

declare(strict_types=1);

namespace Gable;

use Gable\Exception\GableException;

/** The payments collection, plus sandbox test payments. */
class Payments extends Collection
{
    /**
     * A sandbox payment whose outcome is $scenario (`succeeded`, `failed`, `reversed`),
     * always sent with an Idempotency-Key: pass your own to retry safely across processes.
     *
     * @param string|int          $amount a decimal string or an integer, in major units (`'12.50'`)
     * @param array<string,mixed> $params optional fields (`['invoice_id' => …]`)
     * @param list<string>|null   $expand references of the payment answered with their records (`['invoice']`)
     *
     * @throws GableException
     */
    public function createTestPayment(
        string $scenario,
        string|int $amount,
        string $currency,
        array $params = [],
        ?string $idempotencyKey = null,
        ?array $expand = null,
    ): array {
        $body = ['scenario' => $scenario, 'amount' => $amount, 'currency' => $currency] + $params;

        return $this->create($body, $idempotencyKey ?? Client::uuid4(), $expand);
    }
}
