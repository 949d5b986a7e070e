//! Credentials: `Authorization: Bearer gbl_…`. A key acts for one tenant, on its own
//! environment's listener only, within its scopes and property constraint.

use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use chrono::Utc;

use crate::domain::registry::Collection;
use crate::domain::scopes::{self, Access};
use crate::error::Error;
use crate::state::ApiState;
use crate::store::records::Scope;

pub struct Credential {
    pub key_id: uuid::Uuid,
    pub scope: Scope,
    pub scopes: Vec<String>,
}

impl Credential {
    /// Refuses with `403 insufficient_scope` naming the scope the operation needs.
    pub fn require(&self, c: &Collection, access: Access) -> Result<(), Error> {
        if scopes::allows(&self.scopes, c.name, access) {
            return Ok(());
        }
        Err(Error::InsufficientScope(match access {
            Access::Read => c.read_scope(),
            Access::Write => c.write_scope(),
        }))
    }
}

impl FromRequestParts<ApiState> for Credential {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, state: &ApiState) -> Result<Self, Self::Rejection> {
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .ok_or_else(|| Error::Unauthenticated("send your API key as `Authorization: Bearer <key>`".into()))?;
        let header = header.to_str().map_err(|_| Error::Unauthenticated("the Authorization header is not valid".into()))?;
        let secret = header
            .strip_prefix("Bearer ")
            .or_else(|| header.strip_prefix("bearer "))
            .map(str::trim)
            .ok_or_else(|| Error::Unauthenticated("the Authorization header must use the Bearer scheme".into()))?;
        if secret.len() > 200 || !secret.starts_with("gbl_") {
            return Err(Error::Unauthenticated("the API key is not valid".into()));
        }
        let key = state
            .app
            .store
            .authenticate(secret, Utc::now())
            .await?
            .ok_or_else(|| Error::Unauthenticated("the API key is not valid or has been revoked".into()))?;
        if key.livemode != state.livemode {
            let (key_env, here) = if key.livemode { ("live", "the sandbox") } else { ("test", "production") };
            return Err(Error::KeyEnvironmentMismatch(format!(
                "this is a {key_env} key and this is {here}'s address; use the {} base address",
                if key.livemode { "production" } else { "sandbox" }
            )));
        }
        Ok(Credential {
            key_id: key.id,
            scope: Scope { tenant: key.tenant_id, livemode: key.livemode, properties: key.property_ids },
            scopes: key.scopes,
        })
    }
}
