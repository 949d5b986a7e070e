package dev.gable;

/** 404: no such record (in this tenant and environment). */
public class NotFoundException extends GableException {
    private static final long serialVersionUID = 1L;

    public NotFoundException(int status, String code, String message, String requestId, String param) {
        super(status, code, message, requestId, param);
    }
}
