//! Gable: a tenant-scoped property operations platform.
//!
//! `domain` is plain Rust (registry, validation, lists, ledger rules); `store` keeps
//! records in SQLite or PostgreSQL; `http` serves the API and hosts the console;
//! `cli` is the `gable` command.
#![recursion_limit = "256"] // deeply nested view types of the console pages

pub mod cli;
pub mod clock;
pub mod config;
pub mod console;
pub mod crypto;
pub mod demo;
pub mod domain;
pub mod error;
pub mod http;
pub mod jobs;
pub mod oauth;
pub mod ops;
pub mod outbound;
pub mod seed;
pub mod startup;
pub mod state;
pub mod store;
