//! The scans of background work, across all tenants: the leases time acts on and the
//! records due a scheduled event (`ops::time`), among the rows a [`Reach`] selects, and
//! the queue of reports (`jobs::reports`). Each scan returns records with their tenant,
//! in `created_at, id` order.

use std::ops::Bound;

use chrono::{DateTime, NaiveDate, Utc};
use sea_query::{Alias, Expr, Query, SimpleExpr};
use uuid::Uuid;

use super::records::{self, ScanLock};
use super::values::bind;
use super::{Dialect, Intent, Store, Tx};
use crate::domain::collections::collection;
use crate::domain::reach::Reach;
use crate::domain::record::Record;
use crate::domain::registry::{Collection, Ty};
use crate::domain::value::Val;
use crate::error::Result;

/// The conditions that select a [`Reach`]'s rows in a scan (table alias `r`); a sandbox's
/// clock is `store::sandbox`'s.
fn conditions(reach: Reach) -> Vec<SimpleExpr> {
    match reach {
        Reach::RealTime => {
            vec![Expr::cust("NOT (r.livemode = false AND EXISTS (SELECT 1 FROM sandbox_clocks sc WHERE sc.tenant_id = r.tenant_id))")]
        }
        Reach::Sandbox(tenant) => vec![col("tenant_id").eq(tenant), col("livemode").eq(false)],
    }
}

/// A column of the scanned row (`records::scan` aliases its table `r`).
fn col(n: &str) -> Expr {
    Expr::col((Alias::new("r"), Alias::new(n)))
}

fn leases() -> &'static Collection {
    collection("leases").expect("leases is a collection")
}

/// Active leases `reach` selects with rent to bill by `horizon`: never billed, or whose
/// next period falls due by then; after `after` (`created_at`, `id`) when given.
pub async fn leases_to_bill(
    tx: &mut Tx,
    reach: Reach,
    horizon: NaiveDate,
    after: Option<(DateTime<Utc>, Uuid)>,
    limit: u64,
) -> Result<Vec<(Uuid, Record)>> {
    let mut due = vec![
        // A literal, as the partial index `leases_rent_next_due` is conditioned: a bound
        // value cannot be planned on (read connections plan without bound values).
        Expr::cust("status = 'active'"),
        col("start_date").lte(horizon),
        col("rent_next_due").lte(horizon).or(col("rent_next_due").is_null().and(col("rent_billed_through").is_null())),
    ];
    due.extend(conditions(reach));
    if let Some((at, id)) = after {
        due.push(Expr::tuple([col("created_at").into(), col("id").into()]).gt(Expr::tuple([Expr::val(at).into(), Expr::val(id).into()])));
    }
    records::scan(tx, leases(), due, limit, ScanLock::None).await
}

/// Active leases `reach` selects whose last day (`end_date`) is before `today`.
pub async fn leases_past_end(tx: &mut Tx, reach: Reach, today: NaiveDate, limit: u64) -> Result<Vec<(Uuid, Record)>> {
    let mut due = vec![col("status").eq("active"), col("end_date").lt(today)];
    due.extend(conditions(reach));
    records::scan(tx, leases(), due, limit, ScanLock::None).await
}

/// Which records are due a scheduled event: those of `collection` with the `equals`
/// values, whose `field` lies between `from` and `to`, and that have no event of that
/// type for their occurrence yet.
pub struct Due {
    pub event: &'static str,
    pub collection: &'static Collection,
    pub equals: &'static [(&'static str, &'static str)],
    /// A date or date-time field.
    pub field: &'static str,
    pub from: Bound<Val>,
    pub to: Bound<Val>,
    pub occurrence: Occurrence,
}

/// How a record's occurrence of a scheduled event is named.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Occurrence {
    /// Once per record: `due`.
    Once(&'static str),
    /// Once per notice period and day of the field: `60:2027-01-31`.
    DaysBefore(i64),
}

impl Due {
    /// A record's occurrence key, as the scan's SQL names it (`occurrence_sql`).
    pub fn occurrence_of(&self, rec: &Record) -> String {
        match self.occurrence {
            Occurrence::Once(key) => key.to_string(),
            Occurrence::DaysBefore(n) => {
                let day = match rec.get(self.field) {
                    Val::Date(d) => d.to_string(),
                    Val::DateTime(t) => t.date_naive().to_string(),
                    _ => String::new(),
                };
                format!("{n}:{day}")
            }
        }
    }

    /// The occurrence key as SQL over the scanned row `r`: the same text as
    /// [`Due::occurrence_of`]. Dates are UTC calendar dates.
    fn occurrence_sql(&self, d: Dialect) -> String {
        let n = match self.occurrence {
            // The keys are Gable's own constants, never input.
            Occurrence::Once(key) => return format!("'{key}'"),
            Occurrence::DaysBefore(n) => n,
        };
        let date_time = self.collection.field(self.field).is_some_and(|f| f.ty == Ty::DateTime);
        let f = self.field;
        match (d, date_time) {
            (Dialect::Sqlite, false) => format!("'{n}:' || r.{f}"),
            (Dialect::Sqlite, true) => format!("'{n}:' || substr(r.{f}, 1, 10)"),
            (Dialect::Postgres, false) => format!("'{n}:' || to_char(r.{f}, 'YYYY-MM-DD')"),
            (Dialect::Postgres, true) => format!("'{n}:' || to_char(r.{f} AT TIME ZONE 'UTC', 'YYYY-MM-DD')"),
        }
    }

    fn conditions(&self, d: Dialect) -> Vec<SimpleExpr> {
        let mut v: Vec<SimpleExpr> = self.equals.iter().map(|(f, value)| col(f).eq(*value)).collect();
        let ty = self.collection.field(self.field).map_or(Ty::Date, |f| f.ty);
        match &self.from {
            Bound::Included(x) => v.push(col(self.field).gte(bind(ty, x))),
            Bound::Excluded(x) => v.push(col(self.field).gt(bind(ty, x))),
            Bound::Unbounded => {}
        }
        match &self.to {
            Bound::Included(x) => v.push(col(self.field).lte(bind(ty, x))),
            Bound::Excluded(x) => v.push(col(self.field).lt(bind(ty, x))),
            Bound::Unbounded => {}
        }
        let e = |n: &str| Expr::col((Alias::new("e"), Alias::new(n)));
        let r = |n: &str| (Alias::new("r"), Alias::new(n));
        let fired = Query::select()
            .expr(Expr::val(1))
            .from_as(Alias::new("events"), Alias::new("e"))
            .and_where(e("tenant_id").equals(r("tenant_id")))
            .and_where(e("livemode").equals(r("livemode")))
            .and_where(e("type").eq(self.event))
            .and_where(e("related_object_id").equals(r("id")))
            .and_where(Expr::cust(format!("e.occurrence = {}", self.occurrence_sql(d))))
            .to_owned();
        v.push(Expr::exists(fired).not());
        v
    }
}

/// The records `reach` selects that are due the event, at most `limit`.
pub async fn due(tx: &mut Tx, due: &Due, reach: Reach, limit: u64) -> Result<Vec<(Uuid, Record)>> {
    let mut conds = due.conditions(tx.dialect());
    conds.extend(conditions(reach));
    records::scan(tx, due.collection, conds, limit, ScanLock::None).await
}

/// A queued report taken by a worker. On PostgreSQL its row stays locked
/// (`FOR UPDATE SKIP LOCKED`) by the transaction held here until the report is completed:
/// several processes never compute the same report, and a process that dies mid-way
/// leaves it queued for another. SQLite has one process: the queue is read without the
/// write lock (an idle worker never takes it), and the report is completed in a
/// transaction of its own.
pub struct ReportClaim {
    pub tenant: Uuid,
    pub report: Record,
    held: Option<Tx>,
}

impl ReportClaim {
    /// The oldest queued report, if any.
    pub async fn next(store: &Store) -> Result<Option<ReportClaim>> {
        // Only a database other processes share needs its claims locked.
        let lock = store.is_shared();
        let mut tx = store.begin_system(if lock { Intent::Write } else { Intent::Read }).await?;
        let c = collection("reports").expect("reports is a collection");
        let found = records::scan(&mut tx, c, vec![col("status").eq("queued")], 1, ScanLock::SkipLocked).await?.into_iter().next();
        let held = if lock && found.is_some() {
            Some(tx)
        } else {
            tx.commit().await?;
            None
        };
        Ok(found.map(|(tenant, report)| ReportClaim { tenant, report, held }))
    }

    /// The write transaction to complete the report in: the claim's own on PostgreSQL.
    /// On SQLite another worker may have completed it meanwhile; check it is still queued.
    pub async fn into_write(self, store: &Store) -> Result<Tx> {
        match self.held {
            Some(tx) => Ok(tx),
            None => store.begin_system(Intent::Write).await,
        }
    }
}
