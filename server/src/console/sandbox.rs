//! Resetting a tenant's sandbox from the console: the same two steps as
//! `gable sandbox reset --tenant ID [--demo]` (`store::sandbox::reset` in one system
//! transaction, then, on request, `demo::portfolio` through the operations), for owners
//! and admins only. The console's environment does not matter: it is always the sandbox.

use gable_app::service::{ConsoleError, Me, Sandbox, SandboxReset};

use super::{require_manage, store_error, tenant_of, ConsoleService};
use crate::store::{sandbox, Intent};

#[async_trait::async_trait]
impl Sandbox for ConsoleService {
    async fn reset_sandbox(&self, me: &Me, demo: bool) -> Result<SandboxReset, ConsoleError> {
        require_manage(me, "reset the sandbox")?;
        let tenant = tenant_of(me)?;
        // System transaction, as the CLI: the reset spans every collection's table and
        // the sandbox clock, each statement limited to this tenant's sandbox rows.
        let rows_deleted = self
            .store
            .in_system(Intent::Write, async |tx| sandbox::reset(tx, tenant).await)
            .await
            .map_err(store_error("resetting the sandbox"))?;
        tracing::info!(%tenant, rows_deleted, by = %me.user_id, "console: sandbox reset");
        if demo {
            // The reset is committed by now; a failure here leaves an empty sandbox, which a
            // second reset with the demo repairs.
            let made = crate::demo::portfolio(&self.ops, tenant).await.map_err(store_error("making the demo portfolio"))?;
            tracing::info!(%tenant, property = %made.property_id, by = %me.user_id, "console: demo portfolio made");
        }
        Ok(SandboxReset { rows_deleted, demo })
    }
}
