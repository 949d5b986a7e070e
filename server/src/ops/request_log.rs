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

/// Calls the queue holds at most: a burst of a second or two of a busy process's traffic
/// (the writer takes a batch as soon as one waits). Under a load the writer cannot keep
/// up with the queue stays full, and holds this much memory.
pub const QUEUE_CALLS: usize = 2_048;
/// Bytes of bodies and headers the queue holds at most (each call's bodies are at most
/// twice `rules::BODY_LIMIT`): bounds the memory a writer that falls behind can pin.
pub const QUEUE_BYTES: usize = 4 << 20;
/// The share of the time the writer may spend writing: after each batch it rests 19
/// times as long (at most a tick). Beside its thread's lowest priority, this bounds what
/// the log costs requests where cores look idle but are not free (a sibling hyperthread,
/// shared caches) and the calls it makes the HTTP layer take; what it cannot write in
/// its share overflows the queue and is dropped, counted.
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
    pub headers: Headers,
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
        self.request_body.iter().map(Bytes::len).sum::<usize>() + self.response_body.len() + self.headers.0.len()
    }
}

/// A request's headers as sent, copied into one buffer of `name: value` lines (a value
/// holds no line break). A header map's values are slices of the connection's read
/// buffer, so a queued call that kept the map would keep whole buffers alive (measured:
/// tens of megabytes under load); one copy is one allocation.
#[derive(Debug, Default, Clone)]
pub struct Headers(Vec<u8>);

impl Headers {
    pub fn copy(map: &HeaderMap) -> Headers {
        let size = map.iter().map(|(n, v)| n.as_str().len() + v.len() + 3).sum();
        let mut buf = Vec::with_capacity(size);
        for (name, value) in map {
            buf.extend_from_slice(name.as_str().as_bytes());
            buf.extend_from_slice(b": ");
            buf.extend_from_slice(value.as_bytes());
            buf.push(b'\n');
        }
        Headers(buf)
    }

    /// Each header (lower-case name, value as sent), in the order they came.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &[u8])> {
        self.0.split(|b| *b == b'\n').filter(|l| !l.is_empty()).filter_map(|line| {
            let at = line.iter().position(|b| *b == b':')?;
            Some((std::str::from_utf8(&line[..at]).ok()?, line.get(at + 2..).unwrap_or_default()))
        })
    }

    /// The first value of `name` (lower-case), when it is text.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.iter().find(|(n, _)| *n == name).and_then(|(_, v)| std::str::from_utf8(v).ok())
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
    /// Off (a retention of 0 days): no call is recorded, and what was is purged.
    recording: bool,
}

impl Default for RequestLog {
    fn default() -> Self {
        RequestLog::new(DEFAULT_RETENTION_DAYS)
    }
}

impl RequestLog {
    /// A log keeping calls `retention_days`; 0 records nothing (and purges what was).
    pub fn new(retention_days: u32) -> RequestLog {
        RequestLog {
            inner: Arc::new(Inner {
                queue: ArrayQueue::new(QUEUE_CALLS),
                bytes: AtomicUsize::new(0),
                batch_ready: Notify::new(),
                dropped: AtomicU64::new(0),
                retention: chrono::Duration::days(i64::from(retention_days)),
                recording: retention_days > 0,
            }),
        }
    }

    /// How long records are kept.
    pub fn retention(&self) -> chrono::Duration {
        self.inner.retention
    }

    /// Calls dropped (the queue was full, or the database refused their batch), since the
    /// process started.
    pub fn dropped(&self) -> u64 {
        self.inner.dropped.load(Ordering::Relaxed)
    }

    /// Whether calls come faster than batches are written: a batch's worth is waiting,
    /// by count or by bytes (large answers, list pages with expansions, fill the queue's
    /// bytes long before its count).
    fn busy(&self) -> bool {
        self.inner.queue.len() >= BATCH || self.inner.bytes.load(Ordering::Relaxed) >= QUEUE_BYTES / 2
    }

    /// Whether a call arriving now would be queued: a call that would be dropped is not
    /// even taken (`take_turn`), so that a process under more load than the writer
    /// keeps up with spends nothing on the calls it cannot keep.
    fn has_room(&self) -> bool {
        !self.inner.queue.is_full() && self.inner.bytes.load(Ordering::Relaxed) < QUEUE_BYTES
    }

    /// Whether to take a call arriving now: the log records, and its queue has room;
    /// otherwise the call is counted dropped (while the log records) and not taken.
    pub fn take_turn(&self) -> bool {
        if !self.inner.recording {
            return false;
        }
        let room = self.has_room();
        if !room {
            self.drop_one();
        }
        room
    }

    /// Queues a call for the writer, or drops it (counted) when the queue is full. Never waits.
    pub fn offer(&self, call: Captured) {
        let weight = call.weight();
        if self.inner.bytes.fetch_add(weight, Ordering::Relaxed) + weight > QUEUE_BYTES {
            self.inner.bytes.fetch_sub(weight, Ordering::Relaxed);
            return self.drop_one();
        }
        match self.inner.queue.push(call) {
            Ok(()) if self.busy() => self.inner.batch_ready.notify_one(),
            Ok(()) => {}
            Err(_) => {
                self.inner.bytes.fetch_sub(weight, Ordering::Relaxed);
                self.drop_one();
            }
        }
    }

    fn drop_one(&self) {
        self.count_dropped(1);
    }

    /// Counts calls dropped: by the queue, or in a batch the database refused. Only here:
    /// under more load than the writer keeps up with nearly every call is dropped, so the
    /// count is one atomic add, and the metric (`gable_request_log_dropped_total`) is read
    /// from it when metrics are scraped.
    pub fn count_dropped(&self, calls: u64) {
        self.inner.dropped.fetch_add(calls, Ordering::Relaxed);
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

    /// Writes one batch: redacted, with the events of each call that could have caused
    /// some (read first: a call is offered after its changes were committed), in one
    /// transaction of the log's own (`Store::in_request_log`). Redaction (regular
    /// expressions over up to 128 KiB a call) runs right here: the writer's thread is
    /// its own, at the lowest priority (`jobs::request_log`).
    pub async fn write(store: &Store, batch: Vec<Captured>) -> Result<usize> {
        let mut rows: Vec<NewRequestLog> = batch.into_iter().map(redacted).collect();
        let n = rows.len();
        // Only a change can cause an event: reads and refusals are not looked up.
        let writes: Vec<(Uuid, bool, Uuid)> =
            rows.iter().filter(|r| !matches!(r.method, "GET" | "HEAD") && r.status < 400).map(|r| (r.tenant, r.livemode, r.id)).collect();
        if !writes.is_empty() {
            let mut events = store.in_system(Intent::Read, async |tx| stored::events_of(tx, &writes, EVENTS_PER_CALL).await).await?;
            for r in &mut rows {
                if let Some(ids) = events.remove(&r.id) {
                    r.event_ids = ids;
                }
            }
        }
        store.in_request_log(async |tx| stored::insert(tx, rows).await).await?;
        metrics::counter!(m::REQUEST_LOG_WRITTEN).increment(n as u64);
        Ok(n)
    }
}

/// A captured call as it is stored: every secret taken out of its path, query, headers
/// and bodies.
fn redacted(c: Captured) -> NewRequestLog {
    let header = |name: &str| c.headers.get(name);
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
    for (name, value) in c.headers.iter() {
        let value = rules::redact_header(name, &String::from_utf8_lossy(value));
        // A header sent more than once is one member, its values joined.
        match headers.get_mut(name) {
            Some(Json::String(joined)) => {
                joined.push_str(", ");
                joined.push_str(&value);
            }
            _ => {
                headers.insert(name.to_string(), Json::String(value));
            }
        }
    }
    let request_body = (c.request_len > 0).then(|| {
        let kept: Vec<u8> = c.request_body.concat();
        let (text, cut) = rules::body_text(&kept, c.request_len);
        (rules::redact_body(text), cut)
    });
    let response_body = (c.response_len > 0).then(|| {
        let (text, cut) = rules::body_text(&c.response_body, c.response_len);
        (rules::redact_body(text), cut)
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
            headers: Headers::default(),
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
        assert!(!log.has_room());
        assert!(!log.take_turn(), "a call arriving at a full queue is not taken");
        assert_eq!(log.dropped(), 6, "and is counted");
        let first = log.take(3);
        assert_eq!(first.iter().map(|c| c.id.as_u128()).collect::<Vec<_>>(), vec![0, 1, 2], "oldest first");
        while !log.take(BATCH).is_empty() {}
        // By bytes: 4 MiB of bodies at most.
        for n in 0..20 {
            log.offer(call(n, 1 << 20));
        }
        assert_eq!(log.dropped(), 6 + 16);
        assert_eq!(log.take(100).len(), 4);
        assert!(!log.busy());
        assert!(log.take_turn());
        let off = RequestLog::new(0);
        assert!(!off.take_turn(), "a log that is off takes nothing");
        assert_eq!(off.dropped(), 0, "nor counts it dropped");
    }

    #[test]
    fn headers_are_copied_whole_and_read_back_in_order() {
        let mut map = HeaderMap::new();
        map.insert("content-type", "application/json".parse().unwrap());
        map.append("x-tag", "a".parse().unwrap());
        map.append("x-tag", "b: c".parse().unwrap());
        map.insert("x-empty", "".parse().unwrap());
        let h = Headers::copy(&map);
        let all: Vec<(&str, &[u8])> = h.iter().collect();
        assert_eq!(all, vec![("content-type", &b"application/json"[..]), ("x-tag", b"a"), ("x-tag", b"b: c"), ("x-empty", b"")]);
        assert_eq!((h.get("x-tag"), h.get("x-empty"), h.get("absent")), (Some("a"), Some(""), None));
        let mut c = call(1, 0);
        c.headers = h;
        let row = redacted(c);
        assert_eq!(row.request_headers["x-tag"], "a, b: c", "one member, its values joined");
    }
}
