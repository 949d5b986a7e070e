//! Scheduled events: `rent.due`, `lease.expiring` (60 and 30 days before the end) and
//! `document.expiring` (30 days before). Each tick finds, across all tenants, the
//! records whose moment has come and that have no event for that occurrence yet, and
//! writes the events. The unique index on (tenant, environment, type, record,
//! occurrence) makes each fire once, also when several processes tick at once.
//!
//! Windows: a rent charge fires from its due date up to 7 days later (a scheduler that
//! was stopped catches up that far); the 60-day lease notice fires while the lease
//! ends in 31–60 days, the 30-day one while it ends in 1–30 days; a document fires
//! while it expires within 30 days. Dates are UTC calendar dates. Every window is
//! shorter than the 30 days events are kept (`jobs::retention`): the event row that marks
//! an occurrence as fired is never purged while the occurrence could fire again.

use chrono::{DateTime, Duration, NaiveDate, Utc};
use sea_query::{Alias, Expr, Query, SimpleExpr};
use serde_json::{json, Map};

use crate::domain::collections::collection;
use crate::domain::events;
use crate::domain::registry::{Collection, Ty};
use crate::domain::value::Val;
use crate::error::Result;
use crate::ops::outbox::{self, NewEvent};
use crate::store::records::{self, ScanLock};
use crate::store::{Dialect, Intent, Store};

use super::Reach;

/// How many candidates one transaction handles.
const BATCH: u64 = 200;
/// How late a rent charge's `rent.due` may still fire.
const RENT_CATCH_UP_DAYS: i64 = 7;

/// One kind of scheduled occurrence.
struct Rule {
    event: &'static str,
    collection: &'static str,
    /// The notice period, for the occurrence key and `data.days_before`.
    days_before: Option<i64>,
}

const RULES: &[Rule] = &[
    Rule { event: "rent.due", collection: "charges", days_before: None },
    Rule { event: "lease.expiring", collection: "leases", days_before: Some(60) },
    Rule { event: "lease.expiring", collection: "leases", days_before: Some(30) },
    Rule { event: "document.expiring", collection: "documents", days_before: Some(30) },
];

/// A column of the scanned row (`records::scan` aliases its table `r`).
pub(super) fn col(n: &str) -> Expr {
    Expr::col((Alias::new("r"), Alias::new(n)))
}

pub(super) fn date(d: Dialect, day: NaiveDate) -> sea_query::Value {
    d.value(Ty::Date, &Val::Date(day))
}

impl Rule {
    /// The occurrence key as SQL over the scanned row `r`, and as Rust for a record.
    /// Both render the same text: `due`, `60:2027-01-31`, `30:2027-01-31`.
    fn occurrence_sql(&self, d: Dialect) -> String {
        match (self.collection, d) {
            ("charges", _) => "'due'".into(),
            ("leases", Dialect::Sqlite) => format!("'{}:' || r.end_date", self.days_before.unwrap_or(0)),
            ("leases", Dialect::Postgres) => format!("'{}:' || to_char(r.end_date, 'YYYY-MM-DD')", self.days_before.unwrap_or(0)),
            (_, Dialect::Sqlite) => format!("'{}:' || substr(r.expires_at, 1, 10)", self.days_before.unwrap_or(0)),
            (_, Dialect::Postgres) => {
                format!("'{}:' || to_char(r.expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')", self.days_before.unwrap_or(0))
            }
        }
    }

    fn occurrence(&self, rec: &crate::domain::record::Record) -> String {
        let day = match rec.get(if self.collection == "leases" { "end_date" } else { "expires_at" }) {
            Val::Date(d) => d.to_string(),
            Val::DateTime(t) => t.date_naive().to_string(),
            _ => String::new(),
        };
        match self.days_before {
            None => "due".into(),
            Some(n) => format!("{n}:{day}"),
        }
    }

    /// Which rows are due at `now`, and not fired yet.
    fn conditions(&self, d: Dialect, now: DateTime<Utc>) -> Vec<SimpleExpr> {
        let today = now.date_naive();
        let mut v: Vec<SimpleExpr> = match self.collection {
            "charges" => vec![
                col("kind").eq("rent"),
                col("status").eq("posted"),
                col("due_date").lte(date(d, today)),
                col("due_date").gte(date(d, today - Duration::days(RENT_CATCH_UP_DAYS))),
            ],
            "leases" => {
                let n = self.days_before.unwrap_or(30);
                // The 60-day notice stops where the 30-day one takes over; the 30-day one
                // stops the day before the end. Each window is shorter than the 30 days
                // events are kept, so the event that marks an occurrence as fired outlives it.
                let until = if n == 60 { today + Duration::days(30) } else { today };
                vec![
                    col("status").eq("active"),
                    col("end_date").lte(date(d, today + Duration::days(n))),
                    col("end_date").gt(date(d, until)),
                ]
            }
            _ => vec![col("expires_at").gt(d.ts(now)), col("expires_at").lte(d.ts(now + Duration::days(30)))],
        };
        let e = |n: &str| Expr::col((Alias::new("e"), Alias::new(n)));
        let fired = Query::select()
            .expr(Expr::val(1))
            .from_as(Alias::new("events"), Alias::new("e"))
            .and_where(e("tenant_id").equals((Alias::new("r"), Alias::new("tenant_id"))))
            .and_where(e("livemode").equals((Alias::new("r"), Alias::new("livemode"))))
            .and_where(e("type").eq(self.event))
            .and_where(e("related_object_id").equals((Alias::new("r"), Alias::new("id"))))
            .and_where(Expr::cust(format!("e.occurrence = {}", self.occurrence_sql(d))))
            .to_owned();
        v.push(Expr::exists(fired).not());
        v
    }
}

/// What a tick fired.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Fired {
    pub total: usize,
    /// Of which `rent.due`.
    pub rent_due: usize,
}

/// Fires every scheduled event due at `now` among the rows `reach` selects; returns
/// what it wrote.
pub async fn tick(store: &Store, now: DateTime<Utc>, reach: Reach) -> Result<Fired> {
    let mut fired = Fired::default();
    for rule in RULES {
        let c: &'static Collection = collection(rule.collection).expect("scheduled rules name real collections");
        loop {
            // Found with a read (on SQLite, without the write lock); written in a write
            // transaction only when there is something to fire.
            let mut read = store.begin_system(Intent::Read).await?;
            let mut due = rule.conditions(read.dialect(), now);
            due.extend(reach.conditions(read.dialect()));
            let batch = records::scan(&mut read, c, due, BATCH, ScanLock::None).await?;
            read.commit().await?;
            if batch.is_empty() {
                break;
            }
            let mut tx = store.begin_system(Intent::Write).await?;
            for (tenant, rec) in &batch {
                let extra: Vec<(&str, serde_json::Value)> = rule.days_before.map(|n| ("days_before", json!(n))).into_iter().collect();
                let occurrence = rule.occurrence(rec);
                let e = NewEvent {
                    tenant: *tenant,
                    livemode: rec.livemode,
                    kind: rule.event,
                    data: events::data(rec.to_json(c, None), Map::new(), &extra),
                    related: rec.id,
                    property: rec.property_id(c),
                    occurrence: Some(&occurrence),
                    at: now,
                };
                if outbox::write(&mut tx, e).await?.is_some() {
                    fired.total += 1;
                    if rule.event == "rent.due" {
                        fired.rent_due += 1;
                    }
                }
            }
            tx.commit().await?;
            if (batch.len() as u64) < BATCH {
                break;
            }
        }
    }
    Ok(fired)
}
