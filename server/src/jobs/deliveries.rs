//! The webhook delivery worker: claims due attempts from the register
//! (`store::deliveries`), signs and POSTs them through the SSRF-guarded client
//! (`outbound`), and records each outcome with the retry it calls for.
//!
//! It wakes when attempts are written (in-process `Signals::deliveries_due`; the
//! PostgreSQL channel `store::deliveries::CHANNEL` from every process), and otherwise
//! sleeps until the next attempt falls due, not on a fixed poll. Concurrency is bounded
//! overall (`CONCURRENCY`) and per subscription (`PER_SUBSCRIPTION`), so one slow
//! receiver cannot take every slot. A claim lasts `LEASE`, well beyond the 10 s request
//! timeout; if the process dies mid-attempt, the claim lapses and the attempt is made
//! again (at least once, never lost).
//!
//! Per attempt the database sees no transaction of its own: a claim takes a batch of
//! attempts and reads their events in one transaction, and outcomes are recorded by one
//! recorder task that writes whatever finished meanwhile in one transaction (`Recorder`),
//! so a commit (a WAL flush on PostgreSQL) serves many attempts.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};
use rand::Rng;
use serde_json::{json, Map, Value as Json};
use tokio::sync::{mpsc, oneshot, watch, Notify, Semaphore};
use uuid::Uuid;

use crate::crypto::MasterKey;
use crate::domain::collections::collection;
use crate::domain::record::Record;
use crate::domain::webhooks;
use crate::error::{Error, Result};
use crate::ops::Operations;
use crate::outbound::{self, SendError};
use crate::store::deliveries::{self, Claimed, Outcome, Trigger};
use crate::store::{Intent, Store};

/// Attempts in flight at once, in this process, by default (`--delivery-concurrency`).
pub const CONCURRENCY: usize = 64;
/// Attempts in flight at once to one subscription, in this process.
pub const PER_SUBSCRIPTION: usize = 8;
/// How long a claim holds before another worker may take the attempt again.
pub const LEASE: Duration = Duration::seconds(30);
/// The longest the worker sleeps without a wake-up (a lapsed claim, a lost notification).
const IDLE: std::time::Duration = std::time::Duration::from_secs(30);
/// The most outcomes recorded in one transaction.
const RECORD_BATCH: usize = 256;

/// An attempt's outcome on its way to the recorder, and where to say whether it was recorded.
struct Finished {
    claimed: Claimed,
    outcome: Outcome,
    /// `Some(recorded)`, or `None` when the batch could not be written (logged once).
    reply: oneshot::Sender<Option<bool>>,
}

/// Writes outcomes to the register in batches: it takes one, then everything else that
/// is waiting, and commits them together. Attempts wait for their reply, so an attempt's
/// slot is freed only once its outcome is durable (or its claim is left to lapse).
async fn record(ops: Operations, mut finished: mpsc::Receiver<Finished>) {
    let mut batch = Vec::with_capacity(RECORD_BATCH);
    while finished.recv_many(&mut batch, RECORD_BATCH).await > 0 {
        let now = ops.clock().now();
        let written = async {
            let mut tx = ops.store().begin_system(Intent::Write).await?;
            let done: Vec<_> = batch.iter().map(|f| (&f.claimed, &f.outcome)).collect();
            let recorded = deliveries::finish_all(&mut tx, &done, now).await?;
            tx.commit().await?;
            Ok::<_, Error>(recorded)
        };
        match written.await {
            Ok(recorded) => {
                if batch.iter().zip(&recorded).any(|(f, r)| *r && f.outcome.retry_at.is_some()) {
                    ops.signals().deliveries_due.notify_one();
                }
                for (f, r) in batch.drain(..).zip(recorded) {
                    let _ = f.reply.send(Some(r));
                }
            }
            Err(e) => {
                tracing::error!(error = %format!("{e:#}"), attempts = batch.len(), "delivery outcomes could not be recorded; their claims will lapse and they are made again");
                for f in batch.drain(..) {
                    let _ = f.reply.send(None);
                }
            }
        }
    }
}

/// What an attempt sends: body, headers and address.
type Request = (Vec<u8>, Vec<(String, String)>, url::Url);

/// The worker's shared parts.
#[derive(Clone)]
pub struct Deliverer {
    ops: Operations,
    client: outbound::Client,
    slots: Arc<Semaphore>,
    busy: Arc<Mutex<HashMap<Uuid, usize>>>,
    /// Rung when an attempt finishes, so the loop can claim into the freed slot.
    freed: Arc<Notify>,
    concurrency: usize,
    /// To the recorder task (which ends when the last `Deliverer` clone is dropped).
    finished: mpsc::Sender<Finished>,
}

impl Deliverer {
    pub fn new(ops: Operations, client: outbound::Client, concurrency: usize) -> Deliverer {
        let (finished, outcomes) = mpsc::channel(concurrency.max(1));
        tokio::spawn(record(ops.clone(), outcomes));
        Deliverer {
            ops,
            finished,
            client,
            concurrency,
            slots: Arc::new(Semaphore::new(concurrency)),
            busy: Arc::new(Mutex::new(HashMap::new())),
            freed: Arc::new(Notify::new()),
        }
    }

    /// Attempts this process is making now.
    fn in_flight(&self) -> usize {
        self.concurrency - self.slots.available_permits()
    }

    fn store(&self) -> &Store {
        self.ops.store()
    }

    fn now(&self) -> DateTime<Utc> {
        self.ops.clock().now()
    }

    /// Claims what is due now (as much as there is room for) and starts each attempt;
    /// returns the attempts started.
    async fn start_due(&self) -> Result<Vec<tokio::task::JoinHandle<()>>> {
        let free = self.slots.available_permits();
        if free == 0 {
            return Ok(vec![]);
        }
        let now = self.now();
        let mut tx = self.store().begin_system(Intent::Write).await?;
        // Room per subscription: what this process has in flight counts against it.
        let mut in_flight = self.busy.lock().unwrap_or_else(|e| e.into_inner()).clone();
        let room = move |webhook: Uuid| {
            let used = in_flight.entry(webhook).or_default();
            let left = PER_SUBSCRIPTION.saturating_sub(*used);
            *used += 1;
            left
        };
        let claimed = deliveries::claim(&mut tx, now, LEASE, free, room).await?;
        let events = deliveries::events_of(&mut tx, &claimed).await?;
        tx.commit().await?;
        let mut started = Vec::with_capacity(claimed.len());
        for c in claimed {
            let body = body_of(&c, &events);
            let Ok(permit) = self.slots.clone().try_acquire_owned() else { break };
            *self.busy.lock().unwrap_or_else(|e| e.into_inner()).entry(c.webhook_id).or_default() += 1;
            let me = self.clone();
            started.push(tokio::spawn(async move {
                let webhook = c.webhook_id;
                me.attempt(c, body).await;
                let mut busy = me.busy.lock().unwrap_or_else(|e| e.into_inner());
                if let Some(n) = busy.get_mut(&webhook) {
                    *n -= 1;
                    if *n == 0 {
                        busy.remove(&webhook);
                    }
                }
                drop(busy);
                drop(permit);
                me.freed.notify_one();
            }));
        }
        Ok(started)
    }

    /// Makes one attempt and hands its outcome to the recorder; returns once it is recorded.
    async fn attempt(&self, c: Claimed, body: std::result::Result<Vec<u8>, String>) {
        let now = self.now();
        let outcome = match body.and_then(|body| self.request(&c, body, now)) {
            Ok((body, headers, url)) => {
                let result = self.client.post_json(&url, &headers, body).await;
                self.outcome(&c, headers, result, now)
            }
            Err(why) => Outcome {
                request_headers: json!({}),
                response_status: None,
                response_headers: None,
                response_excerpt: None,
                latency_ms: None,
                error: Some(why),
                succeeded: false,
                gone: false,
                retry_at: None,
            },
        };
        let kind = match (outcome.succeeded, outcome.response_status) {
            (true, _) => "delivered",
            (false, Some(_)) => "failed",
            // No answer: the address was refused, unreachable, or timed out.
            (false, None) => "no_response",
        };
        metrics::counter!(crate::observe::metrics::DELIVERY_ATTEMPTS, "outcome" => kind).increment(1);
        let (reply, recorded) = oneshot::channel();
        if self.finished.send(Finished { claimed: c, outcome, reply }).await.is_ok() {
            let _ = recorded.await;
        }
    }

    /// The headers and address of an attempt, or why it cannot be made (recorded as the
    /// attempt's error, without retries: nothing would change by waiting).
    fn request(&self, c: &Claimed, body: Vec<u8>, now: DateTime<Utc>) -> std::result::Result<Request, String> {
        let key: &MasterKey = self.ops.master_key();
        let context = webhooks::secret_context(c.tenant, c.livemode, c.webhook_id);
        let current = c.secret_sealed.as_deref().and_then(|s| key.open(s, &context)).ok_or_else(|| {
            tracing::error!(webhook = %c.webhook_id, "a webhook secret does not open under this master key");
            "the subscription's signing secret cannot be read; rotate it".to_string()
        })?;
        let previous = match (c.previous_secret_sealed.as_deref(), c.previous_secret_expires_at) {
            (Some(s), Some(until)) if until > now => key.open(s, &context),
            _ => None,
        };
        let mut secrets = vec![current.as_str()];
        secrets.extend(previous.as_deref());
        let ts = now.timestamp();
        let event_id = c.event_id.map(|e| e.to_string()).or_else(|| c.payload.as_ref().and_then(|p| p["id"].as_str().map(String::from)));
        let headers = vec![
            ("Content-Type".to_string(), "application/json".to_string()),
            ("User-Agent".to_string(), outbound::USER_AGENT.to_string()),
            ("Gable-Event-Id".to_string(), event_id.unwrap_or_default()),
            ("Gable-Timestamp".to_string(), ts.to_string()),
            ("Gable-Signature".to_string(), webhooks::signature_header(&secrets, ts, &body)),
        ];
        let url = url::Url::parse(&c.url).map_err(|_| "the subscription's URL is not valid".to_string())?;
        Ok((body, headers, url))
    }

    /// What the attempt's result means for the register and the retries.
    fn outcome(
        &self,
        c: &Claimed,
        headers: Vec<(String, String)>,
        result: std::result::Result<outbound::Response, SendError>,
        now: DateTime<Utc>,
    ) -> Outcome {
        let request_headers = Json::Object(headers.into_iter().map(|(k, v)| (k, Json::String(v))).collect::<Map<_, _>>());
        let retries = matches!(c.trigger, Trigger::Event | Trigger::Retry);
        let retry_at = |failed: bool| {
            let next = u32::try_from(c.attempt + 1).ok()?;
            (failed && retries).then(|| webhooks::retry_delay(next, rand::thread_rng().gen_range(-1.0..=1.0))).flatten().map(|d| now + d)
        };
        match result {
            Ok(r) => {
                let (succeeded, gone) = (r.is_success(), r.status == 410);
                Outcome {
                    request_headers,
                    response_status: Some(r.status),
                    response_headers: Some(Json::Object(r.headers.into_iter().map(|(k, v)| (k, Json::String(v))).collect())),
                    response_excerpt: Some(r.body_excerpt),
                    latency_ms: Some(r.latency_ms as i64),
                    error: None,
                    succeeded,
                    gone,
                    retry_at: retry_at(!succeeded && !gone),
                }
            }
            Err(e) => Outcome {
                request_headers,
                response_status: None,
                response_headers: None,
                response_excerpt: None,
                latency_ms: None,
                error: Some(e.to_string()),
                succeeded: false,
                gone: false,
                retry_at: retry_at(true),
            },
        }
    }

    /// When to look again without a wake-up: the next due attempt, or `IDLE`.
    async fn idle_for(&self) -> std::time::Duration {
        let next = async {
            let mut tx = self.store().begin_system(Intent::Read).await?;
            let due = deliveries::next_due(&mut tx, self.now()).await?;
            tx.commit().await?;
            Ok::<_, Error>(due)
        };
        match next.await {
            Ok(Some(due)) => (due - self.now()).to_std().unwrap_or_default().min(IDLE),
            _ => IDLE,
        }
    }

    /// Claims and makes what is due until nothing is; waits for every attempt started
    /// (tests run this after moving the clock, as the loop would).
    pub async fn run_due(&self) -> Result<usize> {
        let mut total = 0;
        loop {
            let started = self.start_due().await?;
            if started.is_empty() {
                return Ok(total);
            }
            total += started.len();
            for h in started {
                let _ = h.await;
            }
        }
    }

    /// The loop beside the listeners, until `stop`.
    pub async fn run(self, mut stop: watch::Receiver<bool>, health: crate::observe::Health) {
        let due = self.ops.signals().deliveries_due.clone();
        let listener = {
            let (store, due) = (self.store().clone(), due.clone());
            tokio::spawn(async move {
                if let Err(e) = store.listen(deliveries::CHANNEL, due).await {
                    tracing::error!(error = %e, "delivery notifications stopped; the worker looks every 30 s");
                }
            })
        };
        loop {
            // Claim in batches: while attempts are in flight, wait until a quarter of the
            // slots is free (one claim per freed slot would be a transaction per attempt).
            let batch = (self.concurrency / 4).max(1);
            if self.slots.available_permits() < batch && self.in_flight() > 0 {
                tokio::select! {
                    _ = self.freed.notified() => continue,
                    _ = stop.wait_for(|s| *s) => break,
                }
            }
            match self.start_due().await {
                Ok(started) => {
                    health.succeeded(super::DELIVERIES);
                    if !started.is_empty() {
                        continue;
                    }
                }
                Err(e) => {
                    health.failed(super::DELIVERIES, &e.to_string());
                    tracing::error!(error = %format!("{e:#}"), "claiming deliveries failed; retrying");
                }
            }
            // Nothing claimable now. With attempts in flight, the next chance is a finished
            // one (due attempts may be waiting for their subscription's room); otherwise
            // sleep until the next attempt falls due. New attempts wake the loop either way.
            let wait = if self.in_flight() > 0 { IDLE } else { self.idle_for().await.max(std::time::Duration::from_millis(20)) };
            tokio::select! {
                _ = due.notified() => {}
                _ = self.freed.notified() => {}
                _ = tokio::time::sleep(wait) => {}
                _ = stop.wait_for(|s| *s) => break,
            }
        }
        listener.abort();
        // Attempts in flight finish (or their claims lapse and another process makes them).
        let _ = self.slots.acquire_many(self.concurrency as u32).await;
    }
}

/// The body of an attempt: its test payload, or its event as the API shows it (read with
/// the claim), or why there is none.
fn body_of(c: &Claimed, events: &HashMap<Uuid, Record>) -> std::result::Result<Vec<u8>, String> {
    let write = |j: &Json| serde_json::to_vec(j).map_err(|_| "the event could not be written".to_string());
    match (&c.payload, c.event_id) {
        (Some(p), _) => write(p),
        (None, Some(event)) => match (events.get(&event), collection("events")) {
            (Some(rec), Some(events)) => write(&rec.to_json(events, None)),
            _ => Err("the event is no longer kept (events are kept 30 days)".into()),
        },
        (None, None) => Err("the attempt names no event".into()),
    }
}
