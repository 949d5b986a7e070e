//! Operations: one API write and everything it causes, in one transaction: the
//! record's own change, the records it is coupled to (the last signature signs the
//! lease, a payment settles its invoice …), the events it emits and the ledger entries
//! it posts. Events are written in the transaction of the change that caused them (a
//! transactional outbox): an event exists exactly when its change committed.
//!
//! Handlers call these; the rules themselves are plain Rust in `crate::domain`.

mod effects;
pub mod outbox;
mod postings;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_query::Value;
use serde_json::{Map, Value as Json};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::clock::Clock;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::validate::{self, Changes};
use crate::domain::workflow::{Action, Machine};
use crate::error::Result;
use crate::store::records::{self, Scope};
use crate::store::{Intent, Store, Tx};

/// Fields of the lease an application's `convert` makes that Gable sets itself.
pub const SET_BY_CONVERT: &[&str] = &["unit_id", "application_id"];

#[derive(Clone)]
pub struct Operations {
    store: Store,
    clock: Clock,
    /// Wakes the report worker when a report is queued.
    reports_queued: Arc<Notify>,
}

/// One operation's unit of work.
struct Work {
    tx: Tx,
    /// The caller's scope: its own record is reached through it.
    scope: Scope,
    /// The whole tenant and environment: couplings, events and postings act on the
    /// caller's behalf on records its credential may not reach itself (a guest, say).
    system: Scope,
    now: DateTime<Utc>,
}

impl Operations {
    pub fn new(store: Store, clock: Clock) -> Operations {
        Operations { store, clock, reports_queued: Arc::new(Notify::new()) }
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn reports_queued(&self) -> Arc<Notify> {
        self.reports_queued.clone()
    }

    async fn begin(&self, scope: &Scope) -> Result<Work> {
        let tx = self.store.begin_tenant(scope.tenant, Intent::Write).await?;
        let system = Scope { tenant: scope.tenant, livemode: scope.livemode, properties: None };
        Ok(Work { tx, scope: scope.clone(), system, now: self.clock.now() })
    }

    /// Creates a record from validated changes; `hidden` are never-rendered columns.
    pub async fn create(
        &self,
        scope: &Scope,
        c: &'static Collection,
        mut ch: Changes,
        hidden: Vec<(&'static str, Value)>,
    ) -> Result<Record> {
        let mut w = self.begin(scope).await?;
        effects::before_create(&mut w, c, &mut ch).await?;
        let rec = records::insert(&mut w.tx, &w.scope, c, ch, hidden, w.now).await?;
        effects::after_create(&mut w, c, &rec).await?;
        w.tx.commit().await?;
        if c.name == "reports" {
            self.reports_queued.notify_one();
        }
        Ok(rec)
    }

    /// Updates the given fields of a record (a PATCH body). No event or posting follows
    /// an update: state changes are actions, and money fields are fixed once posted.
    pub async fn update(&self, scope: &Scope, c: &'static Collection, id: Uuid, body: &Json) -> Result<Record> {
        let mut w = self.begin(scope).await?;
        let (_, rec) = records::modify(&mut w.tx, &w.scope, c, id, w.now, |current| {
            let ch = validate::update(c, body, current)?;
            effects::check_update(c, current, &ch)?;
            Ok(ch)
        })
        .await?;
        w.tx.commit().await?;
        Ok(rec)
    }

    /// Runs a state-machine action with its body.
    pub async fn act(
        &self,
        scope: &Scope,
        c: &'static Collection,
        machine: &Machine,
        a: &'static Action,
        id: Uuid,
        body: &Map<String, Json>,
    ) -> Result<Record> {
        let mut w = self.begin(scope).await?;
        let current = records::fetch(&mut w.tx, &w.scope, c, id, true).await?;
        let mut ch = machine.apply(c, a, &current, body, w.now)?;
        effects::prepare(&mut w, c, a, &current, body, &mut ch).await?;
        let (before, after) = records::write_changes(&mut w.tx, &w.scope, c, current, ch, w.now).await?;
        effects::follow(&mut w, c, a, &before, &after).await?;
        w.tx.commit().await?;
        Ok(after)
    }
}
