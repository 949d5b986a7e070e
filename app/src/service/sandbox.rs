//! The tenant's sandbox as a whole.

use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::{Me, Result};

/// What a sandbox reset did.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SandboxReset {
    /// Sandbox rows deleted: records of every collection, ledger lines, delivery attempts
    /// and idempotency keys.
    pub rows_deleted: u64,
    /// Whether the demo portfolio was made afterwards.
    pub demo: bool,
}

/// The tenant's sandbox as a whole (`server/src/console/sandbox.rs`).
#[cfg(feature = "ssr")]
#[async_trait::async_trait]
pub trait Sandbox: Send + Sync + 'static {
    /// Deletes every sandbox record of the user's tenant and its sandbox clock, whatever
    /// environment the console shows (never live data, keys, service accounts or users);
    /// with `demo`, then makes the demo portfolio in the sandbox. Owners and admins only.
    async fn reset_sandbox(&self, me: &Me, demo: bool) -> Result<SandboxReset>;
}
