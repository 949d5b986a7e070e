//! Every request gets a uuid (given at the edge, `http::edge`): in the `Request-Id`
//! header, in `meta.request_id` and `error.request_id`, and on the tracing span around
//! the request.

use axum::http::{HeaderValue, Response};
use uuid::Uuid;

tokio::task_local! {
    static REQUEST_ID: Uuid;
}

/// The id of the request being served on this task, if any.
pub fn current_request_id() -> Option<Uuid> {
    REQUEST_ID.try_with(|id| *id).ok()
}

/// Runs `serving` with `id` as the request id of its task (`current_request_id`).
pub fn scope<F: std::future::Future>(id: Uuid, serving: F) -> tokio::task::futures::TaskLocalFuture<Uuid, F> {
    REQUEST_ID.scope(id, serving)
}

/// Runs `call` with `id` as the request id of this thread's task, for what it does
/// before it returns.
pub fn sync_scope<T>(id: Uuid, call: impl FnOnce() -> T) -> T {
    REQUEST_ID.sync_scope(id, call)
}

/// Puts the request id on its response.
pub fn mark<B>(resp: &mut Response<B>, id: Uuid) {
    let mut text = [0u8; uuid::fmt::Hyphenated::LENGTH];
    if let Ok(v) = HeaderValue::from_bytes(id.hyphenated().encode_lower(&mut text).as_bytes()) {
        resp.headers_mut().insert("request-id", v);
    }
}
