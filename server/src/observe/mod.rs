//! What an operator sees of a running process besides its logs: the background loops'
//! health (for readiness), the Prometheus metrics (docs/deployment.md, "Health and
//! metrics"), its resident memory, and the id of the request a task serves (which the
//! events it causes carry). On the ground floor: jobs and the HTTP layers record here.

pub mod health;
pub mod memory;
pub mod metrics;
pub mod request_id;

pub use health::Health;
