package dev.gable;

/** 5xx, after the retries ran out. */
public class ServerException extends GableException {
    private static final long serialVersionUID = 1L;

    public ServerException(int status, String code, String message, String requestId, String param) {
        super(status, code, message, requestId, param);
    }
}
