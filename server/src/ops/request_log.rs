//! The request log: every `/v1` call a credential made, kept for its tenant and
//! environment (`docs/api.md`, "The request log").
//!
//! Recording is off the request path. The HTTP layer hands a [`Captured`] call to
//! [`RequestLog::offer`], which puts it in a bounded queue and returns at once; when the
//! queue is full (by count or by the bytes of its bodies) the call is dropped and counted
//! (`gable_request_log_dropped_total`), so a request never waits for its record. The
//! writer (`jobs::request_log`) takes the queue in batches and [`RequestLog::write`]s
//! them: redacted (`domain::request_log`), linked to the events each call caused (they
//! carry its request id), a few hundred rows per transaction. What is older than the
//! retention (7 days by default) is purged by the scheduler (`jobs::retention`).

use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;

use crossbeam_queue::ArrayQueue;
use std::time::Duration;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::HeaderMap;
use serde_json::{Map, Value as Json};
use tokio::sync::Notify;
use uuid::Uuid;

use super::access::Kind;
use crate::domain::request_log as rules;
use crate::error::Result;
use crate::observe::metrics as m;
use crate::store::request_logs::{self as stored, NewRequestLog};
use crate::store::{Intent, Store};

/// Calls the queue holds at most: a few seconds of a busy process's traffic.
pub const QUEUE_CALLS: usize = 8_192;
/// Bytes of bodies the queue holds at most (each call's are at most twice
/// `rules::BODY_LIMIT`): bounds the memory a writer that falls behind can pin.
pub const QUEUE_BYTES: usize = 16 << 20;
/// The share of one core the writer may take while calls keep coming: after a batch,
/// when another batch's worth is already waiting, it rests long enough to keep to it.
/// Requests come first; when the writer cannot keep up within it, the queue fills and
/// calls are dropped (counted). With less waiting it writes at full speed.
pub const WRITER_SHARE: f64 = 0.05;
/// Calls written per transaction: short, so SQLite's one writer is never held long.
pub const BATCH: usize = 200;
/// Events listed per call at most.
pub const EVENTS_PER_CALL: usize = 100;
pub use crate::domain::request_log::DEFAULT_RETENTION_DAYS;

/// The credential a call came with, as the record names it.
#[derive(Debug, Clone)]
pub struct Credential {
    pub kind: Kind,
    /// The key's, OAuth authorization's or flow token's id.
    pub id: Uuid,
    /// An OAuth token's app and user.
    pub oauth: Option<(Uuid, Uuid)>,
}

/// One call as the HTTP layer saw it, nothing redacted yet: the writer redacts, off the
/// request path. Bodies are the start of each (at most `rules::BODY_LIMIT` bytes) and
/// their whole length.
pub struct Captured {
    pub tenant: Uuid,
    pub livemode: bool,
    pub id: Uuid,
    pub at: DateTime<Utc>,
    pub method: &'static str,
    /// The path as sent, and the query without its `?`.
    pub path: String,
    pub query: Option<String>,
    pub route: Option<String>,
    pub headers: HeaderMap,
    pub credential: Credential,
    pub status: u16,
    pub duration: Duration,
    pub replayed: bool,
    pub api_version: &'static str,
    pub client_ip: Option<IpAddr>,
    pub request_body: Vec<Bytes>,
    pub request_len: usize,
    pub response_body: Bytes,
    pub response_len: usize,
}

impl Captured {
    fn weight(&self) -> usize {
        self.request_body.iter().map(Bytes::len).sum::<usize>() + self.response_body.len()
    }
}

/// The queue between the requests and the writer, and the retention. One per process,
/// shared by the HTTP layer (which offers) and the writer (which takes).
#[derive(Clone)]
pub struct RequestLog {
    inner: Arc<Inner>,
}

struct Inner {
    /// Lock-free: requests on every worker thread offer at once.
    queue: ArrayQueue<Captured>,
    bytes: AtomicUsize,
    /// Rung when a batch's worth is waiting, so a burst is written before the next tick.
    batch_ready: Notify,
    dropped: AtomicU64,
    retention: chrono::Duration,
}

impl Default for RequestLog {
    fn default() -> Self {
        RequestLog::new(DEFAULT_RETENTION_DAYS)
    }
}

impl RequestLog {
    pub fn new(retention_days: u32) -> RequestLog {
        RequestLog {
            inner: Arc::new(Inner {
                queue: ArrayQueue::new(QUEUE_CALLS),
                bytes: AtomicUsize::new(0),
                batch_ready: Notify::new(),
                dropped: AtomicU64::new(0),
                retention: chrono::Duration::days(i64::from(retention_days.max(1))),
            }),
        }
    }

    /// How long records are kept.
    pub fn retention(&self) -> chrono::Duration {
        self.inner.retention
    }

    /// Calls dropped because the queue was full, since the process started.
    pub fn dropped(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    /// Whether calls come faster than batches are written: a batch's worth is waiting.
    pub fn busy(&self) -> bool {
        self.inner.queue.len() >= BATCH
    }

    /// Queues a call for the writer, or drops it (counted) when the queue is full. Never waits.
    pub fn offer(&self, call: Captured) {
        let weight = call.weight();
        if self.inner.bytes.fetch_add(weight, Ordering::Relaxed) + weight > QUEUE_BYTES {
            self.inner.bytes.fetch_sub(weight, Ordering::Relaxed);
            return self.drop_one();
        }
        match self.inner.queue.push(call) {
            Ok(()) if self.inner.queue.len() == BATCH => self.inner.batch_ready.notify_one(),
            Ok(()) => {}
            Err(_) => {
                self.inner.bytes.fetch_sub(weight, Ordering::Relaxed);
                self.drop_one();
            }
        }
    }

    fn drop_one(&self) {
        self.inner.dropped.fetch_add(1, Ordering::Relaxed);
        metrics::counter!(m::REQUEST_LOG_DROPPED).increment(1);
    }

    /// Resolves when a batch's worth of calls is waiting (the writer also wakes on a timer).
    pub async fn batch_ready(&self) {
        self.inner.batch_ready.notified().await
    }

    /// Takes up to `max` calls, oldest first.
    pub fn take(&self, max: usize) -> Vec<Captured> {
        let mut taken = Vec::with_capacity(max.min(self.inner.queue.len()));
        while taken.len() < max {
            let Some(call) = self.inner.queue.pop() else { break };
            self.inner.bytes.fetch_sub(call.weight(), Ordering::Relaxed);
            taken.push(call);
        }
        taken
    }

    /// Writes everything queued now, batch by batch; returns how many calls were written.
    pub async fn flush(&self, store: &Store) -> Result<usize> {
        let mut written = 0;
        loop {
            let batch = self.take(BATCH);
            if batch.is_empty() {
                return Ok(written);
            }
            written += Self::write(store, batch).await?;
        }
    }

    /// Writes one batch: redacted (on the blocking pool: regular expressions over up to
    /// 128 KiB a call), with the events of each call that could have caused some, in one
    /// transaction.
    pub async fn write(store: &Store, batch: Vec<Captured>) -> Result<usize> {
        let rows = tokio::task::spawn_blocking(move || batch.into_iter().map(redacted).collect::<Vec<_>>())
            .await
            .map_err(crate::error::Error::internal)?;
        let n = rows.len();
        store
            .in_system(Intent::Write, async |tx| {
                let mut rows = rows;
                // Only a change can cause an event: reads and refusals are not looked up.
                let writes: Vec<(Uuid, bool, Uuid)> = rows
                    .iter()
                    .filter(|r| !matches!(r.method, "GET" | "HEAD") && r.status < 400)
                    .map(|r| (r.tenant, r.livemode, r.id))
                    .collect();
                let mut events = stored::events_of(tx, &writes, EVENTS_PER_CALL).await?;
                for r in &mut rows {
                    if let Some(ids) = events.remove(&r.id) {
                        r.event_ids = ids;
                    }
                }
                stored::insert(tx, &rows).await
            })
            .await?;
        metrics::counter!(m::REQUEST_LOG_WRITTEN).increment(n as u64);
        Ok(n)
    }
}

/// A captured call as it is stored: every secret taken out of its path, query, headers
/// and bodies.
fn redacted(c: Captured) -> NewRequestLog {
    let header = |name: &str| c.headers.get(name).and_then(|v| v.to_str().ok());
    let key_prefix = match c.credential.kind {
        // The part of a key the console shows beside it: never enough to use it.
        Kind::ApiKey => header("authorization")
            .and_then(|h| h.get(7..))
            .map(|secret| secret.trim().chars().take(crate::store::keys::PREFIX_CHARS).collect()),
        _ => None,
    };
    let idempotency_key = header("idempotency-key").map(|k| rules::scrub(k).chars().take(200).collect());
    let user_agent = header("user-agent").map(|ua| rules::scrub(ua).chars().take(500).collect());
    let mut headers = Map::new();
    for name in c.headers.keys() {
        let values: Vec<String> =
            c.headers.get_all(name).iter().map(|v| rules::redact_header(name.as_str(), &String::from_utf8_lossy(v.as_bytes()))).collect();
        headers.insert(name.as_str().to_string(), Json::String(values.join(", ")));
    }
    let request_body = (c.request_len > 0).then(|| {
        let kept: Vec<u8> = c.request_body.concat();
        let (text, cut) = rules::body_text(&kept, c.request_len);
        (rules::redact_body(&text), cut)
    });
    let response_body = (c.response_len > 0).then(|| {
        let (text, cut) = rules::body_text(&c.response_body, c.response_len);
        (rules::redact_body(&text), cut)
    });
    let error_code = rules::error_code(c.status, &c.response_body);
    NewRequestLog {
        tenant: c.tenant,
        livemode: c.livemode,
        id: c.id,
        at: c.at,
        method: c.method,
        path: rules::redact_path(&c.path).chars().take(2048).collect(),
        route: c.route,
        query: c.query.map(|q| rules::redact_query(&q).chars().take(8192).collect()),
        status: c.status,
        status_class: rules::status_class(c.status),
        error_code,
        duration_ms: (c.duration.as_micros() as f64) / 1000.0,
        credential_type: match c.credential.kind {
            Kind::OAuth => "oauth",
            Kind::FlowToken => "flow_token",
            // A console session never reaches `/v1` (the layer records bearer credentials only).
            Kind::ApiKey | Kind::ConsoleSession => "api_key",
        },
        credential_id: c.credential.id,
        key_prefix,
        oauth_client_id: c.credential.oauth.map(|(app, _)| app),
        user_id: c.credential.oauth.map(|(_, user)| user),
        idempotency_key,
        idempotent_replayed: c.replayed,
        api_version: Some(c.api_version.to_string()),
        client_ip: c.client_ip.map(|ip| ip.to_string()),
        user_agent,
        request_headers: Json::Object(headers),
        request_body_truncated: request_body.as_ref().is_some_and(|(_, cut)| *cut),
        request_body: request_body.map(|(text, _)| text),
        response_body_truncated: response_body.as_ref().is_some_and(|(_, cut)| *cut),
        response_body: response_body.map(|(text, _)| text),
        event_ids: vec![],
    }
}

impl super::Operations {
    /// The error answers of the actor's environment since `since`, grouped by code and
    /// route (at most `limit` groups), with the calls and errors counted: the read the
    /// console's errors overview makes, behind the same gate as a list of the request log
    /// (`request-logs:read`; a property-limited actor sees none of it).
    pub async fn request_errors(
        &self,
        actor: &super::Actor,
        since: DateTime<Utc>,
        limit: u64,
    ) -> Result<(Vec<stored::ErrorCount>, u64, u64)> {
        let c = crate::domain::collections::named("request-logs")?;
        actor.require(c, crate::domain::scopes::Access::Read)?;
        if actor.scope.properties.is_some() {
            return Ok((vec![], 0, 0));
        }
        let s = &actor.scope;
        self.store
            .in_tenant(s.tenant, s.livemode, Intent::Read, async |tx| stored::errors(tx, s.tenant, s.livemode, since, limit).await)
            .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(n: u128, body: usize) -> Captured {
        Captured {
            tenant: Uuid::from_u128(1),
            livemode: false,
            id: Uuid::from_u128(n),
            at: Utc::now(),
            method: "GET",
            path: "/v1/units".into(),
            query: None,
            route: None,
            headers: HeaderMap::new(),
            credential: Credential { kind: Kind::ApiKey, id: Uuid::from_u128(2), oauth: None },
            status: 200,
            duration: Duration::from_millis(1),
            replayed: false,
            api_version: "2026-11-22",
            client_ip: None,
            request_body: vec![],
            request_len: 0,
            response_body: Bytes::from(vec![b'x'; body]),
            response_len: body,
        }
    }

    #[test]
    fn a_full_queue_drops_and_counts_never_waits() {
        let log = RequestLog::default();
        for n in 0..QUEUE_CALLS as u128 + 5 {
            log.offer(call(n, 10));
        }
        assert_eq!(log.dropped(), 5, "by count");
        let first = log.take(3);
        assert_eq!(first.iter().map(|c| c.id.as_u128()).collect::<Vec<_>>(), vec![0, 1, 2], "oldest first");
        while !log.take(BATCH).is_empty() {}
        // By bytes: 16 MiB of bodies at most.
        for n in 0..20 {
            log.offer(call(n, 1 << 20));
        }
        assert_eq!(log.dropped(), 5 + 4);
        assert_eq!(log.take(100).len(), 16);
        assert!(!log.busy());
    }
}
