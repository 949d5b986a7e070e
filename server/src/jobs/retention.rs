//! Retention: what is kept for a while only, purged each scheduler round. Events are kept
//! 30 days (longer than any scheduled occurrence's window, `ops::time::scheduled`, so the
//! event that marks an occurrence as fired outlives it), the delivery register 30 days,
//! idempotency keys 24 hours.

use chrono::{DateTime, Duration, Utc};

use crate::error::Result;
use crate::store::{Intent, Store};

/// Deletes events older than the 30 days they are kept (their deliveries go with them,
/// `ON DELETE CASCADE`), delivery attempts older than the register's 30 days, and
/// idempotency keys older than their 24 hours.
pub async fn purge_old_events(store: &Store, now: DateTime<Utc>) -> Result<u64> {
    store
        .in_system(Intent::Write, async |tx| {
            let cutoff = now - Duration::days(30);
            crate::store::deliveries::delete_before(tx, cutoff).await?;
            crate::store::idempotency::delete_before(tx, now - crate::store::idempotency::KEEP).await?;
            let n = crate::store::events::delete_before(tx, cutoff).await?;
            Ok(n)
        })
        .await
}
