//! Service accounts and their API keys.

use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::{Me, Result};

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
pub struct NewKey {
    pub service_account_id: String,
    pub livemode: bool,
    pub scopes: Vec<String>,
    pub property_ids: Option<Vec<String>>,
}

/// Service accounts and their API keys (`server/src/console/service_accounts.rs`).
#[cfg(feature = "ssr")]
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
