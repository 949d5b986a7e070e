package dev.gable;

import java.util.LinkedHashMap;
import java.util.Map;

/** The {@code payments} collection, with sandbox test payments. */
public final class Payments extends Resource {
    Payments(Gable client) {
        super(client, "payments");
    }

    /**
     * A sandbox payment whose outcome is {@code scenario} ({@code succeeded}, {@code failed},
     * {@code reversed}); {@code amount} is a decimal string in major units ({@code "12.50"}).
     * Sent with a fresh {@code Idempotency-Key}.
     */
    public GableObject createTestPayment(String scenario, String amount, String currency) {
        return createTestPayment(scenario, amount, currency, Map.of(), null);
    }

    /** A whole-unit test payment ({@code amount} 3 is 3.00). */
    public GableObject createTestPayment(String scenario, long amount, String currency) {
        return send(scenario, amount, currency, Map.of(), null);
    }

    /** A test payment with your {@code Idempotency-Key}: the same key and body pay once. */
    public GableObject createTestPayment(String scenario, String amount, String currency, String idempotencyKey) {
        return createTestPayment(scenario, amount, currency, Map.of(), idempotencyKey);
    }

    /**
     * A test payment with more fields ({@code Map.of("invoice_id", id)}) and your
     * {@code Idempotency-Key} (null for a fresh one).
     */
    public GableObject createTestPayment(String scenario, String amount, String currency, Map<String, ?> fields, String idempotencyKey) {
        return send(scenario, amount, currency, fields, idempotencyKey);
    }

    /**
     * A test payment with more fields, your {@code Idempotency-Key} (null for a fresh one), and
     * the answer shaped by {@code options} ({@code RecordOptions.expand("invoice")}).
     */
    public GableObject createTestPayment(
            String scenario, String amount, String currency, Map<String, ?> fields, String idempotencyKey, RecordOptions options) {
        return send(scenario, amount, currency, fields, idempotencyKey, options);
    }

    private GableObject send(String scenario, Object amount, String currency, Map<String, ?> fields, String idempotencyKey) {
        return send(scenario, amount, currency, fields, idempotencyKey, RecordOptions.none());
    }

    private GableObject send(
            String scenario, Object amount, String currency, Map<String, ?> fields, String idempotencyKey, RecordOptions options) {
        Map<String, Object> body = new LinkedHashMap<>(fields);
        body.put("scenario", scenario);
        body.put("amount", amount);
        body.put("currency", currency);
        return create(body, idempotencyKey, options); // null key: the fresh key every POST gets
    }
}
