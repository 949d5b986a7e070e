//! Gable's integration tests: one test binary (`--test it`), one module per capability.
//! Every test runs the real server on free ports, over HTTP, against a fresh database;
//! most run as two tests, on SQLite and on PostgreSQL (`gable_tests::both!`).
//!
//! One binary instead of one per file: each test binary links the whole server, and the
//! links dominated the build's time and disk. nextest still runs every test in a process
//! of its own. Run one capability with `cargo nextest run -p gable-tests --test it -- api::`
//! (docs/development.md, "Tests: how they are organised").
//!
//! A new test goes into the module of its capability (a new file there is one `mod` line
//! in that module's `mod.rs`); never as a new file directly under `tests/tests/`, which
//! cargo would build as one more binary.

mod api;
mod cli;
mod console;
mod event_stream;
mod events;
mod flows;
mod ledger;
mod migrations;
mod oauth;
mod production;
mod reports;
mod sandbox;
mod security;
mod webhooks;
mod workflow;
