//! Signing up and in, and the sessions that follow.

use serde::{Deserialize, Serialize};

use super::Me;
#[cfg(feature = "ssr")]
use super::Result;

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

/// Signing up and in, and the sessions that follow (`server/src/console/sessions.rs`).
#[cfg(feature = "ssr")]
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
