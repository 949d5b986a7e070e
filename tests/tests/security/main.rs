//! The security suite: one module per area, each test named after the finding of a
//! security review that it keeps fixed (`docs/security.md` lists them). Every test runs
//! against the real server, on SQLite and PostgreSQL, from the attacker's side: a weaker
//! credential, a demoted user or another tenant tries what it must not, and the test
//! fails if it succeeds.
//!
//! - `privileges`: no credential grants what it does not hold (first review).
//! - `walls`: PostgreSQL row-level security, the second wall (first review).

mod privileges;
mod walls;
