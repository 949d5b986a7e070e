package dev.gable;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Verification of Gable's webhook deliveries. {@code Gable-Signature: v1=<hex> [v1=<hex>]}
 * (two values while a secret rotates) is the HMAC-SHA256, keyed with the whole secret
 * ({@code whsec_…}), of {@code <Gable-Timestamp>.<raw body>}. Verify the bytes as received,
 * before parsing them.
 */
public final class Webhooks {
    /** How far a delivery's timestamp may be from now by default. */
    public static final Duration DEFAULT_TOLERANCE = Duration.ofMinutes(5);

    private Webhooks() {}

    /** {@link #verify(byte[], Map, String, Duration)} with the default tolerance of 5 minutes. */
    public static GableObject verify(byte[] payload, Map<String, ?> headers, String secret) {
        return verify(payload, headers, secret, DEFAULT_TOLERANCE, Instant.now());
    }

    /**
     * Checks a delivery's signature (any of its {@code v1=} values, in constant time) and
     * timestamp, and returns the parsed event.
     *
     * @param headers the request's headers, names in any case; values are strings or lists of
     *     strings (as {@code com.sun.net.httpserver.Headers} or Spring's {@code HttpHeaders} hold them)
     * @throws SignatureVerificationException when a header is missing, the timestamp is more than
     *     {@code tolerance} away, or no signature matches this secret and body
     */
    public static GableObject verify(byte[] payload, Map<String, ?> headers, String secret, Duration tolerance) {
        return verify(payload, headers, secret, tolerance, Instant.now());
    }

    /** As {@link #verify(byte[], Map, String, Duration)}, at the instant {@code now}. */
    public static GableObject verify(byte[] payload, Map<String, ?> headers, String secret, Duration tolerance, Instant now) {
        String timestamp = header(headers, "Gable-Timestamp").trim();
        if (!timestamp.matches("\\d{1,15}")) {
            throw new SignatureVerificationException("no Gable-Timestamp");
        }
        List<byte[]> signatures = new ArrayList<>();
        for (String s : header(headers, "Gable-Signature").trim().split("\\s+")) {
            if (s.startsWith("v1=")) {
                try {
                    signatures.add(HexFormat.of().parseHex(s.substring(3)));
                } catch (IllegalArgumentException notHex) {
                    // Cannot match; the others may.
                }
            }
        }
        if (signatures.isEmpty()) {
            throw new SignatureVerificationException("no v1 signature in Gable-Signature");
        }
        if (Math.abs(now.getEpochSecond() - Long.parseLong(timestamp)) > tolerance.getSeconds()) {
            throw new SignatureVerificationException("the timestamp is outside the tolerance: a replay, or a clock far off");
        }
        byte[] expected = sign(secret, timestamp, payload);
        boolean matched = false;
        for (byte[] given : signatures) {
            matched |= MessageDigest.isEqual(expected, given); // constant time, and no early exit
        }
        if (!matched) {
            throw new SignatureVerificationException("no signature matches this secret and body");
        }
        try {
            return new GableObject(Gable.JSON.readValue(payload, Gable.MAP));
        } catch (IOException e) {
            throw new SignatureVerificationException("the signed payload is not a JSON object");
        }
    }

    private static byte[] sign(String secret, String timestamp, byte[] payload) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
            mac.update((timestamp + ".").getBytes(StandardCharsets.UTF_8));
            return mac.doFinal(payload);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every Java runtime", e);
        }
    }

    /** A header's value by case-insensitive name (several values space-joined), or "". */
    private static String header(Map<String, ?> headers, String name) {
        for (Map.Entry<String, ?> h : headers.entrySet()) {
            if (h.getKey() != null && h.getKey().equalsIgnoreCase(name)) {
                Object v = h.getValue();
                return v instanceof Iterable<?> values ? String.join(" ", strings(values)) : String.valueOf(v);
            }
        }
        return "";
    }

    private static List<String> strings(Iterable<?> values) {
        List<String> out = new ArrayList<>();
        values.forEach(v -> out.add(String.valueOf(v)));
        return out;
    }
}
