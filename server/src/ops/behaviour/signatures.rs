//! Signatures: signed only while their lease is sent; the last one signed signs the lease.

use async_trait::async_trait;

use super::{blocked, changes, col, related, Behaviour, Step};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::domain::workflow::Action;
use crate::error::Result;
use crate::ops::outbox::emit;
use crate::ops::Work;
use crate::store::records;

pub(super) struct Signatures;

#[async_trait]
impl Behaviour for Signatures {
    async fn prepare(&self, w: &mut Work, s: &Step<'_>, _ch: &mut Changes) -> Result<()> {
        if s.a.name == "sign" {
            // Locks the lease: signatures of one lease are signed one after another.
            let lease_id = s.current.get("lease_id").as_uuid().unwrap_or_default();
            let lease = related(w, col("leases"), lease_id).await?;
            if lease.status() != "sent" {
                let why = format!("the lease is {}; its signatures can be signed once it is sent", lease.status());
                return Err(blocked(s, why));
            }
        }
        Ok(())
    }

    async fn follow(&self, w: &mut Work, _c: &'static Collection, a: &Action, _before: &Record, after: &Record) -> Result<()> {
        if a.name == "sign" {
            sign_lease_when_complete(w, after).await?;
        }
        Ok(())
    }
}

/// The last signature signed signs a sent lease (the lease is locked by `prepare`).
async fn sign_lease_when_complete(w: &mut Work, signature: &Record) -> Result<()> {
    let lease_id = signature.get("lease_id").as_uuid().unwrap_or_default();
    let system = w.system.clone();
    let all = records::find(&mut w.tx, &system, col("signatures"), &[("lease_id", Val::Uuid(lease_id))]).await?;
    if !all.iter().all(|s| s.status() == "signed") {
        return Ok(());
    }
    let leases = col("leases");
    let (before, after) =
        records::modify(&mut w.tx, &system, leases, lease_id, w.now, |_| Ok(changes([("status", Val::Str("signed".into()))]))).await?;
    emit(w, "lease.signed", leases, &after, Some(&before), None).await
}
