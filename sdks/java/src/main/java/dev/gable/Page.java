package dev.gable;

import java.util.List;
import java.util.Map;

/** One page of a list, as the API answered it: its {@code data} and {@code meta}. */
public final class Page {
    private final List<GableObject> data;
    private final GableObject meta;

    Page(Map<String, Object> body) {
        Object d = body.get("data");
        this.data = d instanceof List<?> l ? l.stream().map(GableObject::of).toList() : List.of();
        this.meta = GableObject.of(body.get("meta"));
    }

    /** The page's records. */
    public List<GableObject> data() {
        return data;
    }

    /** The page's {@code meta} ({@code has_more}, {@code next_cursor}, …). */
    public GableObject meta() {
        return meta;
    }

    /** Whether more records follow this page. */
    public boolean hasMore() {
        return meta.getBoolean("has_more");
    }

    /** The cursor of the next page ({@link ListParams.Builder#cursor(String)}), or null. */
    public String nextCursor() {
        return meta.getString("next_cursor");
    }
}
