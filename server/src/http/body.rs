//! The JSON request body: `application/json`, at most 1 MiB, well-formed.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::{CONNECTION, CONTENT_LENGTH, CONTENT_TYPE};
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::Error;

pub const MAX_BODY: usize = 1 << 20;

pub struct JsonBody(pub serde_json::Value);

/// Refuses a request whose declared `Content-Length` is over the limit at once, with
/// `413`, before anything reads its body (the idempotency layer would otherwise wait
/// for a body the client may never send).
pub async fn refuse_declared_oversize(req: Request, next: Next) -> Response {
    let declared = req.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
    if declared.is_some_and(|n| n > MAX_BODY as u64) {
        let mut resp = Error::PayloadTooLarge(MAX_BODY).into_response();
        // The unread body cannot be skipped: the connection ends with this answer, and says so.
        resp.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
        return resp;
    }
    next.run(req).await
}

impl<S: Send + Sync> FromRequest<S> for JsonBody {
    type Rejection = Error;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let ct = req.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
        let mime = ct.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
        if mime != "application/json" {
            return Err(Error::UnsupportedMediaType("send the body as Content-Type: application/json".into()));
        }
        let bytes = Bytes::from_request(req, state).await.map_err(|e| {
            if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
                Error::PayloadTooLarge(MAX_BODY)
            } else {
                Error::InvalidRequest { message: "the request body could not be read".into(), param: None }
            }
        })?;
        let value: serde_json::Value =
            serde_json::from_slice(&bytes).map_err(|e| Error::InvalidJson(format!("the body is not valid JSON: {e}")))?;
        Ok(JsonBody(value))
    }
}
