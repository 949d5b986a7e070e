/**
 * Typed errors: every refusal of the API becomes a `GableError` subclass carrying the HTTP
 * status and the error body's `code`, `message`, `request_id` (as `requestId`) and `param`.
 */

export class GableError extends Error {
  /** The HTTP status; 0 when Gable could not be reached. */
  readonly status: number;
  /** A stable machine-readable code (`invalid_state_transition`, `network_error`, …). */
  readonly code: string;
  /** The request's id (the `Request-Id` header): quote it when asking for help. */
  readonly requestId: string | undefined;
  /** The parameter at fault, for a 400. */
  readonly param: string | undefined;

  constructor(status: number, code: string, message: string, requestId?: string, param?: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
    this.requestId = requestId;
    this.param = param;
  }
}

/** 400: the request is malformed or a field is invalid (`param` names it). */
export class InvalidRequestError extends GableError {}
/** 401: no, an unknown, or the other environment's credential. */
export class AuthenticationError extends GableError {}
/** 403: the credential lacks the scope (or property) this needs. */
export class PermissionError extends GableError {}
/** 404. */
export class NotFoundError extends GableError {}
/**
 * 409: a state transition not allowed now, a conflict with other records, or an
 * `Idempotency-Key` whose first request is still running (`idempotency_key_in_use`: retry it
 * later). A key reused for a different request is an `IdempotencyError` (422).
 */
export class ConflictError extends GableError {}
/**
 * 422 `idempotency_key_reused`: the `Idempotency-Key` was already used for a different
 * request (another body, path or method). Use a fresh key for a new request.
 */
export class IdempotencyError extends GableError {}
/** 429, after the retries ran out. */
export class RateLimitError extends GableError {}
/** 5xx, after the retries ran out. */
export class ServerError extends GableError {}

const BY_STATUS: Record<number, typeof GableError> = {
  400: InvalidRequestError,
  401: AuthenticationError,
  403: PermissionError,
  404: NotFoundError,
  409: ConflictError,
  422: IdempotencyError,
  429: RateLimitError,
};

/** The error for a refusal: its status and raw body (`{"error": {...}}` when Gable answered). */
export function errorFrom(status: number, raw: string, requestId: string | null): GableError {
  let body: Record<string, unknown> = {};
  try {
    const parsed: unknown = JSON.parse(raw);
    const error = (parsed as { error?: unknown } | null)?.error;
    if (error && typeof error === "object") body = error as Record<string, unknown>;
  } catch {
    // Not JSON (a proxy's page, say): the raw text becomes the message below.
  }
  const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);
  const Type = BY_STATUS[status] ?? (status >= 500 ? ServerError : GableError);
  return new Type(
    status,
    str(body.code) ?? "unknown_error",
    str(body.message) ?? raw.slice(0, 200),
    str(body.request_id) ?? requestId ?? undefined,
    str(body.param),
  );
}
