//! What an operator sees of a running process besides its logs: the background loops'
//! health (for readiness), the Prometheus metrics (docs/deployment.md, "Health and
//! metrics") and its resident memory. On the ground floor: jobs and the HTTP layers
//! record here.

pub mod health;
pub mod memory;
pub mod metrics;

pub use health::Health;
