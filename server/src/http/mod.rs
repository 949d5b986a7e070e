//! HTTP: router assembly and the layers every request passes through.
//!
//! request id → catch panic → API version → body limit → routes. Credentials are
//! checked by the `Credential` extractor in each handler, before anything else runs.

pub mod api;
pub mod auth;
pub mod body;
pub mod console;
pub mod envelope;
pub mod error;
pub mod request_id;
pub mod version;

use std::any::Any;

use axum::extract::DefaultBodyLimit;
use axum::http::Response;
use axum::response::IntoResponse;
use axum::{middleware, Router};
use std::sync::Arc;

use gable_app::api::ConsoleConfig;
use gable_app::service::Console;
use leptos::prelude::LeptosOptions;
use tower_http::catch_panic::CatchPanicLayer;

use crate::error::Error;
use crate::state::ApiState;

/// The router of one listener. Production also hosts the console; the sandbox serves the API.
pub fn router(state: ApiState, console: Option<(LeptosOptions, Arc<dyn Console>, ConsoleConfig)>) -> Router {
    let api = api::router()
        .route("/v1", axum::routing::any(api_not_found))
        .route("/v1/{resource}/{id}/{action}/{*rest}", axum::routing::any(api_not_found))
        .method_not_allowed_fallback(method_not_allowed)
        .layer(middleware::from_fn(version::layer))
        .layer(DefaultBodyLimit::max(body::MAX_BODY))
        .with_state(state);
    let app = match console {
        Some((options, service, config)) => api.merge(console::router(options, service, config)),
        None => api.fallback(api_not_found),
    };
    with_common_layers(app)
}

/// The layers every route of a listener sits behind: panics become 500s in the error
/// body, and every response carries its request id.
pub fn with_common_layers(router: Router) -> Router {
    router.layer(CatchPanicLayer::custom(panic_response)).layer(middleware::from_fn(request_id::layer))
}

async fn api_not_found() -> Error {
    Error::NotFound { message: "there is no such endpoint; see /v1/openapi.json".into(), param: None }
}

async fn method_not_allowed() -> Error {
    Error::MethodNotAllowed("this method is not allowed on this endpoint".into())
}

/// A panic in a handler becomes a 500 in the error body, never a dropped connection.
fn panic_response(_: Box<dyn Any + Send + 'static>) -> Response<axum::body::Body> {
    tracing::error!("a handler panicked");
    Error::Internal(anyhow::anyhow!("handler panicked")).into_response()
}
