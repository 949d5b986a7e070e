//! Running Gable in production, proven on the real `gable` binary (`gable_tests::process`):
//!
//! - `connections`: slow and abusive clients (header-read timeout, connection cap, head
//!   size, an oversized body refused before it is read, the request timeout);
//! - `health`: `/healthz`, `/readyz` and the Prometheus metrics on their own listener;
//! - `data_dir`: one serving process per SQLite data directory;
//! - `outage`: PostgreSQL stopped and started under write load;
//! - `backups`: `gable backup` during writes, `gable restore` into a new directory;
//! - `imports`: an import's commit killed mid-way goes on from its last batch.

pub(crate) mod backups;
mod cancellation;
mod connections;
mod data_dir;
mod event_stream;
mod health;
mod imports;
mod outage;
mod processes;
mod shutdown;
