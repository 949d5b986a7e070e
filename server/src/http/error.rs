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
        let status = match self {
            InvalidRequest { .. } => StatusCode::BAD_REQUEST,
            InvalidParameter { .. } => StatusCode::BAD_REQUEST,
            InvalidCursor => StatusCode::BAD_REQUEST,
            InvalidJson(_) => StatusCode::BAD_REQUEST,
            Validation { .. } => StatusCode::BAD_REQUEST,
            UnsupportedVersion(_) => StatusCode::BAD_REQUEST,
            Unauthenticated(_) => StatusCode::UNAUTHORIZED,
            KeyEnvironmentMismatch(_) => StatusCode::UNAUTHORIZED,
            TokenExpired(_) => StatusCode::UNAUTHORIZED,
            InsufficientScope { .. } => StatusCode::FORBIDDEN,
            PropertyForbidden(_) => StatusCode::FORBIDDEN,
            OriginForbidden(_) => StatusCode::FORBIDDEN,
            NotFound { .. } => StatusCode::NOT_FOUND,
            MethodNotAllowed { .. } => StatusCode::METHOD_NOT_ALLOWED,
            InvalidStateTransition { .. } => StatusCode::CONFLICT,
            Immutable(_) => StatusCode::CONFLICT,
            Conflict(_) => StatusCode::CONFLICT,
            MissingIdempotencyKey(_) => StatusCode::BAD_REQUEST,
            IdempotencyKeyInUse { .. } => StatusCode::CONFLICT,
            IdempotencyKeyReused(_) => StatusCode::UNPROCESSABLE_ENTITY,
            PayloadTooLarge(_) => StatusCode::PAYLOAD_TOO_LARGE,
            UnsupportedMediaType(_) => StatusCode::UNSUPPORTED_MEDIA_TYPE,
            RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
            TooManyStreams(_) => StatusCode::TOO_MANY_REQUESTS,
            Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
            Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
        };
        (status, self.code())
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
