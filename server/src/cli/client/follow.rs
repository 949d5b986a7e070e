//! Following one of the API's server-sent event streams (the events of `gable listen`, the
//! calls of `gable logs tail`) for as long as the command runs: when the connection drops
//! (a network blip, the server restarting or shutting down) it connects again after a
//! pause, with `Last-Event-ID`, so nothing is missed or repeated; a refusal (a revoked key,
//! a scope missing) ends the command with the API's own words; Ctrl-C ends it with a
//! summary.

use std::time::Duration;

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use reqwest::Method;
use serde_json::Value;

use super::{say, ApiError, Client};

/// The longest wait before connecting again.
const MAX_BACKOFF: Duration = Duration::from_secs(30);

/// What a command does with a stream.
pub(super) trait Follower {
    /// The stream's `ready` event; `again` on a reconnection. `true` ends the command.
    fn ready(&mut self, ready: &Value, again: bool) -> bool;
    /// One message (an event, a call).
    async fn message(&mut self, data: &str);
    /// The line said when Ctrl-C stops the command.
    fn summary(&self) -> String;
}

/// How one connection ended.
enum Ended {
    /// Connect again after a pause.
    Lost(String),
    /// Connect again after the rate limit's `Retry-After`.
    Limited(ApiError, Duration),
    /// The server will not stream to this key: the command fails with its reason.
    Refused(ApiError),
    /// The follower has what it came for.
    Done,
}

/// Follows the stream at `path` until Ctrl-C, a refusal, or the follower is done.
pub(super) async fn follow(client: &Client, path: &str, follower: &mut impl Follower) -> anyhow::Result<()> {
    let mut last: Option<String> = None;
    let mut ready_before = false;
    let mut backoff = Duration::from_secs(1);
    let stop = crate::startup::shutdown_signal();
    tokio::pin!(stop);
    loop {
        let ended = tokio::select! {
            ended = connection(client, path, follower, &mut last, &mut ready_before, &mut backoff) => ended,
            _ = &mut stop => {
                say(&follower.summary());
                return Ok(());
            }
        };
        let resume = last.as_deref().map(|id| format!(", resuming after {id}")).unwrap_or_default();
        let pause = match ended {
            Ended::Done => return Ok(()),
            Ended::Refused(e) => anyhow::bail!("{e}"),
            Ended::Limited(e, wait) => {
                say(&format!("Over the key's rate limit ({e}); connecting again in {} s{resume}.", wait.as_secs()));
                wait
            }
            Ended::Lost(why) => {
                say(&format!("Connection lost ({why}); connecting again in {} s{resume}.", backoff.as_secs()));
                let pause = backoff;
                backoff = (backoff * 2).min(MAX_BACKOFF);
                pause
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(pause) => {}
            _ = &mut stop => {
                say(&follower.summary());
                return Ok(());
            }
        }
    }
}

async fn connection(
    client: &Client,
    path: &str,
    follower: &mut impl Follower,
    last: &mut Option<String>,
    ready_before: &mut bool,
    backoff: &mut Duration,
) -> Ended {
    let mut req = client.request(Method::GET, path).header("Accept", "text/event-stream");
    if let Some(last) = last.as_deref() {
        req = req.header("Last-Event-ID", last);
    }
    let res = match req.send().await {
        Ok(res) => res,
        Err(e) => return Ended::Lost(client.unreachable(&e).to_string()),
    };
    let status = res.status().as_u16();
    if status != 200 {
        let request_id = res.headers().get("request-id").and_then(|v| v.to_str().ok()).map(String::from);
        let retry_after = res.headers().get("retry-after").and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
        let e = ApiError::of_answer(status, request_id, &res.text().await.unwrap_or_default());
        return match status {
            // A server starting, stopping or behind a proxy that lost it may take us in a moment.
            502..=504 => Ended::Lost(e.to_string()),
            // The key's other requests used its second's worth: not a refusal of the stream.
            429 if e.code() == Some("rate_limited") => {
                Ended::Limited(e, Duration::from_secs(retry_after.unwrap_or(1).clamp(1, MAX_BACKOFF.as_secs())))
            }
            _ => Ended::Refused(e),
        };
    }
    let mut messages = res.bytes_stream().eventsource();
    while let Some(next) = messages.next().await {
        let m = match next {
            Ok(m) => m,
            Err(e) => return Ended::Lost(e.to_string()),
        };
        match m.event.as_str() {
            "ready" => {
                *backoff = Duration::from_secs(1);
                let ready: Value = serde_json::from_str(&m.data).unwrap_or(Value::Null);
                if follower.ready(&ready, *ready_before) {
                    return Ended::Done;
                }
                *ready_before = true;
            }
            "end" => {
                let body: Value = serde_json::from_str(&m.data).unwrap_or(Value::Null);
                let code = body["error"]["code"].as_str().unwrap_or("ended").to_string();
                let message = body["error"]["message"].as_str().unwrap_or("the server ended the stream").to_string();
                if code == "shutting_down" {
                    *backoff = Duration::from_secs(1);
                    return Ended::Lost(message);
                }
                return Ended::Refused(ApiError::Refused { status: 200, code, message, param: None, request_id: None });
            }
            _ => {
                follower.message(&m.data).await;
                if !m.id.is_empty() {
                    *last = Some(m.id);
                }
            }
        }
    }
    Ended::Lost("the server closed the connection".into())
}
