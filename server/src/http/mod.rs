//! HTTP: router assembly and the layers every request passes through.
//!
//! edge (client address and https, trusted proxies only; request id; access log) → catch
//! panic → admission (a declared body over the limit refused before it is read; the
//! request timeout) → API version → body limit → per credential (every `/v1` route but
//! the API description; `api::per_credential`: credential, rate limit, idempotency on
//! every `POST`) → routes.
//!
//! The layers every request passes are tower services of their own (`edge`, `admission`,
//! `version`), and the per-credential steps one `from_fn`: a `from_fn` middleware clones
//! the routes below it and boxes a future on every request.

pub mod access_log;
pub mod admission;
pub mod api;
pub mod asset;
pub mod auth;
pub mod body;
pub mod caller;
pub mod console;
pub mod edge;
pub mod embed;
pub mod envelope;
pub mod error;
pub mod health;
pub mod idempotency;
pub mod listener;
pub mod oauth;
pub mod rate_limit;
pub mod request_id;
pub mod request_log;
pub mod send_deadline;
pub mod state;
pub mod version;

use std::any::Any;
use std::time::Duration;

use axum::extract::DefaultBodyLimit;
use axum::http::Response;
use axum::response::IntoResponse;
use axum::Router;

use gable_app::api::ConsoleConfig;
use gable_app::service::Console;
use leptos::prelude::LeptosOptions;
use tower::ServiceBuilder;
use tower_http::catch_panic::CatchPanicLayer;

use crate::error::Error;
use crate::http::state::ApiState;

/// The router of one listener. Production also hosts the console; the sandbox serves the API.
pub fn router(state: ApiState, console: Option<(LeptosOptions, Console, ConsoleConfig)>) -> Router {
    let mut api = api::router(&state).merge(embed::router());
    // The authorization server lives at the production address (`auth_url`); a sandbox
    // app's tokens then act on the sandbox listener.
    if state.livemode {
        api = api.merge(oauth::router());
    }
    let api = api
        .route("/v1", axum::routing::any(api_not_found))
        .route("/v1/{resource}/{id}/{action}/{*rest}", axum::routing::any(api_not_found))
        .method_not_allowed_fallback(api::resources::method_not_allowed)
        .layer(ServiceBuilder::new().layer(DefaultBodyLimit::max(body::MAX_BODY)).layer(version::Versioning))
        .with_state(state.clone());
    let app = match console {
        Some((options, service, config)) => api.merge(console::router(options, service, config)),
        None => api.fallback(api_not_found),
    };
    let app = app.merge(health::router(state.app.clone()));
    with_common_layers(app, crate::observe::metrics::listener(state.livemode), state.app.settings.request_timeout)
}

/// What a listener answers on the connections of its reserve (`listener::RESERVE`), once
/// every regular connection is taken: the health checks, so that a load balancer still
/// sees the process, and `503` with `Retry-After` for everything else.
pub fn reserve_router(app: std::sync::Arc<crate::http::state::AppState>, livemode: bool) -> Router {
    let request_timeout = app.settings.request_timeout;
    let routes = health::router(app).fallback(at_capacity);
    with_common_layers(routes, crate::observe::metrics::listener(livemode), request_timeout)
}

async fn at_capacity() -> Error {
    Error::Unavailable { message: "the server is at its connection limit; retry after Retry-After seconds".into(), retry_after_secs: 1 }
}

/// The layers every route of a listener sits behind, outermost last: a declared body over
/// the limit is refused 413 and a request running past `request_timeout` is answered 503
/// (`admission`), panics become 500s in the error body, and at the edge (`edge`) the
/// client is worked out, the request gets its id (on its span and its response) and
/// leaves one access-log line (outside the request span, which carries the raw path).
pub fn with_common_layers(router: Router, listener: &'static str, request_timeout: Duration) -> Router {
    // One stack, one `Router::layer`: each `Router::layer` boxes every route again, and a
    // boxed route boxes its future on every request.
    router.layer(
        ServiceBuilder::new()
            .layer(edge::Edge { listener })
            .layer(CatchPanicLayer::custom(panic_response))
            .layer(admission::Admission { request_timeout }),
    )
}

async fn api_not_found() -> Error {
    Error::NotFound { message: "there is no such endpoint; see /v1/openapi.json".into(), param: None }
}

/// A panic in a handler becomes a 500 in the error body, never a dropped connection.
fn panic_response(_: Box<dyn Any + Send + 'static>) -> Response<axum::body::Body> {
    tracing::error!("a handler panicked");
    Error::Internal(anyhow::anyhow!("handler panicked")).into_response()
}
