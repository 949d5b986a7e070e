/** One collection of the API (`/v1/{name}`): list, page, get, create, update, delete, actions. */

import { randomUUID } from "node:crypto";

import type { RequestOptions, Transport } from "./transport.js";

/** A record as Gable returns it: `id`, `object` and the collection's fields. */
export interface GableRecord {
  id: string;
  object: string;
  [field: string]: unknown;
}

/** A JSON object sent as a body. */
export type Params = Record<string, unknown>;

type Scalar = string | number | boolean;
/** A filter's value: a scalar, or a list (joined by commas, for `in` / `nin`). */
export type FilterValue = Scalar | readonly Scalar[];
export type FilterOperator = "ne" | "gt" | "gte" | "lt" | "lte" | "in" | "nin" | "exists";
/**
 * Field → value (equality) or field → { operator → value }:
 * `{ status: "active", rent: { gte: 1000 }, currency: "USD" }`.
 */
export type Filters = Record<string, FilterValue | Partial<Record<FilterOperator, FilterValue>>>;

export interface ListOptions {
  filters?: Filters;
  /** `"-created_at,number"` or `["-created_at", "number"]` (`-` for descending). */
  sort?: string | readonly string[];
  /** Only these fields (`id` and `object` always come). */
  fields?: readonly string[];
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
   * `meta.has_more`): `for await (const unit of gable.units.list({ limit: 100 })) …`.
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

  async get<T = GableRecord>(id: string): Promise<T> {
    return (await this.client.request<{ data: T }>("GET", this.#path(id))).data;
  }

  async create<T = GableRecord>(params: Params, options: RequestOptions = {}): Promise<T> {
    return (await this.client.request<{ data: T }>("POST", `/${this.name}`, { body: params, ...options })).data;
  }

  async update<T = GableRecord>(id: string, params: Params): Promise<T> {
    return (await this.client.request<{ data: T }>("PATCH", this.#path(id), { body: params })).data;
  }

  async delete<T = GableRecord>(id: string): Promise<T> {
    return (await this.client.request<{ data: T }>("DELETE", this.#path(id))).data;
  }

  /** Runs a state-machine action: `gable.leases.action(id, "send")`. */
  async action<T = GableRecord>(id: string, action: string, params?: Params, options: RequestOptions = {}): Promise<T> {
    const path = `${this.#path(id)}/${encodeURIComponent(action)}`;
    return (await this.client.request<{ data: T }>("POST", path, { body: params, ...options })).data;
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
   * in major units; `params` adds fields (`{ invoice_id }`).
   */
  createTestPayment<T = GableRecord>(
    scenario: TestPaymentScenario,
    amount: string | number,
    currency: string,
    params: Params = {},
    options: RequestOptions = {},
  ): Promise<T> {
    const body = { ...params, scenario, amount, currency };
    return this.create<T>(body, { idempotencyKey: options.idempotencyKey ?? randomUUID() });
  }
}

/** The list options as query parameters (`filter[rent][gte]=1000`, `fields[units]=id,number`). */
function query(collection: string, { filters = {}, sort, fields, limit, cursor }: PageOptions): [string, string][] {
  const q: [string, string][] = [];
  for (const [field, value] of Object.entries(filters)) {
    if (isOperators(value)) {
      for (const [op, v] of Object.entries(value)) if (v !== undefined) q.push([`filter[${field}][${op}]`, text(v)]);
    } else {
      q.push([`filter[${field}]`, text(value)]);
    }
  }
  if (sort && sort.length > 0) q.push(["sort", typeof sort === "string" ? sort : sort.join(",")]);
  if (fields && fields.length > 0) q.push([`fields[${collection}]`, fields.join(",")]);
  if (limit !== undefined) q.push(["limit", String(limit)]);
  if (cursor) q.push(["cursor", cursor]);
  return q;
}

function isOperators(v: Filters[string]): v is Partial<Record<FilterOperator, FilterValue>> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function text(v: FilterValue): string {
  return Array.isArray(v) ? v.map(String).join(",") : String(v);
}
