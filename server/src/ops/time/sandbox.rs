//! The sandbox clock (like Stripe's test clocks): a tenant's sandbox runs on real time
//! plus how far its clock was advanced (`store::sandbox`). The clock moves forward only,
//! and moving it runs, day by day and in order, what time causes in that sandbox.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use super::{passes, Passed};
use crate::domain::reach::Reach;
use crate::error::{Error, Result};
use crate::ops::Operations;
use crate::store::{sandbox, Intent};

/// The longest a sandbox clock moves in one advance (each day on the way is a scheduler
/// round for the sandbox).
pub const MAX_ADVANCE: chrono::Duration = chrono::Duration::days(731);

/// Moves a tenant's sandbox clock forward to `to`, running on the way, day by day and in
/// order, everything time causes in that sandbox (`time::passes`): a round at the
/// sandbox's time now (what is due already), one at the start (UTC) of each day on the
/// way, and a last one at `to`. Returns what the rounds did.
/// The clock moves forward only; `to` at or before the sandbox's time is refused.
pub async fn advance(ops: &Operations, tenant: Uuid, to: DateTime<Utc>) -> Result<Passed> {
    let from = now(ops, tenant).await?;
    if to <= from {
        return Err(Error::validation(
            "to",
            format!("must be later than the sandbox's time, {}; the clock moves forward only", from.to_rfc3339()),
        ));
    }
    if to - from > MAX_ADVANCE {
        return Err(Error::validation("to", "must be at most two years after the sandbox's time; advance in steps"));
    }
    let mut steps: Vec<DateTime<Utc>> = vec![from];
    let mut day = from.date_naive().succ_opt();
    while let Some(d) = day.filter(|d| *d <= to.date_naive()) {
        if let Some(start) = d.and_hms_opt(0, 0, 0) {
            steps.push(start.and_utc());
        }
        day = d.succ_opt();
    }
    steps.push(to);
    let mut total = Passed::default();
    for at in steps {
        // Set the clock first, so that what the round writes carries the sandbox's time.
        let now = ops.clock().now();
        ops.store().in_tenant(tenant, false, Intent::Write, async |tx| sandbox::advance(tx, tenant, at - now, now).await).await?;
        total.absorb(passes(ops, at, Reach::Sandbox(tenant)).await?);
    }
    Ok(total)
}

/// A tenant's sandbox time now: real time plus how far its clock was advanced.
pub async fn now(ops: &Operations, tenant: Uuid) -> Result<DateTime<Utc>> {
    let offset = ops.store().in_tenant(tenant, false, Intent::Read, async |tx| sandbox::offset(tx, tenant).await).await?;
    Ok(ops.clock().now() + offset)
}
