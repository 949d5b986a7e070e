//! The integrator's commands (`gable login`, `listen`, `trigger`, `logs tail`), run as the
//! `gable` binary against a test server (`gable_tests::cli`).
//!
//! - `import`: a collection's CSV template.
//! - `login`: profiles saved privately, checked, chosen, overridden, forgotten.
//! - `listen`: events forwarded signed as deliveries, failures shown, a cut connection
//!   resumed with nothing lost or repeated.
//! - `logs`: the request log's tail, filtered on the server.
//! - `trigger`: every event type fires in the sandbox through the public API; `--set`,
//!   `--list`, and the refusals (a live key, an unknown type, a key that cannot write).
//!
//! Several processes on one PostgreSQL, with `listen` moved from one to another, are in
//! `production::event_stream`.

mod import;
mod listen;
mod login;
mod logs;
mod trigger;
