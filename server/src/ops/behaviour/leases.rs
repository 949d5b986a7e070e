//! Leases: activating one starts its tenancy (the upcoming one, or a new current one).

use async_trait::async_trait;

use super::{changes, col, related, step, Behaviour};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::value::Val;
use crate::domain::workflow::Action;
use crate::error::Result;
use crate::ops::outbox::emit;
use crate::ops::Work;
use crate::store::records;

pub(super) struct Leases;

#[async_trait]
impl Behaviour for Leases {
    async fn follow(&self, w: &mut Work, _c: &'static Collection, a: &Action, _before: &Record, after: &Record) -> Result<()> {
        if a.name == "activate" {
            start_tenancy(w, after).await?;
        }
        Ok(())
    }
}

async fn start_tenancy(w: &mut Work, lease: &Record) -> Result<()> {
    let tenancies = col("tenancies");
    let system = w.system.clone();
    let existing = records::find(&mut w.tx, &system, tenancies, &[("lease_id", Val::Uuid(lease.id))]).await?;
    if let Some(t) = existing.iter().find(|t| t.status() == "upcoming") {
        step(w, tenancies, "start", t.id, None).await?;
        return Ok(());
    }
    if existing.iter().any(|t| t.status() == "current") {
        return Ok(());
    }
    let occupants = match lease.get("application_id").as_uuid() {
        Some(id) => related(w, col("applications"), id).await?.get("applicants").clone(),
        None => Val::Null,
    };
    let ch = changes([
        ("lease_id", Val::Uuid(lease.id)),
        ("unit_id", lease.get("unit_id").clone()),
        ("occupants", occupants),
        ("move_in_date", lease.get("start_date").clone()),
        ("status", Val::Str("current".into())),
    ]);
    let t = records::insert(&mut w.tx, &system, tenancies, ch, vec![], w.now).await?;
    emit(w, "tenancy.started", tenancies, &t, None, None).await
}
