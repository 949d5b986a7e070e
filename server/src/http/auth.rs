//! The request's credential: [`authenticate`] takes the bearer secret of the
//! `Authorization` header to the access gate (`ops::access`) and puts the resulting
//! [`Principal`] in the request's extensions; handlers (and the per-credential steps that
//! follow it on every `/v1` route: rate limits, idempotency) read it from there. A
//! credential acts for one tenant, on its own environment's listener only, within its
//! scopes and property constraint.
//!
//! A flow token holds no collection scope: on the generic API it is refused like a key
//! without the scope (403), and only the flow API (`api::flow`) reads its grant.

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use uuid::Uuid;

pub use crate::ops::access::{Kind, Principal};

use crate::error::Error;
use crate::http::state::ApiState;

/// Resolves the request's credential into its extensions (`api::per_credential`, before
/// anything else of an authenticated route); the refusal (401) when there is none or it
/// is not valid here.
pub async fn authenticate(st: &ApiState, req: &mut Request) -> Result<Uuid, Response> {
    let resolved = match bearer(req.headers()) {
        Ok(secret) => st.app.ops.bearer(secret, st.livemode).await,
        Err(e) => Err(e),
    };
    let principal = resolved.map_err(IntoResponse::into_response)?;
    let id = principal.id;
    req.extensions_mut().insert(principal);
    Ok(id)
}

/// The bearer credential a request carries, or why it carries none.
pub fn bearer(headers: &HeaderMap) -> Result<&str, Error> {
    let header = headers
        .get(axum::http::header::AUTHORIZATION)
        .ok_or_else(|| Error::Unauthenticated("send your API key as `Authorization: Bearer <key>`".into()))?;
    let header = header.to_str().map_err(|_| Error::Unauthenticated("the Authorization header is not valid".into()))?;
    header
        .strip_prefix("Bearer ")
        .or_else(|| header.strip_prefix("bearer "))
        .map(str::trim)
        .ok_or_else(|| Error::Unauthenticated("the Authorization header must use the Bearer scheme".into()))
}

/// Handlers take the principal the layer resolved. A route outside the layer that asks
/// for one is a bug of Gable's, answered as such.
impl<S: Send + Sync> FromRequestParts<S> for Principal {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Principal>()
            .cloned()
            .ok_or_else(|| Error::internal(anyhow::anyhow!("a credential was asked for on a route outside the credential layer")))
    }
}
