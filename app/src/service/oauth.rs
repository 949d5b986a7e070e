//! OAuth apps the tenant registers, and the apps its users connected.

use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::{Me, Result};

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

/// OAuth apps the tenant registers, and the apps its users connected
/// (`server/src/console/oauth_apps.rs`).
#[cfg(feature = "ssr")]
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
