package dev.gable;

/** 401: no credential, an unknown one, or the other environment's. */
public class AuthenticationException extends GableException {
    private static final long serialVersionUID = 1L;

    public AuthenticationException(int status, String code, String message, String requestId, String param) {
        super(status, code, message, requestId, param);
    }
}
