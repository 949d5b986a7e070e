//! Who is asking: every credential Gable takes resolves here, at Gable's clock, to one
//! [`Principal`] (an [`Actor`] and what kind of credential made it).
//!
//! - a bearer secret on a listener ([`Operations::bearer`]): an API key (`gbl_…`), an OAuth
//!   access token (`gat_…`) or a flow token (`gft_…`). A credential of the other
//!   environment is refused with one error, `key_environment_mismatch`, whichever kind it is;
//! - a console session's token ([`Operations::session`]): the signed-in user acting in the
//!   environment the console is switched to, with their role's permissions.
//!
//! What the principal may then read and write is decided in one place too: `Actor::require`,
//! called by the operations (`ops::reads` for reads, the writes for writes).

use std::sync::Arc;

use uuid::Uuid;

use super::{Actor, Operations};
use crate::domain::flows::{self, Grant};
use crate::domain::reach::Scope;
use crate::error::{Error, Result};
use crate::store::accounts::sessions::StoredSession;
use crate::store::keys::hash_secret;

/// What kind of credential a principal came with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    ApiKey,
    FlowToken,
    /// An OAuth access token (`gat_…`): a third-party app acting for a user.
    OAuth,
    /// A signed-in console user.
    ConsoleSession,
}

impl Kind {
    /// The credential as a person names it, in refusals.
    fn noun(self) -> &'static str {
        match self {
            Kind::ApiKey => "API key",
            Kind::FlowToken => "flow token",
            Kind::OAuth => "OAuth access token",
            Kind::ConsoleSession => "console session",
        }
    }
}

/// A resolved credential: whom it acts as, and how it was presented.
#[derive(Debug, Clone)]
pub struct Principal {
    pub kind: Kind,
    /// The credential's own id (a key's, a flow token's, an OAuth grant's, a console
    /// user's): what per-credential limits key on.
    pub id: Uuid,
    /// Tenant, environment, property constraint and scopes.
    pub actor: Actor,
    /// A flow token's grant: its flow, subject and origin.
    pub flow: Option<Arc<Grant>>,
    /// An OAuth access token's app (its client's id) and the user it acts for.
    pub oauth: Option<(Uuid, Uuid)>,
}

/// A signed-in console user: the principal and the session as stored (name, role, CSRF).
pub struct SignedIn {
    pub principal: Principal,
    pub session: StoredSession,
}

/// A console session unused this long is over: signing in again is needed.
pub const SESSION_IDLE: chrono::Duration = chrono::Duration::minutes(30);
/// A console session is over this long after sign-in, however busy.
pub const SESSION_ABSOLUTE: chrono::Duration = chrono::Duration::hours(12);
/// A session's `last_seen_at` is written at most this often, so reads stay reads.
pub const SESSION_TOUCH_EVERY: chrono::Duration = chrono::Duration::seconds(60);
/// Longer bearer secrets are not Gable's: refused before any lookup.
const MAX_SECRET_LEN: usize = 200;
/// Longer console session tokens are not Gable's (its own are 43 characters).
pub const MAX_SESSION_TOKEN_LEN: usize = 128;

/// A credential found, and the refusal it earns beyond its environment (a revoked or
/// expired flow token), which `bearer` gives only once the environment matches.
struct Found {
    principal: Principal,
    refused: Option<Error>,
}

impl From<Principal> for Found {
    fn from(principal: Principal) -> Found {
        Found { principal, refused: None }
    }
}

/// The one refusal of a credential presented on the other environment's listener.
fn mismatch(kind: Kind, credential_live: bool) -> Error {
    let (env, here, use_) =
        if credential_live { ("production", "the sandbox", "production") } else { ("sandbox", "production", "sandbox") };
    Error::KeyEnvironmentMismatch(format!(
        "this {} is a {env} credential and this is {here}'s address; use the {use_} base address",
        kind.noun()
    ))
}

impl Operations {
    /// The principal of a bearer secret presented on the listener of `livemode`, or why
    /// not (`401`: unknown, revoked, expired, or of the other environment).
    pub async fn bearer(&self, secret: &str, livemode: bool) -> Result<Principal> {
        if secret.len() > MAX_SECRET_LEN {
            return Err(Error::Unauthenticated("the API key is not valid".into()));
        }
        let Found { principal, refused } = if secret.starts_with(flows::TOKEN_PREFIX) {
            self.flow_token(secret).await?
        } else if secret.starts_with(crate::domain::oauth::ACCESS_PREFIX) {
            self.access_token(secret).await?.into()
        } else if secret.starts_with("gbl_") {
            self.api_key(secret).await?.into()
        } else {
            return Err(Error::Unauthenticated("the API key is not valid".into()));
        };
        // The environment first: the other environment's credential is a mismatch, whatever its standing.
        if principal.actor.scope.livemode != livemode {
            return Err(mismatch(principal.kind, principal.actor.scope.livemode));
        }
        match refused {
            Some(e) => Err(e),
            None => Ok(principal),
        }
    }

    async fn api_key(&self, secret: &str) -> Result<Principal> {
        let key = self
            .store
            .active_key(secret, self.clock.now())
            .await?
            .ok_or_else(|| Error::Unauthenticated("the API key is not valid or has been revoked".into()))?;
        Ok(Principal {
            kind: Kind::ApiKey,
            id: key.id,
            actor: Actor {
                scope: Scope { tenant: key.tenant_id, livemode: key.livemode, properties: key.property_ids },
                grants: key.scopes.into(),
            },
            flow: None,
            oauth: None,
        })
    }

    /// An OAuth access token: known, unexpired, its authorization standing and its user
    /// active; it acts in the user's tenant, in its app's environment, with the granted scopes.
    async fn access_token(&self, secret: &str) -> Result<Principal> {
        let access = super::oauth::access(&self.store, secret, self.clock.now())
            .await?
            .ok_or_else(|| Error::Unauthenticated("the access token is not valid, has expired or was revoked".into()))?;
        Ok(Principal {
            kind: Kind::OAuth,
            id: access.grant,
            actor: Actor {
                scope: Scope { tenant: access.tenant, livemode: access.livemode, properties: None },
                grants: access.scopes.into(),
            },
            flow: None,
            oauth: Some((access.client, access.user)),
        })
    }

    /// A flow token: known, and good while not revoked and not expired, in its
    /// environment's time (the sandbox's clock expires sandbox tokens). Read from the store
    /// on every request, never cached, so a revocation holds from the next request on.
    async fn flow_token(&self, secret: &str) -> Result<Found> {
        let found = self
            .store
            .find_flow_token(secret, self.clock.now())
            .await?
            .ok_or_else(|| Error::Unauthenticated("the flow token is not valid; ask the page for a new one".into()))?;
        let token = &found.record;
        let grant = Grant::of(token).ok_or_else(|| Error::internal(anyhow::anyhow!("flow token {} is incomplete", token.id)))?;
        let refused = if token.status() != "active" {
            Some(Error::Unauthenticated(flows::REVOKED.into()))
        } else if found.now >= grant.expires_at {
            Some(Error::TokenExpired("the flow token has expired; reload the page to start again".into()))
        } else {
            None
        };
        let principal = Principal {
            kind: Kind::FlowToken,
            id: token.id,
            actor: Actor {
                scope: Scope { tenant: found.tenant, livemode: token.livemode, properties: Some(grant.property_id.into_iter().collect()) },
                // No collection scope: the flow API acts on the grant, never on these.
                grants: Arc::from(Vec::<String>::new()),
            },
            flow: Some(Arc::new(grant)),
            oauth: None,
        };
        Ok(Found { principal, refused })
    }

    /// The signed-in user of a console session token, if it is still good: unexpired,
    /// used within the idle timeout, its user active. An ended session is deleted on the
    /// way. The console and the OAuth consent page both ask here.
    pub async fn session(&self, token: &str) -> Result<Option<SignedIn>> {
        if token.is_empty() || token.len() > MAX_SESSION_TOKEN_LEN {
            return Ok(None);
        }
        let now = self.clock.now();
        let hash = hash_secret(token);
        let Some(s) = self.store.console_session(&hash).await? else {
            return Ok(None);
        };
        if now >= s.expires_at || now - s.last_seen_at >= SESSION_IDLE || s.user_status != "active" {
            self.store.console_end_session(&hash).await?;
            return Ok(None);
        }
        if now - s.last_seen_at >= SESSION_TOUCH_EVERY {
            self.store.console_touch_session(&hash, now).await?;
        }
        let principal = Principal {
            kind: Kind::ConsoleSession,
            id: s.user_id,
            actor: Actor {
                scope: Scope { tenant: s.tenant_id, livemode: s.livemode, properties: None },
                grants: s.permissions.clone().into(),
            },
            flow: None,
            oauth: None,
        };
        Ok(Some(SignedIn { principal, session: s }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_mismatch_names_the_credential_and_the_address_to_use() {
        for kind in [Kind::ApiKey, Kind::FlowToken, Kind::OAuth] {
            let Error::KeyEnvironmentMismatch(live) = mismatch(kind, true) else { panic!() };
            assert!(live.contains(kind.noun()) && live.contains("use the production base address"), "{live}");
            let Error::KeyEnvironmentMismatch(test) = mismatch(kind, false) else { panic!() };
            assert!(test.contains("this is production's address") && test.contains("use the sandbox"), "{test}");
        }
    }
}
