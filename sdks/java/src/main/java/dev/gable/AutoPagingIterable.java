package dev.gable;

import java.util.Collections;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;

/**
 * Every record of a list, page after page: each iteration starts at the first page and
 * fetches the next one (following {@code meta.next_cursor}) only when it is reached.
 */
public final class AutoPagingIterable implements Iterable<GableObject> {
    private final Resource resource;
    private final ListParams params;

    AutoPagingIterable(Resource resource, ListParams params) {
        this.resource = resource;
        this.params = params;
    }

    @Override
    public Iterator<GableObject> iterator() {
        return new Iterator<>() {
            private Iterator<GableObject> current = Collections.emptyIterator();
            private String cursor = params.cursor();
            private boolean last;

            @Override
            public boolean hasNext() {
                // A loop, not an if: a page may come back empty yet say more follow.
                while (!current.hasNext() && !last) {
                    Page page = resource.page(params, cursor);
                    current = page.data().iterator();
                    cursor = page.nextCursor();
                    last = !page.hasMore() || cursor == null;
                }
                return current.hasNext();
            }

            @Override
            public GableObject next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return current.next();
            }
        };
    }

    /** The records as a sequential, lazy stream ({@code .limit(n)} fetches only what it needs). */
    public Stream<GableObject> stream() {
        return StreamSupport.stream(spliterator(), false);
    }
}
