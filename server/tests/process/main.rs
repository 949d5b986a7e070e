//! Tests that run the real `gable` executable as a process (`CARGO_BIN_EXE_gable`, which
//! cargo gives only to the server crate's own integration tests): one test binary
//! (`--test process`), one module per subject.
//!
//! - `cli`: the commands, against SQLite and PostgreSQL, and the first-run welcome.
//! - `webhook_crash`: no event is lost when the server is killed mid-burst.
//! - `common`: the executable's path, the shared master key, fresh stores.
//!
//! A new subject is a file here and one `mod` line below.

mod cli;
mod common;
mod webhook_crash;
