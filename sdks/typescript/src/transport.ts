/** What a collection needs of the client: one request, sent with retries (`Gable` in client.ts). */

export interface RequestOptions {
  /** The `Idempotency-Key` of a POST; a fresh UUID per call when omitted. */
  idempotencyKey?: string;
}

export type HttpMethod = "GET" | "POST" | "PATCH" | "DELETE";

export type Query = [string, string][];

export interface Transport {
  /** Sends one request (with retries); resolves to the decoded JSON answer. */
  request<T = unknown>(
    method: HttpMethod,
    path: string,
    options?: { query?: Query; body?: unknown; idempotencyKey?: string },
  ): Promise<T>;
}
