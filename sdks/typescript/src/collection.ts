/** One collection of the API (`/v1/{name}`): list, page, get, create, update, delete, actions. */

import { randomUUID } from "node:crypto";

import type { Query, RequestOptions, Transport } from "./transport.js";

/** A record as Gable returns it: `id`, `object` and the collection's fields. */
export interface GableRecord {
  id: string;
  object: string;
  [field: string]: unknown;
}

/**
 * A reference field (`unit_id`): the record's id, or, when the call asked to `expand` it,
 * the record itself (`{ id, object: "unit", … }`) in the id's place.
 */
export type Expandable<T extends GableRecord = GableRecord> = string | T;

/** A JSON object sent as a body. */
export type Params = Record<string, unknown>;

type Scalar = string | number | boolean;
/** A filter's value: a scalar, or a list (joined by commas, for `in` / `nin`). */
export type FilterValue = Scalar | readonly Scalar[];
export type FilterOperator = "ne" | "gt" | "gte" | "lt" | "lte" | "in" | "nin" | "exists" | "contains";
/**
 * Field → value (equality) or field → { operator → value }:
 * `{ status: "active", rent: { gte: 1000 }, currency: "USD" }`.
 */
export type Filters = Record<string, FilterValue | Partial<Record<FilterOperator, FilterValue>>>;

/**
 * Only these fields (`id` and `object` always come): a list for the call's own collection
 * (`["id", "rent"]`), or collection → fields, which trims expanded records too
 * (`{ leases: ["rent"], units: ["number"] }`).
 */
export type Fields = readonly string[] | Readonly<Record<string, readonly string[]>>;

/** The shape of the records a call answers: expanded references and sparse fieldsets. */
export interface RecordOptions {
  /**
   * References to answer with their records instead of their ids: a reference field's name
   * without `_id` (`unit` for `unit_id`, `charges` for `charge_ids`), a dot to go further
   * (`["unit", "unit.property"]`; at most 10 paths of at most 3 levels). The record takes
   * the id's place: `lease.unit_id` is then the unit. Sent as one `expand[]` per path; an
   * unknown path is an `InvalidRequestError` with `param` `"expand[]"`.
   */
  expand?: readonly string[];
  fields?: Fields;
}

/** The options of a POST: its `Idempotency-Key`, and the shape of the record it answers. */
export interface WriteOptions extends RequestOptions, RecordOptions {}

export interface ListOptions extends RecordOptions {
  filters?: Filters;
  /** `"-created_at,number"` or `["-created_at", "number"]` (`-` for descending). */
  sort?: string | readonly string[];
  /** Records per page, 1..100. */
  limit?: number;
}

export interface PageOptions extends ListOptions {
  /** The `next_cursor` of the previous page. */
  cursor?: string;
}

export interface PageMeta {
  has_more: boolean;
  next_cursor: string | null;
  [key: string]: unknown;
}

/** One page as the API answers it. */
export interface Page<T = GableRecord> {
  data: T[];
  meta: PageMeta;
}

export class Collection {
  constructor(
    readonly client: Transport,
    /** The API name (`purchase-orders`). */
    readonly name: string,
  ) {}

  /**
   * Every record matching the options, page after page (follows `meta.next_cursor` while
   * `meta.has_more`, asking every page with the same options, `expand` included):
   * `for await (const unit of gable.units.list({ limit: 100 })) …`.
   */
  async *list<T = GableRecord>(options: ListOptions = {}): AsyncGenerator<T, void, undefined> {
    let cursor: string | undefined;
    do {
      const page: Page<T> = await this.page<T>({ ...options, cursor });
      yield* page.data;
      cursor = page.meta.has_more ? (page.meta.next_cursor ?? undefined) : undefined;
    } while (cursor);
  }

  /** One page (`data` and `meta`); pass `cursor` to get the next. */
  page<T = GableRecord>(options: PageOptions = {}): Promise<Page<T>> {
    return this.client.request<Page<T>>("GET", `/${this.name}`, { query: query(this.name, options) });
  }

  /** One record: `gable.leases.get(id, { expand: ["unit"] })` answers `unit_id` with the unit. */
  async get<T = GableRecord>(id: string, options: RecordOptions = {}): Promise<T> {
    return (await this.client.request<{ data: T }>("GET", this.#path(id), { query: shape(this.name, options) })).data;
  }

  /** Creates a record; `options` may carry its `idempotencyKey`, `expand` and `fields`. */
  async create<T = GableRecord>(params: Params, options: WriteOptions = {}): Promise<T> {
    const { idempotencyKey } = options;
    const query = shape(this.name, options);
    return (await this.client.request<{ data: T }>("POST", `/${this.name}`, { body: params, query, idempotencyKey })).data;
  }

  /** Changes the fields in `params` (PATCH); `options` shape the record answered. */
  async update<T = GableRecord>(id: string, params: Params, options: RecordOptions = {}): Promise<T> {
    return (await this.client.request<{ data: T }>("PATCH", this.#path(id), { body: params, query: shape(this.name, options) })).data;
  }

  async delete<T = GableRecord>(id: string): Promise<T> {
    return (await this.client.request<{ data: T }>("DELETE", this.#path(id))).data;
  }

  /**
   * Runs a state-machine action: `gable.leases.action(id, "send")`; `options` may carry its
   * `idempotencyKey`, `expand` and `fields`.
   */
  async action<T = GableRecord>(id: string, action: string, params?: Params, options: WriteOptions = {}): Promise<T> {
    const path = `${this.#path(id)}/${encodeURIComponent(action)}`;
    const { idempotencyKey } = options;
    return (await this.client.request<{ data: T }>("POST", path, { body: params, query: shape(this.name, options), idempotencyKey })).data;
  }

  #path(id: string): string {
    return `/${this.name}/${encodeURIComponent(id)}`;
  }
}

export type TestPaymentScenario = "succeeded" | "failed" | "reversed";

export class Payments extends Collection {
  /**
   * A sandbox payment whose outcome is `scenario`, always with an `Idempotency-Key` (pass
   * your own to retry safely across processes). `amount` is a decimal string or an integer,
   * in major units; `params` adds fields (`{ invoice_id }`); `options` may also carry
   * `expand` and `fields` (`{ expand: ["invoice"] }`).
   */
  createTestPayment<T = GableRecord>(
    scenario: TestPaymentScenario,
    amount: string | number,
    currency: string,
    params: Params = {},
    options: WriteOptions = {},
  ): Promise<T> {
    const body = { ...params, scenario, amount, currency };
    return this.create<T>(body, { ...options, idempotencyKey: options.idempotencyKey ?? randomUUID() });
  }
}

/**
 * The list options as query parameters (`filter[rent][gte]=1000`, `fields[units]=id,number`,
 * `expand[]=unit`).
 */
function query(collection: string, options: PageOptions): Query {
  const { filters = {}, sort, limit, cursor } = options;
  const q: Query = [];
  for (const [field, value] of Object.entries(filters)) {
    if (isOperators(value)) {
      for (const [op, v] of Object.entries(value)) if (v !== undefined) q.push([`filter[${field}][${op}]`, text(v)]);
    } else {
      q.push([`filter[${field}]`, text(value)]);
    }
  }
  if (sort && sort.length > 0) q.push(["sort", typeof sort === "string" ? sort : sort.join(",")]);
  q.push(...shape(collection, options));
  if (limit !== undefined) q.push(["limit", String(limit)]);
  if (cursor) q.push(["cursor", cursor]);
  return q;
}

/** The shape of the answer as query parameters: `fields[<collection>]` per fieldset, one `expand[]` per path. */
function shape(collection: string, { fields, expand }: RecordOptions): Query {
  const q: Query = [];
  if (fields) {
    const sets: [string, readonly string[]][] = isList(fields) ? [[collection, fields]] : Object.entries(fields);
    for (const [name, names] of sets) if (names.length > 0) q.push([`fields[${name}]`, names.join(",")]);
  }
  // A lone string (from JavaScript) is one path, not one path per character.
  for (const path of typeof expand === "string" ? [expand] : (expand ?? [])) q.push(["expand[]", path]);
  return q;
}

function isList(fields: Fields): fields is readonly string[] {
  return Array.isArray(fields);
}

function isOperators(v: Filters[string]): v is Partial<Record<FilterOperator, FilterValue>> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function text(v: FilterValue): string {
  return Array.isArray(v) ? v.map(String).join(",") : String(v);
}
