//! Writing attempts: the first ones of an event, in the event's own transaction, and each
//! that follows (a retry, a replay, a test send), waking the workers as they commit.

use chrono::{DateTime, Utc};
use sea_query::{Expr, Query};
use serde_json::Value as Json;
use uuid::Uuid;

use super::{required, Trigger, CHANNEL};
use crate::domain::webhooks;
use crate::error::Result;
use crate::store::sql::{a, col, insert_row};
use crate::store::{Dialect, Tx};

/// An attempt to write.
pub struct NewAttempt {
    pub tenant: Uuid,
    pub livemode: bool,
    pub webhook_id: Uuid,
    pub url: String,
    pub event_id: Option<Uuid>,
    pub event_type: String,
    pub event_created_at: DateTime<Utc>,
    pub attempt: i64,
    pub trigger: Trigger,
    pub due: DateTime<Utc>,
    /// The body of an event that is not in `events` (a test send).
    pub payload: Option<Json>,
}

/// Writes a pending attempt and, on PostgreSQL, wakes every process's worker when the
/// transaction commits.
pub async fn insert(tx: &mut Tx, n: NewAttempt, now: DateTime<Utc>) -> Result<Uuid> {
    let id = Uuid::now_v7();
    let ins = insert_row(
        "webhook_deliveries",
        (n.tenant, n.livemode, id),
        now,
        vec![
            ("webhook_id", n.webhook_id.into()),
            ("event_id", n.event_id.into()),
            ("event_type", n.event_type.into()),
            ("event_created_at", n.event_created_at.into()),
            ("url", n.url.into()),
            ("attempt", n.attempt.into()),
            ("trigger", n.trigger.as_str().into()),
            ("status", "pending".into()),
            ("next_attempt_at", n.due.into()),
            ("payload", n.payload.into()),
        ],
    );
    tx.execute(&ins).await?;
    wake_workers(tx).await?;
    Ok(id)
}

/// On PostgreSQL, a notification delivered at commit to every process's worker.
pub(super) async fn wake_workers(tx: &mut Tx) -> Result<()> {
    if tx.dialect() == Dialect::Postgres {
        tx.execute(Query::select().expr(Expr::cust_with_values("pg_notify($1, '')", [CHANNEL]))).await?;
    }
    Ok(())
}

/// A subscription as the register needs it.
pub struct Subscription {
    pub id: Uuid,
    pub url: String,
    pub events: Vec<String>,
}

/// The enabled subscriptions of a tenant's environment.
pub async fn enabled_subscriptions(tx: &mut Tx, tenant: Uuid, livemode: bool) -> Result<Vec<Subscription>> {
    let sel = Query::select()
        .columns(["id", "url", "events"].map(a))
        .from(a("webhooks"))
        .and_where(col("tenant_id").eq(tenant))
        .and_where(col("livemode").eq(livemode))
        .and_where(col("status").eq("enabled"))
        .to_owned();
    tx.fetch_all(&sel)
        .await?
        .iter()
        .map(|r| {
            let events = r.opt_json("events")?.and_then(|j| serde_json::from_value::<Vec<String>>(j).ok()).unwrap_or_default();
            Ok(Subscription { id: required(r.opt_uuid("id"))?, url: required(r.opt_string("url"))?, events })
        })
        .collect()
}

/// In the event's transaction: a pending first attempt for every enabled subscription
/// of the tenant's environment that takes events of this type.
pub async fn enqueue_for_event(tx: &mut Tx, tenant: Uuid, livemode: bool, event_id: Uuid, kind: &str, at: DateTime<Utc>) -> Result<usize> {
    let subs = enabled_subscriptions(tx, tenant, livemode).await?;
    let mut n = 0;
    for s in subs.into_iter().filter(|s| webhooks::takes(&s.events, kind)) {
        let attempt = NewAttempt {
            tenant,
            livemode,
            webhook_id: s.id,
            url: s.url,
            event_id: Some(event_id),
            event_type: kind.to_string(),
            event_created_at: at,
            attempt: 1,
            trigger: Trigger::Event,
            // Due now, also for an event of a sandbox whose clock runs ahead.
            due: at.min(Utc::now()),
            payload: None,
        };
        insert(tx, attempt, at).await?;
        n += 1;
    }
    Ok(n)
}
