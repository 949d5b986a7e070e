//! The `events` table: each event is written in the transaction of the change that
//! caused it (`ops::outbox`), read in commit order by the event stream, and purged after
//! the 30 days it is kept (`jobs::retention`).

use chrono::{DateTime, Utc};
use sea_query::{Alias, Expr, OnConflict, Order, Query, SimpleExpr};
use serde_json::Value as Json;
use uuid::Uuid;

use super::sql::insert_row;
use super::{records, Dialect, Tx};
use crate::domain::collections::named;
use crate::domain::events::API_VERSION;
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::error::Result;

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
    /// The request that caused it (`observe::request_id`), none for what time caused.
    pub request: Option<Uuid>,
}

/// Writes an event at the current API version; returns its id, or `None` when it was
/// not written because its occurrence was written before.
pub async fn insert(tx: &mut Tx, e: NewEvent<'_>) -> Result<Option<Uuid>> {
    let id = Uuid::now_v7();
    let mut ins = insert_row(
        "events",
        (e.tenant, e.livemode, id),
        e.at,
        vec![
            ("type", e.kind.into()),
            ("api_version", API_VERSION.into()),
            ("data", e.data.into()),
            ("related_object_id", e.related.into()),
            ("property_id", e.property.into()),
            ("occurrence", e.occurrence.map(str::to_owned).into()),
            ("request_id", e.request.into()),
        ],
    );
    if e.occurrence.is_some() {
        ins.on_conflict(
            OnConflict::columns(["tenant_id", "livemode", "type", "related_object_id", "occurrence"].map(Alias::new))
                .do_nothing()
                .to_owned(),
        );
    }
    Ok((tx.execute(&ins).await? == 1).then_some(id))
}

/// Deletes at most `limit` of the events created before `cutoff` (their deliveries go
/// with them, `ON DELETE CASCADE`); returns how many.
pub async fn delete_before(tx: &mut Tx, cutoff: DateTime<Utc>, limit: u64) -> Result<u64> {
    super::sql::delete_some(tx, "events", &["tenant_id", "livemode", "id"], Expr::col(Alias::new("created_at")).lt(cutoff), limit).await
}

/// Where an event stands in the stream (`GET /v1/events/stream`): the order its
/// transaction committed in, then its id (`20261207000001_event_stream`). On SQLite
/// `xid` is always 0 and the id order is the commit order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct StreamPosition {
    pub xid: i64,
    pub id: Uuid,
}

impl StreamPosition {
    /// Before every event.
    pub const START: StreamPosition = StreamPosition { xid: i64::MIN, id: Uuid::nil() };
}

/// Only events whose transaction is older than every one still running: one committed
/// later with a smaller position would otherwise be passed over for good. SQLite has one
/// writer, whose events are visible in the order they were made.
fn settled(tx: &Tx) -> Option<SimpleExpr> {
    match tx.dialect() {
        Dialect::Postgres => Some(Expr::cust("stream_xid < (pg_snapshot_xmin(pg_current_snapshot())::text::bigint)")),
        Dialect::Sqlite => None,
    }
}

/// The position of the scope's event `id`, if it is there and the scope sees it.
pub async fn position_of(tx: &mut Tx, scope: &Scope, id: Uuid) -> Result<Option<StreamPosition>> {
    let Some(mut sel) = records::scoped_select(named("events")?, scope) else { return Ok(None) };
    sel.clear_selects();
    sel.columns(["stream_xid", "id"].map(Alias::new)).and_where(Expr::col(Alias::new("id")).eq(id));
    let Some(row) = tx.fetch_optional(&sel).await? else { return Ok(None) };
    Ok(Some(StreamPosition { xid: row.opt_i64(0)?.unwrap_or_default(), id }))
}

/// The position after the scope's last settled event: where a stream that starts now
/// begins (it sends what comes after).
pub async fn last_position(tx: &mut Tx, scope: &Scope) -> Result<StreamPosition> {
    let mut sel = Query::select();
    sel.columns(["stream_xid", "id"].map(Alias::new))
        .from(Alias::new("events"))
        .cond_where(records::tenant_cond_on(scope, |c| Expr::col(Alias::new(c))))
        .order_by(Alias::new("stream_xid"), Order::Desc)
        .order_by(Alias::new("id"), Order::Desc)
        .limit(1);
    if let Some(settled) = settled(tx) {
        sel.and_where(settled);
    }
    Ok(match tx.fetch_optional(&sel).await? {
        Some(row) => StreamPosition { xid: row.opt_i64(0)?.unwrap_or_default(), id: row.opt_uuid(1)?.unwrap_or_default() },
        None => StreamPosition::START,
    })
}

/// The scope's settled events after `after`, of `types` (all when `None`), in stream
/// order, at most `limit`, with their positions.
pub async fn after(
    tx: &mut Tx,
    scope: &Scope,
    types: Option<&[&str]>,
    after: StreamPosition,
    limit: u64,
) -> Result<Vec<(StreamPosition, Record)>> {
    let events = named("events")?;
    let Some(mut sel) = records::scoped_select(events, scope) else { return Ok(vec![]) };
    // The position's columns after the record's, read by position.
    let first = records::columns(events).len();
    sel.columns(["stream_xid"].map(Alias::new));
    let position = Expr::tuple([Expr::col(Alias::new("stream_xid")).into(), Expr::col(Alias::new("id")).into()]);
    sel.and_where(position.gt(Expr::tuple([Expr::val(after.xid).into(), Expr::val(after.id).into()])));
    if let Some(types) = types {
        sel.and_where(Expr::col(Alias::new("type")).is_in(types.iter().copied()));
    }
    if let Some(settled) = settled(tx) {
        sel.and_where(settled);
    }
    sel.order_by(Alias::new("stream_xid"), Order::Asc).order_by(Alias::new("id"), Order::Asc).limit(limit);
    let mut out = vec![];
    for row in tx.fetch_all(&sel).await? {
        let record = records::decode_from(events, &row, 0)?;
        out.push((StreamPosition { xid: row.opt_i64(first)?.unwrap_or_default(), id: record.id }, record));
    }
    Ok(out)
}
