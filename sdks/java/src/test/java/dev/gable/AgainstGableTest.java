package dev.gable;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.sun.net.httpserver.HttpServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.math.BigDecimal;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kit against a real Gable (started by sdks/run.sh, which exports GABLE_SANDBOX_URL and
 * GABLE_TEST_KEY: a sandbox key with every scope).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class AgainstGableTest {
    static final String URL = env("GABLE_SANDBOX_URL");
    static final String KEY = env("GABLE_TEST_KEY");
    static final String RUN = UUID.randomUUID().toString().substring(0, 8);
    static final Map<String, Object> ADDRESS = Map.of("line1", "1 Kit Street", "city", "Portland", "country", "US");

    final Gable gable = Gable.sandbox(KEY, URL);
    GableObject property;

    static String env(String name) {
        String v = System.getenv(name);
        if (v == null || v.isEmpty()) {
            throw new IllegalStateException(name + " is not set: run the suite with sdks/run.sh java");
        }
        return v;
    }

    @BeforeAll
    void createProperty() {
        property = gable.properties().create(Map.of("name", "Kit Court " + RUN, "kind", "residential", "address", ADDRESS));
    }

    /**
     * Every collection of the served description has an accessor, and every accessor is one
     * of them (the accessors are generated from the registry: {@code make generate}). Every
     * collection has a record path, {@code /v1/{name}/{id}}; nothing else has one.
     */
    @Test
    void everyCollectionOfTheServedDescriptionHasAnAccessor() throws ReflectiveOperationException {
        Pattern recordPath = Pattern.compile("/v1/([a-z-]+)/\\{id\\}");
        Map<?, ?> paths = (Map<?, ?>) gable.request("GET", "/openapi.json", null, null).get("paths");
        List<String> described = new ArrayList<>();
        for (Object path : paths.keySet()) {
            Matcher m = recordPath.matcher((String) path);
            if (m.matches()) {
                described.add(m.group(1));
            }
        }
        assertFalse(described.isEmpty(), "the description has collections");
        List<String> accessors = new ArrayList<>();
        for (Method method : Gable.class.getMethods()) {
            if (method.getParameterCount() == 0 && Resource.class.isAssignableFrom(method.getReturnType())) {
                String name = ((Resource) method.invoke(gable)).name();
                assertEquals(camel(name), method.getName(), name);
                accessors.add(name);
            }
        }
        Collections.sort(described);
        Collections.sort(accessors);
        assertEquals(described, accessors, "run `make generate`");
        assertInstanceOf(Payments.class, gable.payments());
    }

    /** A collection's accessor: {@code purchase-orders} is {@code purchaseOrders()}. */
    static String camel(String name) {
        StringBuilder out = new StringBuilder();
        for (String word : name.split("-")) {
            out.append(out.length() == 0 ? word : Character.toUpperCase(word.charAt(0)) + word.substring(1));
        }
        return out.toString();
    }

    @Test
    void createListWithAutoPaginationAndFilters() {
        GableObject own = gable.properties().create(Map.of("name", "Paging Court " + RUN, "kind", "residential", "address", ADDRESS));
        List<String> made = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            made.add(gable.units().create(Map.of("property_id", own.id(), "number", RUN + "-" + i, "bedrooms", i % 2)).id());
        }
        List<String> seen = gable.units()
                .list(ListParams.builder().filter("property_id", own.id()).limit(2).sort("number").build())
                .stream().map(GableObject::id).toList();
        assertEquals(made, seen, "three pages of two, in order");

        List<GableObject> oneBedroom = gable.units()
                .list(ListParams.builder().filters(Map.of("property_id", own.id(), "bedrooms", 1)).fields("id", "bedrooms").build())
                .stream().toList();
        assertEquals(2, oneBedroom.size());
        for (GableObject u : oneBedroom) {
            assertTrue(Set.of("id", "bedrooms", "object").containsAll(u.keySet()), u::toString);
        }

        Page page = gable.units().page(ListParams.builder().filter("property_id", own.id()).limit(2).build());
        assertEquals(2, page.data().size());
        assertTrue(page.hasMore());
    }

    @Test
    void actionsAndTypedErrors() {
        GableObject unit = gable.units().create(Map.of("property_id", property.id(), "number", RUN + "-L"));
        GableObject listing = gable.listings().create(Map.of("unit_id", unit.id(), "title", "Bright", "rent", "1450.00", "currency", "USD"));
        assertEquals("published", gable.listings().action(listing.id(), "publish").getString("status"));

        ConflictException conflict = assertThrows(ConflictException.class, () -> gable.listings().action(listing.id(), "publish"));
        assertEquals(409, conflict.status());
        assertEquals("invalid_state_transition", conflict.code());
        assertNotNull(conflict.requestId());
        assertFalse(conflict.requestId().isBlank());

        NotFoundException missing = assertThrows(NotFoundException.class, () -> gable.units().get(UUID.randomUUID().toString()));
        assertEquals(404, missing.status());

        InvalidRequestException invalid = assertThrows(InvalidRequestException.class,
                () -> gable.units().create(Map.of("property_id", property.id(), "number", RUN + "-X", "bedrooms", -1)));
        assertEquals("bedrooms", invalid.param());

        assertThrows(AuthenticationException.class, () -> Gable.sandbox("gbl_test_" + "x".repeat(43), URL).units().page());
    }

    /** The record an expanded reference holds (a failure when it is still an id). */
    static GableObject expanded(GableObject record, String field, String what) {
        GableObject inner = record.getObject(field);
        assertNotNull(inner, () -> what + ": " + field + " is " + record.get(field) + ", not the record");
        return inner;
    }

    @Test
    void expandAnswersReferencesWithTheirRecords() {
        GableObject own = gable.properties().create(Map.of("name", "Expand Court " + RUN, "kind", "residential", "address", ADDRESS));
        GableObject unit = gable.units().create(Map.of("property_id", own.id(), "number", RUN + "-E"));
        Map<String, Object> terms = Map.of("unit_id", unit.id(), "rent", "100.00", "currency", "USD", "start_date", "2027-01-01");
        GableObject lease = gable.leases().create(terms, null, RecordOptions.expand("unit"));
        GableObject created = expanded(lease, "unit_id", "create");
        assertEquals(List.of("unit", unit.id()), List.of(created.getString("object"), created.id()));
        assertEquals(own.id(), lease.getString("property_id"), "what was not asked for stays an id");
        Map<String, Object> later = new HashMap<>(terms);
        later.put("start_date", "2027-02-01");
        GableObject second = gable.leases().create(later);
        assertEquals(unit.id(), second.getString("unit_id"), "without expand, an id");

        GableObject got = gable.leases().get(lease.id(), RecordOptions.expand("unit", "unit.property"));
        GableObject gotUnit = expanded(got, "unit_id", "get");
        assertEquals("unit", gotUnit.getString("object"));
        assertEquals(RUN + "-E", gotUnit.getString("number"));
        GableObject gotProperty = expanded(gotUnit, "property_id", "get's unit");
        assertEquals("property", gotProperty.getString("object"));
        assertEquals("Expand Court " + RUN, gotProperty.getString("name"));

        // Two pages of one: the second page must be asked with expand[] too.
        List<GableObject> listed = gable.leases()
                .list(ListParams.builder().filter("unit_id", unit.id()).sort("start_date").limit(1).expand("unit").build())
                .stream().toList();
        assertEquals(List.of(lease.id(), second.id()), listed.stream().map(GableObject::id).toList());
        for (int i = 0; i < listed.size(); i++) {
            GableObject u = expanded(listed.get(i), "unit_id", "page " + (i + 1));
            assertEquals(List.of("unit", RUN + "-E"), List.of(u.getString("object"), u.getString("number")));
        }
        Page page = gable.leases().page(ListParams.builder().filter("unit_id", unit.id()).limit(1).expand("unit").build());
        assertEquals(unit.id(), expanded(page.data().get(0), "unit_id", "page").id());

        // Fieldsets of the expanded collections; an update and an action answer expanded too.
        GableObject trimmed = gable.leases().get(lease.id(),
                RecordOptions.builder().expand("unit").fieldsOf("leases", "rent").fieldsOf("units", "number").build());
        assertEquals(Set.of("id", "object", "rent", "unit_id"), trimmed.keySet(), "the expanded reference is shown");
        assertEquals(Set.of("id", "object", "number"), expanded(trimmed, "unit_id", "trimmed").keySet());
        GableObject updated = gable.leases().update(lease.id(), Map.of("rent", "120.00"), RecordOptions.expand("unit.property"));
        assertEquals(0, new BigDecimal(updated.getString("rent")).compareTo(new BigDecimal("120")));
        assertEquals(own.id(), expanded(expanded(updated, "unit_id", "update"), "property_id", "update's unit").id());
        GableObject invoice = gable.invoices().create(Map.of(
                "lease_id", lease.id(), "amount_due", "120.00", "currency", "USD", "due_date", "2027-01-01"));
        GableObject opened = gable.invoices().action(invoice.id(), "open", null, null, RecordOptions.expand("lease.unit"));
        assertEquals("open", opened.getString("status"));
        assertEquals(RUN + "-E", expanded(expanded(opened, "lease_id", "action"), "unit_id", "action's lease").getString("number"));

        InvalidRequestException unknown = assertThrows(InvalidRequestException.class,
                () -> gable.leases().get(lease.id(), RecordOptions.expand("unit", "nope")));
        assertEquals(400, unknown.status());
        assertEquals("invalid_parameter", unknown.code());
        assertEquals("expand[]", unknown.param());
    }

    @Test
    void aRetriedTestPaymentPaysOnce() {
        // A test invoice paid safely twice: only an open invoice takes payments.
        GableObject unit = gable.units().create(Map.of("property_id", property.id(), "number", RUN + "-P"));
        GableObject lease = gable.leases().create(Map.of(
                "unit_id", unit.id(), "start_date", "2027-01-01", "rent", "100.00", "currency", "USD"));
        GableObject invoice = gable.invoices().create(Map.of(
                "lease_id", lease.id(), "amount_due", "100.00", "currency", "USD", "due_date", "2027-01-01"));
        assertEquals("draft", invoice.getString("status"));
        assertEquals("open", gable.invoices().action(invoice.id(), "open").getString("status"));

        ListParams all = ListParams.builder().limit(100).build();
        long before = gable.payments().list(all).stream().count();
        String key = UUID.randomUUID().toString();
        Map<String, String> pay = Map.of("invoice_id", invoice.id());
        GableObject first = gable.payments().createTestPayment("succeeded", "100.00", "USD", pay, key);
        GableObject again = gable.payments().createTestPayment("succeeded", "100.00", "USD", pay, key);
        assertEquals(first.id(), again.id());
        assertEquals("succeeded", first.getString("status"));
        assertEquals("succeeded", again.getString("status"));
        assertEquals(before + 1, gable.payments().list(all).stream().count(), "one payment for the retried request");
        GableObject paid = gable.invoices().get(invoice.id());
        assertEquals("paid", paid.getString("status"));
        // Amounts are JSON numbers (Integer or BigDecimal here): compare them as numbers.
        Number amountPaid = assertInstanceOf(Number.class, paid.get("amount_paid"), "amounts are JSON numbers");
        assertEquals(0, new BigDecimal(amountPaid.toString()).compareTo(new BigDecimal("100")), () -> "amount_paid " + amountPaid);

        GableObject other = gable.payments().createTestPayment("failed", 3, "USD");
        assertNotEquals(first.id(), other.id());
        assertEquals("failed", other.getString("status"));
    }

    @Test
    void aReusedIdempotencyKeyIsAnIdempotencyException() {
        ListParams all = ListParams.builder().limit(100).build();
        String key = UUID.randomUUID().toString();
        GableObject first = gable.payments().createTestPayment("succeeded", "21.00", "USD", key);
        long before = gable.payments().list(all).stream().count();
        IdempotencyException reused = assertThrows(IdempotencyException.class,
                () -> gable.payments().createTestPayment("succeeded", "22.00", "USD", key));
        assertEquals(422, reused.status());
        assertEquals("idempotency_key_reused", reused.code());
        assertNotNull(reused.requestId());
        assertFalse(reused.requestId().isBlank());
        assertEquals(first, gable.payments().get(first.id()), "the first payment is unchanged");
        assertEquals(before, gable.payments().list(all).stream().count(), "no second payment");
    }

    @Test
    void a429IsRetriedAfterRetryAfter() {
        // The server runs with a low sandbox rate limit (sdks/run.sh); this burst exceeds it.
        Gable impatient = Gable.builder().apiKey(KEY).baseUrl(URL).maxRetries(0).build();
        ListParams one = ListParams.builder().limit(1).build();
        RateLimitException limited = assertThrows(RateLimitException.class, () -> {
            for (int i = 0; i < 40; i++) {
                impatient.units().page(one);
            }
        });
        assertEquals(429, limited.status());

        Gable patient = Gable.builder().apiKey(KEY).baseUrl(URL).maxRetries(5).build();
        long started = System.nanoTime();
        for (int i = 0; i < 20; i++) {
            patient.units().page(one);
        }
        assertTrue(Duration.ofNanos(System.nanoTime() - started).toMillis() > 500, "the burst had to wait for Retry-After");
    }

    /** One request as the receiver got it. */
    record Delivery(byte[] body, Map<String, List<String>> headers) {}

    @Test
    void webhookVerificationOfARealDelivery() throws IOException, InterruptedException {
        BlockingQueue<Delivery> received = new LinkedBlockingQueue<>();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/hook", exchange -> {
            received.add(new Delivery(exchange.getRequestBody().readAllBytes(), new HashMap<>(exchange.getRequestHeaders())));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
        try {
            GableObject hook = gable.webhooks().create(Map.of(
                    "url", "http://127.0.0.1:" + server.getAddress().getPort() + "/hook",
                    "events", List.of("lead.created")));
            String secret = hook.getString("secret");
            gable.leads().create(Map.of("name", "Lee", "email", "lee." + RUN + "@example.com"));

            Delivery delivery = received.poll(30, TimeUnit.SECONDS);
            assertNotNull(delivery, "Gable delivered the event");
            // The receiver's header names are as com.sun.net.httpserver spells them ("Gable-signature").
            GableObject event = Webhooks.verify(delivery.body(), delivery.headers(), secret);
            assertEquals("lead.created", event.getString("type"));

            byte[] tampered = new String(delivery.body(), StandardCharsets.UTF_8).replace("Lee", "Eve").getBytes(StandardCharsets.UTF_8);
            assertThrows(SignatureVerificationException.class, () -> Webhooks.verify(tampered, delivery.headers(), secret), "tampered body");
            assertThrows(SignatureVerificationException.class, () -> Webhooks.verify(delivery.body(), delivery.headers(), "whsec_wrong"), "wrong secret");
            SignatureVerificationException stale = assertThrows(SignatureVerificationException.class,
                    () -> Webhooks.verify(delivery.body(), delivery.headers(), secret, Webhooks.DEFAULT_TOLERANCE, Instant.now().plusSeconds(3600)));
            assertTrue(stale.getMessage().contains("tolerance"), stale::getMessage);

            gable.webhooks().delete(hook.id());
        } finally {
            server.stop(0);
        }
    }

    /**
     * A reader of a child process's stream on a thread of its own (so the pipe never fills):
     * every line into {@code said}, and {@code ready} (when given) counted down at a line
     * holding {@code marker}.
     */
    static Thread drain(InputStream stream, StringBuffer said, String marker, CountDownLatch ready) {
        Thread reader = new Thread(() -> {
            try (BufferedReader lines = new BufferedReader(new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                for (String line; (line = lines.readLine()) != null; ) {
                    said.append(line).append('\n');
                    if (ready != null && line.contains(marker)) {
                        ready.countDown();
                    }
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        reader.setDaemon(true);
        reader.start();
        return reader;
    }

    /** Ends a child process: SIGTERM, then SIGKILL when it is still there after 10 s. */
    static void stop(Process process) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }

    /**
     * {@code gable listen --forward-to} signs each event as a delivery, under the secret that
     * {@code gable listen --print-secret} prints: what a developer configures in their app.
     */
    @Test
    void aGableListenForwardVerifiesWithTheKitsVerifier(@TempDir Path home) throws IOException, InterruptedException {
        String bin = System.getenv("GABLE_BIN");
        Assumptions.assumeTrue(bin != null && !bin.isEmpty(),
                "GABLE_BIN (the gable binary) is not set: sdks/run.sh sets it to run `gable listen`");
        BlockingQueue<Delivery> received = new LinkedBlockingQueue<>();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/webhooks", exchange -> {
            received.add(new Delivery(exchange.getRequestBody().readAllBytes(), new HashMap<>(exchange.getRequestHeaders())));
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        server.start();
        Process listen = null;
        try {
            Map<String, String> env = Map.of("GABLE_API_URL", URL, "GABLE_API_KEY", KEY, "GABLE_CLI_HOME", home.toString());

            ProcessBuilder printSecret = new ProcessBuilder(bin, "listen", "--print-secret");
            printSecret.environment().putAll(env);
            Process printing = printSecret.start();
            printing.getOutputStream().close();
            StringBuffer printed = new StringBuffer();
            StringBuffer printErr = new StringBuffer();
            Thread printedReader = drain(printing.getInputStream(), printed, null, null);
            Thread printErrReader = drain(printing.getErrorStream(), printErr, null, null);
            boolean printedInTime = printing.waitFor(20, TimeUnit.SECONDS);
            if (!printedInTime) {
                stop(printing);
            }
            printedReader.join(5000);
            printErrReader.join(5000);
            assertTrue(printedInTime && printing.exitValue() == 0, () -> "gable listen --print-secret failed: " + printErr);
            String secret = printed.toString().trim();
            assertTrue(secret.startsWith("whsec_"), () -> "gable listen --print-secret printed " + printed);

            ProcessBuilder forward = new ProcessBuilder(bin, "listen",
                    "--forward-to", "http://127.0.0.1:" + server.getAddress().getPort() + "/webhooks", "--events", "lead.created");
            forward.environment().putAll(env);
            listen = forward.start();
            listen.getOutputStream().close();
            StringBuffer said = new StringBuffer();
            CountDownLatch ready = new CountDownLatch(1);
            drain(listen.getErrorStream(), said, "Forwarding each event to", ready);
            drain(listen.getInputStream(), said, null, null);
            assertTrue(ready.await(20, TimeUnit.SECONDS), () -> "gable listen was not forwarding within 20 s: " + said);

            GableObject lead = gable.leads().create(Map.of("name", "Lee Listen", "email", "lee.listen." + RUN + "@example.com"));
            ObjectMapper json = new ObjectMapper();
            Delivery delivery = null;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (delivery == null && System.nanoTime() < deadline) {
                Delivery next = received.poll(100, TimeUnit.MILLISECONDS);
                if (next != null && lead.id().equals(json.readTree(next.body()).path("data").path("object").path("id").asText())) {
                    delivery = next;
                }
            }
            assertNotNull(delivery, () -> "gable listen forwarded no lead.created about " + lead.id() + " within 30 s: " + said);
            Delivery forwarded = delivery;

            GableObject event = Webhooks.verify(forwarded.body(), forwarded.headers(), secret);
            assertEquals("lead.created", event.getString("type"));
            String eventId = null;
            for (Map.Entry<String, List<String>> header : forwarded.headers().entrySet()) {
                if (header.getKey().equalsIgnoreCase("Gable-Event-Id")) {
                    eventId = header.getValue().get(0);
                }
            }
            assertEquals(event.id(), eventId, "Gable-Event-Id is the event's id");
            byte[] tampered = new String(forwarded.body(), StandardCharsets.UTF_8).replace("Lee Listen", "Eve Listen").getBytes(StandardCharsets.UTF_8);
            assertFalse(Arrays.equals(tampered, forwarded.body()), "the forwarded body names the lead");
            assertThrows(SignatureVerificationException.class, () -> Webhooks.verify(tampered, forwarded.headers(), secret), "tampered body");
        } finally {
            if (listen != null) {
                stop(listen);
            }
            server.stop(0);
        }
    }
}
