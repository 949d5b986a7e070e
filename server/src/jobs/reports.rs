//! The report worker: takes queued reports, oldest first, computes them from the
//! tenant's records and stores the result (`queued` → `completed`, or `failed` with
//! the reason if the computation itself fails).
//!
//! A report is claimed (`store::background::ReportClaim`) so that several processes never
//! compute the same one; on SQLite, whose one process only reads the queue, a report is
//! completed only if it is still queued.

use chrono::{DateTime, Utc};
use serde_json::{json, Value as Json};

use crate::domain::collections::collection;
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::reports::{self, Parameters};
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::error::{Error, Result};
use crate::store::background::ReportClaim;
use crate::store::records;
use crate::store::Store;

fn reports_collection() -> &'static Collection {
    collection("reports").expect("reports is a collection")
}

/// Computes queued reports until none is left; returns how many it completed.
pub async fn run_queued(store: &Store, now: impl Fn() -> DateTime<Utc>) -> Result<usize> {
    let c = reports_collection();
    let mut done = 0;
    while let Some(claim) = ReportClaim::next(store).await? {
        let (tenant, report) = (claim.tenant, claim.report.clone());
        let scope = Scope { tenant, livemode: report.livemode, properties: None };
        let at = now();
        let outcome = compute(store, &scope, &report, at).await;
        let mut ch = Changes::default();
        match outcome {
            Ok(result) => {
                ch.values.insert("status", Val::Str("completed".into()));
                ch.values.insert("result", Val::Json(result));
            }
            Err(e) => {
                tracing::error!(report = %report.id, error = %e, "report failed");
                ch.values.insert("status", Val::Str("failed".into()));
                ch.values.insert("result", Val::Json(json!({"error": "the report could not be computed"})));
            }
        }
        ch.values.insert("completed_at", Val::DateTime(at));
        let mut tx = claim.into_write(store).await?;
        let (_, after) = records::modify(&mut tx, &scope, c, report.id, at, |current| {
            // Another worker may have finished it meanwhile (SQLite only).
            Ok(if current.status() == "queued" { ch } else { Changes::default() })
        })
        .await?;
        tx.commit().await?;
        if after.status() == "completed" {
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
