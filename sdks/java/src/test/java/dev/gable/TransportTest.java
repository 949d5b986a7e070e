package dev.gable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What the kit sends and how it retries, against a scripted local server. */
class TransportTest {
    record Answer(int status, Map<String, String> headers, String body) {}

    record Seen(String method, String path, String query, String rawQuery, Map<String, List<String>> headers) {
        String header(String name) {
            List<String> v = headers.get(name);
            return v == null ? null : v.get(0);
        }
    }

    final Queue<Answer> script = new ArrayDeque<>();
    final List<Seen> seen = new CopyOnWriteArrayList<>();
    HttpServer server;

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/", exchange -> {
            exchange.getRequestBody().readAllBytes();
            String rawQuery = exchange.getRequestURI().getRawQuery();
            seen.add(new Seen(exchange.getRequestMethod(), exchange.getRequestURI().getPath(),
                    rawQuery == null ? "" : URLDecoder.decode(rawQuery, StandardCharsets.UTF_8),
                    rawQuery == null ? "" : rawQuery, exchange.getRequestHeaders()));
            Answer a;
            synchronized (script) {
                a = script.size() > 1 ? script.poll() : script.peek(); // the last answer repeats
            }
            byte[] body = a.body().getBytes(StandardCharsets.UTF_8);
            a.headers().forEach(exchange.getResponseHeaders()::add);
            exchange.getResponseHeaders().add("Content-Type", "application/json");
            exchange.sendResponseHeaders(a.status(), body.length);
            exchange.getResponseBody().write(body);
            exchange.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    Gable.Builder client() {
        // No "/v1": the client adds it.
        return Gable.builder().apiKey("gbl_test_stub").baseUrl("http://127.0.0.1:" + server.getAddress().getPort() + "/")
                .initialBackoff(Duration.ofMillis(5));
    }

    @Test
    void retriesReuseOneIdempotencyKeyAndEveryRequestIsPinned() {
        script.add(new Answer(503, Map.of(), "{\"error\":{\"code\":\"unavailable\",\"message\":\"down\"}}"));
        script.add(new Answer(429, Map.of("Retry-After", "0"), "{\"error\":{\"code\":\"rate_limited\",\"message\":\"slow\"}}"));
        script.add(new Answer(201, Map.of(), "{\"data\":{\"id\":\"unt_1\",\"rent\":1450.10}}"));
        GableObject unit = client().build().units().create(Map.of("number", "1A"));
        assertEquals("unt_1", unit.id());
        assertEquals("1450.10", unit.getString("rent"), "decimals are not doubles");

        assertEquals(3, seen.size());
        String key = seen.get(0).header("Idempotency-Key");
        assertEquals(4, UUID.fromString(key).version());
        for (Seen s : seen) {
            assertEquals("POST", s.method());
            assertEquals("/v1/units", s.path());
            assertEquals(key, s.header("Idempotency-Key"), "every retry reuses the call's key");
            assertEquals("2026-11-22", s.header("Gable-Version"));
            assertEquals("gable-java/0.1.0", s.header("User-Agent"));
            assertEquals("Bearer gbl_test_stub", s.header("Authorization"));
            assertEquals("application/json", s.header("Content-Type"));
        }
    }

    @Test
    void errorsAfterTheRetriesAreTyped() {
        script.add(new Answer(500, Map.of("Request-Id", "req_stub"), "{\"error\":{\"code\":\"internal\",\"message\":\"boom\"}}"));
        ServerException e = assertThrows(ServerException.class, () -> client().maxRetries(2).build().units().get("unt 1"));
        assertEquals(500, e.status());
        assertEquals("internal", e.code());
        assertEquals("boom", e.message());
        assertEquals("req_stub", e.requestId(), "the Request-Id header when the body has none");
        assertEquals(3, seen.size(), "the first try and two retries");
        assertEquals("/v1/units/unt 1", seen.get(0).path());
        assertNull(seen.get(0).header("Idempotency-Key"), "only POSTs carry one");

        seen.clear();
        assertThrows(ServerException.class, () -> client().maxRetries(0).build().units().get("unt_1"));
        assertEquals(1, seen.size(), "maxRetries 0 disables retries");
    }

    @Test
    void aNetworkFailureIsTheBaseErrorWithStatusZero() {
        Gable gable = client().maxRetries(1).build();
        server.stop(0); // nothing listens on that port any more
        GableException e = assertThrows(GableException.class, () -> gable.units().page());
        assertEquals(GableException.class, e.getClass());
        assertEquals(0, e.status());
        assertEquals("network_error", e.code());
        assertInstanceOf(IOException.class, e.getCause());
    }

    @Test
    void listOptionsBecomeTheQueryAndPagesFollowTheCursor() {
        script.add(new Answer(200, Map.of(), "{\"data\":[{\"id\":\"a\"}],\"meta\":{\"has_more\":true,\"next_cursor\":\"c2\"}}"));
        script.add(new Answer(200, Map.of(), "{\"data\":[{\"id\":\"b\"}],\"meta\":{\"has_more\":false,\"next_cursor\":null}}"));
        ListParams params = ListParams.builder()
                .filter("status", "in", List.of("active", "ended"))
                .filter("rent", Map.of("gte", 1000)).filter("currency", "USD")
                .filter("furnished", true)
                .sort("-start_date", "number").fields("id", "rent").limit(1).build();
        List<String> ids = client().build().collection("leases").list(params).stream().map(GableObject::id).toList();
        assertEquals(List.of("a", "b"), ids);
        assertEquals(2, seen.size());
        String query = "filter[status][in]=active,ended&filter[rent][gte]=1000&filter[currency]=USD&filter[furnished]=true"
                + "&sort=-start_date,number&fields[leases]=id,rent&limit=1";
        assertEquals(query, seen.get(0).query());
        assertEquals(query + "&cursor=c2", seen.get(1).query());
    }

    @Test
    void expandIsARepeatedParameterOnEveryCallAndEveryPage() {
        script.add(new Answer(200, Map.of(), "{\"data\":[{\"id\":\"a\"}],\"meta\":{\"has_more\":true,\"next_cursor\":\"c2\"}}"));
        script.add(new Answer(200, Map.of(), "{\"data\":[{\"id\":\"b\"}],\"meta\":{\"has_more\":false,\"next_cursor\":null}}"));
        script.add(new Answer(200, Map.of(), "{\"data\":{\"id\":\"x\",\"unit_id\":{\"id\":\"u\",\"object\":\"unit\"}}}"));
        Gable gable = client().build();
        ListParams params = ListParams.builder().filter("status", "active").expand("unit", "unit.property")
                .fieldsOf("units", "number").limit(1).build();
        assertEquals(List.of("a", "b"), gable.leases().list(params).stream().map(GableObject::id).toList());
        RecordOptions both = RecordOptions.expand("unit", "unit.property");
        GableObject lease = gable.leases().get("l1",
                RecordOptions.builder().expand("unit").expand("unit.property").fieldsOf("leases", "rent").fieldsOf("units", "number", "bedrooms").build());
        assertEquals("unit", lease.getObject("unit_id").getString("object"));
        gable.leases().create(Map.of("rent", 1), "k-123456", both);
        gable.leases().update("l1", Map.of("rent", 2), RecordOptions.expand("unit"));
        gable.leases().action("l1", "send", null, null, both);
        gable.payments().createTestPayment("succeeded", "1.00", "USD", Map.of(), null, RecordOptions.expand("invoice"));
        gable.leases().get("l1", null);
        gable.leases().get("l1");
        String e = "expand%5B%5D=unit&expand%5B%5D=unit.property";
        assertEquals(List.of(
                "GET /v1/leases?filter%5Bstatus%5D=active&fields%5Bunits%5D=number&" + e + "&limit=1",
                "GET /v1/leases?filter%5Bstatus%5D=active&fields%5Bunits%5D=number&" + e + "&limit=1&cursor=c2",
                "GET /v1/leases/l1?fields%5Bleases%5D=rent&fields%5Bunits%5D=number%2Cbedrooms&" + e,
                "POST /v1/leases?" + e,
                "PATCH /v1/leases/l1?expand%5B%5D=unit",
                "POST /v1/leases/l1/send?" + e,
                "POST /v1/payments?expand%5B%5D=invoice",
                "GET /v1/leases/l1?",
                "GET /v1/leases/l1?"),
                seen.stream().map(s -> s.method() + " " + s.path() + "?" + s.rawQuery()).toList());
        assertEquals("k-123456", seen.get(3).header("Idempotency-Key"), "the key goes with expand");
    }
}
