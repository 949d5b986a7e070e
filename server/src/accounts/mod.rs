//! The account service: a tenant's people and their access (sign-up, sign-in and
//! sessions, users and roles, service accounts and keys, OAuth apps) and what the console
//! manages for them (webhooks, the sandbox). It is the server side of the traits of
//! `gable_app::service`, one per area of the console, each implemented by
//! `AccountService` in the file of its area; the console (`http::console` hosting the
//! pages of `gable_app`) reaches it through Leptos context (a `Console`).
//!
//! It keeps the rules (passwords, sessions, throttling, roles); reads and writes of
//! collections go through the operations (`ops::reads`, `Operations::create` …) as the
//! signed-in user, and the account tables through `Store`. Security decisions are written
//! down in `docs/console.md`.
//!
//! - `team`: sign-up, sign-in with a password, users and roles (`Team`)
//! - `sessions`: tokens, idle and absolute expiry, the console's environment (`Sessions`)
//! - `passwords`: password rules, argon2id off the async runtime
//! - `throttle`: sign-in rate limits per email and per client address; sign-up per address
//! - `service_accounts`: service accounts and their API keys (`ServiceAccounts`)
//! - `webhooks`: webhook subscriptions and their delivery register (`Webhooks`)
//! - `sandbox`: resetting the tenant's sandbox, and the demo portfolio (`Sandbox`)
//! - `oauth_apps`: OAuth apps and the apps users connected (`OAuthApps`)
//! - `records`: the portfolio: every collection of the console's areas, read and written
//!   by staff through the operations (`Records`)
//! - `developers`: an API call as a person reads it, the errors overview, the live tail
//!   (`Developers`)
//! - `imports`: bulk import's upload, column mapping, errors by row, commit (`Imports`)

mod developers;
mod imports;
pub mod oauth_apps;
pub mod passwords;
pub mod records;
mod sandbox;
mod service_accounts;
pub mod sessions;
mod team;
pub mod throttle;
mod webhooks;

use std::sync::Arc;

use chrono::{DateTime, Utc};
/// The contract this module implements (re-exported for the tests and the CLI).
pub use gable_app::service;

use gable_app::service::{Console, ConsoleError, Me};
use uuid::Uuid;

use crate::domain::reach::Scope;
use crate::error::Error;
use crate::ops::{Actor, Operations};
use crate::store::Store;

pub struct AccountService {
    store: Store,
    /// The console's writes of records (users, roles), as every write: through
    /// operations. Its clock is Gable's one clock: sessions and throttling follow it, so
    /// tests move time instead of sleeping.
    ops: Operations,
    hasher: passwords::Hasher,
    throttle: throttle::Throttle,
    /// The API's public addresses (production, sandbox), which a call's `curl` names.
    api: (String, String),
}

impl AccountService {
    pub fn new(ops: Operations) -> Self {
        AccountService {
            store: ops.store().clone(),
            throttle: throttle::Throttle::new(ops.clock().clone()),
            ops,
            hasher: passwords::Hasher::new(),
            api: ("http://127.0.0.1:8080".into(), "http://127.0.0.1:8081".into()),
        }
    }

    /// The same service, naming these public addresses of the API (production, sandbox).
    pub fn with_api(mut self, live: &str, sandbox: &str) -> Self {
        self.api = (live.to_string(), sandbox.to_string());
        self
    }

    /// The API's public address of an environment.
    fn api_base(&self, livemode: bool) -> String {
        if livemode {
            self.api.0.clone()
        } else {
            self.api.1.clone()
        }
    }

    /// This service as the console's pages use it: one value serves every area.
    pub fn into_console(self) -> Console {
        Console::of(Arc::new(self))
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

/// The signed-in user as the operations see them: their tenant, the console's
/// environment, their role's permissions. Every read and write of the console acts as it.
fn actor_of(me: &Me) -> Result<Actor, ConsoleError> {
    Ok(Actor { scope: Scope { tenant: tenant_of(me)?, livemode: me.livemode, properties: None }, grants: me.permissions.clone().into() })
}

/// Refuses a read the signed-in user's role does not allow: the check is the access
/// gate's (`Actor`), on the server (hiding a link protects nothing). `scope` is what the
/// read needs (`webhooks:read`, `*:read` …); `what` names it for the page.
fn require_read(me: &Me, scope: &str, what: &str) -> Result<(), ConsoleError> {
    actor_of(me)?.require_scope(scope).map_err(refused(what, "checking a permission"))
}

/// A refusal of the gate in words for the page (a missing permission, named), or an
/// unexpected error logged as `doing`.
fn refused<'a>(what: &'a str, doing: &'static str) -> impl FnOnce(Error) -> ConsoleError + 'a {
    move |e| match e {
        Error::InsufficientScope { scope, .. } => {
            ConsoleError::Forbidden(format!("Your role does not allow seeing {what} (it needs the permission `{scope}`)."))
        }
        other => store_error(doing)(other),
    }
}

/// A form field the console refuses, with what to do about it.
fn invalid(field: &str, message: impl Into<String>) -> ConsoleError {
    ConsoleError::Invalid { field: field.into(), message: message.into() }
}

fn require_manage(me: &Me, what: &str) -> Result<(), ConsoleError> {
    if me.can_manage {
        Ok(())
    } else {
        Err(ConsoleError::Forbidden(format!("Only owners and admins can {what}.")))
    }
}
