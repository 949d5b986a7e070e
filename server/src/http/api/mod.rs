//! The `/v1` API: one router per endpoint module, merged here. Everything but the API
//! description sits behind [`per_credential`]: the credential (`http::auth`), the call's
//! recording for the request log (`http::request_log`), then the credential's rate limit
//! (`http::rate_limit`), then idempotency right around the handlers
//! (`http::idempotency`), in one layer, in that order.

pub mod event_stream;
pub mod flow;
pub mod imports;
pub mod openapi;
mod query;
pub mod request_log_stream;
pub mod resources;
pub mod sandbox;
pub mod streams;
pub mod webhooks;

use axum::extract::{Request, State};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;

use crate::http::state::ApiState;
use crate::http::{auth, idempotency, rate_limit, request_log};

pub fn router(state: &ApiState) -> Router<ApiState> {
    let authenticated = Router::new()
        .route("/v1/{resource}", get(resources::list).post(resources::create))
        .route("/v1/{resource}/{id}", get(resources::get).patch(resources::update).delete(resources::delete))
        .route("/v1/{resource}/{id}/{action}", post(resources::action))
        .merge(webhooks::router())
        .merge(imports::router())
        .merge(event_stream::router())
        .merge(request_log_stream::router())
        .merge(sandbox::router())
        .merge(flow::router())
        .route_layer(middleware::from_fn_with_state(state.clone(), per_credential));
    Router::new().route("/v1/openapi.json", get(openapi::serve)).merge(authenticated)
}

/// What every authenticated route runs behind: the request's credential, refused `401`
/// without one; then its rate limit, `429` over it; then idempotency for a `POST`. Only
/// authenticated requests count against a limit, and every authenticated response
/// carries the rate-limit fields. Every call with a credential is recorded in its
/// tenant's request log, refusals included (a call without one belongs to no tenant).
async fn per_credential(State(st): State<ApiState>, mut req: Request, next: Next) -> Response {
    let credential = match auth::authenticate(&st, &mut req).await {
        Ok(id) => id,
        Err(refused) => return refused,
    };
    let mut recording = request_log::start(&st, &mut req);
    let resp = match request_log::take_declared_body(&mut recording, req).await {
        Ok(req) => rate_limit::limit(&st.rate_limits, st.livemode, credential, req, |req| idempotency::guard(&st, req, next)).await,
        Err(refused) => refused,
    };
    match recording {
        Some(r) => r.finish(&st, resp).await,
        None => resp,
    }
}
