//! The console's storage: passwords, sessions, service accounts, key listings, and the
//! reads of the `users` and `roles` collections the console shows, one file each.
//!
//! Where each table is read (docs/console.md has the reasons):
//! - `console_credentials` (by email at sign-in) and `console_sessions` (by token hash on
//!   every console request) are Gable's own bookkeeping: system transactions, with the
//!   tenant condition written into every statement that acts for a tenant.
//! - `service_accounts` and `api_keys` are system tables too (as in `store/keys.rs`).
//! - `users` and `roles` are collections: listed in tenant transactions (row-level
//!   security on PostgreSQL), created through `Store::create`. Only the session lookup
//!   (which must find the user before any tenant is known) and `last_sign_in_at` (a
//!   read-only field Gable itself sets) touch them from a system transaction.
//!
//! The statement helpers below are shared by the files of this folder.

pub mod credentials;
pub mod keys;
pub mod service_accounts;
pub mod sessions;
pub mod users;

use sea_query::{Alias, Expr};

use crate::error::{Error, Result};

fn a(name: &str) -> Alias {
    Alias::new(name)
}

/// `table.column`.
fn tc(table: &str, column: &str) -> Expr {
    Expr::col((a(table), a(column)))
}

fn col(name: &str) -> Expr {
    Expr::col(a(name))
}

fn incomplete(what: &str) -> Error {
    Error::internal(anyhow::anyhow!("{what} row is incomplete"))
}

fn strings(v: Option<serde_json::Value>) -> Result<Vec<String>> {
    match v {
        Some(v) if !v.is_null() => serde_json::from_value(v).map_err(Error::internal),
        _ => Ok(vec![]),
    }
}
