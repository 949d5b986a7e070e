package dev.gable;

/** A webhook delivery that is not from Gable, was changed, or is too old to trust. */
public class SignatureVerificationException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public SignatureVerificationException(String message) {
        super(message);
    }
}
