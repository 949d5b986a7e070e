//! Use cases that set a tenant up rather than write one record, called alike by the CLI
//! and the console:
//! - [`Operations::reset_sandbox`]: a tenant's sandbox emptied (every collection, its
//!   clock, its bookkeeping) in one system transaction, then, on request, the demo
//!   portfolio made through the operations (`demo`);
//! - [`Operations::first_start`]: on a store without tenants, a demo tenant with a
//!   sandbox key and the demo portfolio, so the first call returns data.

use serde::Serialize;
use uuid::Uuid;

use super::demo::{self, Portfolio};
use super::Operations;
use crate::error::Result;
use crate::store::{request_logs, sandbox, Intent};

/// What a sandbox reset did.
#[derive(Debug, Serialize)]
pub struct SandboxReset {
    pub rows_deleted: u64,
    /// The demo portfolio made afterwards, when asked for.
    pub demo: Option<Portfolio>,
}

/// The demo tenant of a first start.
pub struct FirstStart {
    pub tenant: Uuid,
    /// The sandbox key's secret: shown once, by whoever started Gable.
    pub sandbox_key: String,
    pub demo: Portfolio,
}

impl Operations {
    /// Empties a tenant's sandbox and, when `demo`, makes the demo portfolio in it. The
    /// reset commits first; a failure of the portfolio leaves an empty sandbox, which a
    /// second reset with the demo repairs.
    pub async fn reset_sandbox(&self, tenant: Uuid, demo: bool) -> Result<SandboxReset> {
        // A system transaction: the reset spans every collection's table and the sandbox
        // clock, each statement limited to this tenant's sandbox rows.
        let mut rows_deleted = self.store.in_system(Intent::Write, async |tx| sandbox::reset(tx, tenant).await).await?;
        // The sandbox's request log is written apart (its own file on SQLite).
        rows_deleted += self.store.in_request_log(async |tx| request_logs::delete_environment(tx, tenant, false).await).await?;
        let demo = match demo {
            true => Some(demo::portfolio(self, tenant).await?),
            false => None,
        };
        Ok(SandboxReset { rows_deleted, demo })
    }

    /// On a store without tenants, a demo tenant ("Demo Properties") with a `*` sandbox key
    /// and the demo portfolio; `None` when the store has tenants already.
    pub async fn first_start(&self) -> Result<Option<FirstStart>> {
        if self.store.count_tenants().await? != 0 {
            return Ok(None);
        }
        let tenant = self.store.create_tenant("Demo Properties").await?;
        let account = self.store.service_account(tenant, "default").await?;
        let key = self.store.create_key(tenant, account, false, vec!["*".into()], None).await?;
        // Something to call, and an invoice for the first test payment to pay.
        let demo = demo::portfolio(self, tenant).await?;
        Ok(Some(FirstStart { tenant, sandbox_key: key.secret, demo }))
    }
}
