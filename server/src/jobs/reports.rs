//! The report worker: takes queued reports, oldest first, computes them from the
//! tenant's records and ends each through the operations (`Operations::finish_report`:
//! `queued` → `completed`, or `failed` if the computation itself fails).
//!
//! A report is claimed (`store::background::ReportClaim`) so that several processes never
//! compute the same one; on SQLite, whose one process only reads the queue, a report is
//! completed only if it is still queued.

use chrono::{DateTime, Utc};
use serde_json::{json, Value as Json};

use crate::domain::collections::collection;
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::reports::{self, Parameters};
use crate::error::{Error, Result};
use crate::ops::Operations;
use crate::store::background::ReportClaim;
use crate::store::Store;

/// Computes queued reports until none is left; returns how many it completed.
pub async fn run_queued(ops: &Operations) -> Result<usize> {
    let store = ops.store();
    let mut done = 0;
    while let Some(claim) = ReportClaim::next(store).await? {
        let scope = Scope { tenant: claim.tenant, livemode: claim.report.livemode, properties: None };
        let at = ops.clock().now();
        let outcome = compute(store, &scope, &claim.report, at).await;
        if ops.finish_report(claim, outcome, at).await? {
            done += 1;
        }
    }
    Ok(done)
}

async fn compute(store: &Store, scope: &Scope, report: &Record, now: DateTime<Utc>) -> Result<Json> {
    let params = Parameters::parse(report.get("parameters"))?;
    let on = params.as_of.unwrap_or_else(|| now.date_naive());
    let load = |name: &'static str| {
        let c = collection(name).expect("reports read real collections");
        let property = params.property_id;
        async move {
            let all = store.list_all(scope, c, "created_at").await?;
            // Records outside the property are left out (units, leases … carry it).
            Ok::<_, Error>(all.into_iter().filter(|r| property.is_none_or(|p| r.property_id(c) == Some(p))).collect::<Vec<_>>())
        }
    };
    let mut result = match report.get("kind").as_str().unwrap_or_default() {
        "rent_roll" => {
            let (units, leases, charges, invoices, payments) =
                (load("units").await?, load("leases").await?, load("charges").await?, load("invoices").await?, load("payments").await?);
            reports::rent_roll(on, &units, &leases, &charges, &invoices, &payments)
        }
        "occupancy" => reports::occupancy(on, &load("units").await?, &load("tenancies").await?, &load("bookings").await?),
        "delinquency" => reports::delinquency(on, &load("invoices").await?),
        "ledger" => reports::trial_balance(on, &store.account_sums(scope, Some(on), params.property_id).await?),
        other => return Err(Error::internal(anyhow::anyhow!("unknown report kind {other}"))),
    };
    if let Some(p) = params.property_id {
        result["property_id"] = json!(p);
    }
    Ok(result)
}
