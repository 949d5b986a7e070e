//! Retention: what is kept for a while only, purged each scheduler round. Events are kept
//! 30 days (longer than any scheduled occurrence's window, `ops::time::scheduled`, so the
//! event that marks an occurrence as fired outlives it), the delivery register 30 days,
//! idempotency keys 24 hours, the request log as long as its setting says (7 days unless
//! told otherwise), imports and their rows 30 days (`expires_at`). An upload that stopped
//! mid-file (its process died) is ended `failed` after an hour without progress.

use chrono::{DateTime, Duration, Utc};

use crate::error::Result;
use crate::store::{deliveries, events, idempotency, imports, request_logs, Intent, Store};

/// Rows deleted per transaction: each batch is short, so writes of requests wait for
/// SQLite's single writer at most that long, however much has piled up.
const BATCH: u64 = 1000;

/// Deletes events older than the 30 days they are kept (their deliveries go with them,
/// `ON DELETE CASCADE`), delivery attempts older than the register's 30 days, idempotency
/// keys older than their 24 hours, and request log records older than `request_log_kept`,
/// each in batches of `BATCH` rows per transaction; returns the events deleted.
pub async fn purge_old_events(store: &Store, now: DateTime<Utc>, request_log_kept: Duration) -> Result<u64> {
    in_batches(store, Purge::Deliveries, now).await?;
    in_batches(store, Purge::IdempotencyKeys, now).await?;
    in_batches(store, Purge::RequestLogs(request_log_kept), now).await?;
    let stale = now - STALE_UPLOAD;
    store.in_system(Intent::Write, async |tx| imports::abandon_stale_uploads(tx, now, stale).await).await?;
    in_batches(store, Purge::ImportRows, now).await?;
    in_batches(store, Purge::Imports, now).await?;
    in_batches(store, Purge::Events, now).await
}

#[derive(Clone, Copy)]
enum Purge {
    Deliveries,
    IdempotencyKeys,
    /// Records older than this.
    RequestLogs(Duration),
    Events,
    /// The rows of imports past their `expires_at`, then the imports.
    ImportRows,
    Imports,
}

/// An upload that has read nothing for this long has lost its connection or its process.
const STALE_UPLOAD: Duration = Duration::hours(1);

/// Deletes what `what` keeps no longer, a batch per transaction, until a batch deletes
/// fewer than `BATCH` rows; returns how many.
async fn in_batches(store: &Store, what: Purge, now: DateTime<Utc>) -> Result<u64> {
    let cutoff = now - Duration::days(30);
    let mut total = 0;
    loop {
        let n = match what {
            Purge::Deliveries => store.in_system(Intent::Write, async |tx| deliveries::delete_before(tx, cutoff, BATCH).await).await?,
            Purge::IdempotencyKeys => {
                store.in_system(Intent::Write, async |tx| idempotency::delete_before(tx, now - idempotency::KEEP, BATCH).await).await?
            }
            // The log is written apart from the rest (its own file on SQLite).
            Purge::RequestLogs(kept) => store.in_request_log(async |tx| request_logs::delete_before(tx, now - kept, BATCH).await).await?,
            Purge::Events => store.in_system(Intent::Write, async |tx| events::delete_before(tx, cutoff, BATCH).await).await?,
            Purge::ImportRows => store.in_system(Intent::Write, async |tx| imports::delete_expired_rows(tx, now, BATCH).await).await?,
            Purge::Imports => store.in_system(Intent::Write, async |tx| imports::delete_expired(tx, now, BATCH).await).await?,
        };
        total += n;
        if n < BATCH {
            return Ok(total);
        }
        // Between batches, let the requests waiting for the writer go first.
        tokio::task::yield_now().await;
    }
}
