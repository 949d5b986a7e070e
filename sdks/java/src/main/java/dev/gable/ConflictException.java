package dev.gable;

/** 409: an invalid state transition, an idempotency key in use, a clash with other records. */
public class ConflictException extends GableException {
    private static final long serialVersionUID = 1L;

    public ConflictException(int status, String code, String message, String requestId, String param) {
        super(status, code, message, requestId, param);
    }
}
