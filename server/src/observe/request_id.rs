//! The id of the request a task serves: given at the edge (`http::edge`), read by the
//! error and success bodies, and by the outbox, so an event names the request that
//! caused it (`events.request_id`, the request log's link to its events).

use uuid::Uuid;

tokio::task_local! {
    static REQUEST_ID: Uuid;
}

/// The id of the request being served on this task, if any (none in background work).
pub fn current() -> Option<Uuid> {
    REQUEST_ID.try_with(|id| *id).ok()
}

/// Runs `serving` with `id` as the request id of its task (`current`).
pub fn scope<F: std::future::Future>(id: Uuid, serving: F) -> tokio::task::futures::TaskLocalFuture<Uuid, F> {
    REQUEST_ID.scope(id, serving)
}

/// Runs `call` with `id` as the request id of this thread's task, for what it does
/// before it returns.
pub fn sync_scope<T>(id: Uuid, call: impl FnOnce() -> T) -> T {
    REQUEST_ID.sync_scope(id, call)
}
