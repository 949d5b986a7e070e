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

use serde_json::Value as Json;
use uuid::Uuid;

use super::{Actor, Operations};
use crate::domain::collections::named;
use crate::domain::list::ListQuery;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::scopes::Access;
use crate::domain::{events, reports, webhooks};
use crate::error::{Error, Result};
use crate::store::{deliveries, Intent};

/// A page of a list as its reader may see it, with the cursor of the next page.
pub struct Page {
    pub records: Vec<Record>,
    pub next: Option<String>,
    pub has_more: bool,
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

impl Operations {
    /// One record of `c`, as `actor` may see it: `403` naming the scope it lacks, `404`
    /// when the record is outside its reach.
    pub async fn read(&self, actor: &Actor, c: &'static Collection, id: Uuid) -> Result<Record> {
        actor.require(c, Access::Read)?;
        let mut rec = self.store.get(&actor.scope, c, id).await?;
        match c.name {
            "events" => require_carried(actor, &rec)?,
            "reports" => reports::require_reads(&actor.grants, rec.get("kind").as_str().unwrap_or_default())?,
            // The receiver's answer may echo the record the event carried.
            "webhook-deliveries" => {
                webhooks::conceal_from(&actor.grants, &mut rec);
            }
            _ => {}
        }
        Ok(rec)
    }

    /// A page of `c` as `q` asks, as `actor` may see it. The cursor in `q` must be one this
    /// list gave (the same collection, filters, sort, tenant and environment).
    pub async fn list(&self, actor: &Actor, c: &'static Collection, mut q: ListQuery) -> Result<Page> {
        actor.require(c, Access::Read)?;
        // Events and reports show other collections' records: each is listed only to a
        // credential that may read what it shows.
        let shown = match c.name {
            "events" => events::narrow_list(c, &mut q, &actor.grants),
            "reports" => reports::narrow_list(c, &mut q, &actor.grants),
            _ => true,
        };
        if !shown {
            return Ok(Page { records: vec![], next: None, has_more: false });
        }
        let scope = &actor.scope;
        let binding = format!("{}:{}:{}", q.binding(c), scope.tenant, scope.livemode);
        let after = match &q.cursor {
            Some(cur) => Some(self.cursors.decode(cur, &binding, &q.sort)?),
            None => None,
        };
        let mut page = self.store.list(scope, c, &q, after).await?;
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
        Ok(Page { records: page.records, next, has_more: page.has_more })
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

/// An event carries its record: reading it needs read access to that record's collection.
fn require_carried(actor: &Actor, event: &Record) -> Result<()> {
    match event.get("type").as_str().and_then(events::event_type) {
        Some(t) => actor.require(named(t.collection)?, Access::Read),
        None => Ok(()),
    }
}
