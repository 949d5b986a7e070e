//! The console's service: the server side of `gable_app::service::Console`.
//!
//! The console's pages call it through Leptos context (`Arc<dyn Console>`); it keeps
//! the rules (passwords, sessions, throttling, roles) and reaches the database only
//! through `Store`. Security decisions are written down in `docs/console.md`.
//!
//! - `accounts`: sign-up, sign-in, users and roles
//! - `sessions`: tokens, idle and absolute expiry, the console's environment
//! - `passwords`: password rules, argon2id off the async runtime
//! - `throttle`: sign-in rate limits per email and per client address; sign-up per address
//! - `service_accounts`: service accounts and their API keys
//! - `webhooks`: webhook subscriptions and their delivery register
//! - `sandbox`: resetting the tenant's sandbox (and the demo portfolio)

mod accounts;
pub mod oauth_apps;
pub mod passwords;
mod sandbox;
mod service_accounts;
pub mod sessions;
pub mod throttle;
mod webhooks;

use std::sync::Arc;

use chrono::{DateTime, Utc};
/// The contract this module implements (re-exported for the tests and the CLI).
pub use gable_app::service;

use gable_app::service::{
    ApiKeyView, ConnectedAppView, Console, ConsoleError, CreatedKey, DeliveryDetail, DeliveryFilter, DeliveryView, Me, NewKey, NewSession,
    NewUser, OAuthAppForm, OAuthAppView, OAuthAppWithSecret, RoleView, SandboxReset, ServiceAccount, SignUp, UserView, WebhookForm,
    WebhookView, WebhookWithSecret,
};
use uuid::Uuid;

use crate::error::Error;
use crate::ops::Operations;
use crate::store::Store;

/// A session unused this long is over: signing in again is needed.
pub const SESSION_IDLE: std::time::Duration = std::time::Duration::from_secs(30 * 60);
/// A session is over this long after sign-in, however busy (the cookie's Max-Age).
pub const SESSION_ABSOLUTE: std::time::Duration = std::time::Duration::from_secs(12 * 60 * 60);

pub struct ConsoleService {
    store: Store,
    /// The console's writes of records (users, roles), as every write: through
    /// operations. Its clock is Gable's one clock: sessions and throttling follow it, so
    /// tests move time instead of sleeping.
    ops: Operations,
    hasher: passwords::Hasher,
    throttle: throttle::Throttle,
}

impl ConsoleService {
    pub fn new(ops: Operations) -> Self {
        ConsoleService {
            store: ops.store().clone(),
            throttle: throttle::Throttle::new(ops.clock().clone()),
            ops,
            hasher: passwords::Hasher::new(),
        }
    }

    /// The service as the console's pages use it.
    pub fn shared(ops: Operations) -> Arc<dyn Console> {
        Arc::new(Self::new(ops))
    }

    fn now(&self) -> DateTime<Utc> {
        self.ops.clock().now()
    }
}

/// The cause of a store error, for the log: a chain of messages, never the values of
/// a statement (the `Debug` of a database error can carry a key's hash).
fn describe(e: &Error) -> String {
    match e {
        Error::Internal(inner) => format!("{inner:#}"),
        other => other.to_string(),
    }
}

/// Maps an unexpected store error to `Internal`, logging its cause.
fn store_error(doing: &'static str) -> impl FnOnce(Error) -> ConsoleError {
    move |e| {
        tracing::error!(error = %describe(&e), "console: {doing} failed");
        ConsoleError::Internal
    }
}

/// The tenant of a signed-in user (from their session, which the server produced).
fn tenant_of(me: &Me) -> Result<Uuid, ConsoleError> {
    Uuid::parse_str(&me.tenant_id).map_err(|_| ConsoleError::NotSignedIn)
}

/// Refuses a read the signed-in user's role does not allow: every console read checks
/// the role's permissions here, on the server (hiding a link protects nothing). `scope`
/// is what the read needs (`webhooks:read`, `*:read` …); `what` names it for the page.
fn require_read(me: &Me, scope: &str, what: &str) -> Result<(), ConsoleError> {
    if crate::domain::scopes::covers(&me.permissions, scope) {
        Ok(())
    } else {
        Err(ConsoleError::Forbidden(format!("Your role does not allow seeing {what} (it needs the permission `{scope}`).")))
    }
}

fn require_manage(me: &Me, what: &str) -> Result<(), ConsoleError> {
    if me.can_manage {
        Ok(())
    } else {
        Err(ConsoleError::Forbidden(format!("Only owners and admins can {what}.")))
    }
}

#[async_trait::async_trait]
impl Console for ConsoleService {
    async fn sign_up(&self, form: SignUp, client: &str) -> Result<NewSession, ConsoleError> {
        // Counted before the form is checked, like sign-in: "this email is taken" is an answer worth limiting.
        self.throttle.sign_up(client).map_err(|retry_after_secs| ConsoleError::TooManyAttempts { retry_after_secs })?;
        self.register(form).await
    }

    async fn sign_in(&self, email: &str, password: &str, client: &str, previous: Option<&str>) -> Result<NewSession, ConsoleError> {
        self.authenticate(email, password, client, previous).await
    }

    async fn session(&self, token: &str) -> Result<Option<Me>, ConsoleError> {
        self.check_session(token).await
    }

    async fn sign_out(&self, token: &str) -> Result<(), ConsoleError> {
        self.end_session(token).await
    }

    async fn set_environment(&self, token: &str, livemode: bool) -> Result<(), ConsoleError> {
        self.switch_environment(token, livemode).await
    }

    async fn service_accounts(&self, me: &Me) -> Result<Vec<ServiceAccount>, ConsoleError> {
        self.list_service_accounts(me).await
    }

    async fn service_account(&self, me: &Me, id: &str) -> Result<ServiceAccount, ConsoleError> {
        self.get_service_account(me, id).await
    }

    async fn create_service_account(&self, me: &Me, name: &str) -> Result<ServiceAccount, ConsoleError> {
        self.add_service_account(me, name).await
    }

    async fn rename_service_account(&self, me: &Me, id: &str, name: &str) -> Result<ServiceAccount, ConsoleError> {
        self.change_service_account_name(me, id, name).await
    }

    async fn set_service_account_active(&self, me: &Me, id: &str, active: bool) -> Result<ServiceAccount, ConsoleError> {
        self.change_service_account_status(me, id, active).await
    }

    async fn delete_service_account(&self, me: &Me, id: &str) -> Result<(), ConsoleError> {
        self.remove_service_account(me, id).await
    }

    async fn keys(&self, me: &Me, service_account_id: &str) -> Result<Vec<ApiKeyView>, ConsoleError> {
        self.list_keys(me, service_account_id).await
    }

    async fn create_key(&self, me: &Me, key: NewKey) -> Result<CreatedKey, ConsoleError> {
        self.add_key(me, key).await
    }

    async fn revoke_key(&self, me: &Me, key_id: &str) -> Result<(), ConsoleError> {
        self.revoke(me, key_id).await
    }

    async fn users(&self, me: &Me) -> Result<Vec<UserView>, ConsoleError> {
        self.list_users(me).await
    }

    async fn roles(&self, me: &Me) -> Result<Vec<RoleView>, ConsoleError> {
        self.list_roles(me).await
    }

    async fn create_user(&self, me: &Me, user: NewUser) -> Result<UserView, ConsoleError> {
        self.add_user(me, user).await
    }

    fn webhook_event_types(&self) -> Vec<String> {
        self.event_type_names()
    }

    async fn webhooks(&self, me: &Me) -> Result<Vec<WebhookView>, ConsoleError> {
        self.list_webhooks(me).await
    }

    async fn webhook(&self, me: &Me, id: &str) -> Result<WebhookView, ConsoleError> {
        self.get_webhook(me, id).await
    }

    async fn create_webhook(&self, me: &Me, form: WebhookForm) -> Result<WebhookWithSecret, ConsoleError> {
        self.add_webhook(me, form).await
    }

    async fn update_webhook(&self, me: &Me, id: &str, form: WebhookForm) -> Result<WebhookView, ConsoleError> {
        self.change_webhook(me, id, form).await
    }

    async fn set_webhook_enabled(&self, me: &Me, id: &str, enabled: bool) -> Result<WebhookView, ConsoleError> {
        self.change_webhook_status(me, id, enabled).await
    }

    async fn rotate_webhook_secret(&self, me: &Me, id: &str) -> Result<WebhookWithSecret, ConsoleError> {
        self.rotate_secret(me, id).await
    }

    async fn delete_webhook(&self, me: &Me, id: &str) -> Result<(), ConsoleError> {
        self.remove_webhook(me, id).await
    }

    async fn send_test_webhook(&self, me: &Me, id: &str, event_type: &str) -> Result<DeliveryView, ConsoleError> {
        self.test_webhook(me, id, event_type).await
    }

    async fn webhook_deliveries(&self, me: &Me, webhook_id: &str, filter: DeliveryFilter) -> Result<Vec<DeliveryView>, ConsoleError> {
        self.list_deliveries(me, webhook_id, filter).await
    }

    async fn webhook_delivery(&self, me: &Me, id: &str) -> Result<DeliveryDetail, ConsoleError> {
        self.get_delivery(me, id).await
    }

    async fn replay_webhook_delivery(&self, me: &Me, id: &str) -> Result<DeliveryView, ConsoleError> {
        self.replay(me, id).await
    }

    async fn reset_sandbox(&self, me: &Me, demo: bool) -> Result<SandboxReset, ConsoleError> {
        self.reset_tenant_sandbox(me, demo).await
    }

    async fn oauth_apps(&self, me: &Me) -> Result<Vec<OAuthAppView>, ConsoleError> {
        self.list_oauth_apps(me).await
    }

    async fn create_oauth_app(&self, me: &Me, form: OAuthAppForm) -> Result<OAuthAppWithSecret, ConsoleError> {
        self.add_oauth_app(me, form).await
    }

    async fn update_oauth_app(&self, me: &Me, id: &str, redirect_uris: &str) -> Result<OAuthAppView, ConsoleError> {
        self.change_oauth_app(me, id, redirect_uris).await
    }

    async fn rotate_oauth_app_secret(&self, me: &Me, id: &str) -> Result<OAuthAppWithSecret, ConsoleError> {
        self.new_oauth_app_secret(me, id).await
    }

    async fn delete_oauth_app(&self, me: &Me, id: &str) -> Result<(), ConsoleError> {
        self.remove_oauth_app(me, id).await
    }

    async fn connected_apps(&self, me: &Me) -> Result<Vec<ConnectedAppView>, ConsoleError> {
        self.list_connected_apps(me).await
    }

    async fn revoke_connected_app(&self, me: &Me, id: &str) -> Result<(), ConsoleError> {
        self.disconnect_app(me, id).await
    }
}
