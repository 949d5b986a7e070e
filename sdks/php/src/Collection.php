<?php

declare(strict_types=1);

namespace Gable;

use Gable\Exception\GableException;

/**
 * One collection of the API (`/v1/{name}`). Records are associative arrays, as the API
 * sends them.
 *
 * Filters are field => value (equality) or field => [op => value] with op in ne, gt, gte,
 * lt, lte, in, nin, exists; a list value is joined by commas, a bool is true/false:
 * `['status' => 'active', 'rent' => ['gte' => 1000], 'currency' => 'USD']`.
 *
 * Every call that answers records takes `expand:` and `fields:`. `expand` lists references
 * to answer with their records instead of their ids: a reference field's name without `_id`
 * (`unit` for `unit_id`, `charges` for `charge_ids`), a dot to go further
 * (`['unit', 'unit.property']`; at most 10 paths of 3 levels); the record takes the id's
 * place (`$lease['unit_id']['number']`), and it is sent as one `expand[]` per path. `fields`
 * is a list of this collection's fields (`['id', 'rent']`), or collection => fields, which
 * trims expanded records too (`['leases' => ['rent'], 'units' => ['number']]`).
 */
class Collection
{
    public function __construct(
        protected readonly Client $client,
        public readonly string $name,
    ) {
    }

    /**
     * Every record matching the options, page after page (follows meta.next_cursor).
     *
     * @param array<string, mixed>      $filters
     * @param string|list<string>|null  $sort   `'-created_at,number'` or `['-created_at', 'number']`
     * @param list<string>|array<string, list<string>>|null $fields the fields to return (`id` and `object` always are)
     * @param int|null                  $limit  the page size (1..100)
     * @param list<string>|null         $expand references answered with their records, on every page
     *
     * @return \Generator<int, array<string, mixed>>
     *
     * @throws GableException
     */
    public function list(array $filters = [], string|array|null $sort = null, ?array $fields = null, ?int $limit = null, ?array $expand = null): \Generator
    {
        $cursor = null;
        do {
            $page = $this->page($filters, $sort, $fields, $limit, $cursor, $expand);
            // One yield per record (not `yield from`, which would restart the keys at 0 on
            // every page): iterator_to_array() then keeps them all.
            foreach ($page['data'] ?? [] as $record) {
                yield $record;
            }
            $more = (bool) ($page['meta']['has_more'] ?? false);
            $cursor = $page['meta']['next_cursor'] ?? null;
        } while ($more && $cursor !== null);
    }

    /**
     * One page as the API answers it: `['data' => [...], 'meta' => ['has_more' => …, 'next_cursor' => …]]`.
     *
     * @throws GableException
     */
    public function page(array $filters = [], string|array|null $sort = null, ?array $fields = null, ?int $limit = null, ?string $cursor = null, ?array $expand = null): array
    {
        $query = [];
        foreach ($filters as $field => $value) {
            if (is_array($value) && !array_is_list($value)) {
                foreach ($value as $op => $v) {
                    $query[] = ["filter[{$field}][{$op}]", self::value($v)];
                }
            } else {
                $query[] = ["filter[{$field}]", self::value($value)];
            }
        }
        if ($sort !== null && $sort !== '' && $sort !== []) {
            $query[] = ['sort', is_array($sort) ? implode(',', $sort) : $sort];
        }
        array_push($query, ...$this->shape($fields, $expand));
        if ($limit !== null) {
            $query[] = ['limit', (string) $limit];
        }
        if ($cursor !== null) {
            $query[] = ['cursor', $cursor];
        }

        return $this->client->request('GET', "/{$this->name}", $query);
    }

    /**
     * One record: `get($id, expand: ['unit'])` answers its `unit_id` with the unit.
     *
     * @param list<string>|null                              $expand
     * @param list<string>|array<string, list<string>>|null $fields
     *
     * @throws GableException
     */
    public function get(string $id, ?array $expand = null, ?array $fields = null): array
    {
        return $this->client->request('GET', $this->path($id), $this->shape($fields, $expand))['data'];
    }

    /**
     * Creates a record; pass your own idempotency key to retry safely across processes.
     * `expand:` and `fields:` shape the record answered.
     *
     * @throws GableException
     */
    public function create(array $params, ?string $idempotencyKey = null, ?array $expand = null, ?array $fields = null): array
    {
        return $this->client->request('POST', "/{$this->name}", $this->shape($fields, $expand), $params, $idempotencyKey)['data'];
    }

    /** Changes the given fields (PATCH); `expand:` and `fields:` shape the answer. @throws GableException */
    public function update(string $id, array $params, ?array $expand = null, ?array $fields = null): array
    {
        return $this->client->request('PATCH', $this->path($id), $this->shape($fields, $expand), $params)['data'];
    }

    /** @throws GableException */
    public function delete(string $id): array
    {
        return $this->client->request('DELETE', $this->path($id))['data'] ?? [];
    }

    /**
     * Runs a state-machine action: `$client->leases->action($id, 'send')`; `expand:` and
     * `fields:` shape the record answered.
     *
     * @throws GableException a ConflictException (`invalid_state_transition`) when the record's state does not allow it
     */
    public function action(string $id, string $action, ?array $params = null, ?string $idempotencyKey = null, ?array $expand = null, ?array $fields = null): array
    {
        $path = $this->path($id) . '/' . rawurlencode($action);

        return $this->client->request('POST', $path, $this->shape($fields, $expand), $params, $idempotencyKey)['data'];
    }

    protected function path(string $id): string
    {
        return "/{$this->name}/" . rawurlencode($id);
    }

    /**
     * The answer's shape as query pairs: `fields[<collection>]` per fieldset, one `expand[]`
     * per path.
     *
     * @param list<string>|array<string, list<string>>|null $fields
     * @param list<string>|null                              $expand
     *
     * @return list<array{string, string}>
     */
    protected function shape(?array $fields, ?array $expand): array
    {
        $query = [];
        if ($fields) {
            foreach (array_is_list($fields) ? [$this->name => $fields] : $fields as $collection => $names) {
                $query[] = ["fields[{$collection}]", is_array($names) ? implode(',', $names) : (string) $names];
            }
        }
        foreach ($expand ?? [] as $path) {
            $query[] = ['expand[]', (string) $path];
        }

        return $query;
    }

    private static function value(mixed $value): string
    {
        return match (true) {
            is_bool($value) => $value ? 'true' : 'false',
            is_array($value) => implode(',', array_map(self::value(...), $value)),
            $value === null => 'null',
            default => (string) $value,
        };
    }
}
