//! Users: the console's staff. A user acts with their role's permissions, so assigning a
//! role grants them: no credential assigns a role carrying permissions it does not hold,
//! nor changes the role or status of, or deletes, a user whose role carries such
//! permissions. Making someone a manager (a `*` role) thus needs `*` (`docs/api.md`, "Who may grant what").

use async_trait::async_trait;
use uuid::Uuid;

use super::roles::permissions;
use super::{col, new_value, referenced, Behaviour, NewRecord};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::validate::Changes;
use crate::error::Result;
use crate::ops::Work;

pub(super) struct Users;

/// Refuses unless the actor holds everything the role carries. `param` names the field
/// the role came through, for the error when the role does not exist.
async fn require_role(w: &mut Work, param: &str, role: Option<Uuid>) -> Result<()> {
    let Some(id) = role else { return Ok(()) };
    let role = referenced(w, param, col("roles"), id).await?;
    let what = format!("the role `{}`", role.get("name").as_str().unwrap_or_default());
    w.actor().require_all(&permissions(role.get("permissions")), &what)
}

#[async_trait]
impl Behaviour for Users {
    async fn before_create(&self, w: &mut Work, _c: &'static Collection, new: &mut NewRecord) -> Result<()> {
        require_role(w, "role_id", new_value(new, "role_id").as_uuid()).await
    }

    async fn before_update(&self, w: &mut Work, _c: &'static Collection, current: &Record, ch: &mut Changes) -> Result<()> {
        // Who may sign in, and with what: the user's current role bounds who may change
        // either, and a new role must be within the actor's own permissions.
        if ch.values.contains_key("role_id") || ch.values.contains_key("status") {
            require_role(w, "role_id", current.get("role_id").as_uuid()).await?;
        }
        if let Some(new_role) = ch.values.get("role_id") {
            require_role(w, "role_id", new_role.as_uuid()).await?;
        }
        if ch.values.get("status").is_some_and(|s| s.as_str() != Some("active")) {
            revoke_apps(w, current).await?;
        }
        Ok(())
    }

    async fn before_delete(&self, w: &mut Work, _c: &'static Collection, current: &Record) -> Result<()> {
        require_role(w, "role_id", current.get("role_id").as_uuid()).await?;
        revoke_apps(w, current).await
    }
}

/// A user who is disabled or deleted leaves no app acting for them, for good:
/// revoked in the transaction of the change, so the change and the revocation commit or
/// fail together, and enabling the user again revives nothing.
async fn revoke_apps(w: &mut Work, user: &Record) -> Result<()> {
    if w.system.livemode {
        let (tenant, now) = (w.system.tenant, w.now);
        crate::store::oauth::revoke_user_grants(&mut w.tx, tenant, user.id, now).await?;
    }
    Ok(())
}
