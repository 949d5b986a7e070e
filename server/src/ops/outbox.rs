//! The outbox: events are rows of `events`, written in the transaction of the change
//! that caused them, together with the first delivery attempt of each webhook
//! subscription that takes them (`store::deliveries`): an event and what is to be
//! delivered of it commit, or roll back, as one.

use chrono::{DateTime, Utc};
use sea_query::{Alias, Expr, OnConflict, Query, SimpleExpr};
use serde_json::{Map, Value as Json};
use uuid::Uuid;

use super::Work;
use crate::domain::events::{self, event_type};
use crate::domain::record::Record;
use crate::domain::registry::{Collection, Ty};
use crate::domain::value::Val;
use crate::error::{Error, Result};
use crate::store::Tx;

/// One event to write.
pub struct NewEvent<'a> {
    pub tenant: Uuid,
    pub livemode: bool,
    pub kind: &'static str,
    pub data: Json,
    pub related: Uuid,
    pub property: Option<Uuid>,
    /// Set for scheduled events: which occurrence this is (a due date, a notice period
    /// and end date). An occurrence is written once; a second attempt does nothing.
    pub occurrence: Option<&'a str>,
    pub at: DateTime<Utc>,
}

/// Writes an event and its pending deliveries; returns how many attempts were written, or
/// `None` when the event was not (its occurrence existed).
pub async fn write(tx: &mut Tx, e: NewEvent<'_>) -> Result<Option<usize>> {
    debug_assert!(event_type(e.kind).is_some(), "{} is one of the 23 contracts", e.kind);
    let d = tx.dialect();
    let id = Uuid::now_v7();
    let (tenant, livemode, kind, at) = (e.tenant, e.livemode, e.kind, e.at);
    let cols = [
        "tenant_id",
        "livemode",
        "id",
        "created_at",
        "updated_at",
        "type",
        "api_version",
        "data",
        "related_object_id",
        "property_id",
        "occurrence",
    ];
    let vals: Vec<SimpleExpr> = vec![
        Expr::val(d.uuid(e.tenant)).into(),
        e.livemode.into(),
        Expr::val(d.uuid(id)).into(),
        Expr::val(d.ts(e.at)).into(),
        Expr::val(d.ts(e.at)).into(),
        e.kind.into(),
        events::API_VERSION.into(),
        Expr::val(d.json(e.data)).into(),
        Expr::val(d.uuid(e.related)).into(),
        Expr::val(d.value(Ty::Uuid, &e.property.map(Val::Uuid).unwrap_or(Val::Null))).into(),
        e.occurrence.map(str::to_owned).into(),
    ];
    let mut ins = Query::insert();
    ins.into_table(Alias::new("events")).columns(cols.map(Alias::new)).values(vals).map_err(Error::internal)?;
    if e.occurrence.is_some() {
        ins.on_conflict(
            OnConflict::columns(["tenant_id", "livemode", "type", "related_object_id", "occurrence"].map(Alias::new))
                .do_nothing()
                .to_owned(),
        );
    }
    if tx.execute(&ins).await? != 1 {
        return Ok(None);
    }
    crate::store::deliveries::enqueue_for_event(tx, tenant, livemode, id, kind, at).await.map(Some)
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
