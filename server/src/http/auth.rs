//! Credentials, resolved once per request by [`authenticate`], which puts the
//! [`Credential`] in the request's extensions; handlers (and the per-credential steps
//! that follow it on every `/v1` route: rate limits, idempotency) read it from there. A credential is an API key
//! (`Authorization: Bearer gbl_…`) or a flow token (`gft_…`, the embeddable flows'); OAuth
//! access tokens resolve here too. A credential acts for one tenant, on its own
//! environment's listener only, within its scopes and property constraint.
//!
//! A flow token holds no collection scope: on the generic API it is refused like a key
//! without the scope (403), and only the flow API (`api::flow`) reads its grant.

use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::HeaderMap;
use axum::response::{IntoResponse, Response};
use chrono::Utc;
use std::sync::Arc;
use uuid::Uuid;

use crate::domain::flows::{self, Grant};
use crate::domain::reach::Scope;
use crate::error::Error;
use crate::http::state::ApiState;
use crate::ops::Actor;

/// What kind of credential a request came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ApiKey,
    FlowToken,
    /// An OAuth access token (`gat_…`): a third-party app acting for a user.
    OAuth,
}

/// The request's resolved credential.
#[derive(Debug, Clone)]
pub struct Credential {
    pub kind: Kind,
    /// The credential's own id (a key's id): what per-credential limits key on.
    pub id: Uuid,
    /// Whom it acts as: tenant, environment, property constraint and scopes.
    pub actor: Actor,
    /// A flow token's grant: its flow, subject and origin.
    pub flow: Option<Arc<Grant>>,
}

/// Resolves the request's credential into its extensions (`api::per_credential`, before
/// anything else of an authenticated route); the refusal (401) when there is none or it
/// is not valid here.
pub async fn authenticate(st: &ApiState, req: &mut Request) -> Result<Uuid, Response> {
    let cred = resolve(st, req.headers()).await.map_err(IntoResponse::into_response)?;
    let id = cred.id;
    req.extensions_mut().insert(cred);
    Ok(id)
}

fn bearer(headers: &HeaderMap) -> Result<&str, Error> {
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

async fn resolve(st: &ApiState, headers: &HeaderMap) -> Result<Credential, Error> {
    let secret = bearer(headers)?;
    if secret.starts_with(flows::TOKEN_PREFIX) && secret.len() <= 200 {
        return resolve_flow_token(st, secret).await;
    }
    if secret.starts_with(crate::domain::oauth::ACCESS_PREFIX) && secret.len() <= 200 {
        return resolve_access_token(st, secret).await;
    }
    if secret.len() > 200 || !secret.starts_with("gbl_") {
        return Err(Error::Unauthenticated("the API key is not valid".into()));
    }
    let key = st
        .app
        .store
        .authenticate(secret, Utc::now())
        .await?
        .ok_or_else(|| Error::Unauthenticated("the API key is not valid or has been revoked".into()))?;
    if key.livemode != st.livemode {
        let (key_env, here) = if key.livemode { ("live", "the sandbox") } else { ("test", "production") };
        return Err(Error::KeyEnvironmentMismatch(format!(
            "this is a {key_env} key and this is {here}'s address; use the {} base address",
            if key.livemode { "production" } else { "sandbox" }
        )));
    }
    Ok(Credential {
        kind: Kind::ApiKey,
        id: key.id,
        actor: Actor {
            scope: Scope { tenant: key.tenant_id, livemode: key.livemode, properties: key.property_ids },
            grants: key.scopes.into(),
        },
        flow: None,
    })
}

/// An OAuth access token: known, unexpired, its authorization standing and its user
/// active; it acts in the user's tenant, in its app's environment, with the granted scopes.
async fn resolve_access_token(st: &ApiState, secret: &str) -> Result<Credential, Error> {
    let access = crate::ops::oauth::access(&st.app.store, secret, st.app.ops.clock().now())
        .await?
        .ok_or_else(|| Error::Unauthenticated("the access token is not valid, has expired or was revoked".into()))?;
    if access.livemode != st.livemode {
        let (env, here) = if access.livemode { ("live", "the sandbox") } else { ("sandbox", "production") };
        return Err(Error::KeyEnvironmentMismatch(format!("this access token is of a {env} app and this is {here}'s address")));
    }
    Ok(Credential {
        kind: Kind::OAuth,
        id: access.grant,
        actor: Actor { scope: Scope { tenant: access.tenant, livemode: access.livemode, properties: None }, grants: access.scopes.into() },
        flow: None,
    })
}

/// A flow token: known, of this listener's environment, not revoked, and not expired (in
/// its environment's time: the sandbox's clock expires sandbox tokens). Read from the store
/// on every request, never cached, so a revocation holds from the next request on.
async fn resolve_flow_token(st: &ApiState, secret: &str) -> Result<Credential, Error> {
    let found = st
        .app
        .store
        .find_flow_token(secret, st.app.ops.clock().now())
        .await?
        .ok_or_else(|| Error::Unauthenticated("the flow token is not valid; ask the page for a new one".into()))?;
    let token = &found.record;
    if token.livemode != st.livemode {
        let (env, here) = if token.livemode { ("live", "the sandbox") } else { ("sandbox", "production") };
        return Err(Error::KeyEnvironmentMismatch(format!("this is a {env} flow token and this is {here}'s address")));
    }
    if token.status() != "active" {
        return Err(Error::Unauthenticated(flows::REVOKED.into()));
    }
    let grant = Grant::of(token).ok_or_else(|| Error::internal(anyhow::anyhow!("flow token {} is incomplete", token.id)))?;
    if found.now >= grant.expires_at {
        return Err(Error::TokenExpired("the flow token has expired; reload the page to start again".into()));
    }
    Ok(Credential {
        kind: Kind::FlowToken,
        id: token.id,
        actor: Actor {
            scope: Scope { tenant: found.tenant, livemode: token.livemode, properties: Some(grant.property_id.into_iter().collect()) },
            // No collection scope: the flow API acts on the grant, never on these.
            grants: Arc::from(Vec::<String>::new()),
        },
        flow: Some(Arc::new(grant)),
    })
}

/// Handlers take the credential the layer resolved. A route outside the layer that asks
/// for one is a bug of Gable's, answered as such.
impl<S: Send + Sync> FromRequestParts<S> for Credential {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        parts
            .extensions
            .get::<Credential>()
            .cloned()
            .ok_or_else(|| Error::internal(anyhow::anyhow!("a credential was asked for on a route outside the credential layer")))
    }
}
