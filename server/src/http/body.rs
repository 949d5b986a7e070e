//! The JSON request body: `application/json`, at most 1 MiB, well-formed, and no string in
//! it (key or value) holding U+0000, which PostgreSQL cannot store in text or `jsonb`:
//! refused alike on both databases, naming where it is.

use axum::body::Bytes;
use axum::extract::{FromRequest, Request};
use axum::http::header::CONTENT_TYPE;

use crate::error::Error;

pub const MAX_BODY: usize = 1 << 20;

/// How many request timeouts an upload may take, its file and the dry run included (5
/// minutes at the default 30 s: a 100 MiB file at 0.4 MB/s), where any other request has
/// one. Bounded by the request timeout still, so that an upload waiting on a database
/// that does not answer is answered `503` like any request, only later.
pub const UPLOAD_TIMEOUTS: u32 = 10;

/// Whether a request's body is a file read as a stream rather than JSON held in memory:
/// an import's upload (`POST /v1/imports`, `http::api::imports`, and the console's form,
/// `http::console`). The layers that read
/// bodies whole (admission's chunked buffering, the request log, idempotency) let it
/// through as a stream, with its own limit ([`limit_of`]) and time ([`UPLOAD_TIMEOUTS`]).
pub fn is_upload(method: &axum::http::Method, path: &str) -> bool {
    method == axum::http::Method::POST && (path == "/v1/imports" || path == gable_app::api::IMPORT_UPLOAD)
}

/// The largest body a request may send.
pub fn limit_of(method: &axum::http::Method, path: &str) -> usize {
    if is_upload(method, path) {
        crate::ops::imports::MAX_FILE_BYTES
    } else {
        MAX_BODY
    }
}

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
        if let Some(at) = nul_at(&value, String::new()) {
            return Err(Error::validation(if at.is_empty() { "body" } else { &at }, "must not contain NUL characters (U+0000)"));
        }
        Ok(JsonBody(value))
    }
}

/// Where the first string holding U+0000 is (`metadata.note`, `lines[2].account`), if any.
fn nul_at(v: &serde_json::Value, at: String) -> Option<String> {
    use serde_json::Value as J;
    let join = |key: &str| if at.is_empty() { key.to_string() } else { format!("{at}.{key}") };
    match v {
        J::String(s) if s.contains('\0') => Some(at),
        J::Array(items) => items.iter().enumerate().find_map(|(i, item)| nul_at(item, format!("{at}[{i}]"))),
        J::Object(map) => {
            map.iter().find_map(|(k, item)| if k.contains('\0') { Some(join(&k.replace('\0', "\\u0000"))) } else { nul_at(item, join(k)) })
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::nul_at;

    #[test]
    fn finds_nul_in_any_string_or_key() {
        assert_eq!(nul_at(&json!({ "name": "ok", "metadata": { "a": "x\u{0}" } }), String::new()), Some("metadata.a".into()));
        assert_eq!(
            nul_at(&json!({ "lines": [{ "account": "cash" }, { "account": "\u{0}" }] }), String::new()),
            Some("lines[1].account".into())
        );
        assert_eq!(nul_at(&json!({ "metadata": { "k\u{0}": "v" } }), String::new()), Some("metadata.k\\u0000".into()));
        assert_eq!(nul_at(&json!({ "name": "fine", "n": 1, "list": ["a", "b"] }), String::new()), None);
    }
}
