//! The account service's storage: passwords, sessions, service accounts, key listings, and the
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
//! - `console_activity` (who did what) is a tenant table, written in the transaction of the
//!   write it records.
//!
//! The statement helpers below are shared by the files of this folder.

pub mod activity;
pub mod credentials;
pub mod keys;
pub mod service_accounts;
pub mod sessions;
pub mod users;
