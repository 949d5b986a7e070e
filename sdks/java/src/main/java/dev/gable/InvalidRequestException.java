package dev.gable;

/** 400: the request is malformed or a field is invalid ({@link #param()} names it). */
public class InvalidRequestException extends GableException {
    private static final long serialVersionUID = 1L;

    public InvalidRequestException(int status, String code, String message, String requestId, String param) {
        super(status, code, message, requestId, param);
    }
}
