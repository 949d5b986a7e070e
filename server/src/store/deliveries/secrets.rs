//! Subscription signing secrets (`webhooks.secret_sealed`): reading the sealed secret
//! and rotating it with an overlap. They belong to a subscription, not to the delivery
//! register (the rest of this folder), which only shares the row key with them.

use chrono::{DateTime, Utc};
use sea_query::Query;
use uuid::Uuid;

use super::{a, row_key};
use crate::error::Result;
use crate::store::Tx;

/// A subscription's sealed signing secret (the caller has read and locked the row).
pub async fn sealed_secret(tx: &mut Tx, tenant: Uuid, livemode: bool, webhook: Uuid) -> Result<Option<String>> {
    let sel = Query::select().column(a("secret_sealed")).from(a("webhooks")).cond_where(row_key(tenant, livemode, webhook)).to_owned();
    match tx.fetch_optional(&sel).await? {
        Some(r) => r.opt_string("secret_sealed"),
        None => Ok(None),
    }
}

/// Replaces a subscription's signing secret; the one it replaces keeps signing until
/// `previous_until`.
pub async fn rotate_secret(
    tx: &mut Tx,
    tenant: Uuid,
    livemode: bool,
    webhook: Uuid,
    sealed: String,
    (previous, previous_until): (Option<String>, DateTime<Utc>),
    now: DateTime<Utc>,
) -> Result<()> {
    let up = Query::update()
        .table(a("webhooks"))
        .value(a("secret_sealed"), sealed)
        .value(a("previous_secret_sealed"), previous)
        .value(a("previous_secret_expires_at"), previous_until)
        .value(a("updated_at"), now)
        .cond_where(row_key(tenant, livemode, webhook))
        .to_owned();
    tx.execute(&up).await?;
    Ok(())
}
