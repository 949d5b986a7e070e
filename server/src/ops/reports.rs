//! A queued report's end, written by the report worker (`jobs::reports`) once it has
//! computed it: `completed` with its result, or `failed` with a reason fit to show (the
//! cause goes to the log). Written in the claim's transaction, and only while the report
//! is still queued: on SQLite, whose one process only reads the queue, another worker may
//! have finished it meanwhile.

use chrono::{DateTime, Utc};
use serde_json::{json, Value as Json};

use super::Operations;
use crate::domain::collections::named;
use crate::domain::reach::Scope;
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::error::Result;
use crate::store::background::ReportClaim;
use crate::store::records;

impl Operations {
    /// Ends a claimed report with the outcome of its computation, at `at`; true when this
    /// call completed it.
    pub async fn finish_report(&self, claim: ReportClaim, outcome: Result<Json>, at: DateTime<Utc>) -> Result<bool> {
        let c = named("reports")?;
        let report = claim.report.id;
        let scope = Scope { tenant: claim.tenant, livemode: claim.report.livemode, properties: None };
        let mut ch = Changes::default();
        match outcome {
            Ok(result) => {
                ch.values.insert("status", Val::Str("completed".into()));
                ch.values.insert("result", Val::Json(result));
            }
            Err(e) => {
                tracing::error!(%report, error = %e, "report failed");
                ch.values.insert("status", Val::Str("failed".into()));
                ch.values.insert("result", Val::Json(json!({"error": "the report could not be computed"})));
            }
        }
        ch.values.insert("completed_at", Val::DateTime(at));
        let mut tx = claim.into_write(&self.store).await?;
        let (_, after) = records::modify(&mut tx, &scope, c, report, at, |current| {
            Ok(if current.status() == "queued" { ch } else { Changes::default() })
        })
        .await?;
        tx.commit().await?;
        Ok(after.status() == "completed")
    }
}
