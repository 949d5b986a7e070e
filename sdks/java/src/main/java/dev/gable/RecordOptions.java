package dev.gable;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The shape of the record a call answers: references expanded into their records, and sparse
 * fieldsets. {@link Resource#get(String, RecordOptions)}, {@code create}, {@code update},
 * {@code action} and {@link Payments#createTestPayment} take one; a list takes the same in
 * {@link ListParams.Builder#expand(String...)} and {@link ListParams.Builder#fieldsOf}.
 *
 * <pre>{@code
 * GableObject lease = gable.leases().get(leaseId, RecordOptions.expand("unit", "unit.property"));
 * String number = lease.getObject("unit_id").getString("number");
 *
 * RecordOptions.builder().expand("unit").fieldsOf("units", "number").build();
 * }</pre>
 */
public final class RecordOptions {
    private static final RecordOptions NONE = builder().build();

    private final List<String> expand;
    private final Map<String, String> fieldsets;

    private RecordOptions(Builder b) {
        this.expand = List.copyOf(b.expand);
        this.fieldsets = new LinkedHashMap<>(b.fieldsets);
    }

    /** Nothing expanded, every field: the API's defaults. */
    public static RecordOptions none() {
        return NONE;
    }

    /** These references expanded (see {@link Builder#expand(String...)}), every field. */
    public static RecordOptions expand(String... paths) {
        return builder().expand(paths).build();
    }

    public static Builder builder() {
        return new Builder();
    }

    /** The query pairs: {@code fields[collection]} per fieldset, then one {@code expand[]} per path. */
    List<String[]> pairs() {
        List<String[]> q = new ArrayList<>();
        fieldsets.forEach((collection, names) -> q.add(new String[] {"fields[" + collection + "]", names}));
        for (String path : expand) {
            q.add(new String[] {"expand[]", path});
        }
        return q;
    }

    /** The query string ({@code ?…}, or empty). */
    String query() {
        return ListParams.encode(pairs());
    }

    public static final class Builder {
        private final List<String> expand = new ArrayList<>();
        private final Map<String, String> fieldsets = new LinkedHashMap<>();

        private Builder() {}

        /**
         * References to answer with their records instead of their ids: a reference field's
         * name without {@code _id} ({@code unit} for {@code unit_id}, {@code charges} for
         * {@code charge_ids}), a dot to go further ({@code "unit", "unit.property"}; at most 10
         * paths of 3 levels). The record takes the id's place, so
         * {@code lease.getObject("unit_id")} is then the unit. Sent as one {@code expand[]} per
         * path; called again, the paths add up. An unknown path is an
         * {@link InvalidRequestException} whose {@code param()} is {@code expand[]}.
         */
        public Builder expand(String... paths) {
            expand.addAll(List.of(paths));
            return this;
        }

        /**
         * Only these fields of {@code collection}'s records ({@code id} and {@code object} always
         * come): the answer's own collection, or one an expansion brings
         * ({@code fieldsOf("units", "number")} trims every expanded unit).
         */
        public Builder fieldsOf(String collection, String... names) {
            fieldsets.put(collection, String.join(",", names));
            return this;
        }

        public RecordOptions build() {
            return new RecordOptions(this);
        }
    }
}
