//! One `info` line per request (target `gable::access`): listener, method, path
//! template, status, latency and request id; and, when metrics are served, the request
//! counted and timed by the same labels (`observe::metrics::REQUESTS`).
//!
//! The path is the route's template (`/v1/{resource}/{id}`), never the path as sent,
//! and neither the query string nor any header is read: a query may carry a token, a
//! header a key, and ids in paths are not needed to see traffic. A request that matched
//! no route is logged as `UNMATCHED_PATH`. The latency is the time to the response
//! head (a streamed body may still be flowing).

use std::time::Instant;

use axum::extract::{MatchedPath, Request, State};
use axum::middleware::Next;
use axum::response::Response;

use crate::observe::metrics as m;

/// The path logged for a request no route matched (its own path could be anything).
pub const UNMATCHED_PATH: &str = "<unmatched>";

/// Sits outside the request-id layer and takes the id from its `Request-Id` response
/// header: outside the request's span, whose fields include the path as sent (the JSON
/// log format prints the current span on every line, even on a root event).
pub async fn layer(State(listener): State<&'static str>, req: Request, next: Next) -> Response {
    let started = Instant::now();
    let method = req.method().clone();
    let path = req.extensions().get::<MatchedPath>().map_or_else(|| UNMATCHED_PATH.to_string(), |p| p.as_str().to_string());
    let resp = next.run(req).await;
    let elapsed = started.elapsed();
    let latency_ms = elapsed.as_micros() as f64 / 1000.0;
    if m::enabled() {
        let (method, route, status) = (method.to_string(), path.clone(), resp.status().as_u16().to_string());
        metrics::histogram!(m::REQUEST_DURATION, "listener" => listener, "method" => method.clone(), "route" => route.clone())
            .record(elapsed.as_secs_f64());
        metrics::counter!(m::REQUESTS, "listener" => listener, "method" => method, "route" => route, "status" => status).increment(1);
    }
    let request_id = resp.headers().get("request-id").and_then(|v| v.to_str().ok()).unwrap_or_default();
    tracing::info!(
        target: "gable::access",
        listener,
        method = %method,
        path = %path,
        status = resp.status().as_u16(),
        latency_ms,
        request_id = %request_id,
        "request"
    );
    resp
}
