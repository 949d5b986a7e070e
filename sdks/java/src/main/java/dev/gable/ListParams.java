package dev.gable;

import java.math.BigDecimal;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * The options of a list: filters, sort, fields, expanded references, page size and starting
 * cursor.
 *
 * <pre>{@code
 * ListParams.builder()
 *     .filter("status", "active")
 *     .filter("rent", "gte", 1000).filter("currency", "USD")   // an amount filter needs its currency
 *     .filter("status", "in", List.of("active", "ended"))
 *     .sort("-start_date").fields("id", "rent").limit(100)
 *     .expand("unit", "unit.property")                          // every page: unit_id is the unit
 *     .build();
 * }</pre>
 */
public final class ListParams {
    private static final ListParams NONE = builder().build();

    private final List<String[]> filters;
    private final String sort;
    private final String fields;
    private final RecordOptions shape;
    private final Integer limit;
    private final String cursor;

    private ListParams(Builder b) {
        this.filters = List.copyOf(b.filters);
        this.sort = b.sort;
        this.fields = b.fields;
        this.shape = b.shape.build();
        this.limit = b.limit;
        this.cursor = b.cursor;
    }

    /** No options: the API's defaults. */
    public static ListParams none() {
        return NONE;
    }

    public static Builder builder() {
        return new Builder();
    }

    String cursor() {
        return cursor;
    }

    /** The query string ({@code ?…}, or empty) of a page of {@code collection} from {@code cursor}. */
    String query(String collection, String cursor) {
        List<String[]> q = new ArrayList<>(filters);
        if (sort != null) q.add(new String[] {"sort", sort});
        if (fields != null) q.add(new String[] {"fields[" + collection + "]", fields});
        q.addAll(shape.pairs());
        if (limit != null) q.add(new String[] {"limit", limit.toString()});
        if (cursor != null) q.add(new String[] {"cursor", cursor});
        return encode(q);
    }

    /** Name/value pairs as a query string ({@code ?a=1&b=2}, or empty), form-encoded. */
    static String encode(List<String[]> pairs) {
        StringJoiner out = new StringJoiner("&", "?", "").setEmptyValue("");
        for (String[] kv : pairs) {
            out.add(URLEncoder.encode(kv[0], StandardCharsets.UTF_8) + "=" + URLEncoder.encode(kv[1], StandardCharsets.UTF_8));
        }
        return out.toString();
    }

    /** A filter value as the API reads it: lists comma-joined, booleans {@code true}/{@code false}. */
    static String value(Object v) {
        if (v instanceof Iterable<?> items) {
            StringJoiner j = new StringJoiner(",");
            items.forEach(x -> j.add(value(x)));
            return j.toString();
        }
        if (v instanceof Object[] items) {
            return value(Arrays.asList(items));
        }
        if (v instanceof BigDecimal d) {
            return d.toPlainString();
        }
        return String.valueOf(v);
    }

    public static final class Builder {
        private final List<String[]> filters = new ArrayList<>();
        private String sort;
        private String fields;
        private final RecordOptions.Builder shape = RecordOptions.builder();
        private Integer limit;
        private String cursor;

        private Builder() {}

        /**
         * {@code filter[field]=value} (equality), or, when {@code value} is a map of operator to
         * value ({@code Map.of("gte", 1000)}), one {@code filter[field][op]} per entry.
         */
        public Builder filter(String field, Object value) {
            if (value instanceof Map<?, ?> ops) {
                ops.forEach((op, v) -> filter(field, String.valueOf(op), v));
            } else {
                filters.add(new String[] {"filter[" + field + "]", value(value)});
            }
            return this;
        }

        /** {@code filter[field][op]=value}, op one of {@code ne gt gte lt lte in nin exists}. */
        public Builder filter(String field, String op, Object value) {
            filters.add(new String[] {"filter[" + field + "][" + op + "]", value(value)});
            return this;
        }

        /** Every entry of {@code filters} as {@link #filter(String, Object)}. */
        public Builder filters(Map<String, ?> filters) {
            filters.forEach(this::filter);
            return this;
        }

        /** Sort keys, {@code -} first for descending ({@code "-created_at", "number"}). */
        public Builder sort(String... keys) {
            this.sort = String.join(",", keys);
            return this;
        }

        /** Only these fields ({@code id} and {@code object} always come too). */
        public Builder fields(String... names) {
            this.fields = String.join(",", names);
            return this;
        }

        /**
         * Only these fields of {@code collection}'s records, expanded ones included
         * ({@code fieldsOf("units", "number")}); see {@link RecordOptions.Builder#fieldsOf}.
         */
        public Builder fieldsOf(String collection, String... names) {
            shape.fieldsOf(collection, names);
            return this;
        }

        /**
         * References answered with their records instead of their ids, on every page
         * ({@code expand("unit", "unit.property")}); see {@link RecordOptions.Builder#expand}.
         */
        public Builder expand(String... paths) {
            shape.expand(paths);
            return this;
        }

        /** Records per page, 1 to 100. */
        public Builder limit(int limit) {
            this.limit = limit;
            return this;
        }

        /** Start from this cursor (a page's {@link Page#nextCursor()}). */
        public Builder cursor(String cursor) {
            this.cursor = cursor;
            return this;
        }

        public ListParams build() {
            return new ListParams(this);
        }
    }
}
