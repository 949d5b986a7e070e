//! The Developers area: what an integrator reads when an integration misbehaves. The
//! request log, the events and their webhook deliveries are collections, listed and read
//! by the portfolio's pages (`Records`); this service adds what a collection page cannot
//! say: a call as a person reads it (pretty bodies, the call again as `curl`, the events
//! it caused and where they were delivered), the errors grouped, and the newest calls for
//! the live tail.

use serde::{Deserialize, Serialize};

use super::HistoryItem;
#[cfg(feature = "ssr")]
use super::{Me, Result};

/// One API call, as its page shows it beside its fields.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CallView {
    pub id: String,
    /// `POST /v1/leases`.
    pub line: String,
    pub status: u16,
    /// The call again, as a `curl` command: its method, address, headers and body, the
    /// credential left out (`$GABLE_KEY`).
    pub curl: String,
    /// The bodies, pretty-printed when they are JSON.
    pub request_body: Option<String>,
    pub response_body: Option<String>,
    /// The events the call caused, with their deliveries (when the role reads events).
    pub events: Vec<HistoryItem>,
    /// Why events are not shown, when they are not.
    pub events_note: Option<String>,
}

/// Errors of one code on one route in the window.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorGroup {
    pub code: String,
    pub route: String,
    pub status: u16,
    pub count: u64,
    /// When the last one happened, for people.
    pub last_seen: String,
    /// The newest call of the group.
    pub last_href: String,
    /// The request log filtered to this group in the window.
    pub logs_href: String,
}

/// The errors overview.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ErrorsView {
    /// `24h` or `7d`.
    pub window: String,
    pub groups: Vec<ErrorGroup>,
    /// Calls in the window, and of them errors.
    pub calls: u64,
    pub errors: u64,
}

/// A call as the live tail shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TailLine {
    pub id: String,
    /// `14:03:07`.
    pub at: String,
    pub method: String,
    pub path: String,
    pub status: u16,
    /// `2xx`, `4xx` …: the badge's class.
    pub class: String,
    pub duration: String,
    pub href: String,
}

/// The Developers area (`server/src/accounts/developers.rs`): reads as the signed-in
/// user, with the request log's scope (`request-logs:read`) and, for the events of a call,
/// the reads of events and deliveries; another environment's calls are not found.
#[cfg(feature = "ssr")]
#[async_trait::async_trait]
pub trait Developers: Send + Sync + 'static {
    /// A call of the request log.
    async fn call(&self, me: &Me, id: &str) -> Result<CallView>;
    /// Errors of the last day (`24h`) or week (`7d`), grouped by code and route, the
    /// most frequent first.
    async fn errors(&self, me: &Me, window: &str) -> Result<ErrorsView>;
    /// The newest calls (at most 50), oldest first; with `after` (a call's id) only those
    /// after it.
    async fn tail(&self, me: &Me, after: Option<&str>) -> Result<Vec<TailLine>>;
}
