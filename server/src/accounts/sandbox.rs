//! Resetting a tenant's sandbox from the console: the use case `gable sandbox reset
//! --tenant ID [--demo]` runs too (`Operations::reset_sandbox`), for owners and admins
//! only. The console's environment does not matter: it is always the sandbox.

use gable_app::service::{ConsoleError, Me, Sandbox, SandboxReset};

use super::{require_manage, store_error, tenant_of, AccountService};

#[async_trait::async_trait]
impl Sandbox for AccountService {
    async fn reset_sandbox(&self, me: &Me, demo: bool) -> Result<SandboxReset, ConsoleError> {
        require_manage(me, "reset the sandbox")?;
        let tenant = tenant_of(me)?;
        let reset = self.ops.reset_sandbox(tenant, demo).await.map_err(store_error("resetting the sandbox"))?;
        tracing::info!(%tenant, rows_deleted = reset.rows_deleted, demo = ?reset.demo.as_ref().map(|p| p.property_id), by = %me.user_id, "console: sandbox reset");
        Ok(SandboxReset { rows_deleted: reset.rows_deleted, demo })
    }
}
