//! The tenant's console users and roles.

use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::{Me, Result};

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

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct NewUser {
    pub email: String,
    pub name: String,
    pub role_id: String,
    /// A first password, to be changed by the user.
    pub password: String,
}

/// The tenant's console users and roles (`server/src/console/accounts.rs`).
#[cfg(feature = "ssr")]
#[async_trait::async_trait]
pub trait Team: Send + Sync + 'static {
    async fn users(&self, me: &Me) -> Result<Vec<UserView>>;
    async fn roles(&self, me: &Me) -> Result<Vec<RoleView>>;
    async fn create_user(&self, me: &Me, user: NewUser) -> Result<UserView>;
}
