//! What the API's server-sent event streams share (`event_stream`: the environment's
//! events; `request_log_stream`: its calls): the bound on streams per credential, the
//! `Last-Event-ID` a client resumes with, the pause between looks (cut short by shutdown),
//! the credential resolved again at every look, and the `end` event that says why a stream
//! stops.

use std::time::Duration;

use axum::http::HeaderMap;
use axum::response::sse::Event;
use serde_json::json;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::http::auth::Principal;
use crate::http::state::ApiState;
use crate::ops::event_stream::{Held, PER_CREDENTIAL};

/// Counts one more stream of the credential on this process, or refuses it `429`.
pub fn hold(st: &ApiState, cred: &Principal) -> Result<Held> {
    st.app.event_streams.hold(cred.id).ok_or_else(|| {
        Error::TooManyStreams(format!("this credential already holds {PER_CREDENTIAL} streams on this server; close one first"))
    })
}

/// The `Last-Event-ID` header: the id of the last message a reconnecting client received.
pub fn last_event_id(headers: &HeaderMap) -> Result<Option<Uuid>> {
    match headers.get("last-event-id") {
        None => Ok(None),
        Some(v) => Ok(Some(v.to_str().ok().and_then(|s| Uuid::parse_str(s.trim()).ok()).ok_or_else(|| Error::InvalidRequest {
            message: "Last-Event-ID must be the id of the last event received".into(),
            param: Some("Last-Event-ID".into()),
        })?)),
    }
}

/// The next look of a stream: after `every`, the credential as it is then; or the `end`
/// event to send instead (the process stopping, the credential revoked or expired).
pub async fn next_look(st: &ApiState, every: Duration, secret: &str) -> std::result::Result<Principal, Event> {
    pause(st, every).await?;
    recheck(st, secret).await
}

/// Waits `every`, or ends the stream (`shutting_down`) when the process begins to stop.
async fn pause(st: &ApiState, every: Duration) -> std::result::Result<(), Event> {
    let mut stopping = st.app.stopping.subscribe();
    tokio::select! {
        _ = tokio::time::sleep(every) => Ok(()),
        _ = stopping.wait_for(|stop| *stop) => Err(end("shutting_down", "The server is shutting down; connect again to resume.")),
    }
}

/// The stream's credential as it is now: revoked or expired, the stream ends.
async fn recheck(st: &ApiState, secret: &str) -> std::result::Result<Principal, Event> {
    st.app.ops.bearer(secret, st.livemode).await.map_err(|e| end_with(&e))
}

pub fn end(code: &str, message: &str) -> Event {
    Event::default().event("end").data(json!({ "error": { "code": code, "message": message } }).to_string())
}

/// The `end` event for an error: its code and message as the API's error body has them.
pub fn end_with(e: &Error) -> Event {
    let (_, code) = e.status_and_code();
    match e {
        Error::Internal(_) => end(code, "Something went wrong on our side; connect again to resume."),
        other => end(code, &other.to_string()),
    }
}
