//! What time does to leases, each scheduler round: an active lease bills its rent for
//! each period (`domain::rent`) once it falls due within `LEAD` days, as a rent charge
//! and an open invoice for it, made through the operations (so their ledger postings,
//! events and webhooks follow as for any write); and a lease past its `end_date` ends.
//!
//! Each lease is billed in a transaction of its own that locks it first and reads how far
//! it was billed (`rent_billed_through`), so several processes running the scheduler bill
//! each period once; the unique index on a charge's `(lease_id, period)` holds that too.
//! A process bills several leases at once on PostgreSQL (`Store::parallel_writes`).
//! A lease activated late, or a scheduler that was stopped, catches up every period due
//! since its start.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use futures_util::stream::{self, StreamExt, TryStreamExt};
use serde_json::{json, Map};
use uuid::Uuid;

use crate::domain::collections::named;
use crate::domain::reach::Scope;
use crate::domain::rent;
use crate::domain::validate::Changes;
use crate::domain::value::{money_json, Val};
use crate::error::{Error, Result};
use crate::ops::{Actor, Operations};
use crate::store::background;
use crate::store::records;
use crate::store::Intent;

use crate::domain::reach::Reach;

/// How many days before its due date a period is billed (its invoice goes out).
pub const LEAD: i64 = 7;
/// Leases looked at per scan.
const BATCH: u64 = 200;

/// Bills every period due by `now + LEAD` of every active lease `reach` selects; returns
/// the charges made.
pub async fn bill_rent(ops: &Operations, now: DateTime<Utc>, reach: Reach) -> Result<usize> {
    let horizon = now.date_naive() + Duration::days(LEAD);
    let mut billed = 0;
    // A lease never billed, or whose next period falls due by the horizon.
    let mut after: Option<(DateTime<Utc>, Uuid)> = None;
    loop {
        let batch =
            ops.store().in_system(Intent::Read, async |read| background::leases_to_bill(read, reach, horizon, after, BATCH).await).await?;
        // Each lease in its own transaction, several at once where the database writes in
        // parallel: one at a time, PostgreSQL mostly waited on round trips. (The futures
        // are made before the stream: a closure in it defeats the proof that the job is
        // `Send`.)
        let bills: Vec<_> = batch.iter().map(|(tenant, lease)| bill_lease(ops, *tenant, lease.livemode, lease.id, horizon)).collect();
        billed +=
            stream::iter(bills).buffer_unordered(ops.store().parallel_writes()).try_fold(0, |sum, n| async move { Ok(sum + n) }).await?;
        match batch.last() {
            Some((_, last)) if batch.len() as u64 == BATCH => after = Some((last.created_at, last.id)),
            _ => return Ok(billed),
        }
    }
}

/// Bills one lease's due periods in one transaction; returns how many.
async fn bill_lease(ops: &Operations, tenant: Uuid, livemode: bool, id: Uuid, horizon: NaiveDate) -> Result<usize> {
    let (c, charges, invoices) = (named("leases")?, named("charges")?, named("invoices")?);
    let scope = Scope { tenant, livemode, properties: None };
    let mut w = ops.begin(&Actor::system(tenant, livemode)).await?;
    let lease = records::fetch(w.tx(), &scope, c, id, true).await?;
    let (Val::Date(start), Some(currency)) = (lease.get("start_date").clone(), lease.currency().map(str::to_owned)) else {
        return Ok(0);
    };
    if lease.status() != "active" {
        return Ok(0);
    }
    let end = lease.get("end_date").as_date();
    let billed_through = lease.get("rent_billed_through").as_date();
    let rent_day = match lease.get("rent_due_day") {
        Val::Int(n) => u32::try_from(*n).unwrap_or(1),
        _ => 1,
    };
    let periods = rent::periods(start, end, rent_day, billed_through, horizon);
    let last = periods.last().map(|p| p.due).or(billed_through);
    let next = rent::next_due(start, end, rent_day, last);
    if periods.is_empty() && next == lease.get("rent_next_due").as_date() {
        return Ok(0);
    }
    let amount = money_json(lease.money("rent"), Some(&currency));
    for p in &periods {
        let body = json!({
            "lease_id": id, "kind": "rent", "amount": amount, "currency": currency,
            "due_date": p.due.to_string(), "description": format!("Rent for {}", p.name),
        });
        let period = Changes::of([("period", Val::Str(p.name.clone()))]);
        let charge_id = w.create_with(charges, &body, period).await?.record.id;
        let invoice = w
            .create(
                invoices,
                &json!({
                    "lease_id": id, "charge_ids": [charge_id], "amount_due": amount, "currency": currency,
                    "due_date": p.due.to_string(),
                }),
            )
            .await?
            .record;
        w.act_named_on_own(invoices, "open", invoice, &Map::new()).await?;
    }
    let now = w.now();
    let as_val = |d: Option<NaiveDate>| d.map(Val::Date).unwrap_or(Val::Null);
    let ch = Changes::of([("rent_billed_through", as_val(last)), ("rent_next_due", as_val(next))]);
    // Locked since the start; billing reads the lease but does not change it.
    records::write_changes(w.tx(), &scope, c, lease, ch, now).await?;
    w.commit().await?;
    Ok(periods.len())
}

/// Ends every active lease `reach` selects whose last day (`end_date`) is before `now`'s
/// date, through its `end` action; returns how many.
pub async fn end_leases(ops: &Operations, now: DateTime<Utc>, reach: Reach) -> Result<usize> {
    let c = named("leases")?;
    let mut ended = 0;
    loop {
        let today = now.date_naive();
        let batch = ops.store().in_system(Intent::Read, async |read| background::leases_past_end(read, reach, today, BATCH).await).await?;
        if batch.is_empty() {
            return Ok(ended);
        }
        for (tenant, lease) in &batch {
            let mut w = ops.begin(&Actor::system(*tenant, lease.livemode)).await?;
            match w.act_named(c, "end", lease.id, &Map::new()).await {
                Ok(_) => {
                    w.commit().await?;
                    ended += 1;
                }
                // Another process ended it first.
                Err(Error::InvalidStateTransition { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if (batch.len() as u64) < BATCH {
            return Ok(ended);
        }
    }
}
