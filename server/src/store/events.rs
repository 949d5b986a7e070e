//! The `events` table: each event is written in the transaction of the change that
//! caused it (`ops::outbox`), and purged after the 30 days it is kept (`jobs::retention`).

use chrono::{DateTime, Utc};
use sea_query::{Alias, Expr, OnConflict};
use serde_json::Value as Json;
use uuid::Uuid;

use super::sql::insert_row;
use super::Tx;
use crate::domain::events::API_VERSION;
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
