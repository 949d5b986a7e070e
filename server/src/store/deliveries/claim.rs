//! The workers' side of the queue: claiming due attempts with what sending them needs,
//! when the next one falls due, the backlog, and the events of claimed attempts.

use chrono::{DateTime, Duration, Utc};
use sea_query::{Cond, Expr, IntoIden as _, LockBehavior, LockType, Order, Query};
use serde_json::Value as Json;
use uuid::Uuid;

use super::{required, Trigger};
use crate::error::{Error, Result};
use crate::store::sql::{a, keys_in, tc};
use crate::store::{Dialect, Row, Tx};

/// A claimed attempt, with what sending it needs.
#[derive(Debug, Clone)]
pub struct Claimed {
    pub tenant: Uuid,
    pub livemode: bool,
    pub id: Uuid,
    pub webhook_id: Uuid,
    pub event_id: Option<Uuid>,
    pub event_type: String,
    pub event_created_at: DateTime<Utc>,
    /// The subscription's URL now (it may have changed since the attempt was written).
    pub url: String,
    pub attempt: i64,
    pub trigger: Trigger,
    pub payload: Option<Json>,
    pub secret_sealed: Option<String>,
    pub previous_secret_sealed: Option<String>,
    pub previous_secret_expires_at: Option<DateTime<Utc>>,
}

/// Claims up to `limit` due attempts of enabled subscriptions, at most `room(webhook)`
/// of each subscription, until `now + lease`. Attempts of a disabled subscription wait
/// (re-enabling it resumes them).
pub async fn claim(
    tx: &mut Tx,
    now: DateTime<Utc>,
    lease: Duration,
    limit: usize,
    mut room: impl FnMut(Uuid) -> usize,
) -> Result<Vec<Claimed>> {
    let d = tx.dialect();
    if d == Dialect::Postgres {
        in_queue_order(tx).await?;
    }
    let (t, w) = ("d", "w");
    // The due attempts, from the partial index `webhook_deliveries_due` in due order,
    // locked as they are read. The subscription's state is checked per candidate in a
    // subquery that `OFFSET 0` keeps PostgreSQL from turning into a join: as a join, the
    // planner may start from `webhooks` and read every pending attempt of the tenant
    // (50 ms per claim with a 20,000-attempt backlog, and it did so with stale
    // statistics). The literal `'pending'` (not a parameter) is what lets the partial
    // index serve, also in a prepared statement's generic plan.
    let mut enabled = Query::select();
    enabled
        .expr(Expr::cust("1"))
        .from_as(a("webhooks"), a(w))
        .and_where(tc(w, "tenant_id").equals((a(t), a("tenant_id"))))
        .and_where(tc(w, "livemode").equals((a(t), a("livemode"))))
        .and_where(tc(w, "id").equals((a(t), a("webhook_id"))))
        .and_where(Expr::cust("w.status = 'enabled'"));
    if d == Dialect::Postgres {
        enabled.offset(0);
    }
    let mut due = Query::select();
    due.columns(
        [
            "tenant_id",
            "livemode",
            "id",
            "webhook_id",
            "event_id",
            "event_type",
            "event_created_at",
            "attempt",
            "trigger",
            "payload",
            "next_attempt_at",
        ]
        .map(|c| (a(t), a(c))),
    )
    .from_as(a("webhook_deliveries"), a(t))
    .and_where(Expr::cust("d.status = 'pending'"))
    .and_where(tc(t, "next_attempt_at").lte(Expr::val(now)))
    .and_where(tc(t, "claimed_until").is_null().or(tc(t, "claimed_until").lt(Expr::val(now))))
    .and_where(Expr::exists(enabled))
    .order_by((a(t), a("next_attempt_at")), Order::Asc)
    // Candidates beyond the batch: some may be of a subscription that has no room.
    .limit((limit * 4) as u64);
    if d == Dialect::Postgres {
        // Where the row is, to update the claimed ones by (`at_rows`).
        due.expr_as(Expr::cust("d.ctid::text"), a(ROW_REF));
        due.lock_with_behavior(LockType::Update, LockBehavior::SkipLocked);
    }
    let sel = Query::select()
        .column((a("c"), sea_query::Asterisk))
        .expr_as(tc(w, "url"), a("webhook_url"))
        .columns(["secret_sealed", "previous_secret_sealed", "previous_secret_expires_at"].map(|c| (a(w), a(c))))
        .from_subquery(due, a("c"))
        .inner_join(
            sea_query::TableRef::TableAlias(a("webhooks").into_iden(), a(w).into_iden()),
            Cond::all()
                .add(tc(w, "tenant_id").equals((a("c"), a("tenant_id"))))
                .add(tc(w, "livemode").equals((a("c"), a("livemode"))))
                .add(tc(w, "id").equals((a("c"), a("webhook_id")))),
        )
        .order_by((a("c"), a("next_attempt_at")), Order::Asc)
        .to_owned();
    let rows = tx.fetch_all(&sel).await?;
    let (mut picked, mut refs) = (Vec::new(), Vec::new());
    for r in &rows {
        if picked.len() >= limit {
            break;
        }
        let webhook_id = required(r.opt_uuid("webhook_id"))?;
        if room(webhook_id) == 0 {
            continue;
        }
        picked.push(decode(r, webhook_id)?);
        if d == Dialect::Postgres {
            refs.push(required(r.opt_string(ROW_REF))?);
        }
    }
    if !picked.is_empty() {
        let rows = match d {
            Dialect::Postgres => at_rows(&refs),
            Dialect::Sqlite => keys_in(picked.iter().map(|c| (c.tenant, c.livemode, c.id))),
        };
        let up = Query::update().table(a("webhook_deliveries")).value(a("claimed_until"), now + lease).cond_where(rows).to_owned();
        tx.execute(&up).await?;
    }
    Ok(picked)
}

/// The claim's own name for where a candidate row is (PostgreSQL's `ctid`).
const ROW_REF: &str = "row_ref";

/// On PostgreSQL, the picked rows by where they are: a claim locked them as it read them,
/// so they stay where they are until it updates them, and a lookup by `ctid` is the one
/// plan there is (by key, the planner may prefer reading the tenant's every attempt).
fn at_rows(refs: &[String]) -> Cond {
    let array = format!("{{{}}}", refs.iter().map(|r| format!("\"{r}\"")).collect::<Vec<_>>().join(","));
    Cond::all().add(Expr::cust_with_values("ctid = ANY(CAST($1 AS tid[]))", [array]))
}

/// For the rest of a claim's transaction on PostgreSQL: no bitmap or sequential scans, so
/// the queue is read in due order through `webhook_deliveries_due` and rows are found by
/// key, whatever the statistics say. The planner otherwise trusts statistics that lag
/// the queue: on a register that filled since it was last analysed (a backlog after an
/// outage, and always where autovacuum is off) it read and sorted every pending attempt
/// for each claim, and updated the claimed ones by reading every attempt of the tenant:
/// 570 index entries read per delivery, and 1,136 deliveries/s where current statistics
/// gave 1,711/s.
async fn in_queue_order(tx: &mut Tx) -> Result<()> {
    let off = Query::select()
        .expr(Expr::cust("set_config('enable_bitmapscan', 'off', true)"))
        .expr(Expr::cust("set_config('enable_seqscan', 'off', true)"))
        .to_owned();
    tx.execute(&off).await?;
    Ok(())
}

fn decode(r: &Row, webhook_id: Uuid) -> Result<Claimed> {
    Ok(Claimed {
        tenant: required(r.opt_uuid("tenant_id"))?,
        livemode: required(r.opt_bool("livemode"))?,
        id: required(r.opt_uuid("id"))?,
        webhook_id,
        event_id: r.opt_uuid("event_id")?,
        event_type: required(r.opt_string("event_type"))?,
        event_created_at: required(r.opt_datetime("event_created_at"))?,
        url: required(r.opt_string("webhook_url"))?,
        attempt: required(r.opt_i64("attempt"))?,
        trigger: Trigger::parse(&required(r.opt_string("trigger"))?),
        payload: r.opt_json("payload")?,
        secret_sealed: r.opt_string("secret_sealed")?,
        previous_secret_sealed: r.opt_string("previous_secret_sealed")?,
        previous_secret_expires_at: r.opt_datetime("previous_secret_expires_at")?,
    })
}

/// The pending attempts (`d`) of enabled subscriptions (`w`), to select from.
fn pending_of_enabled() -> sea_query::SelectStatement {
    Query::select()
        .from_as(a("webhook_deliveries"), a("d"))
        .inner_join(
            sea_query::TableRef::TableAlias(a("webhooks").into_iden(), a("w").into_iden()),
            Cond::all()
                .add(tc("w", "tenant_id").equals((a("d"), a("tenant_id"))))
                .add(tc("w", "livemode").equals((a("d"), a("livemode"))))
                .add(tc("w", "id").equals((a("d"), a("webhook_id")))),
        )
        .and_where(Expr::cust("d.status = 'pending'"))
        .and_where(Expr::cust("w.status = 'enabled'"))
        .to_owned()
}

/// The earliest time an unclaimed attempt of an enabled subscription falls due: the
/// worker sleeps until then. (A claim that lapses because its process died is found by
/// the worker's periodic look, at most `IDLE` later.) One row read through the partial
/// index `webhook_deliveries_due`, in due order.
pub async fn next_due(tx: &mut Tx, now: DateTime<Utc>) -> Result<Option<DateTime<Utc>>> {
    let sel = pending_of_enabled()
        .expr_as(tc("d", "next_attempt_at"), a("due"))
        .and_where(tc("d", "claimed_until").is_null().or(tc("d", "claimed_until").lt(Expr::val(now))))
        .order_by((a("d"), a("next_attempt_at")), Order::Asc)
        .limit(1)
        .to_owned();
    match tx.fetch_optional(&sel).await? {
        Some(r) => r.opt_datetime("due"),
        None => Ok(None),
    }
}

/// The attempts due and not yet made, of enabled subscriptions (metrics): how many, and
/// the time the oldest fell due.
pub async fn backlog(tx: &mut Tx, now: DateTime<Utc>) -> Result<(i64, Option<DateTime<Utc>>)> {
    let sel = pending_of_enabled()
        .expr_as(Expr::cust("COUNT(*)"), a("due"))
        .expr_as(Expr::cust("MIN(d.next_attempt_at)"), a("oldest"))
        .and_where(tc("d", "next_attempt_at").lte(Expr::val(now)))
        .to_owned();
    match tx.fetch_optional(&sel).await? {
        Some(r) => Ok((r.opt_i64("due")?.unwrap_or(0), r.opt_datetime("oldest")?)),
        None => Ok((0, None)),
    }
}

/// The events of claimed attempts (those that name one), read in the claim's
/// transaction: one query for the batch rather than a transaction per attempt. An event
/// past its retention is absent from the map.
pub async fn events_of(tx: &mut Tx, claimed: &[Claimed]) -> Result<std::collections::HashMap<Uuid, crate::domain::record::Record>> {
    let keys: Vec<_> = claimed.iter().filter(|c| c.payload.is_none()).filter_map(|c| Some((c.tenant, c.livemode, c.event_id?))).collect();
    let events =
        crate::domain::collections::collection("events").ok_or_else(|| Error::internal(anyhow::anyhow!("events is a collection")))?;
    let rows = crate::store::records::by_keys(tx, events, keys).await?;
    Ok(rows.into_iter().map(|(_, r)| (r.id, r)).collect())
}
