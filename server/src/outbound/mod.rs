//! Outbound HTTP: requests Gable sends to addresses its users chose (webhook deliveries).
//!
//! `Guard` is the address policy (no loopback, private, link-local, metadata, reserved …
//! addresses, in any spelling, unless the operator allow-listed them with
//! `--webhook-allow-cidrs`); `check_url` applies it when a URL is given. `Client` sends
//! through it: names resolve only to addresses the guard passes, redirects are not
//! followed, no proxy is used, and every request has a total timeout.

mod client;
mod guard;

pub use client::{Client, Response, SendError, DEFAULT_TIMEOUT, EXCERPT_LIMIT, USER_AGENT};
pub use guard::{Guard, Refusal};
