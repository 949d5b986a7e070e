//! The `/v1` API as a protocol, the same for every collection.
//!
//! - `collections`: create, read, list, update, delete on every collection; tenants and
//!   environments never mix.
//! - `errors`: bad input of every kind is a clear 4xx and changes nothing; request ids.
//! - `expand`: `expand[]` answers references with their records, one statement per path.
//! - `lists`, `paging`: limits, keyset cursors, sorts, filters; a property test that
//!   paging never skips or repeats.
//! - `protocol`: 405s name the allowed methods; money is exact.
//! - `idempotency`: `Idempotency-Key` on every POST.
//! - `imports`: bulk import, checked before anything is written, safe to repeat.
//! - `operations`: an operation and what its caller writes beside it commit together.
//! - `keys`: scopes and property constraints of API keys.
//! - `rate_limits`: the limits per credential and their headers.
//! - `openapi`: `/v1/openapi.json` tells the truth about what is served.
//! - `request_logs`: every call recorded with what it sent and got, its events, its filters.

mod collections;
mod errors;
mod expand;
mod external_ids;
mod idempotency;
pub mod imports;
mod keys;
mod lists;
mod openapi;
mod operations;
mod paging;
mod protocol;
mod rate_limits;
mod request_log_stream;
pub mod request_logs;
