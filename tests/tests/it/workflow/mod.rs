//! Workflows (`docs/workflows.md`).
//!
//! - `state_machines`: every action through `POST /v1/{resource}/{id}/{action}`.
//! - `funnels`: the long-term lease and the short stay, end to end.

mod funnels;
mod state_machines;
