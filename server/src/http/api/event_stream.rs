//! `GET /v1/events/stream`: the environment's events as server-sent events, as they are
//! committed, for `gable listen` and any client that would rather hold a connection than
//! expose an endpoint (`docs/api.md`, "The event stream"). The gate and the order are the
//! operations' (`ops::event_stream`); this module speaks the protocol:
//!
//! - first a `ready` event: the environment, the event types listened to and the signing
//!   secret of this credential's listeners (`gable listen` signs what it forwards with it);
//! - then each event as a message whose `id` is the event's id and whose data is the event
//!   as `GET /v1/events/{id}` shows it; a client that reconnects with `Last-Event-ID`
//!   resumes right after it;
//! - a comment every 15 s while nothing happens, so proxies keep the connection;
//! - an `end` event, then the end of the stream, when the credential no longer may listen
//!   (revoked, expired, its scopes or its user's role changed: checked at every look) or
//!   the process shuts down.
//!
//! A credential holds at most `PER_CREDENTIAL` streams on one process
//! (`ops::event_stream::OpenStreams`); one more is refused `429`.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::{Query, State};
use axum::http::HeaderMap;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use futures_util::stream::{self, Stream, StreamExt};
use serde::Deserialize;
use serde_json::json;

use crate::domain::collections::named;
use crate::error::Result;
use crate::http::api::streams;
use crate::http::auth::{bearer, Principal};
use crate::http::state::ApiState;
use crate::ops::event_stream::{Held, Listening};
use crate::store::events::StreamPosition;

/// How often a stream looks for new events (and checks its credential again): an event
/// committed on any process reaches a listener within about this, plus the time the
/// transactions before it take to finish.
pub const LOOK_EVERY: Duration = Duration::from_millis(250);
/// The keep-alive comment's period while no event comes.
pub const HEARTBEAT: Duration = Duration::from_secs(15);

pub fn router() -> Router<ApiState> {
    Router::new().route("/v1/events/stream", get(stream_events))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    /// Event types, comma-separated; `*` or none for all.
    events: Option<String>,
}

async fn stream_events(State(st): State<ApiState>, cred: Principal, headers: HeaderMap, Query(params): Query<Params>) -> Result<Response> {
    let names: Vec<String> =
        params.events.as_deref().unwrap_or_default().split(',').map(str::trim).filter(|n| !n.is_empty()).map(String::from).collect();
    let listening = st.app.ops.listen(&cred.actor, &names)?;
    let last = streams::last_event_id(&headers)?;
    let start = st.app.ops.stream_start(&cred.actor, last).await?;
    let held = streams::hold(&st, &cred)?;
    // The secret is checked again at every look, so a revoked key's stream ends.
    let secret = bearer(&headers)?.to_string();
    let ready = json!({
        "object": "event_stream",
        "livemode": cred.actor.scope.livemode,
        "events": listening.types.clone().unwrap_or_else(|| vec!["*"]),
        "signing_secret": st.app.ops.listen_secret(&cred),
        "resumed_after": last,
    });
    let first = stream::iter([Ok(Event::default().event("ready").data(ready.to_string()))]);
    let looks = looks(st, cred, secret, listening, start, held);
    Ok(Sse::new(first.chain(looks)).keep_alive(KeepAlive::new().interval(HEARTBEAT)).into_response())
}

struct Look {
    st: ApiState,
    cred: Principal,
    secret: String,
    listening: Listening,
    after: StreamPosition,
    _held: Held,
}

/// The stream after `ready`: a look every [`LOOK_EVERY`], each sending the events found.
fn looks(
    st: ApiState,
    cred: Principal,
    secret: String,
    listening: Listening,
    after: StreamPosition,
    held: Held,
) -> impl Stream<Item = std::result::Result<Event, Infallible>> {
    let state = Look { st, cred, secret, listening, after, _held: held };
    stream::unfold(Some(state), |state| async move {
        let mut s = state?;
        loop {
            // The credential as it is now: revoked, expired or narrowed, the stream ends.
            let now = match streams::next_look(&s.st, LOOK_EVERY, &s.secret).await {
                Ok(p) => p,
                Err(end) => return Some((vec![end], None)),
            };
            let listening = match s.st.app.ops.listen(&now.actor, &names_of(&s.listening)) {
                Ok(l) => l,
                Err(e) => return Some((vec![streams::end_with(&e)], None)),
            };
            s.cred = now;
            s.listening = listening;
            let found = match s.st.app.ops.stream_next(&s.cred.actor, &s.listening, s.after).await {
                Ok(found) => found,
                Err(e) => {
                    // A database that does not answer now may answer at the next look.
                    tracing::warn!(error = %e, "an event stream's look failed; looking again");
                    continue;
                }
            };
            let Some((last, _)) = found.last() else { continue };
            s.after = *last;
            let Ok(events) = named("events") else { continue };
            let sent = found
                .into_iter()
                .map(|(_, record)| Event::default().id(record.id.to_string()).data(record.to_json(events, None).to_string()))
                .collect();
            return Some((sent, Some(s)));
        }
    })
    .flat_map(|batch| stream::iter(batch.into_iter().map(Ok)))
}

/// The names a listener asked for, to check again.
fn names_of(l: &Listening) -> Vec<String> {
    l.types.as_ref().map_or_else(|| vec!["*".to_string()], |t| t.iter().map(|s| s.to_string()).collect())
}
