package dev.gable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import org.junit.jupiter.api.Test;

/** {@link Webhooks#verify} against signatures computed here, as Gable documents them. */
class WebhooksTest {
    static final String SECRET = "whsec_unit_test_secret";
    static final byte[] BODY = "{\"id\":\"evt_1\",\"type\":\"lease.signed\",\"data\":{\"id\":\"lea_1\"}}".getBytes(StandardCharsets.UTF_8);

    static String sign(String secret, long timestamp, byte[] body) throws Exception {
        Mac mac = Mac.getInstance("HmacSHA256");
        mac.init(new SecretKeySpec(secret.getBytes(StandardCharsets.UTF_8), "HmacSHA256"));
        mac.update((timestamp + ".").getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(mac.doFinal(body));
    }

    @Test
    void anyOfSeveralV1SignaturesMayMatchAndHeaderNamesIgnoreCase() throws Exception {
        long now = Instant.now().getEpochSecond();
        String header = "v1=" + sign("whsec_old_secret", now, BODY) + " v0=ignored v1=" + sign(SECRET, now, BODY);
        GableObject event = Webhooks.verify(BODY, Map.of("gable-signature", header, "GABLE-TIMESTAMP", Long.toString(now)), SECRET);
        assertEquals("lease.signed", event.getString("type"));
        assertEquals("lea_1", event.getObject("data").id());

        // Multi-valued header maps (a servlet's, com.sun.net.httpserver's) work too.
        Map<String, List<String>> multi = Map.of("Gable-signature", List.of(header), "Gable-timestamp", List.of(Long.toString(now)));
        assertEquals("evt_1", Webhooks.verify(BODY, multi, SECRET).id());
    }

    @Test
    void noMatchingSignatureIsRefused() throws Exception {
        long now = Instant.now().getEpochSecond();
        Map<String, String> headers = Map.of(
                "Gable-Signature", "v1=" + sign("whsec_other", now, BODY) + " v1=" + sign(SECRET, now - 1, BODY) + " v1=nothex",
                "Gable-Timestamp", Long.toString(now));
        SignatureVerificationException e = assertThrows(SignatureVerificationException.class, () -> Webhooks.verify(BODY, headers, SECRET));
        assertTrue(e.getMessage().contains("no signature matches"), e::getMessage);
    }

    @Test
    void aTimestampOutsideTheToleranceIsRefused() throws Exception {
        long then = Instant.now().getEpochSecond() - 600;
        Map<String, String> headers = Map.of("Gable-Signature", "v1=" + sign(SECRET, then, BODY), "Gable-Timestamp", Long.toString(then));
        assertThrows(SignatureVerificationException.class, () -> Webhooks.verify(BODY, headers, SECRET));
        assertEquals("evt_1", Webhooks.verify(BODY, headers, SECRET, Duration.ofMinutes(15)).id(), "within a wider tolerance");
        long future = Instant.now().getEpochSecond() + 600;
        Map<String, String> ahead = Map.of("Gable-Signature", "v1=" + sign(SECRET, future, BODY), "Gable-Timestamp", Long.toString(future));
        assertThrows(SignatureVerificationException.class, () -> Webhooks.verify(BODY, ahead, SECRET));
    }

    @Test
    void missingHeadersAreRefused() throws Exception {
        long now = Instant.now().getEpochSecond();
        String sig = "v1=" + sign(SECRET, now, BODY);
        assertThrows(SignatureVerificationException.class, () -> Webhooks.verify(BODY, Map.of("Gable-Signature", sig), SECRET));
        assertThrows(SignatureVerificationException.class, () -> Webhooks.verify(BODY, Map.of("Gable-Timestamp", Long.toString(now)), SECRET));
        assertThrows(SignatureVerificationException.class,
                () -> Webhooks.verify(BODY, Map.of("Gable-Signature", sig, "Gable-Timestamp", "soon"), SECRET));
    }
}
