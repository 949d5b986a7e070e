package dev.gable;

/** 429, after the retries ran out: the credential is over its rate limit. */
public class RateLimitException extends GableException {
    private static final long serialVersionUID = 1L;

    public RateLimitException(int status, String code, String message, String requestId, String param) {
        super(status, code, message, requestId, param);
    }
}
