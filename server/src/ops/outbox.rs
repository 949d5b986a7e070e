//! The outbox: events are rows of `events`, written in the transaction of the change
//! that caused them, together with the first delivery attempt of each webhook
//! subscription that takes them (`store::deliveries`): an event and what is to be
//! delivered of it commit, or roll back, as one.

use serde_json::Map;
use uuid::Uuid;

use super::Work;
use crate::domain::events::{self, event_type};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::error::Result;
pub use crate::store::events::NewEvent;
use crate::store::{deliveries, events as stored, Tx};

/// Writes an event and its pending deliveries; returns how many attempts were written, or
/// `None` when the event was not (its occurrence existed).
pub async fn write(tx: &mut Tx, e: NewEvent<'_>) -> Result<Option<usize>> {
    debug_assert!(event_type(e.kind).is_some(), "{} is one of the catalogue's event types", e.kind);
    let (tenant, livemode, kind, at) = (e.tenant, e.livemode, e.kind, e.at);
    let Some(id) = stored::insert(tx, e).await? else { return Ok(None) };
    deliveries::enqueue_for_event(tx, tenant, livemode, id, kind, at).await.map(Some)
}

/// Emits an event about a record changed by this operation. `before` is the record
/// before the change (absent for a new record); `property` overrides the record's own
/// property (a guest checked in through a booking belongs to the booking's property).
pub(super) async fn emit(
    w: &mut Work,
    kind: &'static str,
    c: &Collection,
    rec: &Record,
    before: Option<&Record>,
    property: Option<Uuid>,
) -> Result<()> {
    if w.quiet {
        return Ok(());
    }
    let object = rec.to_json(c, None);
    let previous = match before {
        Some(b) => events::previous_attributes(&b.to_json(c, None), &object),
        None => Map::new(),
    };
    let e = NewEvent {
        tenant: w.scope.tenant,
        livemode: w.scope.livemode,
        kind,
        data: events::data(object, previous, &[]),
        related: rec.id,
        property: property.or_else(|| rec.property_id(c)),
        occurrence: None,
        at: w.now,
        request: crate::observe::request_id::current(),
    };
    let attempts = write(&mut w.tx, e).await?.unwrap_or(0);
    // The delivery worker of this process starts at commit (others hear the NOTIFY); an
    // event no subscription takes gives it nothing to do.
    let due = w.signals.deliveries_due.clone();
    if attempts > 0 && !w.wake.iter().any(|n| std::sync::Arc::ptr_eq(n, &due)) {
        w.wake.push(due);
    }
    Ok(())
}
