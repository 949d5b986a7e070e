/**
 * The Gable client: one object per base address and credential, Node.js built-ins only.
 *
 * Every collection is a property (`gable.leases`, `gable.purchaseOrders` for
 * `purchase-orders`) with `list` (auto-paginating), `page`, `get`, `create`, `update`,
 * `delete` and `action`. Every POST carries an `Idempotency-Key` (one per call, reused by its
 * retries); 429, 5xx and network errors are retried with jittered exponential backoff,
 * honouring `Retry-After`.
 */

import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";

import { Collection, Payments } from "./collection.js";
import { GableError, errorFrom } from "./errors.js";
import type { HttpMethod, Query, Transport } from "./transport.js";

/** The API version this kit is written against (sent as `Gable-Version`). */
export const API_VERSION = "2026-11-22";
export const VERSION = "0.1.0";

/** Base addresses of a default local installation (`gable serve`). */
export const LIVE_URL = "http://127.0.0.1:8080/v1";
export const SANDBOX_URL = "http://127.0.0.1:8081/v1";

export interface GableOptions {
  /** The environment's API address; `/v1` is added when missing. Default: the sandbox preset. */
  baseUrl?: string;
  /** Retries of a request refused with 429 or 5xx, or not answered. Default 3; 0 disables. */
  maxRetries?: number;
  /** Milliseconds one attempt may take. Default 30 000. */
  timeout?: number;
  /** The first retry's backoff bound in milliseconds, doubled at each retry. Default 500. */
  initialBackoff?: number;
  /** The largest backoff bound in milliseconds. Default 8 000. */
  maxBackoff?: number;
}

export class Gable implements Transport {
  readonly baseUrl: string;
  readonly maxRetries: number;
  readonly timeout: number;
  readonly initialBackoff: number;
  readonly maxBackoff: number;
  readonly #apiKey: string;

  /**
   * A client for one environment. `apiKey` is an API key (`gbl_live_…`, `gbl_test_…`) or an
   * OAuth access token. Use `Gable.sandbox(key)` / `Gable.live(key)` for the presets.
   */
  constructor(apiKey: string, options: GableOptions = {}) {
    if (!apiKey) throw new TypeError("an API key or access token is required");
    const base = (options.baseUrl ?? SANDBOX_URL).replace(/\/+$/, "");
    this.baseUrl = base.endsWith("/v1") ? base : `${base}/v1`;
    this.#apiKey = apiKey;
    this.maxRetries = options.maxRetries ?? 3;
    this.timeout = options.timeout ?? 30_000;
    this.initialBackoff = options.initialBackoff ?? 500;
    this.maxBackoff = options.maxBackoff ?? 8_000;
  }

  /** A client for the sandbox (test keys, no real money); default base `SANDBOX_URL`. */
  static sandbox(apiKey: string, options: GableOptions = {}): Gable {
    return new Gable(apiKey, { ...options, baseUrl: options.baseUrl ?? SANDBOX_URL });
  }

  /** A client for live data; default base `LIVE_URL`. */
  static live(apiKey: string, options: GableOptions = {}): Gable {
    return new Gable(apiKey, { ...options, baseUrl: options.baseUrl ?? LIVE_URL });
  }

  /** A collection by its API name (`"purchase-orders"`). */
  collection(name: string): Collection {
    return new Collection(this, name);
  }

  // BEGIN GENERATED accessors: `make generate` writes these from `gable collections`.
  readonly organizations = new Collection(this, "organizations");
  readonly companies = new Collection(this, "companies");
  readonly users = new Collection(this, "users");
  readonly roles = new Collection(this, "roles");
  readonly owners = new Collection(this, "owners");
  readonly properties = new Collection(this, "properties");
  readonly buildings = new Collection(this, "buildings");
  readonly units = new Collection(this, "units");
  readonly rooms = new Collection(this, "rooms");
  readonly beds = new Collection(this, "beds");
  readonly listings = new Collection(this, "listings");
  readonly leads = new Collection(this, "leads");
  readonly viewings = new Collection(this, "viewings");
  readonly applications = new Collection(this, "applications");
  readonly screening = new Collection(this, "screening");
  readonly leases = new Collection(this, "leases");
  readonly signatures = new Collection(this, "signatures");
  readonly tenancies = new Collection(this, "tenancies");
  readonly bookings = new Collection(this, "bookings");
  readonly guests = new Collection(this, "guests");
  readonly charges = new Collection(this, "charges");
  readonly invoices = new Collection(this, "invoices");
  readonly payments = new Payments(this, "payments");
  readonly refunds = new Collection(this, "refunds");
  readonly accountingEntries = new Collection(this, "accounting-entries");
  readonly workorders = new Collection(this, "workorders");
  readonly inspections = new Collection(this, "inspections");
  readonly assets = new Collection(this, "assets");
  readonly vendors = new Collection(this, "vendors");
  readonly purchaseOrders = new Collection(this, "purchase-orders");
  readonly documents = new Collection(this, "documents");
  readonly tasks = new Collection(this, "tasks");
  readonly messages = new Collection(this, "messages");
  readonly events = new Collection(this, "events");
  readonly reports = new Collection(this, "reports");
  readonly webhooks = new Collection(this, "webhooks");
  readonly webhookDeliveries = new Collection(this, "webhook-deliveries");
  readonly flowTokens = new Collection(this, "flow-tokens");
  readonly requestLogs = new Collection(this, "request-logs");
  readonly imports = new Collection(this, "imports");
  // END GENERATED accessors

  /** Sends one request (with retries); resolves to the decoded JSON answer. */
  async request<T = unknown>(
    method: HttpMethod,
    path: string,
    { query, body, idempotencyKey }: { query?: Query; body?: unknown; idempotencyKey?: string } = {},
  ): Promise<T> {
    let url = this.baseUrl + path;
    if (query && query.length > 0) url += `?${new URLSearchParams(query)}`;
    const headers: Record<string, string> = {
      Authorization: `Bearer ${this.#apiKey}`,
      "Gable-Version": API_VERSION,
      Accept: "application/json",
      "User-Agent": `gable-typescript/${VERSION}`,
    };
    const payload = body === undefined ? undefined : JSON.stringify(body);
    if (payload !== undefined) headers["Content-Type"] = "application/json";
    // One key per call: its retries reuse it, so a retried POST is made once.
    if (method === "POST") headers["Idempotency-Key"] = idempotencyKey ?? randomUUID();

    for (let attempt = 0; ; attempt++) {
      let response: Response;
      let text: string;
      try {
        response = await fetch(url, { method, headers, body: payload, signal: AbortSignal.timeout(this.timeout) });
        text = await response.text();
      } catch (cause) {
        if (attempt < this.maxRetries) {
          await this.#backoff(attempt, null);
          continue;
        }
        const why = cause instanceof Error ? ((cause.cause as Error | undefined)?.message ?? cause.message) : String(cause);
        throw new GableError(0, "network_error", `could not reach Gable: ${why}`, undefined, undefined, { cause });
      }
      if (response.ok) return (text ? JSON.parse(text) : {}) as T;
      const retryable = response.status === 429 || response.status >= 500;
      if (retryable && attempt < this.maxRetries) {
        await this.#backoff(attempt, response.headers.get("Retry-After"));
        continue;
      }
      throw errorFrom(response.status, text, response.headers.get("Request-Id"));
    }
  }

  #backoff(attempt: number, retryAfter: string | null): Promise<void> {
    const seconds = retryAfter?.trim();
    const delay =
      seconds && /^\d+$/.test(seconds)
        ? Number(seconds) * 1000
        : // Full jitter: a random wait up to the exponential bound.
          Math.random() * Math.min(this.maxBackoff, this.initialBackoff * 2 ** attempt);
    return sleep(delay);
  }
}
