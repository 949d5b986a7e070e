//! Webhooks, against real receivers.
//!
//! - `deliveries`: subscriptions, signed deliveries, the register, retries, rotation,
//!   replays, recovery and test sends.
//! - `verification`: the signatures checked by an independent implementation in Python,
//!   and the README's receiver run as printed.
//! - `outbound`: the SSRF-safe outbound client on its own (no database).

mod deliveries;
mod outbound;
mod verification;
