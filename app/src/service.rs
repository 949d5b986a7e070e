//! The console's contract with the server.
//!
//! `app` cannot depend on `server` (the server depends on `app`), so the console's
//! server functions call the traits here, one per area of the console, and the server
//! provides their implementations through Leptos context (a `Console`, which holds one
//! of each). The data types are shared with the browser.

use serde::{Deserialize, Serialize};

/// The signed-in user, as every console page sees them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Me {
    pub user_id: String,
    pub tenant_id: String,
    pub tenant_name: String,
    pub email: String,
    pub name: String,
    /// The role's name, e.g. "Owner", "Admin", "Read-only staff".
    pub role: String,
    /// Whether the role may manage service accounts, keys and users (permission `*`).
    pub can_manage: bool,
    /// The role's permissions (scopes). The server checks them on every call; the pages
    /// use them only to leave out what the role cannot open.
    pub permissions: Vec<String>,
    /// The environment the console shows: live (`true`) or test.
    pub livemode: bool,
    /// The session's CSRF token; every form that changes something carries it.
    pub csrf: String,
}

impl Me {
    /// Whether the role reads `collection` (`{collection}:read`, its `:write`, `*:read` or
    /// `*`), to leave links out; the server's check is the protection.
    pub fn can_read(&self, collection: &str) -> bool {
        self.permissions
            .iter()
            .any(|p| p == "*" || p == "*:read" || p.strip_prefix(collection).is_some_and(|rest| rest == ":read" || rest == ":write"))
    }

    /// Whether the role reads everything (`*:read` or `*`): what the API-access pages need.
    pub fn can_read_all(&self) -> bool {
        self.permissions.iter().any(|p| p == "*" || p == "*:read")
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ServiceAccount {
    pub id: String,
    pub name: String,
    /// `active` or `disabled`.
    pub status: String,
    pub created_at: String,
    /// Keys not revoked, all environments.
    pub active_keys: u32,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ApiKeyView {
    pub id: String,
    pub service_account_id: String,
    /// `live` or `test`.
    pub environment: String,
    /// The first characters of the secret, e.g. `gbl_test_AbCd` (the secret itself is never shown again).
    pub prefix: String,
    pub scopes: Vec<String>,
    pub property_ids: Option<Vec<String>>,
    pub created_at: String,
    pub last_used_at: Option<String>,
    pub revoked_at: Option<String>,
}

/// A key just created: the only time its secret exists outside the client's hands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CreatedKey {
    pub key: ApiKeyView,
    pub secret: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct UserView {
    pub id: String,
    pub email: String,
    pub name: String,
    pub role_id: Option<String>,
    pub role: Option<String>,
    pub status: String,
    pub last_sign_in_at: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RoleView {
    pub id: String,
    pub name: String,
    pub permissions: Vec<String>,
}

/// A new session: the cookie value (secret) and who it belongs to.
#[derive(Clone, Debug)]
pub struct NewSession {
    pub token: String,
    pub me: Me,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SignUp {
    pub company: String,
    pub name: String,
    pub email: String,
    pub password: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewKey {
    pub service_account_id: String,
    pub livemode: bool,
    pub scopes: Vec<String>,
    pub property_ids: Option<Vec<String>>,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewUser {
    pub email: String,
    pub name: String,
    pub role_id: String,
    /// A first password, to be changed by the user.
    pub password: String,
}

/// A webhook subscription as the console shows it (the secret is never part of it).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebhookView {
    pub id: String,
    pub url: String,
    /// Event types, or `["*"]` for all.
    pub events: Vec<String>,
    pub description: Option<String>,
    /// `enabled` or `disabled`.
    pub status: String,
    /// Why Gable disabled it itself (a `410 Gone`, or days of failures), when it did.
    pub disabled_reason: Option<String>,
    pub failing_since: Option<String>,
    pub created_at: String,
}

/// A subscription just created or rotated: the only time its signing secret is shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebhookWithSecret {
    pub webhook: WebhookView,
    pub secret: String,
}

/// What a person fills in to create or edit a subscription.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct WebhookForm {
    pub url: String,
    /// Event types, or `["*"]` for all.
    pub events: Vec<String>,
    pub description: String,
}

/// Filters of a subscription's delivery register (`None`: any).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeliveryFilter {
    pub status: Option<String>,
    pub event_type: Option<String>,
    pub trigger: Option<String>,
}

/// One attempt in the delivery register.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeliveryView {
    pub id: String,
    pub webhook_id: String,
    /// `None` for a test send.
    pub event_id: Option<String>,
    pub event_type: String,
    pub event_created_at: String,
    pub url: String,
    pub attempt: i64,
    /// `event`, `retry`, `replay`, `recovery` or `test`.
    pub trigger: String,
    /// `pending`, `succeeded`, `retrying` or `failed`.
    pub status: String,
    pub response_status: Option<i64>,
    pub latency_ms: Option<i64>,
    pub error: Option<String>,
    pub next_attempt_at: Option<String>,
    pub created_at: String,
}

/// One attempt with what was sent and received.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeliveryDetail {
    pub delivery: DeliveryView,
    pub request_headers: Vec<(String, String)>,
    /// The body sent (the event, or the test event), pretty-printed, when Gable still has it.
    pub request_body: Option<String>,
    /// Why the body is not shown, when it is not.
    pub request_body_note: Option<String>,
    pub response_headers: Vec<(String, String)>,
    pub response_excerpt: Option<String>,
    /// Why the receiver's answer is not shown, when it is kept from this user (it may echo
    /// a record their role cannot read).
    pub response_note: Option<String>,
}

/// What a sandbox reset did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SandboxReset {
    /// Sandbox rows deleted: records of every collection, ledger lines, delivery attempts
    /// and idempotency keys.
    pub rows_deleted: u64,
    /// Whether the demo portfolio was made afterwards.
    pub demo: bool,
}

/// What can go wrong, in words a property manager understands.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum ConsoleError {
    /// No valid session: sign in (again).
    NotSignedIn,
    /// The role may not do this.
    Forbidden(String),
    /// A form field is wrong.
    Invalid {
        field: String,
        message: String,
    },
    /// Email or password wrong (never says which).
    BadCredentials,
    /// Too many sign-in or sign-up attempts; try again after this many seconds.
    TooManyAttempts {
        retry_after_secs: u64,
    },
    NotFound(String),
    Conflict(String),
    /// Something broke on our side (logged with details; never shown).
    Internal,
}

impl std::fmt::Display for ConsoleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConsoleError::NotSignedIn => write!(f, "Please sign in to continue."),
            ConsoleError::Forbidden(why) => write!(f, "{why}"),
            ConsoleError::Invalid { message, .. } => write!(f, "{message}"),
            ConsoleError::BadCredentials => write!(f, "That email and password do not match an account."),
            ConsoleError::TooManyAttempts { retry_after_secs } => {
                write!(f, "Too many attempts. Try again in {} minute(s).", retry_after_secs.div_ceil(60).max(1))
            }
            ConsoleError::NotFound(what) => write!(f, "{what} was not found."),
            ConsoleError::Conflict(why) => write!(f, "{why}"),
            ConsoleError::Internal => write!(f, "Something went wrong on our side. Please try again."),
        }
    }
}

impl std::error::Error for ConsoleError {}

#[cfg(feature = "ssr")]
pub use ssr::*;

/// An OAuth app (a third-party client) as the console shows it; never its secret.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OAuthAppView {
    pub id: String,
    pub client_id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    /// A public client (native or single-page app): no secret, PKCE alone.
    pub public: bool,
    pub livemode: bool,
    pub created_at: String,
}

/// What a person fills in to register an app.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OAuthAppForm {
    pub name: String,
    /// One redirect URI per line.
    pub redirect_uris: String,
    pub public: bool,
}

/// An app just registered or with a new secret: the secret is here once.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OAuthAppWithSecret {
    pub app: OAuthAppView,
    pub client_secret: Option<String>,
}

/// An authorization a user of the tenant gave an app.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ConnectedAppView {
    pub id: String,
    pub app_name: String,
    pub user_email: String,
    pub scopes: Vec<String>,
    pub livemode: bool,
    pub created_at: String,
    pub last_used_at: Option<String>,
}

#[cfg(feature = "ssr")]
mod ssr {
    use std::sync::Arc;

    use super::*;

    pub type Result<T> = std::result::Result<T, ConsoleError>;

    /// The console's services, one per area, as the server provides them through Leptos
    /// context. Every method that acts for a user takes the `Me` of a session checked by
    /// `Sessions::session`; methods that change service accounts, keys, users, webhooks,
    /// OAuth apps or the sandbox refuse (`Forbidden`) unless `me.can_manage`.
    #[derive(Clone)]
    pub struct Console {
        pub sessions: Arc<dyn Sessions>,
        pub service_accounts: Arc<dyn ServiceAccounts>,
        pub team: Arc<dyn Team>,
        pub webhooks: Arc<dyn Webhooks>,
        pub sandbox: Arc<dyn Sandbox>,
        pub oauth_apps: Arc<dyn OAuthApps>,
    }

    impl Console {
        /// Every area served by one implementation (the server's `ConsoleService`).
        pub fn of<S: Sessions + ServiceAccounts + Team + Webhooks + Sandbox + OAuthApps>(service: Arc<S>) -> Self {
            Console {
                sessions: service.clone(),
                service_accounts: service.clone(),
                team: service.clone(),
                webhooks: service.clone(),
                sandbox: service.clone(),
                oauth_apps: service,
            }
        }
    }

    /// Signing up and in, and the sessions that follow (`server/src/console/sessions.rs`).
    #[async_trait::async_trait]
    pub trait Sessions: Send + Sync + 'static {
        /// Creates a tenant, its roles (Owner, Admin, Read-only staff) and its first user
        /// (an Owner, in the `users` collection, live), and signs them in. Throttled per
        /// client address (every attempt counts, before the form is checked).
        async fn sign_up(&self, form: SignUp, client: &str) -> Result<NewSession>;
        /// Checks the password (argon2id), throttled per email and per client address;
        /// always a new session (the previous one, if given, is ended: rotation).
        async fn sign_in(&self, email: &str, password: &str, client: &str, previous: Option<&str>) -> Result<NewSession>;
        /// The session's user, or `None` when the token is unknown, idle too long or too old.
        async fn session(&self, token: &str) -> Result<Option<Me>>;
        async fn sign_out(&self, token: &str) -> Result<()>;
        /// Switches the environment the console shows for this session.
        async fn set_environment(&self, token: &str, livemode: bool) -> Result<()>;
    }

    /// Service accounts and their API keys (`server/src/console/service_accounts.rs`).
    #[async_trait::async_trait]
    pub trait ServiceAccounts: Send + Sync + 'static {
        async fn service_accounts(&self, me: &Me) -> Result<Vec<ServiceAccount>>;
        async fn service_account(&self, me: &Me, id: &str) -> Result<ServiceAccount>;
        async fn create_service_account(&self, me: &Me, name: &str) -> Result<ServiceAccount>;
        async fn rename_service_account(&self, me: &Me, id: &str, name: &str) -> Result<ServiceAccount>;
        /// Disabling refuses all its keys at once; enabling restores the ones not revoked.
        async fn set_service_account_active(&self, me: &Me, id: &str, active: bool) -> Result<ServiceAccount>;
        /// Revokes its keys and removes it from the console.
        async fn delete_service_account(&self, me: &Me, id: &str) -> Result<()>;

        /// The keys of a service account in every environment, newest first.
        async fn keys(&self, me: &Me, service_account_id: &str) -> Result<Vec<ApiKeyView>>;
        async fn create_key(&self, me: &Me, key: NewKey) -> Result<CreatedKey>;
        async fn revoke_key(&self, me: &Me, key_id: &str) -> Result<()>;
    }

    /// The tenant's console users and roles (`server/src/console/accounts.rs`).
    #[async_trait::async_trait]
    pub trait Team: Send + Sync + 'static {
        async fn users(&self, me: &Me) -> Result<Vec<UserView>>;
        async fn roles(&self, me: &Me) -> Result<Vec<RoleView>>;
        async fn create_user(&self, me: &Me, user: NewUser) -> Result<UserView>;
    }

    /// Webhook subscriptions and their delivery register (`server/src/console/webhooks.rs`).
    #[async_trait::async_trait]
    pub trait Webhooks: Send + Sync + 'static {
        /// The event types a subscription can take (the 23 contracts), in their documented order.
        fn webhook_event_types(&self) -> Vec<String>;
        /// The subscriptions of the console's environment, newest first.
        async fn webhooks(&self, me: &Me) -> Result<Vec<WebhookView>>;
        async fn webhook(&self, me: &Me, id: &str) -> Result<WebhookView>;
        async fn create_webhook(&self, me: &Me, form: WebhookForm) -> Result<WebhookWithSecret>;
        async fn update_webhook(&self, me: &Me, id: &str, form: WebhookForm) -> Result<WebhookView>;
        async fn set_webhook_enabled(&self, me: &Me, id: &str, enabled: bool) -> Result<WebhookView>;
        /// A new secret; the old one keeps signing beside it for 24 hours.
        async fn rotate_webhook_secret(&self, me: &Me, id: &str) -> Result<WebhookWithSecret>;
        async fn delete_webhook(&self, me: &Me, id: &str) -> Result<()>;
        /// Queues a sample event of `event_type`, marked `"test": true`; returns its attempt.
        async fn send_test_webhook(&self, me: &Me, id: &str, event_type: &str) -> Result<DeliveryView>;
        /// The latest attempts to deliver to a subscription (at most 50), newest first.
        async fn webhook_deliveries(&self, me: &Me, webhook_id: &str, filter: DeliveryFilter) -> Result<Vec<DeliveryView>>;
        async fn webhook_delivery(&self, me: &Me, id: &str) -> Result<DeliveryDetail>;
        /// Sends the attempt's event again, as a new attempt.
        async fn replay_webhook_delivery(&self, me: &Me, id: &str) -> Result<DeliveryView>;
    }

    /// The tenant's sandbox as a whole (`server/src/console/sandbox.rs`).
    #[async_trait::async_trait]
    pub trait Sandbox: Send + Sync + 'static {
        /// Deletes every sandbox record of the user's tenant and its sandbox clock, whatever
        /// environment the console shows (never live data, keys, service accounts or users);
        /// with `demo`, then makes the demo portfolio in the sandbox. Owners and admins only.
        async fn reset_sandbox(&self, me: &Me, demo: bool) -> Result<SandboxReset>;
    }

    /// OAuth apps the tenant registers, and the apps its users connected
    /// (`server/src/console/oauth_apps.rs`).
    #[async_trait::async_trait]
    pub trait OAuthApps: Send + Sync + 'static {
        /// The OAuth apps the user's tenant registered (everyone signed in sees them).
        async fn oauth_apps(&self, me: &Me) -> Result<Vec<OAuthAppView>>;
        /// Registers an app for the console's environment; a confidential one's secret is
        /// in the answer, once. Owners and admins only.
        async fn create_oauth_app(&self, me: &Me, form: OAuthAppForm) -> Result<OAuthAppWithSecret>;
        /// Replaces an app's redirect URIs (one per line). Owners and admins only.
        async fn update_oauth_app(&self, me: &Me, id: &str, redirect_uris: &str) -> Result<OAuthAppView>;
        /// A new secret for a confidential app, shown once; the old one stops at once.
        async fn rotate_oauth_app_secret(&self, me: &Me, id: &str) -> Result<OAuthAppWithSecret>;
        /// Deletes an app and revokes every authorization it holds. Owners and admins only.
        async fn delete_oauth_app(&self, me: &Me, id: &str) -> Result<()>;
        /// The apps users of the tenant have authorized and not revoked: every user's for
        /// owners and admins, one's own for the others.
        async fn connected_apps(&self, me: &Me) -> Result<Vec<ConnectedAppView>>;
        /// Revokes an authorization at once (owners and admins: anyone's; others: their own).
        async fn revoke_connected_app(&self, me: &Me, id: &str) -> Result<()>;
    }
}
