package dev.gable;

/**
 * 409: an invalid state transition, a clash with other records, or an {@code Idempotency-Key}
 * whose first request is still running ({@code idempotency_key_in_use}: retry it later). A key
 * reused for a different request is an {@link IdempotencyException} (422).
 */
public class ConflictException extends GableException {
    private static final long serialVersionUID = 1L;

    public ConflictException(int status, String code, String message, String requestId, String param) {
        super(status, code, message, requestId, param);
    }
}
