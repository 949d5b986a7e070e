//! Storage: one `Store` over SQLite (embedded default) or PostgreSQL (scale-out).
//!
//! Statements whose shape depends on the request are built once with sea-query and
//! run on either database; only execution and row decoding differ per database, and
//! both live here. Each database has its own migrations (`migrations/sqlite`,
//! `migrations/postgres`; on SQLite the request log is a file of its own,
//! `migrations/sqlite-request-log`).
//!
//! The store's machinery, a file each: the connection pools and SQLite's files
//! (`pool.rs`); SQLite's writing connections and checkpoints (`writer.rs`) and its
//! read-only connections (`readers.rs`); units of work and running statements in them (`work.rs`); the
//! shaped-SQL cache (`shaped.rs`); result rows and their decoding (`rows.rs`); values as
//! each database binds them (`values.rs`); PostgreSQL's `LISTEN` (`listen.rs`); health
//! and connection metrics (`health.rs`); the instance's secrets (`secrets.rs`). The other
//! modules hold the storage of one area each.

pub mod accounts;
pub mod background;
pub mod backup;
pub mod count;
pub mod data_dir;
pub mod deliveries;
pub mod events;
pub mod expansions;
pub mod flow_tokens;
pub mod idempotency;
pub mod imports;
pub mod keys;
pub mod ledger;
pub mod oauth;
pub mod readers;
pub mod records;
pub mod request_logs;
pub mod sandbox;
pub mod schema;
mod sql;
pub mod values;

mod health;
mod listen;
mod pool;
mod rows;
mod secrets;
mod shaped;
mod work;
mod writer;

use std::str::FromStr;

pub use health::Connections;
pub use pool::request_log_file;
use pool::Pool;
pub use rows::{Col, Row};
pub use shaped::Shape;
pub use work::{Intent, Tx};
pub use writer::SqliteWrite;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl FromStr for Dialect {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s {
            "sqlite" => Ok(Dialect::Sqlite),
            "postgres" => Ok(Dialect::Postgres),
            _ => Err(format!("unknown dialect `{s}`: use sqlite or postgres")),
        }
    }
}

#[derive(Clone)]
pub struct Store {
    pool: Pool,
    keys: keys::KeyCache,
    /// PostgreSQL connections held by `LISTEN`ers: taken from the pool for as long as
    /// they listen, so they are not counted as in use by work (`connections`).
    listening: std::sync::Arc<std::sync::atomic::AtomicUsize>,
    /// When SQLite's planner statistics were last brought up to date (`refresh_statistics`),
    /// and how long until they are due again.
    analyzed: std::sync::Arc<std::sync::Mutex<Option<(std::time::Instant, std::time::Duration)>>>,
}
