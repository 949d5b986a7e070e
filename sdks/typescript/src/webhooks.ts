/**
 * Webhook verification: `Gable-Signature: v1=<hex> [v1=<hex>]` is the HMAC-SHA256, keyed
 * with the whole secret (`whsec_…`), of `<Gable-Timestamp>.<raw body>`. Verify the bytes as
 * received, before parsing them.
 */

import { createHmac, timingSafeEqual } from "node:crypto";

import type { GableRecord } from "./collection.js";

/** The delivery is not from Gable, was changed, or is too old to trust. */
export class SignatureVerificationError extends Error {
  override name = "SignatureVerificationError";
}

/** An event as Gable delivers it (and as `GET /v1/events/{id}` returns it). */
export interface WebhookEvent<T = GableRecord> {
  id: string;
  object: "event";
  type: string;
  created_at: string;
  livemode: boolean;
  api_version: string;
  related_object_id: string | null;
  data: { object: T; previous_attributes: Record<string, unknown>; [key: string]: unknown };
}

/** A `Headers` object, or a plain map such as node:http's `request.headers`. */
export type WebhookHeaders = Headers | Record<string, string | readonly string[] | undefined>;

export interface VerifyOptions {
  /** Seconds a delivery's timestamp may be from `now`. Default 300. */
  tolerance?: number;
  /** The current time in unix seconds (for tests). Default: the clock. */
  now?: number;
}

/**
 * Checks a delivery's signature (any of its `v1=` values, in constant time) and its timestamp
 * (within `tolerance` seconds); returns the parsed event, or throws
 * `SignatureVerificationError`.
 */
export function verify<T = GableRecord>(
  payload: Buffer | Uint8Array | string,
  headers: WebhookHeaders,
  secret: string,
  { tolerance = 300, now = Date.now() / 1000 }: VerifyOptions = {},
): WebhookEvent<T> {
  const timestamp = header(headers, "Gable-Timestamp")?.trim() ?? "";
  const signatures = (header(headers, "Gable-Signature") ?? "")
    .split(/\s+/)
    .filter((s) => s.startsWith("v1="))
    .map((s) => s.slice(3));
  if (!/^\d+$/.test(timestamp)) throw new SignatureVerificationError("no Gable-Timestamp");
  if (signatures.length === 0) throw new SignatureVerificationError("no v1 signature in Gable-Signature");
  if (Math.abs(now - Number(timestamp)) > tolerance) {
    throw new SignatureVerificationError("the timestamp is outside the tolerance: a replay, or a clock far off");
  }
  const body = typeof payload === "string" ? Buffer.from(payload, "utf8") : Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength);
  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(body).digest();
  const matches = signatures.some((hex) => {
    // Buffer.from(…, "hex") stops at the first bad digit, so check the form first.
    if (!/^[0-9a-fA-F]{64}$/.test(hex)) return false;
    return timingSafeEqual(Buffer.from(hex, "hex"), expected);
  });
  if (!matches) throw new SignatureVerificationError("no signature matches this secret and body");
  return JSON.parse(body.toString("utf8")) as WebhookEvent<T>;
}

/** A header by name, case-insensitively; repeated values are joined with spaces. */
function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name)?.replace(/,\s*/g, " ") ?? undefined;
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== wanted || value === undefined) continue;
    return typeof value === "string" ? value : value.join(" ");
  }
  return undefined;
}
