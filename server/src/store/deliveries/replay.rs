//! What replaying an attempt and recovering a subscription read and change: a test send's
//! body, an event's last attempt, the events a subscription missed, and making its
//! waiting retries due now.

use chrono::{DateTime, Utc};
use sea_query::{Expr, Order, Query};
use serde_json::Value as Json;
use uuid::Uuid;

use super::enqueue::wake_workers;
use super::{required, row_key};
use crate::error::Result;
use crate::store::sql::{a, col, tc};
use crate::store::Tx;

/// The body of a test send (kept on its attempts, since it is not an event of `events`).
pub async fn payload_of(tx: &mut Tx, tenant: Uuid, livemode: bool, delivery: Uuid) -> Result<Option<Json>> {
    let sel = Query::select().column(a("payload")).from(a("webhook_deliveries")).cond_where(row_key(tenant, livemode, delivery)).to_owned();
    match tx.fetch_optional(&sel).await? {
        Some(r) => r.opt_json("payload"),
        None => Ok(None),
    }
}

/// The highest attempt number of an event's deliveries to a subscription (0 if none).
pub async fn last_attempt(tx: &mut Tx, tenant: Uuid, livemode: bool, webhook: Uuid, event: Uuid) -> Result<i64> {
    let sel = Query::select()
        .expr_as(Expr::col(a("attempt")).max(), a("n"))
        .from(a("webhook_deliveries"))
        .and_where(col("tenant_id").eq(tenant))
        .and_where(col("livemode").eq(livemode))
        .and_where(col("webhook_id").eq(webhook))
        .and_where(col("event_id").eq(event))
        .to_owned();
    Ok(match tx.fetch_optional(&sel).await? {
        Some(r) => r.opt_i64("n")?.unwrap_or(0),
        None => 0,
    })
}

/// The events since `since` (of the types `takes` accepts) that a subscription has not
/// received: no attempt succeeded, and none is pending.
pub async fn undelivered_events(
    tx: &mut Tx,
    tenant: Uuid,
    livemode: bool,
    webhook: Uuid,
    since: DateTime<Utc>,
) -> Result<Vec<(Uuid, String, DateTime<Utc>)>> {
    let received = Query::select()
        .expr(Expr::cust("1"))
        .from_as(a("webhook_deliveries"), a("d"))
        .and_where(tc("d", "tenant_id").equals((a("e"), a("tenant_id"))))
        .and_where(tc("d", "livemode").equals((a("e"), a("livemode"))))
        .and_where(tc("d", "event_id").equals((a("e"), a("id"))))
        .and_where(tc("d", "webhook_id").eq(webhook))
        .and_where(tc("d", "status").is_in(["succeeded", "pending"]))
        .to_owned();
    let sel = Query::select()
        .columns(["id", "type", "created_at"].map(|c| (a("e"), a(c))))
        .from_as(a("events"), a("e"))
        .and_where(tc("e", "tenant_id").eq(tenant))
        .and_where(tc("e", "livemode").eq(livemode))
        .and_where(tc("e", "created_at").gte(Expr::val(since)))
        .and_where(Expr::exists(received).not())
        .order_by((a("e"), a("created_at")), Order::Asc)
        .to_owned();
    tx.fetch_all(&sel)
        .await?
        .iter()
        .map(|r| Ok((required(r.opt_uuid("id"))?, required(r.opt_string("type"))?, required(r.opt_datetime("created_at"))?)))
        .collect()
}

/// Makes a subscription's waiting retries of events since `since` due now (recovery
/// after an outage: no waiting hours for the next scheduled retry). Returns how many.
pub async fn expedite(tx: &mut Tx, tenant: Uuid, livemode: bool, webhook: Uuid, since: DateTime<Utc>, now: DateTime<Utc>) -> Result<u64> {
    let up = Query::update()
        .table(a("webhook_deliveries"))
        .value(a("next_attempt_at"), now)
        .value(a("updated_at"), now)
        .and_where(col("tenant_id").eq(tenant))
        .and_where(col("livemode").eq(livemode))
        .and_where(col("webhook_id").eq(webhook))
        .and_where(col("status").eq("pending"))
        .and_where(col("event_created_at").gte(Expr::val(since)))
        .and_where(col("next_attempt_at").gt(Expr::val(now)))
        .and_where(col("claimed_until").is_null().or(col("claimed_until").lt(Expr::val(now))))
        .to_owned();
    let n = tx.execute(&up).await?;
    if n > 0 {
        wake_workers(tx).await?;
    }
    Ok(n)
}
