//! The `/v1` API: one router per endpoint module, merged here. Everything but the API
//! description sits behind the credential layer (`http::auth::layer`), so the
//! per-credential layers wrap every authenticated route in one place (innermost last:
//! credential, then the others, then idempotency right around the handlers).

pub mod flow;
pub mod openapi;
pub mod resources;
pub mod sandbox;
pub mod webhooks;

use axum::routing::{get, post};
use axum::{middleware, Router};

use crate::http::state::ApiState;
use crate::http::{auth, idempotency};

pub fn router(state: &ApiState) -> Router<ApiState> {
    let authenticated = Router::new()
        .route("/v1/{resource}", get(resources::list).post(resources::create))
        .route("/v1/{resource}/{id}", get(resources::get).patch(resources::update).delete(resources::delete))
        .route("/v1/{resource}/{id}/{action}", post(resources::action))
        .merge(webhooks::router())
        .merge(sandbox::router())
        .merge(flow::router())
        .route_layer(middleware::from_fn_with_state(state.clone(), idempotency::layer))
        .route_layer(middleware::from_fn_with_state(state.clone(), crate::http::rate_limit::layer))
        .route_layer(middleware::from_fn_with_state(state.clone(), auth::layer));
    Router::new().route("/v1/openapi.json", get(openapi::serve)).merge(authenticated)
}
