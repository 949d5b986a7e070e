//! Roles: named sets of permissions (scopes) that console users act with. No credential
//! creates, changes or deletes a role carrying permissions it does not hold itself, so
//! `roles:write` alone cannot mint an owner (`docs/api.md`, "Who may grant what").

use async_trait::async_trait;

use super::{new_value, Behaviour, NewRecord};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::scopes;
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::error::Result;
use crate::ops::Work;

pub(super) struct Roles;

/// A role's permissions as stored or given.
pub(super) fn permissions(v: &Val) -> Vec<String> {
    match v {
        Val::Json(j) => j.as_array().into_iter().flatten().filter_map(|s| s.as_str().map(String::from)).collect(),
        _ => vec![],
    }
}

#[async_trait]
impl Behaviour for Roles {
    async fn before_create(&self, w: &mut Work, _c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        let wanted = permissions(&new_value(new, "permissions"));
        scopes::validate("permissions", &wanted)?;
        w.actor().require_all(&wanted, "the role")
    }

    async fn before_update(&self, w: &mut Work, _c: &'static Collection, current: &Record, ch: &mut Changes) -> Result<()> {
        // Whoever changes a role changes what its users may do: they must hold what it
        // carries now (no demoting the owners) and what it will carry.
        w.actor().require_all(&permissions(current.get("permissions")), "the role")?;
        if let Some(v) = ch.values.get("permissions") {
            let wanted = permissions(v);
            scopes::validate("permissions", &wanted)?;
            w.actor().require_all(&wanted, "the role")?;
        }
        Ok(())
    }

    async fn before_delete(&self, w: &mut Work, _c: &'static Collection, current: &Record) -> Result<()> {
        w.actor().require_all(&permissions(current.get("permissions")), "the role")
    }
}
