package dev.gable;

import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * One collection of the API ({@code /v1/{name}}): list, page, get, create, update (PATCH),
 * delete and state-machine actions. Reach one with {@link Gable#units()} and the like, or
 * {@link Gable#collection(String)}. Every call that answers records takes the shape of its
 * answer: {@link RecordOptions} (expanded references, fieldsets), or a list's
 * {@link ListParams}.
 */
public class Resource {
    private final Gable client;
    private final String name;

    Resource(Gable client, String name) {
        this.client = client;
        this.name = name;
    }

    /** The collection's API name ({@code purchase-orders}). */
    public String name() {
        return name;
    }

    /** Every record, page after page. */
    public AutoPagingIterable list() {
        return list(ListParams.none());
    }

    /** Every record matching {@code params}, page after page (follows {@code next_cursor}). */
    public AutoPagingIterable list(ListParams params) {
        return new AutoPagingIterable(this, params);
    }

    /** The first page, as the API answers it. */
    public Page page() {
        return page(ListParams.none());
    }

    /** One page (from {@code params}' cursor, if any), as the API answers it. */
    public Page page(ListParams params) {
        return page(params, params.cursor());
    }

    Page page(ListParams params, String cursor) {
        return new Page(client.request("GET", "/" + name + params.query(name, cursor), null, null));
    }

    public GableObject get(String id) {
        return get(id, RecordOptions.none());
    }

    /** One record, shaped by {@code options} ({@code RecordOptions.expand("unit")}). */
    public GableObject get(String id, RecordOptions options) {
        return data(client.request("GET", path(id) + query(options), null, null));
    }

    /** Creates a record (with a fresh {@code Idempotency-Key}). */
    public GableObject create(Map<String, ?> body) {
        return create(body, null);
    }

    /** Creates a record with your {@code Idempotency-Key}: the same key and body make one record. */
    public GableObject create(Map<String, ?> body, String idempotencyKey) {
        return create(body, idempotencyKey, RecordOptions.none());
    }

    /**
     * Creates a record with your {@code Idempotency-Key} (null for a fresh one), the answer
     * shaped by {@code options} ({@code RecordOptions.expand("unit")}).
     */
    public GableObject create(Map<String, ?> body, String idempotencyKey, RecordOptions options) {
        return data(client.request("POST", "/" + name + query(options), body, idempotencyKey));
    }

    /** Changes the given fields (PATCH). */
    public GableObject update(String id, Map<String, ?> body) {
        return update(id, body, RecordOptions.none());
    }

    /** Changes the given fields (PATCH), the answer shaped by {@code options}. */
    public GableObject update(String id, Map<String, ?> body, RecordOptions options) {
        return data(client.request("PATCH", path(id) + query(options), body, null));
    }

    public GableObject delete(String id) {
        return data(client.request("DELETE", path(id), null, null));
    }

    /** Runs a state-machine action ({@code leases().action(id, "send")}). */
    public GableObject action(String id, String action) {
        return action(id, action, null, null);
    }

    public GableObject action(String id, String action, Map<String, ?> body) {
        return action(id, action, body, null);
    }

    public GableObject action(String id, String action, Map<String, ?> body, String idempotencyKey) {
        return action(id, action, body, idempotencyKey, RecordOptions.none());
    }

    /**
     * Runs an action with your {@code Idempotency-Key} (null for a fresh one) and a body (null
     * for none), the answer shaped by {@code options}.
     */
    public GableObject action(String id, String action, Map<String, ?> body, String idempotencyKey, RecordOptions options) {
        return data(client.request("POST", path(id) + "/" + segment(action) + query(options), body, idempotencyKey));
    }

    private static String query(RecordOptions options) {
        return options == null ? "" : options.query();
    }

    private String path(String id) {
        return "/" + name + "/" + segment(id);
    }

    // URLEncoder writes form encoding; a path segment wants %20 for a space.
    private static String segment(String s) {
        return URLEncoder.encode(s, StandardCharsets.UTF_8).replace("+", "%20");
    }

    private static GableObject data(Map<String, Object> body) {
        return GableObject.of(body.get("data"));
    }
}
