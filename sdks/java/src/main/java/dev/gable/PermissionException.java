package dev.gable;

/** 403: the credential lacks the scope (or the property) this needs. */
public class PermissionException extends GableException {
    private static final long serialVersionUID = 1L;

    public PermissionException(int status, String code, String message, String requestId, String param) {
        super(status, code, message, requestId, param);
    }
}
