//! The console's contract with the server.
//!
//! `app` cannot depend on `server` (the server depends on `app`), so the console's
//! server functions call the traits here, one per area of the console, and the server
//! provides their implementations through Leptos context (a `Console`, which holds one
//! of each). The data types are shared with the browser.
//!
//! One file per area of the console, as the pages are (`pages/`), each with its trait and
//! its data types; this one holds what every area shares: the signed-in user (`Me`), the
//! errors (`ConsoleError`) and the `Console` that holds the areas' services.

mod developers;
mod imports;
mod oauth;
mod records;
mod sandbox;
mod service_accounts;
mod sessions;
mod team;
mod webhooks;

pub use developers::*;
pub use imports::*;
pub use oauth::*;
pub use records::*;
pub use sandbox::*;
pub use service_accounts::*;
pub use sessions::*;
pub use team::*;
pub use webhooks::*;

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

    /// Whether the role writes `collection` (`{collection}:write` or `*`), to leave forms out.
    pub fn can_write(&self, collection: &str) -> bool {
        self.permissions.iter().any(|p| p == "*" || p.strip_prefix(collection).is_some_and(|rest| rest == ":write"))
    }

    /// Whether the role reads everything (`*:read` or `*`): what the API-access pages need.
    pub fn can_read_all(&self) -> bool {
        self.permissions.iter().any(|p| p == "*" || p == "*:read")
    }
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
        pub records: Arc<dyn Records>,
        pub developers: Arc<dyn Developers>,
        pub imports: Arc<dyn Imports>,
    }

    impl Console {
        /// Every area served by one implementation (the server's `ConsoleService`).
        pub fn of<S: Sessions + ServiceAccounts + Team + Webhooks + Sandbox + OAuthApps + Records + Developers + Imports>(
            service: Arc<S>,
        ) -> Self {
            Console {
                sessions: service.clone(),
                service_accounts: service.clone(),
                team: service.clone(),
                webhooks: service.clone(),
                sandbox: service.clone(),
                oauth_apps: service.clone(),
                records: service.clone(),
                developers: service.clone(),
                imports: service,
            }
        }
    }
}
