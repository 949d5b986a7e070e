/** Gable's TypeScript starter kit (Node.js built-ins only). See README.md. */

export { API_VERSION, Gable, LIVE_URL, SANDBOX_URL, VERSION } from "./client.js";
export type { GableOptions } from "./client.js";
export type { HttpMethod, Query, RequestOptions, Transport } from "./transport.js";
export { Collection, Payments } from "./collection.js";
export type {
  Expandable,
  Fields,
  FilterOperator,
  Filters,
  FilterValue,
  GableRecord,
  ListOptions,
  Page,
  PageMeta,
  PageOptions,
  Params,
  RecordOptions,
  TestPaymentScenario,
  WriteOptions,
} from "./collection.js";
export {
  AuthenticationError,
  ConflictError,
  GableError,
  IdempotencyError,
  InvalidRequestError,
  NotFoundError,
  PermissionError,
  RateLimitError,
  ServerError,
} from "./errors.js";
export { SignatureVerificationError, verify } from "./webhooks.js";
export type { VerifyOptions, WebhookEvent, WebhookHeaders } from "./webhooks.js";
export { Gable as default } from "./client.js";
