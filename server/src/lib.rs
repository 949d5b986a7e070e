//! Gable: a tenant-scoped property operations platform.
//!
//! The modules stand on floors; each imports its own floor and the ones below, never one
//! above (`docs/architecture.md`, "Floors"; `.ci/layers` checks it). From the ground up:
//! - `error`, `clock`, `crypto`, `private_files`, `outbound`, `observe`: Gable's one
//!   error, the time it acts at, its secrets, files only their owner reads, the
//!   SSRF-guarded client of webhook deliveries, and the background loops' health and the
//!   metrics' names;
//! - `domain` is plain Rust (registry, validation, lists, events, ledger rules);
//!   `config` the settings;
//! - `store` keeps records in SQLite or PostgreSQL;
//! - `ops`: who is asking (the access gate) and the one read path, every write and what
//!   it causes, what time causes (with the sandbox clock), the set-up use cases (sandbox
//!   reset, first start, the demo portfolio), the OAuth token side;
//! - `seed`: the generated portfolios of `gable seed` (benchmarks);
//! - `jobs`: the background work beside the listeners;
//! - `http` serves the API (with the router's state) and hosts the console, whose
//!   service `console` is;
//! - `startup` binds the listeners and starts the jobs; `cli` is the `gable` command.
#![recursion_limit = "256"] // deeply nested view types of the console pages

pub mod accounts;
pub mod cli;
pub mod clock;
pub mod config;
pub mod crypto;
pub mod domain;
pub mod error;
pub mod http;
pub mod jobs;
pub mod observe;
pub mod ops;
pub mod outbound;
pub mod private_files;
pub mod seed;
pub mod startup;
pub mod store;

// Where the test harness has found them: the router's state, the OAuth token side.
pub use http::state;
pub use ops::oauth;
