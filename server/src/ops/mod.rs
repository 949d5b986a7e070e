//! Operations: one write and everything it causes, in one transaction: the record's own
//! change, the records it is coupled to (the last signature signs the lease, a payment
//! settles its invoice …), the events it emits and the ledger entries it posts. Events
//! are written in the transaction of the change that caused them (a transactional
//! outbox): an event exists exactly when its change committed.
//!
//! Every write of Gable goes through here: the API's handlers, the console, and (later)
//! the flows. Two forms:
//! - one call, one transaction: `Operations::create` / `update` / `act` / `delete`;
//! - several steps in a transaction the caller holds: `Operations::begin` gives a
//!   [`Work`], whose `create` / `update` / `act` / `delete` run inside it, and whose
//!   `commit` ends it. Whatever else the caller writes through `Work::tx` (a stored
//!   idempotent response, say) commits or rolls back together with the operation.
//!
//! What a collection does beyond validation and storage lives in its own module under
//! `behaviour`; the rules themselves are plain Rust in `crate::domain`. Beside the
//! operations: who is asking (`access`: every credential resolved to an `Actor`), the one
//! way a face reads a collection (`reads`), what time causes and the sandbox clock
//! (`time`), what the embeddable flows read and write (`flows`), and the OAuth
//! authorization server's token side (`oauth`).

pub mod access;
mod behaviour;
pub mod demo;
pub mod event_stream;
pub mod flows;
pub mod imports;
pub mod oauth;
pub mod outbox;
mod postings;
pub mod reads;
mod reports;
pub mod request_log;
pub mod setup;
pub mod time;

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value as Json};
use tokio::sync::Notify;
use uuid::Uuid;

use crate::clock::Clock;
use crate::crypto::MasterKey;
use crate::domain::cursor::CursorKey;
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::registry::{Collection, WriteOp};
use crate::domain::scopes::{self, Access};
use crate::domain::validate::{self, Changes};
use crate::domain::workflow::{Action, Machine};
use crate::error::{Error, Result};
use crate::outbound;
use crate::store::records;
use crate::store::{Intent, Store, Tx};

pub use behaviour::{NONZERO_AMOUNT, SET_BY_CONVERT};

/// What a create on `c` can answer beyond what its fields imply (see the behaviours).
pub fn create_answers(c: &Collection) -> &'static [u16] {
    behaviour::of(c).create_answers()
}

/// Who asks for an operation: the records it may reach (`scope`: tenant, environment,
/// property constraint) and what it may do (`grants`: scope names such as `leases:write`,
/// `*:read` or `*`). An API key, a console user (their role's permissions), or Gable.
#[derive(Debug, Clone)]
pub struct Actor {
    pub scope: Scope,
    pub grants: Arc<[String]>,
}

impl Actor {
    /// Gable itself acting in a tenant's environment: everything, everywhere in it.
    pub fn system(tenant: Uuid, livemode: bool) -> Actor {
        Actor { scope: Scope { tenant, livemode, properties: None }, grants: Arc::from(vec!["*".to_string()]) }
    }

    /// Refuses with `403 insufficient_scope` naming the scope the access needs.
    pub fn require(&self, c: &Collection, access: Access) -> Result<()> {
        if scopes::allows(&self.grants, c.name, access) {
            return Ok(());
        }
        Err(Error::insufficient_scope(match access {
            Access::Read => c.read_scope(),
            Access::Write => c.write_scope(),
        }))
    }

    /// Refuses with `403 insufficient_scope` unless the actor's grants cover `scope` (an
    /// account-wide permission such as `*:read`, rather than one collection's).
    pub fn require_scope(&self, scope: &str) -> Result<()> {
        if scopes::covers(&self.grants, scope) {
            Ok(())
        } else {
            Err(Error::insufficient_scope(scope))
        }
    }

    /// Refuses unless the actor holds every one of `wanted` itself: no credential grants
    /// what it does not hold (`docs/api.md`, "Who may grant what"). `what` names the thing that would grant them.
    pub fn require_all(&self, wanted: &[String], what: &str) -> Result<()> {
        match scopes::missing(&self.grants, wanted) {
            None => Ok(()),
            Some(scope) => Err(Error::InsufficientScope {
                message: format!(
                    "{what} carries `{scope}`, which this credential does not hold; a credential can grant only what it holds"
                ),
                scope,
                param: None,
            }),
        }
    }
}

/// A new record, and the secret that only its create response shows (a flow token).
pub struct Created {
    pub record: Record,
    pub secret: Option<String>,
}

/// Wake-ups for Gable's background workers, sent when a write that concerns them commits.
#[derive(Clone, Default)]
pub struct Signals {
    /// A report was queued.
    pub reports_queued: Arc<Notify>,
    /// Webhook delivery attempts were written (events, retries, replays, test sends).
    pub deliveries_due: Arc<Notify>,
    /// An import was committed.
    pub imports_committed: Arc<Notify>,
}

#[derive(Clone)]
pub struct Operations {
    store: Store,
    clock: Clock,
    signals: Signals,
    /// Seals the secrets Gable must read back (webhook signing secrets).
    key: Arc<MasterKey>,
    /// Where Gable may send webhooks (checked when a subscription's URL is set).
    guard: outbound::Guard,
    /// Signs and checks list cursors (`reads`).
    cursors: Arc<CursorKey>,
    /// The queue of API calls to record, and how long records are kept (`request_log`).
    request_log: request_log::RequestLog,
}

/// One unit of work: a tenant transaction with the actor, its time, and what to wake
/// once it commits. Dropping it without `commit` rolls everything back.
pub struct Work {
    tx: Tx,
    /// The caller's scope: its own record is reached through it.
    scope: Scope,
    grants: Arc<[String]>,
    /// The whole tenant and environment: couplings, events and postings act on the
    /// caller's behalf on records its credential may not reach itself (a guest, say).
    system: Scope,
    now: DateTime<Utc>,
    signals: Signals,
    key: Arc<MasterKey>,
    guard: outbound::Guard,
    wake: Vec<Arc<Notify>>,
    /// Writes nothing to the outbox: an import's rows cause no events of their own
    /// (`imports`).
    quiet: bool,
}

impl Operations {
    /// Operations over `store` at `clock`'s time. Its list cursors are signed with a key
    /// of this process until `with_cursors` gives the deployment's.
    pub fn new(store: Store, clock: Clock, key: MasterKey) -> Operations {
        let mut cursor_secret = [0u8; 32];
        rand::RngCore::fill_bytes(&mut rand::rngs::OsRng, &mut cursor_secret);
        Operations {
            store,
            clock,
            signals: Signals::default(),
            key: Arc::new(key),
            guard: outbound::Guard::default(),
            cursors: Arc::new(CursorKey::new(&cursor_secret)),
            request_log: request_log::RequestLog::default(),
        }
    }

    /// The same operations, keeping API calls in the request log as `log` says.
    pub fn with_request_log(mut self, log: request_log::RequestLog) -> Operations {
        self.request_log = log;
        self
    }

    /// Where API calls are queued for the request log.
    pub fn request_log(&self) -> &request_log::RequestLog {
        &self.request_log
    }

    /// The same operations, signing list cursors with `cursors` (every process of a
    /// deployment shares it, so a cursor from one process pages on another).
    pub fn with_cursors(mut self, cursors: CursorKey) -> Operations {
        self.cursors = Arc::new(cursors);
        self
    }

    /// The same operations, checking webhook URLs against this guard (its allow-list).
    pub fn with_guard(mut self, guard: outbound::Guard) -> Operations {
        self.guard = guard;
        self
    }

    pub fn master_key(&self) -> &MasterKey {
        &self.key
    }

    pub fn clock(&self) -> &Clock {
        &self.clock
    }

    pub fn store(&self) -> &Store {
        &self.store
    }

    pub fn signals(&self) -> &Signals {
        &self.signals
    }

    /// Begins a unit of work for `actor`, at the clock's time (in a sandbox whose clock
    /// was advanced, at the sandbox's time: its records and events carry it).
    pub async fn begin(&self, actor: &Actor) -> Result<Work> {
        let s = &actor.scope;
        let mut tx = self.store.begin_tenant(s.tenant, s.livemode, Intent::Write).await?;
        let ahead = if s.livemode { chrono::Duration::zero() } else { crate::store::sandbox::offset(&mut tx, s.tenant).await? };
        let system = Scope { tenant: s.tenant, livemode: s.livemode, properties: None };
        Ok(Work {
            tx,
            scope: s.clone(),
            grants: actor.grants.clone(),
            system,
            now: self.clock.now() + ahead,
            signals: self.signals.clone(),
            key: self.key.clone(),
            guard: self.guard.clone(),
            wake: vec![],
            quiet: false,
        })
    }

    /// Creates a record from a create body, in its own transaction.
    pub async fn create(&self, actor: &Actor, c: &'static Collection, body: &Json) -> Result<Created> {
        let mut w = self.begin(actor).await?;
        let created = w.create(c, body).await?;
        w.commit().await?;
        Ok(created)
    }

    /// Updates the given fields of a record (a PATCH body), in its own transaction.
    pub async fn update(&self, actor: &Actor, c: &'static Collection, id: Uuid, body: &Json) -> Result<Record> {
        let mut w = self.begin(actor).await?;
        let rec = w.update(c, id, body).await?;
        w.commit().await?;
        Ok(rec)
    }

    /// Runs a state-machine action with its body, in its own transaction.
    pub async fn act(
        &self,
        actor: &Actor,
        c: &'static Collection,
        machine: &Machine,
        a: &'static Action,
        id: Uuid,
        body: &Map<String, Json>,
    ) -> Result<Record> {
        let mut w = self.begin(actor).await?;
        let rec = w.act(c, machine, a, id, body).await?;
        w.commit().await?;
        Ok(rec)
    }

    /// Deletes a record, in its own transaction; returns it as it was.
    pub async fn delete(&self, actor: &Actor, c: &'static Collection, id: Uuid) -> Result<Record> {
        let mut w = self.begin(actor).await?;
        let rec = w.delete(c, id).await?;
        w.commit().await?;
        Ok(rec)
    }
}

/// A collection's state machine and one of its actions, named by Gable's own code: a
/// collection without them is Gable's bug, an internal error.
fn named_action(c: &'static Collection, action: &str) -> Result<(&'static Machine, &'static Action)> {
    let machine =
        crate::domain::workflow::machine(c.name).ok_or_else(|| Error::internal(anyhow::anyhow!("{} have no state machine", c.name)))?;
    let a = machine.action(action).ok_or_else(|| Error::internal(anyhow::anyhow!("{} cannot {action}", c.name)))?;
    Ok((machine, a))
}

impl Work {
    /// The transaction, for what the caller writes beside the operation.
    pub fn tx(&mut self) -> &mut Tx {
        &mut self.tx
    }

    pub fn now(&self) -> DateTime<Utc> {
        self.now
    }

    /// Commits, then wakes the workers the writes concern.
    pub async fn commit(self) -> Result<()> {
        self.tx.commit().await?;
        for n in self.wake {
            n.notify_one();
        }
        Ok(())
    }

    /// Refuses what the collection does not offer, then what the actor may not do.
    fn allow(&self, c: &Collection, op: Option<WriteOp>) -> Result<()> {
        if let Some(e) = op.and_then(|op| c.refuse(op)) {
            return Err(e);
        }
        self.actor().require(c, Access::Write)
    }

    fn actor(&self) -> Actor {
        Actor { scope: self.scope.clone(), grants: self.grants.clone() }
    }

    /// Creates a record from a create body: validated for the actor's environment,
    /// checked against the records it depends on, stored, and followed by its events,
    /// postings and couplings.
    pub async fn create(&mut self, c: &'static Collection, body: &Json) -> Result<Created> {
        self.create_with(c, body, Changes::default()).await
    }

    /// [`Work::create`], with fields that only Gable's own code sets (read-only in the API)
    /// written in the same insert: a rent charge's `period`.
    pub async fn create_with(&mut self, c: &'static Collection, body: &Json, set: Changes) -> Result<Created> {
        self.allow(c, Some(WriteOp::Create))?;
        let mut ch = validate::create(c, body, self.scope.livemode)?;
        ch.values.extend(set.values);
        let b = behaviour::of(c);
        let mut new = behaviour::NewRecord { id: Uuid::now_v7(), changes: ch, hidden: vec![], secret: None };
        b.before_create(self, c, &mut new).await?;
        let scope = self.scope.clone();
        let rec = records::insert_as(&mut self.tx, &scope, c, new.id, new.changes, new.hidden, self.now).await?;
        behaviour::after_create(self, c, &rec).await?;
        b.after_create(self, c, &rec).await?;
        let rec = b.settle(self, c, &rec).await?.unwrap_or(rec);
        Ok(Created { record: rec, secret: new.secret })
    }

    /// Updates the given fields of a record. No event or posting follows an update:
    /// state changes are actions, and money fields are fixed once posted.
    pub async fn update(&mut self, c: &'static Collection, id: Uuid, body: &Json) -> Result<Record> {
        self.allow(c, Some(WriteOp::Update))?;
        let scope = self.scope.clone();
        let current = records::fetch(&mut self.tx, &scope, c, id, true).await?;
        let mut ch = validate::update(c, body, &current, self.scope.livemode)?;
        behaviour::of(c).before_update(self, c, &current, &mut ch).await?;
        let (_, rec) = records::write_changes(&mut self.tx, &scope, c, current, ch, self.now).await?;
        Ok(rec)
    }

    /// Runs a state-machine action with its body.
    pub async fn act(
        &mut self,
        c: &'static Collection,
        machine: &Machine,
        a: &'static Action,
        id: Uuid,
        body: &Map<String, Json>,
    ) -> Result<Record> {
        self.allow(c, None)?;
        let scope = self.scope.clone();
        let current = records::fetch(&mut self.tx, &scope, c, id, true).await?;
        self.act_on(c, machine, a, current, body).await
    }

    /// Runs an action on `current`, as this unit of work holds it (locked, or written by it).
    async fn act_on(
        &mut self,
        c: &'static Collection,
        machine: &Machine,
        a: &'static Action,
        current: Record,
        body: &Map<String, Json>,
    ) -> Result<Record> {
        let scope = self.scope.clone();
        let mut ch = machine.apply(c, a, &current, body, self.now)?;
        let b = behaviour::of(c);
        b.prepare(self, &behaviour::Step { c, a, current: &current, body }, &mut ch).await?;
        let (before, after) = records::write_changes(&mut self.tx, &scope, c, current, ch, self.now).await?;
        behaviour::emit_action_events(self, c, a, &before, &after, None).await?;
        b.follow(self, c, a, &before, &after).await?;
        Ok(after)
    }

    /// Runs an action Gable's own code names (a test payment's scenario, a scheduled job,
    /// the demo portfolio): a collection without that action is Gable's bug, an internal
    /// error.
    pub async fn act_named(&mut self, c: &'static Collection, action: &str, id: Uuid, body: &Map<String, Json>) -> Result<Record> {
        let (machine, a) = named_action(c, action)?;
        self.act(c, machine, a, id, body).await
    }

    /// [`Work::act_named`] on a record this unit of work created or last wrote itself, as
    /// that write returned it: no other transaction can see or change it before the
    /// commit, so reading it back, locked, would be a round trip for nothing (a test
    /// payment's scenario runs on the payment just inserted).
    pub async fn act_named_on_own(
        &mut self,
        c: &'static Collection,
        action: &str,
        own: Record,
        body: &Map<String, Json>,
    ) -> Result<Record> {
        let (machine, a) = named_action(c, action)?;
        self.allow(c, None)?;
        self.act_on(c, machine, a, own, body).await
    }

    /// Deletes a record where the collection allows it.
    pub async fn delete(&mut self, c: &'static Collection, id: Uuid) -> Result<Record> {
        self.allow(c, Some(WriteOp::Delete))?;
        let scope = self.scope.clone();
        let current = records::fetch(&mut self.tx, &scope, c, id, true).await?;
        behaviour::of(c).before_delete(self, c, &current).await?;
        records::remove(&mut self.tx, &scope, c, &current).await?;
        Ok(current)
    }
}
