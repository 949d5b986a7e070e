package dev.gable;

/**
 * 422 {@code idempotency_key_reused}: the {@code Idempotency-Key} was already used for a
 * different request (another body, path or method). Use a fresh key for a new request.
 */
public class IdempotencyException extends GableException {
    private static final long serialVersionUID = 1L;

    public IdempotencyException(int status, String code, String message, String requestId, String param) {
        super(status, code, message, requestId, param);
    }
}
