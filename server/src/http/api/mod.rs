//! The `/v1` API: one router per endpoint module, merged here.

pub mod openapi;
pub mod resources;

use axum::routing::get;
use axum::Router;

use crate::state::ApiState;

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/v1/openapi.json", get(openapi::serve))
        .route("/v1/{resource}", get(resources::list).post(resources::create))
        .route("/v1/{resource}/{id}", get(resources::get).patch(resources::update).delete(resources::delete))
        .route("/v1/{resource}/{id}/{action}", axum::routing::post(resources::action))
}
