//! The sandbox.
//!
//! - `payments`: test payments and their scenarios.
//! - `clock`: the sandbox clock and what advancing it causes.
//! - `reset`: sandbox reset and the demo portfolio.

mod clock;
mod payments;
mod reset;
