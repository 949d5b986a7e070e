//! `GET /v1/request-logs/stream`: the environment's calls, as the request log records
//! them, over server-sent events: for `gable logs tail` and any client that would follow
//! the log rather than poll it (`docs/api.md`, "The request log's stream").
//!
//! - It takes the list's `filter[…]` (e.g. `filter[status_class]=4xx`,
//!   `filter[path][contains]=/leases`) and `fields[request-logs]`, checked as the list
//!   checks them, and the list's gate (`request-logs:read`).
//! - First a `ready` event; then each call as a message whose `id` is the call's id (its
//!   `Request-Id`) and whose data is the call as `GET /v1/request-logs/{id}` shows it. The
//!   stream's own call (recorded once it is answered) is not sent.
//! - The log is written off the request path, in batches, so calls are not recorded in the
//!   order they were made: each look reads the newest calls and sends those it has not sent
//!   (remembering the last `SEEN`). A client that reconnects with `Last-Event-ID` gets the
//!   calls made after that one (ids are time-ordered) that are still among the newest.
//! - The credential is resolved again at every look, the process's shutdown ends it, and it
//!   counts against the credential's streams, as the event stream (`streams`).

use std::collections::{HashSet, VecDeque};
use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{RawQuery, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures_util::stream::{self, Stream, StreamExt};
use serde_json::json;
use uuid::Uuid;

use crate::domain::answer::Fieldsets;
use crate::domain::collections::named;
use crate::domain::expand::Related;
use crate::domain::list::ListQuery;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::scopes::Access;
use crate::error::{Error, Result};
use crate::http::api::event_stream::HEARTBEAT;
use crate::http::api::streams;
use crate::http::auth::{bearer, Principal};
use crate::http::request_id::current_request_id;
use crate::http::state::ApiState;
use crate::ops::event_stream::Held;

/// How often a stream reads the newest calls (the log's writer writes at least every 250 ms).
pub const LOOK_EVERY: Duration = Duration::from_millis(250);
/// The newest calls one look reads: a tail keeps up with this many calls per look.
const NEWEST: u32 = 100;
/// The calls a stream remembers having sent, so none is sent twice.
const SEEN: usize = 1_000;

pub fn router() -> Router<ApiState> {
    Router::new().route("/v1/request-logs/stream", get(stream_calls))
}

async fn stream_calls(State(st): State<ApiState>, cred: Principal, headers: HeaderMap, RawQuery(raw): RawQuery) -> Result<Response> {
    let c = named("request-logs")?;
    cred.actor.require(c, Access::Read)?;
    let pairs = super::query::pairs(raw);
    // The list's filters and fieldsets; its paging and order are the stream's own.
    if let Some((k, _)) = pairs.iter().find(|(k, _)| !(k.starts_with("filter[") || k.starts_with("fields["))) {
        return Err(Error::parameter(k, "is not a parameter of this stream; it takes the list's filter[…] and fields[…]"));
    }
    let mut query = ListQuery::parse(c, &pairs)?;
    query.limit = NEWEST;
    let fields = std::mem::take(&mut query.answer.fields);
    let last = streams::last_event_id(&headers)?;
    let held = streams::hold(&st, &cred)?;
    let secret = bearer(&headers)?.to_string();
    let mut tail = Tail { st, cred, secret, c, query, fields, seen: Seen::default(), _held: held };
    // The stream's own call is in the log too, once it is answered: not news to its reader.
    if let Some(own) = current_request_id() {
        tail.seen.add(own);
    }
    // What is in the log now was made before the stream began: not sent, unless it came
    // after the call a reconnecting client saw last.
    let first = tail.newest().await?;
    let mut resumed = vec![];
    for r in first {
        match last {
            Some(last) if r.id > last => resumed.push(r),
            _ => tail.seen.add(r.id),
        }
    }
    let ready = json!({ "object": "request_log_stream", "livemode": tail.cred.actor.scope.livemode, "resumed_after": last });
    let mut opening = vec![Event::default().event("ready").data(ready.to_string())];
    opening.extend(tail.send(resumed));
    let looks = looks(tail);
    Ok(Sse::new(stream::iter(opening.into_iter().map(Ok)).chain(looks)).keep_alive(KeepAlive::new().interval(HEARTBEAT)).into_response())
}

struct Tail {
    st: ApiState,
    cred: Principal,
    secret: String,
    c: &'static Collection,
    query: ListQuery,
    fields: Fieldsets,
    seen: Seen,
    _held: Held,
}

/// The ids sent lately, oldest forgotten first.
#[derive(Default)]
struct Seen {
    order: VecDeque<Uuid>,
    ids: HashSet<Uuid>,
}

impl Seen {
    fn add(&mut self, id: Uuid) {
        if self.ids.insert(id) {
            self.order.push_back(id);
        }
        while self.order.len() > SEEN {
            if let Some(old) = self.order.pop_front() {
                self.ids.remove(&old);
            }
        }
    }
}

impl Tail {
    /// The newest calls the stream's filters take, oldest first.
    async fn newest(&self) -> Result<Vec<Record>> {
        let page = self.st.app.ops.list(&self.cred.actor, self.c, self.query.clone()).await?;
        Ok(page.records.into_iter().rev().collect())
    }

    /// The messages of the calls not sent yet, which are then remembered.
    fn send(&mut self, calls: Vec<Record>) -> Vec<Event> {
        let mut sent = vec![];
        for r in calls {
            if self.seen.ids.contains(&r.id) {
                continue;
            }
            self.seen.add(r.id);
            if let Ok(data) = serde_json::to_string(&r.view_with(self.c, &self.fields, &Related::default())) {
                sent.push(Event::default().id(r.id.to_string()).data(data));
            }
        }
        sent
    }
}

/// The stream after its opening: a look every [`LOOK_EVERY`], each sending the new calls.
fn looks(tail: Tail) -> impl Stream<Item = std::result::Result<Event, Infallible>> {
    stream::unfold(Some(tail), |tail| async move {
        let mut t = tail?;
        loop {
            let now = match streams::next_look(&t.st, LOOK_EVERY, &t.secret).await {
                Ok(p) => p,
                Err(end) => return Some((vec![end], None)),
            };
            if let Err(e) = now.actor.require(t.c, Access::Read) {
                return Some((vec![streams::end_with(&e)], None));
            }
            t.cred = now;
            let calls = match t.newest().await {
                Ok(calls) => calls,
                Err(e) => {
                    // A database that does not answer now may answer at the next look.
                    tracing::warn!(error = %e, "a request log stream's look failed; looking again");
                    continue;
                }
            };
            let sent = t.send(calls);
            if !sent.is_empty() {
                return Some((sent, Some(t)));
            }
        }
    })
    .flat_map(|batch| stream::iter(batch.into_iter().map(Ok)))
}
