//! API versions: `/v1` in the path, and `Gable-Version: YYYY-MM-DD` to pin a dated
//! version, echoed on every response.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::error::Error;

/// The current dated version, the events' (`domain::events::API_VERSION`); also the API
/// description's `info.version`.
pub const CURRENT: &str = crate::domain::events::API_VERSION;
/// Every dated version this server still serves.
pub const SUPPORTED: &[&str] = &[CURRENT];

pub async fn layer(req: Request, next: Next) -> Response {
    let version = match req.headers().get("gable-version").map(|v| v.to_str()) {
        None => CURRENT.to_string(),
        Some(Ok(v)) if SUPPORTED.contains(&v.trim()) => v.trim().to_string(),
        Some(_) => return Error::UnsupportedVersion(format!("Gable-Version must be one of: {}", SUPPORTED.join(", "))).into_response(),
    };
    let mut resp = next.run(req).await;
    if let Ok(v) = HeaderValue::from_str(&version) {
        resp.headers_mut().insert("gable-version", v);
    }
    resp
}
