//! The one mapping from `Error` to an HTTP status and the documented error body
//! `{error: {code, message, request_id, param?}}`.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::Json;
use serde_json::json;

use super::request_id::current_request_id;
use crate::error::Error;

impl Error {
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        use Error::*;
        match self {
            InvalidRequest { .. } => (StatusCode::BAD_REQUEST, "invalid_request"),
            InvalidParameter { .. } => (StatusCode::BAD_REQUEST, "invalid_parameter"),
            InvalidCursor => (StatusCode::BAD_REQUEST, "invalid_cursor"),
            InvalidJson(_) => (StatusCode::BAD_REQUEST, "invalid_json"),
            Validation { .. } => (StatusCode::BAD_REQUEST, "validation_failed"),
            UnsupportedVersion(_) => (StatusCode::BAD_REQUEST, "unsupported_version"),
            Unauthenticated(_) => (StatusCode::UNAUTHORIZED, "unauthenticated"),
            KeyEnvironmentMismatch(_) => (StatusCode::UNAUTHORIZED, "key_environment_mismatch"),
            TokenExpired(_) => (StatusCode::UNAUTHORIZED, "token_expired"),
            InsufficientScope { .. } => (StatusCode::FORBIDDEN, "insufficient_scope"),
            PropertyForbidden(_) => (StatusCode::FORBIDDEN, "property_forbidden"),
            OriginForbidden(_) => (StatusCode::FORBIDDEN, "origin_forbidden"),
            NotFound { .. } => (StatusCode::NOT_FOUND, "not_found"),
            MethodNotAllowed { .. } => (StatusCode::METHOD_NOT_ALLOWED, "method_not_allowed"),
            InvalidStateTransition { .. } => (StatusCode::CONFLICT, "invalid_state_transition"),
            Immutable(_) => (StatusCode::CONFLICT, "immutable_resource"),
            Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            MissingIdempotencyKey(_) => (StatusCode::BAD_REQUEST, "missing_idempotency_key"),
            IdempotencyKeyInUse { .. } => (StatusCode::CONFLICT, "idempotency_key_in_use"),
            IdempotencyKeyReused(_) => (StatusCode::UNPROCESSABLE_ENTITY, "idempotency_key_reused"),
            PayloadTooLarge(_) => (StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large"),
            UnsupportedMediaType(_) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
            RateLimited { .. } => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
            TooManyStreams(_) => (StatusCode::TOO_MANY_REQUESTS, "too_many_streams"),
            Unavailable { .. } => (StatusCode::SERVICE_UNAVAILABLE, "service_unavailable"),
            Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal_error"),
        }
    }

    fn param(&self) -> Option<&str> {
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
}

impl IntoResponse for Error {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        if let Error::Internal(cause) = &self {
            // The cause goes to the log (with the request id from the span), never to the client.
            tracing::error!(error = %format!("{cause:#}"), "internal error");
        }
        let message = match &self {
            Error::Internal(_) => "Something went wrong on our side. Quote the request id if you contact support.".to_string(),
            other => other.to_string(),
        };
        let mut body = json!({ "code": code, "message": message });
        if let Some(id) = current_request_id() {
            body["request_id"] = json!(id.to_string());
        }
        if let Some(p) = self.param() {
            body["param"] = json!(p);
        }
        if let Error::InsufficientScope { scope, .. } = &self {
            body["details"] = json!({ "required_scope": scope });
        }
        if let Error::InvalidStateTransition { current, allowed, .. } = &self {
            body["details"] = json!({ "current_status": current, "allowed_actions": allowed });
        }
        let mut resp = (status, Json(json!({ "error": body }))).into_response();
        if let Error::MethodNotAllowed { allow, .. } = &self {
            if let Ok(v) = axum::http::HeaderValue::from_str(&allow.join(", ")) {
                resp.headers_mut().insert(axum::http::header::ALLOW, v);
            }
        }
        // RFC 6750 §3: bearer credentials (API keys and OAuth access tokens alike) say why
        // they were refused in `WWW-Authenticate` too.
        let challenge = match &self {
            Error::Unauthenticated(_) | Error::KeyEnvironmentMismatch(_) | Error::TokenExpired(_) => {
                Some(r#"Bearer realm="gable", error="invalid_token""#.to_string())
            }
            Error::InsufficientScope { scope, .. } => Some(format!(r#"Bearer realm="gable", error="insufficient_scope", scope="{scope}""#)),
            _ => None,
        };
        if let Some(v) = challenge.and_then(|c| axum::http::HeaderValue::from_str(&c).ok()) {
            resp.headers_mut().insert(axum::http::header::WWW_AUTHENTICATE, v);
        }
        if let Error::RateLimited { retry_after_secs }
        | Error::Unavailable { retry_after_secs, .. }
        | Error::IdempotencyKeyInUse { retry_after_secs } = &self
        {
            resp.headers_mut().insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from(*retry_after_secs));
        }
        resp
    }
}
