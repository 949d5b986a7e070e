//! A client of Gable's server-sent event streams (`GET /v1/events/stream`): opens one with
//! a key (and a `Last-Event-ID` to resume), and hands out its events one by one, with a
//! time limit, as a listener reads them.

use std::pin::Pin;
use std::time::Duration;

use eventsource_stream::{Event, Eventsource};
use futures_util::{Stream, StreamExt};
use serde_json::Value;

type Events = Pin<Box<dyn Stream<Item = Result<Event, String>> + Send>>;

pub struct EventStream {
    events: Events,
    /// The `ready` event's data.
    pub ready: Value,
}

/// Why a stream was not opened: the status and the error body.
#[derive(Debug)]
pub struct Refused {
    pub status: u16,
    pub body: Value,
}

impl Refused {
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or_default()
    }
}

impl EventStream {
    /// Opens `url` (the stream's address with its query) with `key`, resuming after
    /// `last` when given; waits for the `ready` event.
    pub async fn open(client: &reqwest::Client, url: &str, key: &str, last: Option<&str>) -> Result<EventStream, Refused> {
        let mut req = client.get(url).bearer_auth(key).header("accept", "text/event-stream");
        if let Some(last) = last {
            req = req.header("last-event-id", last);
        }
        let resp = req.send().await.expect("the stream's request was sent");
        let status = resp.status().as_u16();
        if status != 200 {
            let body = resp.json().await.unwrap_or(Value::Null);
            return Err(Refused { status, body });
        }
        assert_eq!(
            resp.headers().get("content-type").and_then(|v| v.to_str().ok()),
            Some("text/event-stream"),
            "a stream is served as server-sent events"
        );
        let events: Events = Box::pin(resp.bytes_stream().eventsource().map(|e| e.map_err(|e| e.to_string())));
        let mut stream = EventStream { events, ready: Value::Null };
        let first = stream.next(Duration::from_secs(10)).await.expect("the stream says it is ready");
        assert_eq!(first.event, "ready", "the first event is `ready`: {first:?}");
        stream.ready = serde_json::from_str(&first.data).expect("ready's data is JSON");
        Ok(stream)
    }

    /// The next event within `within`, or `None` (nothing came, or the stream ended).
    pub async fn next(&mut self, within: Duration) -> Option<Event> {
        match tokio::time::timeout(within, self.events.next()).await {
            Ok(Some(Ok(e))) => Some(e),
            _ => None,
        }
    }

    /// The next `n` events (each within `within` of the one before); fewer if the stream
    /// went quiet or ended.
    pub async fn take(&mut self, n: usize, within: Duration) -> Vec<Event> {
        let mut out = vec![];
        while out.len() < n {
            match self.next(within).await {
                Some(e) => out.push(e),
                None => break,
            }
        }
        out
    }
}

/// An event message's data, as JSON.
pub fn data(e: &Event) -> Value {
    serde_json::from_str(&e.data).expect("an event's data is JSON")
}
