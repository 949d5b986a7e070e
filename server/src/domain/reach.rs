//! Whose records an act reaches. A request acts in a [`Scope`]: one tenant, one
//! environment, and for a credential limited to properties, only those. Time-driven work
//! runs over a [`Reach`]: everything on real time, or one tenant's sandbox on its clock.
//! Every layer passes these; the store turns them into conditions on every statement.

use uuid::Uuid;

/// Who is acting: the tenant, the environment, and an optional property constraint.
#[derive(Debug, Clone)]
pub struct Scope {
    pub tenant: Uuid,
    pub livemode: bool,
    pub properties: Option<Vec<Uuid>>,
}

/// Whose rows a round of time-driven work reaches: everything that runs on real time
/// (live data, and sandboxes without a clock of their own), or one tenant's sandbox on
/// its sandbox clock.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    RealTime,
    Sandbox(Uuid),
}
