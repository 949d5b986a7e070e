//! Every request gets a uuid (given at the edge, `http::edge`): in the `Request-Id`
//! header, in `meta.request_id` and `error.request_id`, on the tracing span around the
//! request, on the events it causes, and as the id of its request log record. The
//! task-local itself is on the ground floor (`observe::request_id`), where the outbox
//! reads it too.

use axum::http::{HeaderValue, Response};
use uuid::Uuid;

pub use crate::observe::request_id::{current as current_request_id, scope, sync_scope};

/// Puts the request id on its response.
pub fn mark<B>(resp: &mut Response<B>, id: Uuid) {
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    if let Ok(v) = HeaderValue::from_bytes(id.hyphenated().encode_lower(&mut text).as_bytes()) {
        resp.headers_mut().insert("request-id", v);
    }
}
