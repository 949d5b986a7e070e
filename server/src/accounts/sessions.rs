//! Console sessions: random tokens kept only as SHA-256, started and ended here; a
//! session's standing (idle and absolute expiry) is read at the access gate
//! (`ops::access`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use gable_app::service::{ConsoleError, Me, NewSession, Sessions, SignUp};
use rand::rngs::OsRng;
use rand::RngCore;
use uuid::Uuid;

use super::{store_error, AccountService};
use crate::ops::access::{MAX_SESSION_TOKEN_LEN, SESSION_ABSOLUTE, SESSION_IDLE};
use crate::store::accounts::sessions::{NewSessionRow, StoredSession};
use crate::store::keys::hash_secret;

/// 32 bytes from the OS, base64url without padding (43 characters, cookie-safe).
pub fn random_token() -> String {
    let mut b = [0u8; 32];
    OsRng.fill_bytes(&mut b);
    URL_SAFE_NO_PAD.encode(b)
}

pub fn token_hash(token: &str) -> String {
    hash_secret(token)
}

fn me(s: &StoredSession) -> Me {
    Me {
        user_id: s.user_id.to_string(),
        tenant_id: s.tenant_id.to_string(),
        tenant_name: s.tenant_name.clone(),
        email: s.email.clone(),
        name: s.name.clone(),
        role: s.role_name.clone().unwrap_or_else(|| "No role".into()),
        can_manage: s.permissions.iter().any(|p| p == "*"),
        permissions: s.permissions.clone(),
        livemode: s.livemode,
        csrf: s.csrf.clone(),
    }
}

impl AccountService {
    /// Starts a session for a user (ending `previous`, if any: rotation) and returns
    /// its token with the user as the console sees them.
    pub(super) async fn start_session(
        &self,
        tenant: Uuid,
        user: Uuid,
        previous: Option<&str>,
        signed_in: bool,
    ) -> Result<NewSession, ConsoleError> {
        let now = self.now();
        let token = random_token();
        let hash = token_hash(&token);
        let csrf = random_token();
        let previous_hash = previous.filter(|p| !p.is_empty() && p.len() <= MAX_SESSION_TOKEN_LEN).map(token_hash);
        self.store
            .console_start_session(
                &NewSessionRow {
                    token_hash: &hash,
                    tenant_id: tenant,
                    user_id: user,
                    csrf: &csrf,
                    livemode: false,
                    now,
                    expires_at: now + SESSION_ABSOLUTE,
                },
                previous_hash.as_deref(),
                now - SESSION_IDLE,
                signed_in,
            )
            .await
            .map_err(store_error("starting a session"))?;
        let me = self.session(&token).await?.ok_or_else(|| {
            tracing::error!("console: a session just started cannot be read back");
            ConsoleError::Internal
        })?;
        Ok(NewSession { token, me })
    }
}

#[async_trait::async_trait]
impl Sessions for AccountService {
    async fn sign_up(&self, form: SignUp, client: &str) -> Result<NewSession, ConsoleError> {
        self.register(form, client).await
    }

    async fn sign_in(&self, email: &str, password: &str, client: &str, previous: Option<&str>) -> Result<NewSession, ConsoleError> {
        self.sign_in_with_password(email, password, client, previous).await
    }

    /// The session's user, or `None` when the token is unknown, expired (idle or
    /// absolute; the row is then deleted) or its user is no longer active.
    async fn session(&self, token: &str) -> Result<Option<Me>, ConsoleError> {
        Ok(self.ops.session(token).await.map_err(store_error("reading a session"))?.map(|s| me(&s.session)))
    }

    async fn sign_out(&self, token: &str) -> Result<(), ConsoleError> {
        if token.is_empty() || token.len() > MAX_SESSION_TOKEN_LEN {
            return Ok(());
        }
        self.store.console_end_session(&token_hash(token)).await.map_err(store_error("ending a session"))
    }

    async fn set_environment(&self, token: &str, livemode: bool) -> Result<(), ConsoleError> {
        if self.session(token).await?.is_none() {
            return Err(ConsoleError::NotSignedIn);
        }
        let found = self
            .store
            .console_set_session_livemode(&token_hash(token), livemode)
            .await
            .map_err(store_error("switching the environment"))?;
        if found {
            Ok(())
        } else {
            Err(ConsoleError::NotSignedIn)
        }
    }
}
