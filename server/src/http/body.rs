//! The JSON request body: `application/json`, at most 1 MiB, well-formed.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;

use crate::error::Error;

pub const MAX_BODY: usize = 1 << 20;

pub struct JsonBody(pub serde_json::Value);

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
