//! Every request gets a uuid: in the `Request-Id` header, in `meta.request_id` and
//! `error.request_id`, and on the tracing span around the request.

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::middleware::Next;
use axum::response::Response;
use tracing::Instrument;
use uuid::Uuid;

tokio::task_local! {
    static REQUEST_ID: Uuid;
}

/// The id of the request being served on this task, if any.
pub fn current_request_id() -> Option<Uuid> {
    REQUEST_ID.try_with(|id| *id).ok()
}

pub async fn layer(req: Request, next: Next) -> Response {
    let id = Uuid::now_v7();
    let span = tracing::info_span!("request", request_id = %id, method = %req.method(), path = %req.uri().path());
    let mut resp = REQUEST_ID.scope(id, next.run(req).instrument(span.clone())).await;
    span.in_scope(|| tracing::debug!(status = resp.status().as_u16(), "served"));
    if let Ok(v) = HeaderValue::from_str(&id.to_string()) {
        resp.headers_mut().insert("request-id", v);
    }
    resp
}
