//! The delivery register's storage (`webhook_deliveries`): one row per attempt.
//!
//! A `pending` row is an attempt to make. The first attempts of an event are written in
//! the event's own transaction (`enqueue_for_event`), so what is to be delivered is as
//! durable as the event, whatever order events commit in across processes. Workers
//! claim due rows (`claim`: `FOR UPDATE SKIP LOCKED` on PostgreSQL, SQLite's one writer
//! otherwise) by setting `claimed_until`; a claim that lapses (the process died
//! mid-attempt) is claimed again, so every attempt is made at least once. `finish_all`
//! records outcomes only while their rows are still pending, so an attempt is recorded
//! once even if two processes made it.
//!
//! The subscriptions' signing secrets, kept in `webhooks`, are in `secrets.rs`.

pub mod secrets;

use chrono::{DateTime, Duration, Utc};
use sea_query::{Cond, Expr, LockBehavior, LockType, Order, Query, Value};
use serde_json::Value as Json;
use uuid::Uuid;

use super::sql::{a, col, insert_row, keys_in, tc};
use crate::domain::webhooks;
use crate::error::{Error, Result};
use crate::store::{Dialect, Row, Tx};

/// PostgreSQL channel that wakes every process's delivery worker when attempts are due.
pub const CHANNEL: &str = "gable_deliveries";

/// Why an attempt is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Event,
    Retry,
    Replay,
    Recovery,
    Test,
}

impl Trigger {
    fn parse(s: &str) -> Trigger {
        match s {
            "retry" => Trigger::Retry,
            "replay" => Trigger::Replay,
            "recovery" => Trigger::Recovery,
            "test" => Trigger::Test,
            _ => Trigger::Event,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Event => "event",
            Trigger::Retry => "retry",
            Trigger::Replay => "replay",
            Trigger::Recovery => "recovery",
            Trigger::Test => "test",
        }
    }
}

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
async fn wake_workers(tx: &mut Tx) -> Result<()> {
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

fn required<T>(v: Result<Option<T>>) -> Result<T> {
    v?.ok_or_else(|| Error::internal(anyhow::anyhow!("a required column of the register is empty")))
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

use sea_query::IntoIden as _;

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

/// The events of claimed attempts (those that name one), read in the claim's
/// transaction: one query for the batch rather than a transaction per attempt. An event
/// past its retention is absent from the map.
pub async fn events_of(tx: &mut Tx, claimed: &[Claimed]) -> Result<std::collections::HashMap<Uuid, crate::domain::record::Record>> {
    let keys: Vec<_> = claimed.iter().filter(|c| c.payload.is_none()).filter_map(|c| Some((c.tenant, c.livemode, c.event_id?))).collect();
    let events =
        crate::domain::collections::collection("events").ok_or_else(|| Error::internal(anyhow::anyhow!("events is a collection")))?;
    let rows = super::records::by_keys(tx, events, keys).await?;
    Ok(rows.into_iter().map(|(_, r)| (r.id, r)).collect())
}

/// Deletes at most `limit` attempts older than `before` (the register keeps 30 days).
pub async fn delete_before(tx: &mut Tx, before: DateTime<Utc>, limit: u64) -> Result<u64> {
    super::sql::delete_some(tx, "webhook_deliveries", &["tenant_id", "livemode", "id"], col("created_at").lt(Expr::val(before)), limit)
        .await
}

/// The key of one row of a tenant table.
fn row_key(tenant: Uuid, livemode: bool, id: Uuid) -> Cond {
    Cond::all().add(col("tenant_id").eq(tenant)).add(col("livemode").eq(livemode)).add(col("id").eq(id))
}

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
