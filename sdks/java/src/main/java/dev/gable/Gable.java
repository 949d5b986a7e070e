package dev.gable;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * A client for one Gable environment and one credential. Immutable and thread-safe: make one
 * and share it.
 *
 * <pre>{@code
 * Gable gable = Gable.sandbox("gbl_test_…");
 * GableObject unit = gable.units().create(Map.of("property_id", propertyId, "number", "1A"));
 * }</pre>
 *
 * <p>Every collection has an accessor ({@link #units()}, {@link #purchaseOrders()}, …) and
 * {@link #collection(String)} reaches any by its API name. Every POST carries an
 * {@code Idempotency-Key} (one per call, reused by its retries); 429, 5xx and network errors
 * are retried with full-jitter exponential backoff, honouring {@code Retry-After}.
 */
public final class Gable {
    /** This kit's version (sent in {@code User-Agent}). */
    public static final String VERSION = "0.1.0";
    /** The API version this kit is written against (sent as {@code Gable-Version}). */
    public static final String API_VERSION = "2026-11-22";
    /** The live API of a default local installation ({@code gable serve}). */
    public static final String LIVE_URL = "http://127.0.0.1:8080/v1";
    /** The sandbox API of a default local installation. */
    public static final String SANDBOX_URL = "http://127.0.0.1:8081/v1";

    // Decimals as BigDecimal: amounts must not pass through a double.
    static final ObjectMapper JSON = new ObjectMapper().enable(DeserializationFeature.USE_BIG_DECIMAL_FOR_FLOATS);
    static final TypeReference<Map<String, Object>> MAP = new TypeReference<>() {};

    private final String apiKey;
    private final String baseUrl;
    private final int maxRetries;
    private final Duration timeout;
    private final Duration initialBackoff;
    private final Duration maxBackoff;
    private final HttpClient http;

    private Gable(Builder b) {
        if (b.apiKey == null || b.apiKey.isEmpty()) {
            throw new IllegalArgumentException("an API key or access token is required");
        }
        if (b.maxRetries < 0) {
            throw new IllegalArgumentException("maxRetries must be 0 or more");
        }
        String base = b.baseUrl.replaceAll("/+$", "");
        this.baseUrl = base.endsWith("/v1") ? base : base + "/v1";
        this.apiKey = b.apiKey;
        this.maxRetries = b.maxRetries;
        this.timeout = b.timeout;
        this.initialBackoff = b.initialBackoff;
        this.maxBackoff = b.maxBackoff;
        // HTTP/1.1: Gable speaks it everywhere, and a plain-http h2c upgrade buys nothing.
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(b.timeout).build();
    }

    /** A client for the sandbox of a default local installation ({@value #SANDBOX_URL}). */
    public static Gable sandbox(String apiKey) {
        return builder().apiKey(apiKey).baseUrl(SANDBOX_URL).build();
    }

    /** A client for a sandbox API at {@code baseUrl} ({@code /v1} is added when missing). */
    public static Gable sandbox(String apiKey, String baseUrl) {
        return builder().apiKey(apiKey).baseUrl(baseUrl).build();
    }

    /** A client for the live API of a default local installation ({@value #LIVE_URL}). */
    public static Gable live(String apiKey) {
        return builder().apiKey(apiKey).baseUrl(LIVE_URL).build();
    }

    /** A client for a live API at {@code baseUrl} ({@code /v1} is added when missing). */
    public static Gable live(String apiKey, String baseUrl) {
        return builder().apiKey(apiKey).baseUrl(baseUrl).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The API's address, ending in {@code /v1}. */
    public String baseUrl() {
        return baseUrl;
    }

    public int maxRetries() {
        return maxRetries;
    }

    /** A collection by its API name ({@code "purchase-orders"}). */
    public Resource collection(String name) {
        return new Resource(this, name);
    }

    // BEGIN GENERATED accessors: `make generate` writes these from `gable collections`.
    public Resource organizations() { return collection("organizations"); }
    public Resource companies() { return collection("companies"); }
    public Resource users() { return collection("users"); }
    public Resource roles() { return collection("roles"); }
    public Resource owners() { return collection("owners"); }
    public Resource properties() { return collection("properties"); }
    public Resource buildings() { return collection("buildings"); }
    public Resource units() { return collection("units"); }
    public Resource rooms() { return collection("rooms"); }
    public Resource beds() { return collection("beds"); }
    public Resource listings() { return collection("listings"); }
    public Resource leads() { return collection("leads"); }
    public Resource viewings() { return collection("viewings"); }
    public Resource applications() { return collection("applications"); }
    public Resource screening() { return collection("screening"); }
    public Resource leases() { return collection("leases"); }
    public Resource signatures() { return collection("signatures"); }
    public Resource tenancies() { return collection("tenancies"); }
    public Resource bookings() { return collection("bookings"); }
    public Resource guests() { return collection("guests"); }
    public Resource charges() { return collection("charges"); }
    public Resource invoices() { return collection("invoices"); }
    public Payments payments() { return new Payments(this); }
    public Resource refunds() { return collection("refunds"); }
    public Resource accountingEntries() { return collection("accounting-entries"); }
    public Resource workorders() { return collection("workorders"); }
    public Resource inspections() { return collection("inspections"); }
    public Resource assets() { return collection("assets"); }
    public Resource vendors() { return collection("vendors"); }
    public Resource purchaseOrders() { return collection("purchase-orders"); }
    public Resource documents() { return collection("documents"); }
    public Resource tasks() { return collection("tasks"); }
    public Resource messages() { return collection("messages"); }
    public Resource events() { return collection("events"); }
    public Resource reports() { return collection("reports"); }
    public Resource webhooks() { return collection("webhooks"); }
    public Resource webhookDeliveries() { return collection("webhook-deliveries"); }
    public Resource flowTokens() { return collection("flow-tokens"); }
    public Resource requestLogs() { return collection("request-logs"); }
    public Resource imports() { return collection("imports"); }
    // END GENERATED accessors

    /**
     * Sends one request, retrying 429, 5xx and network errors; returns the decoded JSON body.
     * {@code pathAndQuery} is relative to {@link #baseUrl()} and already encoded.
     */
    Map<String, Object> request(String method, String pathAndQuery, Object body, String idempotencyKey) {
        HttpRequest.Builder rb = HttpRequest.newBuilder(URI.create(baseUrl + pathAndQuery))
                .timeout(timeout)
                .header("Authorization", "Bearer " + apiKey)
                .header("Gable-Version", API_VERSION)
                .header("Accept", "application/json")
                .header("User-Agent", "gable-java/" + VERSION);
        HttpRequest.BodyPublisher content = HttpRequest.BodyPublishers.noBody();
        if (body != null) {
            try {
                content = HttpRequest.BodyPublishers.ofByteArray(JSON.writeValueAsBytes(body));
            } catch (IOException e) {
                throw new IllegalArgumentException("the request body is not JSON-serializable", e);
            }
            rb.header("Content-Type", "application/json");
        }
        if (method.equals("POST")) {
            // One key per call: its retries reuse it, so a retried POST takes effect once.
            rb.header("Idempotency-Key", idempotencyKey != null ? idempotencyKey : UUID.randomUUID().toString());
        }
        HttpRequest req = rb.method(method, content).build();

        for (int attempt = 0; ; attempt++) {
            HttpResponse<byte[]> resp;
            try {
                resp = http.send(req, HttpResponse.BodyHandlers.ofByteArray());
            } catch (IOException e) {
                if (attempt < maxRetries) {
                    pause(attempt, null);
                    continue;
                }
                throw new GableException(0, "network_error", "could not reach Gable: " + e, null, null, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new GableException(0, "network_error", "interrupted while calling Gable", null, null, e);
            }
            int status = resp.statusCode();
            if (status < 400) {
                return decode(resp.body(), status);
            }
            if (attempt < maxRetries && (status == 429 || status >= 500)) {
                pause(attempt, resp.headers().firstValue("Retry-After").orElse(null));
                continue;
            }
            throw GableException.from(status, resp.body(), resp.headers().firstValue("Request-Id").orElse(null));
        }
    }

    private static Map<String, Object> decode(byte[] raw, int status) {
        if (raw.length == 0) {
            return new LinkedHashMap<>();
        }
        try {
            return JSON.readValue(raw, MAP);
        } catch (IOException e) {
            throw new GableException(status, "invalid_response", "Gable's answer is not JSON", null, null, e);
        }
    }

    /** Waits before retry {@code attempt + 1}: {@code Retry-After} seconds, else full jitter. */
    private void pause(int attempt, String retryAfter) {
        long millis;
        if (retryAfter != null && retryAfter.trim().matches("\\d{1,6}")) {
            millis = Long.parseLong(retryAfter.trim()) * 1000;
        } else {
            // Full jitter: a random wait up to the exponential bound.
            long bound = Math.min(maxBackoff.toMillis(), initialBackoff.toMillis() << Math.min(attempt, 30));
            millis = ThreadLocalRandom.current().nextLong(bound + 1);
        }
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new GableException(0, "network_error", "interrupted while waiting to retry", null, null, e);
        }
    }

    /** Options of a {@link Gable} client; only the API key is required. */
    public static final class Builder {
        private String apiKey;
        private String baseUrl = SANDBOX_URL;
        private int maxRetries = 3;
        private Duration timeout = Duration.ofSeconds(30);
        private Duration initialBackoff = Duration.ofMillis(500);
        private Duration maxBackoff = Duration.ofSeconds(8);

        private Builder() {}

        /** An API key ({@code gbl_test_…}, {@code gbl_live_…}) or an OAuth access token. */
        public Builder apiKey(String apiKey) {
            this.apiKey = apiKey;
            return this;
        }

        /** The environment's API address ({@code /v1} is added when missing); sandbox by default. */
        public Builder baseUrl(String baseUrl) {
            this.baseUrl = Objects.requireNonNull(baseUrl, "baseUrl");
            return this;
        }

        /** Retries of a 429, 5xx or network error (3 by default; 0 disables them). */
        public Builder maxRetries(int maxRetries) {
            this.maxRetries = maxRetries;
            return this;
        }

        /** The time one attempt may take (30 s by default). */
        public Builder timeout(Duration timeout) {
            this.timeout = Objects.requireNonNull(timeout, "timeout");
            return this;
        }

        /** The bound of the first retry's random wait, doubled per retry (500 ms by default). */
        public Builder initialBackoff(Duration initialBackoff) {
            this.initialBackoff = Objects.requireNonNull(initialBackoff, "initialBackoff");
            return this;
        }

        /** The largest bound of a retry's random wait (8 s by default). */
        public Builder maxBackoff(Duration maxBackoff) {
            this.maxBackoff = Objects.requireNonNull(maxBackoff, "maxBackoff");
            return this;
        }

        public Gable build() {
            return new Gable(this);
        }
    }
}
