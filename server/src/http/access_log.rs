//! One `info` line per request (target `gable::access`): listener, method, path
//! template, status, latency and request id; and, when metrics are served, the request
//! counted and timed by the same labels (`observe::metrics::REQUESTS`).
//!
//! The path is the route's template (`/v1/{resource}/{id}`), never the path as sent,
//! and neither the query string nor any header is read: a query may carry a token, a
//! header a key, and ids in paths are not needed to see traffic. A request that matched
//! no route is logged as `UNMATCHED_PATH`. The latency is the time to the response
//! head (a streamed body may still be flowing).
//!
//! The method is one of HTTP's nine or `OTHER` (`method_label`): a client may send any
//! token as a method, and a label made from it would be a new metric series per request
//! (the third security review grew one scrape to 478 MB with made-up methods).

use std::time::Duration;

use axum::http::{Method, StatusCode};
use uuid::Uuid;

use crate::observe::metrics as m;

/// The path logged for a request no route matched (its own path could be anything).
pub const UNMATCHED_PATH: &str = "<unmatched>";

/// Writes the line and the metrics of a request answered with `status` after `elapsed`
/// (`http::edge`, after the response and outside the request's span: the JSON log format
/// prints the current span on every line, even on a root event, and the span's fields
/// include the path as sent).
pub fn record(listener: &'static str, method: &'static str, path: &str, status: StatusCode, elapsed: Duration, request_id: Uuid) {
    let latency_ms = elapsed.as_micros() as f64 / 1000.0;
    if m::enabled() {
        let (route, status) = (path.to_string(), status.as_u16().to_string());
        metrics::histogram!(m::REQUEST_DURATION, "listener" => listener, "method" => method, "route" => route.clone())
            .record(elapsed.as_secs_f64());
        metrics::counter!(m::REQUESTS, "listener" => listener, "method" => method, "route" => route, "status" => status).increment(1);
    }
    tracing::info!(
        target: "gable::access",
        listener,
        method,
        path = %path,
        status = status.as_u16(),
        latency_ms,
        request_id = %request_id,
        "request"
    );
}

/// The method as logged and labelled: HTTP's own methods by name, anything else `OTHER`.
pub fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::HEAD => "HEAD",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::OPTIONS => "OPTIONS",
        Method::TRACE => "TRACE",
        Method::CONNECT => "CONNECT",
        _ => "OTHER",
    }
}

#[cfg(test)]
mod tests {
    use axum::http::Method;

    use super::method_label;

    #[test]
    fn made_up_methods_are_one_label() {
        assert_eq!(method_label(&Method::PATCH), "PATCH");
        let made_up = Method::from_bytes("X".repeat(20_000).as_bytes()).expect("a token");
        assert_eq!(method_label(&made_up), "OTHER");
        assert_eq!(method_label(&Method::from_bytes(b"get").expect("a token")), "OTHER", "methods are case-sensitive");
    }
}
