//! The event stream: an environment's events in the order they were committed, for a
//! credential that listens (`GET /v1/events/stream`, `gable listen`; `docs/api.md`, "The
//! event stream"). Listening to events reads them exactly as a webhook subscription sends
//! them, so it is behind the same gate (`Actor::require_event_reads`), and every look is
//! a read in the credential's tenant and environment through the store's scoped select.
//!
//! A listener keeps its position (`StreamPosition`, sent as each event's id); resuming
//! after the last event it saw misses none and repeats none, on any process of a
//! deployment (`store::events`, the commit order).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use uuid::Uuid;

use super::access::Principal;
use super::{Actor, Operations};
use crate::domain::collections::named;
use crate::domain::events::EVENT_TYPES;
use crate::domain::record::Record;
use crate::domain::scopes::Access;
use crate::domain::webhooks;
use crate::error::{Error, Result};
use crate::store::events::{self as stored, StreamPosition};
use crate::store::Intent;

/// Events one look hands out at most; a listener behind by more catches up look by look.
pub const PAGE: u64 = 100;
/// Streams one credential may hold open on one process.
pub const PER_CREDENTIAL: usize = 5;

/// The open streams of each credential on this process.
#[derive(Clone, Default)]
pub struct OpenStreams(Arc<Mutex<HashMap<Uuid, usize>>>);

/// One open stream, counted while it lives.
pub struct Held {
    open: OpenStreams,
    credential: Uuid,
}

impl OpenStreams {
    /// Counts one more stream of `credential`, or `None` when it holds as many as it may.
    pub fn hold(&self, credential: Uuid) -> Option<Held> {
        let mut open = self.0.lock().ok()?;
        let n = open.entry(credential).or_default();
        if *n >= PER_CREDENTIAL {
            return None;
        }
        *n += 1;
        Some(Held { open: self.clone(), credential })
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        if let Ok(mut open) = self.open.0.lock() {
            if let Some(n) = open.get_mut(&self.credential) {
                *n = n.saturating_sub(1);
                if *n == 0 {
                    open.remove(&self.credential);
                }
            }
        }
    }
}

/// What a listener asked for, checked: the event types (every type for `*`).
#[derive(Debug, Clone)]
pub struct Listening {
    pub types: Option<Vec<&'static str>>,
}

impl Actor {
    /// An event carries its record (`data.object`), so receiving events reads them: the
    /// credential must be able to read the collection of each event type it subscribes
    /// to, listens to, tests, recovers or replays (`*` needs all of them). A credential
    /// limited to properties receives none: subscriptions and streams are tenant-wide and
    /// would carry other properties' events.
    pub fn require_event_reads(&self, names: &[String]) -> Result<()> {
        if self.scope.properties.is_some() {
            return Err(Error::PropertyForbidden(
                "events are sent tenant-wide: a credential limited to properties cannot subscribe or listen to them".into(),
            ));
        }
        for (name, collection) in carried(names) {
            let c = named(collection)?;
            if self.require(c, Access::Read).is_err() {
                return Err(Error::InsufficientScope {
                    message: format!(
                        "`{name}` events carry {} records, which this credential cannot read; receiving them needs `{}`",
                        c.object,
                        c.read_scope()
                    ),
                    scope: c.read_scope(),
                    param: None,
                });
            }
        }
        Ok(())
    }
}

/// The collections the events `names` carry (each once), with the name that asked.
fn carried(names: &[String]) -> Vec<(&str, &'static str)> {
    let mut out = vec![];
    for n in names {
        for t in EVENT_TYPES.iter().filter(|t| n == "*" || n == t.name) {
            if !out.iter().any(|(_, c)| *c == t.collection) {
                out.push((n.as_str(), t.collection));
            }
        }
    }
    out
}

impl Operations {
    /// Checks a listener's request: `events:read`, known event names (`*` or none for
    /// all), and the reads they need. Refused as a subscription to them would be.
    pub fn listen(&self, actor: &Actor, names: &[String]) -> Result<Listening> {
        actor.require(named("events")?, Access::Read)?;
        let names = if names.is_empty() { vec!["*".to_string()] } else { names.to_vec() };
        webhooks::check_events(&names)?;
        actor.require_event_reads(&names)?;
        let types = (!names.iter().any(|n| n == "*"))
            .then(|| EVENT_TYPES.iter().filter(|t| names.iter().any(|n| n == t.name)).map(|t| t.name).collect());
        Ok(Listening { types })
    }

    /// Where a stream begins: right after the event `last` (a listener resuming), or after
    /// the newest event now. An event the actor does not see, or one purged since, is
    /// refused: resuming from elsewhere would miss or repeat events without a word.
    pub async fn stream_start(&self, actor: &Actor, last: Option<Uuid>) -> Result<StreamPosition> {
        let s = &actor.scope;
        self.store
            .in_tenant(s.tenant, s.livemode, Intent::Read, async |tx| match last {
                None => stored::last_position(tx, s).await,
                Some(id) => stored::position_of(tx, s, id).await?.ok_or_else(|| Error::InvalidRequest {
                    message: format!(
                        "Last-Event-ID `{id}` is not an event of this environment (events are kept 30 days); \
                         listen again without it to start from now"
                    ),
                    param: Some("Last-Event-ID".into()),
                }),
            })
            .await
    }

    /// The secret `gable listen` signs what it forwards with: derived from the master key
    /// and the credential (a key, an OAuth grant), so it is the same at every start for
    /// that credential (an app configured once keeps verifying) and in every process, is
    /// never stored, and differs between credentials and environments.
    pub fn listen_secret(&self, p: &Principal) -> String {
        use base64::Engine as _;
        let s = &p.actor.scope;
        let bytes = self.key.derive(&format!("listen-secret:{}:{}:{}", s.tenant, s.livemode, p.id));
        format!("{}{}", webhooks::SECRET_PREFIX, base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
    }

    /// The events after `after` the listener takes, in commit order, at most [`PAGE`].
    pub async fn stream_next(&self, actor: &Actor, listening: &Listening, after: StreamPosition) -> Result<Vec<(StreamPosition, Record)>> {
        let s = &actor.scope;
        let types = listening.types.as_deref();
        self.store.in_tenant(s.tenant, s.livemode, Intent::Read, async |tx| stored::after(tx, s, types, after, PAGE).await).await
    }
}
