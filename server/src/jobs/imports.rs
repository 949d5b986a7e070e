//! The import worker: writes committed imports (`ops::imports`), a batch at a time, until
//! each is completed, failed or cancelled. It wakes when an import here is committed and
//! looks every few seconds for those committed elsewhere or left half-written by a
//! process that stopped: an import goes on from its last whole batch (`next_line`),
//! whichever process takes it. Batches of one import are written one after another (each
//! locks the import); several imports take turns, a batch each, so one large file does
//! not hold back another tenant's.

use tokio::sync::watch;

use crate::error::Result;
use crate::observe::Health;
use crate::ops::imports::Step;
use crate::ops::Operations;
use crate::store::{imports, Intent};

/// The loop's name, as logs, metrics and readiness show it.
pub const IMPORTS: &str = "imports";

/// Writes every committed import to its end, or until `stop` turns true (between
/// batches: a batch is never cut); returns the batches written.
pub async fn run_committed(ops: &Operations, stop: Option<&watch::Receiver<bool>>) -> Result<usize> {
    let mut batches = 0;
    let stopping = || stop.is_some_and(|s| *s.borrow());
    loop {
        let open = ops.store().in_system(Intent::Read, async |tx| imports::importing(tx, 100).await).await?;
        if open.is_empty() {
            return Ok(batches);
        }
        // A batch of each in turn.
        for (tenant, livemode, id) in open {
            if stopping() {
                return Ok(batches);
            }
            match ops.commit_import_batch(tenant, livemode, id).await? {
                Step::Wrote(_) => batches += 1,
                // The tables have grown, perhaps from nothing: the planner's statistics
                // follow at once (bounded; nothing to do on PostgreSQL).
                Step::Ended if batches > 0 => ops.store().refresh_statistics().await?,
                Step::Ended => {}
            }
        }
    }
}

/// Runs the worker until `stop` turns true.
pub async fn run(ops: Operations, stop: watch::Receiver<bool>, health: Health) {
    let committed = ops.signals().imports_committed.clone();
    let between_batches = stop.clone();
    super::repeat(IMPORTS, &health, stop, super::LOOK_EVERY, Some(committed), || run_committed(&ops, Some(&between_batches))).await
}
