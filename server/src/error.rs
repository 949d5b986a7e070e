//! The one error type of Gable. Domain, storage and HTTP code all return it; it is
//! mapped to an HTTP status and the documented error body once, in `http::error`.

use std::fmt;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// 400 `invalid_request`: the request as a whole is malformed.
    #[error("{message}")]
    InvalidRequest { message: String, param: Option<String> },
    /// 400 `invalid_parameter`: a query or path parameter is wrong.
    #[error("{message}")]
    InvalidParameter { param: String, message: String },
    /// 400 `invalid_cursor`.
    #[error("the cursor is not valid for this list; start again without a cursor")]
    InvalidCursor,
    /// 400 `invalid_json`.
    #[error("{0}")]
    InvalidJson(String),
    /// 400 `validation_failed`: the body is JSON but a field is wrong.
    #[error("{message}")]
    Validation { param: String, message: String },
    /// 400 `unsupported_version`.
    #[error("{0}")]
    UnsupportedVersion(String),
    /// 401 `unauthenticated`.
    #[error("{0}")]
    Unauthenticated(String),
    /// 401 `key_environment_mismatch`.
    #[error("{0}")]
    KeyEnvironmentMismatch(String),
    /// 401 `token_expired`: a short-lived credential (a flow token) that is known but past
    /// its time; the one who holds it should ask for a new one.
    #[error("{0}")]
    TokenExpired(String),
    /// 403 `insufficient_scope`: carries the scope the operation needs, and the
    /// parameter that asked for it where one did (`expand[]`).
    #[error("{message}")]
    InsufficientScope { scope: String, message: String, param: Option<String> },
    /// 403 `property_forbidden`.
    #[error("{0}")]
    PropertyForbidden(String),
    /// 403 `origin_forbidden`: a browser request from a page that may not make it (the
    /// flow API answers only its own flow pages).
    #[error("{0}")]
    OriginForbidden(String),
    /// 404 `not_found`.
    #[error("{message}")]
    NotFound { message: String, param: Option<String> },
    /// 405 `method_not_allowed`: carries the methods the path does allow (`Allow`).
    #[error("{message}")]
    MethodNotAllowed { message: String, allow: Vec<&'static str> },
    /// 409 `invalid_state_transition`: names the current state and the allowed actions.
    #[error("{message}")]
    InvalidStateTransition { message: String, current: String, allowed: Vec<String> },
    /// 409 `immutable_resource`.
    #[error("{0}")]
    Immutable(String),
    /// 409 `conflict`.
    #[error("{0}")]
    Conflict(String),
    /// 400 `missing_idempotency_key`: the operation needs an `Idempotency-Key`.
    #[error("{0}")]
    MissingIdempotencyKey(String),
    /// 409 `idempotency_key_in_use`: a request with the same key is still running (or
    /// its process died, and its hold on the key lapses in `retry_after_secs`).
    #[error("a request with this Idempotency-Key is still in progress; retry once it has finished (Retry-After says when at the latest)")]
    IdempotencyKeyInUse { retry_after_secs: u64 },
    /// 422 `idempotency_key_reused`: the key was used for a different request.
    #[error("{0}")]
    IdempotencyKeyReused(String),
    /// 413 `payload_too_large`.
    #[error("the request body is larger than {0} bytes")]
    PayloadTooLarge(usize),
    /// 415 `unsupported_media_type`.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// 429 `rate_limited`: the credential is over its rate limit (`http::rate_limit`);
    /// carries the whole seconds until a request will be allowed (`Retry-After`).
    #[error("this API key has made too many requests; retry in {retry_after_secs} s (see the RateLimit and Retry-After headers)")]
    RateLimited { retry_after_secs: u64 },
    /// 429 `too_many_streams`: the credential holds as many event streams on this
    /// process as it may (`http::api::event_stream`).
    #[error("{0}")]
    TooManyStreams(String),
    /// 503 `service_unavailable`: the database is unreachable, or the request ran past
    /// its time limit; nothing was half-written. Retry after `Retry-After` seconds.
    #[error("{message}")]
    Unavailable { message: String, retry_after_secs: u64 },
    /// 500 `internal_error`: the cause is logged, never shown.
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// The error's stable code, as the error body's `code` (and an import's row errors) name it.
    pub fn code(&self) -> &'static str {
        use Error::*;
        match self {
            InvalidRequest { .. } => "invalid_request",
            InvalidParameter { .. } => "invalid_parameter",
            InvalidCursor => "invalid_cursor",
            InvalidJson(_) => "invalid_json",
            Validation { .. } => "validation_failed",
            UnsupportedVersion(_) => "unsupported_version",
            Unauthenticated(_) => "unauthenticated",
            KeyEnvironmentMismatch(_) => "key_environment_mismatch",
            TokenExpired(_) => "token_expired",
            InsufficientScope { .. } => "insufficient_scope",
            PropertyForbidden(_) => "property_forbidden",
            OriginForbidden(_) => "origin_forbidden",
            NotFound { .. } => "not_found",
            MethodNotAllowed { .. } => "method_not_allowed",
            InvalidStateTransition { .. } => "invalid_state_transition",
            Immutable(_) => "immutable_resource",
            Conflict(_) => "conflict",
            MissingIdempotencyKey(_) => "missing_idempotency_key",
            IdempotencyKeyInUse { .. } => "idempotency_key_in_use",
            IdempotencyKeyReused(_) => "idempotency_key_reused",
            PayloadTooLarge(_) => "payload_too_large",
            UnsupportedMediaType(_) => "unsupported_media_type",
            RateLimited { .. } => "rate_limited",
            TooManyStreams(_) => "too_many_streams",
            Unavailable { .. } => "service_unavailable",
            Internal(_) => "internal_error",
        }
    }

    /// The parameter or field the error is about, where there is one.
    pub fn param(&self) -> Option<&str> {
        match self {
            Error::InvalidRequest { param, .. } | Error::NotFound { param, .. } | Error::InsufficientScope { param, .. } => {
                param.as_deref()
            }
            Error::InvalidParameter { param, .. } | Error::Validation { param, .. } => Some(param),
            Error::InvalidCursor => Some("cursor"),
            Error::MissingIdempotencyKey(_) | Error::IdempotencyKeyInUse { .. } | Error::IdempotencyKeyReused(_) => Some("Idempotency-Key"),
            _ => None,
        }
    }

    pub fn validation(param: impl Into<String>, message: impl fmt::Display) -> Self {
        let param = param.into();
        Error::Validation { message: format!("{param}: {message}"), param }
    }
    pub fn parameter(param: impl Into<String>, message: impl fmt::Display) -> Self {
        let param = param.into();
        Error::InvalidParameter { message: format!("{param}: {message}"), param }
    }
    pub fn insufficient_scope(scope: impl Into<String>) -> Self {
        let scope = scope.into();
        Error::InsufficientScope { message: format!("this operation needs the scope `{scope}`"), scope, param: None }
    }
    pub fn not_found(what: &str) -> Self {
        Error::NotFound { message: format!("no such {what}"), param: None }
    }
    /// A field names a record that does not exist (or that the caller cannot see).
    pub fn missing_reference(param: &str, object: &str, id: impl fmt::Display) -> Self {
        Error::NotFound { message: format!("{param}: no such {object} {id}"), param: Some(param.to_string()) }
    }
    pub fn internal(e: impl Into<anyhow::Error>) -> Self {
        Error::Internal(e.into())
    }
    /// The database cannot be reached (or is shutting down): a 503, the cause logged.
    fn database_unavailable(cause: impl fmt::Display) -> Self {
        tracing::warn!(error = %cause, "database unavailable");
        Error::Unavailable {
            message: "the database is unavailable at the moment; nothing was changed, retry after Retry-After seconds".into(),
            retry_after_secs: DATABASE_RETRY_AFTER_SECS,
        }
    }
}

/// What a 503 caused by the database advises: long enough for a failover or restart to be
/// under way, short enough that clients notice its return quickly.
const DATABASE_RETRY_AFTER_SECS: u64 = 2;

/// A unique index refused a write: which value is taken, when the index says (`what`: the
/// database's words for it, which name the column).
fn unique_conflict(what: &str) -> Error {
    match what.contains("external_id") {
        true => {
            Error::Conflict("another record of this collection already has this external_id (find it with filter[external_id]=…)".into())
        }
        false => Error::Conflict("a record with these values already exists".into()),
    }
}

/// SQLite's writes run on rusqlite: its constraint failures mean what sqlx's do.
impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        if let rusqlite::Error::SqliteFailure(f, message) = &e {
            match f.extended_code {
                rusqlite::ffi::SQLITE_CONSTRAINT_FOREIGNKEY => {
                    return Error::Conflict("the record is still referenced by other records; delete or change those first".into())
                }
                // "UNIQUE constraint failed: units.tenant_id, units.livemode, units.external_id"
                rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY => {
                    return unique_conflict(message.as_deref().unwrap_or_default())
                }
                _ => {}
            }
            // The writer waited its whole busy timeout for another connection's lock.
            if matches!(f.extended_code & 0xff, rusqlite::ffi::SQLITE_BUSY | rusqlite::ffi::SQLITE_LOCKED) {
                return Error::database_unavailable(&e);
            }
        }
        Error::Internal(e.into())
    }
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        if let sqlx::Error::Database(db) = &e {
            match db.kind() {
                sqlx::error::ErrorKind::ForeignKeyViolation => {
                    return Error::Conflict("the record is still referenced by other records; delete or change those first".into())
                }
                // The index's name: `units_external_id`.
                sqlx::error::ErrorKind::UniqueViolation => return unique_conflict(db.constraint().unwrap_or_default()),
                _ => {}
            }
            // PostgreSQL's connection exceptions (class 08), its shutdown and start-up
            // refusals (57P01-57P03) and too many connections (53300).
            if db.code().is_some_and(|c| c.starts_with("08") || matches!(c.as_ref(), "57P01" | "57P02" | "57P03" | "53300")) {
                return Error::database_unavailable(&e);
            }
        }
        // No connection within the acquire timeout, or the one we had was cut.
        if matches!(e, sqlx::Error::PoolTimedOut | sqlx::Error::Io(_) | sqlx::Error::Tls(_) | sqlx::Error::WorkerCrashed) {
            return Error::database_unavailable(&e);
        }
        Error::Internal(e.into())
    }
}
