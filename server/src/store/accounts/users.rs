//! The console's reads of the `users` and `roles` collections: read in tenant
//! transactions like any collection, so apart from the system tables of the console.

use chrono::{DateTime, Utc};
use uuid::Uuid;

use crate::domain::reach::Scope;
use crate::domain::value::Val;
use crate::error::{Error, Result};
use crate::store::sql::incomplete;
use crate::store::Store;

#[derive(Debug, Clone)]
pub struct UserRow {
    pub id: Uuid,
    pub email: String,
    pub name: String,
    pub role_id: Option<Uuid>,
    pub status: String,
    pub last_sign_in_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone)]
pub struct RoleRow {
    pub id: Uuid,
    pub name: String,
    pub permissions: Vec<String>,
}

impl Store {
    /// The tenant's live users, oldest first (the owner who signed up leads).
    pub async fn console_users(&self, tenant: Uuid) -> Result<Vec<UserRow>> {
        let users = crate::domain::collections::collection("users").ok_or_else(|| incomplete("users collection"))?;
        let scope = Scope { tenant, livemode: true, properties: None };
        let records = self.list_all(&scope, users, "created_at,id").await?;
        records
            .iter()
            .map(|r| {
                let missing = || incomplete("user");
                let text = |name: &str| r.get(name).as_str().map(str::to_owned).ok_or_else(missing);
                Ok(UserRow {
                    id: r.id,
                    email: text("email")?,
                    name: text("name")?,
                    role_id: r.get("role_id").as_uuid(),
                    status: text("status")?,
                    last_sign_in_at: match r.get("last_sign_in_at") {
                        Val::DateTime(t) => Some(*t),
                        _ => None,
                    },
                })
            })
            .collect()
    }

    /// The tenant's live roles, oldest first (Owner, Admin, Read-only staff).
    pub async fn console_roles(&self, tenant: Uuid) -> Result<Vec<RoleRow>> {
        let roles = crate::domain::collections::collection("roles").ok_or_else(|| incomplete("roles collection"))?;
        let scope = Scope { tenant, livemode: true, properties: None };
        let records = self.list_all(&scope, roles, "created_at,id").await?;
        records
            .iter()
            .map(|r| {
                Ok(RoleRow {
                    id: r.id,
                    name: r.get("name").as_str().map(str::to_owned).ok_or_else(|| incomplete("role"))?,
                    permissions: match r.get("permissions") {
                        Val::Json(j) => serde_json::from_value(j.clone()).map_err(Error::internal)?,
                        _ => vec![],
                    },
                })
            })
            .collect()
    }
}
