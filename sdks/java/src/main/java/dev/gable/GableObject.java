package dev.gable;

import java.io.IOException;
import java.util.AbstractMap;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * One record (or event, or page {@code meta}) as Gable answered it: a read-only
 * {@code Map<String, Object>} of its JSON fields (nested objects are maps, arrays are lists,
 * decimals are {@link java.math.BigDecimal}), with typed getters for the common cases.
 */
public final class GableObject extends AbstractMap<String, Object> {
    private final Map<String, Object> fields;

    GableObject(Map<?, ?> raw) {
        Map<String, Object> copy = new LinkedHashMap<>();
        raw.forEach((k, v) -> copy.put(String.valueOf(k), v));
        this.fields = Collections.unmodifiableMap(copy);
    }

    /** The object a JSON value is, or an empty one when it is not an object. */
    static GableObject of(Object value) {
        return new GableObject(value instanceof Map<?, ?> m ? m : Map.of());
    }

    @Override
    public Set<Entry<String, Object>> entrySet() {
        return fields.entrySet();
    }

    @Override
    public Object get(Object key) {
        return fields.get(key);
    }

    /** The record's {@code id}. */
    public String id() {
        return getString("id");
    }

    /** A field as text (numbers and booleans included), or null when absent. */
    public String getString(String key) {
        Object v = fields.get(key);
        return v == null ? null : v.toString();
    }

    /** A boolean field; false when absent. */
    public boolean getBoolean(String key) {
        return Boolean.TRUE.equals(fields.get(key));
    }

    /** A nested object, or null when absent or not an object. */
    public GableObject getObject(String key) {
        return fields.get(key) instanceof Map<?, ?> m ? new GableObject(m) : null;
    }

    /** The object as JSON text. */
    public String toJson() {
        try {
            return Gable.JSON.writeValueAsString(fields);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
    }

    @Override
    public String toString() {
        return toJson();
    }
}
