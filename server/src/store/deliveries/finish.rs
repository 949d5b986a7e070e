//! Recording attempts' outcomes, the next attempt when there is one, and the health of
//! their subscriptions that follows (a failing streak, disabling).

use chrono::{DateTime, Utc};
use sea_query::{Cond, Expr, Query, Value};
use serde_json::Value as Json;
use uuid::Uuid;

use super::claim::Claimed;
use super::enqueue::{insert, NewAttempt};
use super::{row_key, Trigger};
use crate::domain::webhooks;
use crate::error::Result;
use crate::store::sql::{a, col};
use crate::store::Tx;

/// How an attempt went.
pub struct Outcome {
    pub request_headers: Json,
    pub response_status: Option<u16>,
    pub response_headers: Option<Json>,
    pub response_excerpt: Option<String>,
    pub latency_ms: Option<i64>,
    pub error: Option<String>,
    /// A 2xx answer.
    pub succeeded: bool,
    /// The receiver said the endpoint is gone (410): the subscription is disabled.
    pub gone: bool,
    /// When the next attempt is due, if there is one.
    pub retry_at: Option<DateTime<Utc>>,
}

/// Records attempts' outcomes in one transaction (the worker batches what finished in
/// the last few milliseconds: one commit for all of them). For each attempt: its row is
/// written only while it is still pending (so an attempt is recorded once even if two
/// processes made it), and the next attempt is written when there is one. Then each
/// subscription's health is kept: a success clears its failing streak; a `410`, or
/// failures only for `DISABLE_AFTER`, disable it with the reason. Subscriptions are
/// updated in id order, so two processes' batches cannot deadlock on them. Returns, per
/// attempt, whether this call recorded it.
pub async fn finish_all(tx: &mut Tx, done: &[(&Claimed, &Outcome)], now: DateTime<Utc>) -> Result<Vec<bool>> {
    let mut recorded = Vec::with_capacity(done.len());
    let mut health: std::collections::BTreeMap<Uuid, (&Claimed, Vec<Health>)> = Default::default();
    for (c, o) in done {
        let fresh = finish_one(tx, c, o, now).await?;
        recorded.push(fresh);
        if fresh {
            let step = if o.succeeded {
                Health::Clear
            } else if o.gone {
                Health::Gone
            } else {
                Health::Failed
            };
            let steps = &mut health.entry(c.webhook_id).or_insert_with(|| (c, Vec::new())).1;
            // A run of successes (or of failures) at one `now` has the effect of one.
            if steps.last() != Some(&step) || step == Health::Gone {
                steps.push(step);
            }
        }
    }
    for (c, steps) in health.into_values() {
        for step in steps {
            keep_health(tx, c, step, now).await?;
        }
    }
    Ok(recorded)
}

/// What an outcome does to its subscription's health.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Health {
    Clear,
    Failed,
    Gone,
}

async fn finish_one(tx: &mut Tx, c: &Claimed, o: &Outcome, now: DateTime<Utc>) -> Result<bool> {
    let status = match (o.succeeded, o.retry_at.is_some()) {
        (true, _) => "succeeded",
        (false, true) => "retrying",
        (false, false) => "failed",
    };
    let key = Cond::all().add(col("tenant_id").eq(c.tenant)).add(col("livemode").eq(c.livemode)).add(col("id").eq(c.id));
    let json_or_null = |j: Option<Json>| Value::from(j);
    let ts_or_null = |t: Option<DateTime<Utc>>| Value::from(t);
    let up = Query::update()
        .table(a("webhook_deliveries"))
        .value(a("status"), status)
        .value(a("updated_at"), now)
        .value(a("request_headers"), o.request_headers.clone())
        .value(a("response_status"), o.response_status.map(i64::from))
        .value(a("response_headers"), json_or_null(o.response_headers.clone()))
        .value(a("response_excerpt"), o.response_excerpt.clone())
        .value(a("latency_ms"), o.latency_ms)
        .value(a("error"), o.error.clone())
        .value(a("next_attempt_at"), ts_or_null(o.retry_at))
        .value(a("claimed_until"), ts_or_null(None))
        .cond_where(key)
        .and_where(col("status").eq("pending"))
        .to_owned();
    if tx.execute(&up).await? == 0 {
        return Ok(false);
    }
    if let Some(due) = o.retry_at {
        let next = NewAttempt {
            tenant: c.tenant,
            livemode: c.livemode,
            webhook_id: c.webhook_id,
            url: c.url.clone(),
            event_id: c.event_id,
            event_type: c.event_type.clone(),
            event_created_at: c.event_created_at,
            attempt: c.attempt + 1,
            trigger: Trigger::Retry,
            due,
            payload: c.payload.clone(),
        };
        insert(tx, next, now).await?;
    }
    Ok(true)
}

/// One step of a subscription's failing streak: cleared by a success, started by a
/// failure and, when it is older than the limit, the subscription disabled; a `410`
/// disables it at once.
async fn keep_health(tx: &mut Tx, c: &Claimed, step: Health, now: DateTime<Utc>) -> Result<()> {
    let key = row_key(c.tenant, c.livemode, c.webhook_id);
    let mut up = Query::update();
    up.table(a("webhooks")).cond_where(key.clone());
    match step {
        Health::Clear => {
            up.value(a("failing_since"), Value::ChronoDateTimeUtc(None)).and_where(col("failing_since").is_not_null());
        }
        Health::Gone => {
            up.value(a("status"), "disabled").value(a("updated_at"), now).value(
                a("disabled_reason"),
                format!("The endpoint answered 410 Gone on {}; Gable stopped delivering to it.", now.format("%Y-%m-%d %H:%M UTC")),
            );
        }
        Health::Failed => {
            // Start the streak at the first failure; disable once it is older than the limit.
            let start = Query::update()
                .table(a("webhooks"))
                .value(a("failing_since"), now)
                .cond_where(key)
                .and_where(col("failing_since").is_null())
                .to_owned();
            tx.execute(&start).await?;
            let limit = now - webhooks::DISABLE_AFTER;
            up.value(a("status"), "disabled")
                .value(a("updated_at"), now)
                .value(
                    a("disabled_reason"),
                    format!(
                        "Every delivery failed for {} days; Gable stopped delivering on {}.",
                        webhooks::DISABLE_AFTER.num_days(),
                        now.format("%Y-%m-%d %H:%M UTC")
                    ),
                )
                .and_where(col("status").eq("enabled"))
                .and_where(col("failing_since").lte(Expr::val(limit)));
        }
    }
    tx.execute(&up).await?;
    Ok(())
}
