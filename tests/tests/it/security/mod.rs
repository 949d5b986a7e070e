//! The security suite: one module per area, each test named after the finding of a
//! security review that it keeps fixed (`docs/security.md` lists them). Every test runs
//! against the real server, on SQLite and PostgreSQL, from the attacker's side: a weaker
//! credential, a demoted user or another tenant tries what it must not, and the test
//! fails if it succeeds.
//!
//! - `privileges`: no credential grants what it does not hold (first review).
//! - `walls`: PostgreSQL row-level security, the second wall (first review).
//! - `environments`: live mode is live: rules that differ by environment are checked
//!   with the environment known (first review).
//! - `sessions`: the console's cookie, cross-site posts, and throttling by the right
//!   client address behind a proxy (first review).
//! - `flows`: flow tokens are bounded by their creator, revocable, and never in a URL's
//!   query string (second review).
//! - `oauth`: an app's access follows its user's role; no open redirect; connected apps
//!   revoked whole (second review).
//! - `scopes`: a scope reads only what it names: webhooks and events (second review).
//! - `console`: the console shows each staff member what their role may read (second
//!   review).
//! - `listeners`: slow readers, metric labels, body limits and the public readiness check
//!   (third review).
//! - `reveals`: a delivery's response excerpt and the reports read only what the
//!   credential may (third review).
//! - `expansions`: `expand[]` reads only what a read of each collection would: scopes,
//!   properties, tenants, and what events carry.
//! - `request_logs`: the request log is the tenant's, its environment's and its scope's
//!   alone, and keeps no secret a call carried.
//! - `files`: the data directory is private, and a restore checks what it restores (third
//!   review).
//! - `imports`: an import writes only what its credential may, in its tenant alone.

mod console;
mod environments;
mod expansions;
mod files;
mod flows;
mod imports;
mod listeners;
mod oauth;
mod privileges;
mod request_logs;
mod reveals;
mod scopes;
mod sessions;
mod walls;
