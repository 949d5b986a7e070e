//! Reads: the one way a face reads a collection (the API's handlers, the console, and
//! whatever reads on someone's behalf next). Every read checks the actor here, once, and
//! applies the rules of the collections that show other collections' records:
//! - an event carries its record: reading it needs that record's collection's read;
//! - a report aggregates collections: reading it needs their reads (`domain::reports`);
//! - a delivery attempt's body and the receiver's answer carry an event: they are
//!   concealed from a reader who may not read its record (`domain::webhooks`).
//!
//! Lists narrow themselves to what the actor may see (an event list to the types whose
//! records it may read) instead of refusing, and page with signed keyset cursors.
//!
//! Expansions (`domain::expand`) read like the records they expand: each path needs the
//! read scope of its collection (a `403` naming the path before anything is read), each
//! record it brings passes the rules above and the actor's reach. The answer's own
//! statement joins its single references (`store::expansions`); a list of ids is read
//! for every record of the answer at once, in the same snapshot as the answer itself.

use serde_json::Value as Json;
use uuid::Uuid;

use super::{Actor, Operations, Work};
use crate::domain::collections::named;
use crate::domain::expand::{self, Expand, Related, RelatedPath, PARAM};
use crate::domain::list::ListQuery;
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::scopes::Access;
use crate::domain::{events, reports, webhooks};
use crate::error::{Error, Result};
use crate::store::{deliveries, expansions, records, Intent, Tx};

/// A page of a list as its reader may see it, with the records its references expand
/// to and the cursor of the next page.
pub struct Page {
    pub records: Vec<Record>,
    pub related: Related,
    pub next: Option<String>,
    pub has_more: bool,
}

/// One record as its reader may see it, with the records its references expand to.
pub struct One {
    pub record: Record,
    pub related: Related,
}

/// What a delivery attempt sent, as its reader may see it.
pub enum Sent {
    /// The body: the event as the API shows it, or the test event kept with the attempt.
    Body(Json),
    /// Concealed: the body carries a record of this collection, which the reader may not read.
    Concealed(&'static Collection),
    /// The event is no longer kept (events are kept 30 days).
    EventGone,
    /// The test event sent is not kept with this attempt.
    NotKept,
}

impl Actor {
    /// Refuses, with `403` naming the path, an expansion of a collection the actor may
    /// not read: checked before anything is read or written.
    pub fn require_expand(&self, expand: &Expand) -> Result<()> {
        for p in expand.walk() {
            let t = p.reference.target;
            if let Err(Error::InsufficientScope { scope, .. }) = self.require(t, Access::Read) {
                return Err(Error::InsufficientScope {
                    message: format!("expanding `{}` reads {}, which needs the scope `{scope}`", p.full, t.name),
                    scope,
                    param: Some(PARAM.into()),
                });
            }
        }
        Ok(())
    }
}

impl Operations {
    /// One record of `c`, as `actor` may see it, with `expand`'s records: `403` naming the
    /// scope it lacks, `404` when the record is outside its reach.
    pub async fn read(&self, actor: &Actor, c: &'static Collection, id: Uuid, expand: &Expand) -> Result<One> {
        actor.require(c, Access::Read)?;
        actor.require_expand(expand)?;
        let scope = &actor.scope;
        if expand.is_empty() {
            let mut record = self.store.get(scope, c, id).await?;
            admit(actor, c, &mut record)?;
            return Ok(One { record, related: Related::default() });
        }
        self.store
            .in_tenant(scope.tenant, scope.livemode, intent(expand, scope), async |tx| {
                let (mut record, joined) = expansions::record(tx, scope, c, id, expand).await?;
                admit(actor, c, &mut record)?;
                let related = related(tx, actor, scope, expand, &[&record], joined).await?;
                Ok(One { record, related })
            })
            .await
    }

    /// A page of `c` as `q` asks, as `actor` may see it, with the records `q.answer`
    /// expands. The cursor in `q` must be one this list gave (the same collection,
    /// filters, sort, tenant and environment).
    pub async fn list(&self, actor: &Actor, c: &'static Collection, mut q: ListQuery) -> Result<Page> {
        actor.require(c, Access::Read)?;
        let expand = std::mem::take(&mut q.answer.expand);
        actor.require_expand(&expand)?;
        // Events and reports show other collections' records: each is listed only to a
        // credential that may read what it shows.
        let shown = match c.name {
            "events" => events::narrow_list(c, &mut q, &actor.grants),
            "reports" => reports::narrow_list(c, &mut q, &actor.grants),
            _ => true,
        };
        if !shown {
            return Ok(Page { records: vec![], related: Related::default(), next: None, has_more: false });
        }
        let scope = &actor.scope;
        let binding = format!("{}:{}:{}", q.binding(c), scope.tenant, scope.livemode);
        let after = match &q.cursor {
            Some(cur) => Some(self.cursors.decode(cur, &binding, &q.sort)?),
            None => None,
        };
        let (mut page, related) = if expand.is_empty() {
            (self.store.list(scope, c, &q, after).await?, Related::default())
        } else {
            self.store
                .in_tenant(scope.tenant, scope.livemode, intent(&expand, scope), async |tx| {
                    let (page, joined) = expansions::list_page(tx, scope, c, &q, after, &expand).await?;
                    let related = related(tx, actor, scope, &expand, &page.records.iter().collect::<Vec<_>>(), joined).await?;
                    Ok((page, related))
                })
                .await?
        };
        let next = match (page.has_more, page.records.last()) {
            (true, Some(last)) => {
                let vals: Vec<_> = q.sort.iter().map(|k| last.sort_value(k.field)).collect();
                Some(self.cursors.encode(&binding, &q.sort, &vals))
            }
            _ => None,
        };
        if c.name == "webhook-deliveries" {
            page.records.iter_mut().for_each(|r| {
                webhooks::conceal_from(&actor.grants, r);
            });
        }
        Ok(Page { records: page.records, related, next, has_more: page.has_more })
    }

    /// What a delivery attempt (read through `read`) sent, unless its reader may not see it.
    pub async fn sent(&self, actor: &Actor, delivery: &Record) -> Result<Sent> {
        if let Some(c) = webhooks::unreadable_carried(&actor.grants, delivery) {
            return Ok(Sent::Concealed(c));
        }
        let scope = &actor.scope;
        if let Some(event) = delivery.get("event_id").as_uuid() {
            // Part of the attempt the reader may read: no `events:read` of its own needed.
            let events = named("events")?;
            return match self.store.get(scope, events, event).await {
                Ok(e) => Ok(Sent::Body(e.to_json(events, None))),
                Err(Error::NotFound { .. }) => Ok(Sent::EventGone),
                Err(e) => Err(e),
            };
        }
        let id = delivery.id;
        let payload = self
            .store
            .in_tenant(scope.tenant, scope.livemode, Intent::Read, async |tx| {
                deliveries::payload_of(tx, scope.tenant, scope.livemode, id).await
            })
            .await?;
        Ok(payload.map_or(Sent::NotKept, Sent::Body))
    }
}

impl Work {
    /// The records `expand` brings to the answer of a write, read in the write's own
    /// transaction (so they agree with it), as the writer may see them.
    pub async fn related(&mut self, rec: &Record, expand: &Expand) -> Result<Related> {
        if expand.is_empty() {
            return Ok(Related::default());
        }
        let actor = self.actor();
        actor.require_expand(expand)?;
        related(&mut self.tx, &actor, &self.scope, expand, &[rec], Related::default()).await
    }
}

/// How an expanded answer reads: one statement is a snapshot of its own; statements
/// after it (a list of ids, read path by path) need a transaction that sees what it saw.
fn intent(expand: &Expand, scope: &Scope) -> Intent {
    match expansions::all_joinable(expand, scope) {
        true => Intent::Read,
        false => Intent::Snapshot,
    }
}

/// The rules of the collections that show other collections' records, for one record the
/// actor reads: an event or report it may not see whole is refused; a delivery attempt's
/// body is concealed.
fn admit(actor: &Actor, c: &Collection, rec: &mut Record) -> Result<()> {
    match c.name {
        "events" => require_carried(actor, rec),
        "reports" => reports::require_reads(&actor.grants, rec.get("kind").as_str().unwrap_or_default()),
        // The receiver's answer may echo the record the event carried.
        "webhook-deliveries" => {
            webhooks::conceal_from(&actor.grants, rec);
            Ok(())
        }
        _ => Ok(()),
    }
}

/// What `expand` brings to `records`: what the answer's own statement joined
/// (`joined`, `store::expansions`), and for each path it could not join one statement
/// reading every record its references name at once; then, below each path, what those
/// records expand to. A record the actor may not see (outside its properties, an event
/// of a collection it may not read) is left out, so its reference stays an id.
fn related<'a>(
    tx: &'a mut Tx,
    actor: &'a Actor,
    scope: &'a Scope,
    expand: &'a Expand,
    records: &'a [&'a Record],
    mut joined: Related,
) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<Related>> + Send + 'a>> {
    Box::pin(async move {
        let mut out = Related::default();
        for p in &expand.paths {
            let r = p.reference;
            let (mut found, joined_below) = match joined.take(r) {
                Some(path) => (path.records, path.then),
                None => {
                    let mut ids: Vec<Uuid> = records.iter().flat_map(|rec| expand::ids(rec, r)).collect();
                    ids.sort_unstable();
                    ids.dedup();
                    let read = records::by_ids(tx, scope, r.target, &ids).await?;
                    (read.into_iter().map(|rec| (rec.id, rec)).collect(), Related::default())
                }
            };
            found.retain(|_, rec| admit(actor, r.target, rec).is_ok());
            let then = if p.then.is_empty() {
                Related::default()
            } else {
                let below: Vec<&Record> = found.values().collect();
                related(tx, actor, scope, &p.then, &below, joined_below).await?
            };
            out.paths.push(RelatedPath { reference: r, records: found, then });
        }
        Ok(out)
    })
}

/// An event carries its record: reading it needs read access to that record's collection.
fn require_carried(actor: &Actor, event: &Record) -> Result<()> {
    match event.get("type").as_str().and_then(events::event_type) {
        Some(t) => actor.require(named(t.collection)?, Access::Read),
        None => Ok(()),
    }
}
