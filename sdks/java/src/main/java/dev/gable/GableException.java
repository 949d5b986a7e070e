package dev.gable;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * A refusal of the API, or a failure to reach it. Subclasses name the status class
 * ({@link NotFoundException} for 404, …); a network failure after the retries is a plain
 * {@code GableException} with status 0 and code {@code network_error}.
 */
public class GableException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final int status;
    private final String code;
    private final String message;
    private final String requestId;
    private final String param;

    public GableException(int status, String code, String message, String requestId, String param) {
        this(status, code, message, requestId, param, null);
    }

    public GableException(int status, String code, String message, String requestId, String param, Throwable cause) {
        super(status + " " + code + ": " + message + (requestId != null ? " (request " + requestId + ")" : ""), cause);
        this.status = status;
        this.code = code;
        this.message = message;
        this.requestId = requestId;
        this.param = param;
    }

    /** The HTTP status (0 when Gable could not be reached). */
    public int status() {
        return status;
    }

    /** The machine-readable reason ({@code invalid_state_transition}, {@code network_error}, …). */
    public String code() {
        return code;
    }

    /** The API's human-readable explanation (without the status and code of {@link #getMessage()}). */
    public String message() {
        return message;
    }

    /** The request's id, to quote to support or find in Gable's logs; null without an answer. */
    public String requestId() {
        return requestId;
    }

    /** The invalid field of a 400, or null. */
    public String param() {
        return param;
    }

    /** The typed exception for an error answer ({@code {"error": {"code", "message", …}}}). */
    static GableException from(int status, byte[] raw, String requestIdHeader) {
        Map<String, Object> error = Map.of();
        try {
            Object e = Gable.JSON.readValue(raw, Gable.MAP).get("error");
            if (e instanceof Map<?, ?> m) {
                error = new GableObject(m);
            }
        } catch (IOException notJson) {
            // A proxy's HTML page, say: the raw text becomes the message below.
        }
        String text = new String(raw, StandardCharsets.UTF_8);
        String code = str(error.get("code"), "unknown_error");
        String message = str(error.get("message"), text.length() > 200 ? text.substring(0, 200) : text);
        String requestId = str(error.get("request_id"), requestIdHeader);
        String param = str(error.get("param"), null);
        return switch (status) {
            case 400 -> new InvalidRequestException(status, code, message, requestId, param);
            case 401 -> new AuthenticationException(status, code, message, requestId, param);
            case 403 -> new PermissionException(status, code, message, requestId, param);
            case 404 -> new NotFoundException(status, code, message, requestId, param);
            case 409 -> new ConflictException(status, code, message, requestId, param);
            case 422 -> new IdempotencyException(status, code, message, requestId, param);
            case 429 -> new RateLimitException(status, code, message, requestId, param);
            default -> status >= 500
                    ? new ServerException(status, code, message, requestId, param)
                    : new GableException(status, code, message, requestId, param);
        };
    }

    private static String str(Object value, String fallback) {
        return value != null ? value.toString() : fallback;
    }
}
