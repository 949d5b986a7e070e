//! Console passwords (`console_credentials`): the sign-in lookup, storing and rehashing
//! a password, and undoing a sign-up that failed half way. Kept apart from sessions,
//! which are what a checked password opens.

use chrono::{DateTime, Utc};
use sea_query::Query;
use uuid::Uuid;

use crate::error::Result;
use crate::store::sql::{a, col, incomplete, tc};
use crate::store::{Intent, Store};

/// A password as stored, with the state of its user.
#[derive(Debug, Clone)]
pub struct StoredCredential {
    pub tenant_id: Uuid,
    pub user_id: Uuid,
    /// The argon2id PHC string. Never logged.
    pub password_hash: String,
    /// The user's status in the `users` collection (`invited`, `active`, `disabled`).
    pub user_status: String,
}

impl Store {
    /// Whether a console account with this (lowercase) email exists anywhere in Gable.
    pub async fn console_email_taken(&self, email: &str) -> Result<bool> {
        self.in_system(Intent::Read, async |tx| {
            let row = tx
                .fetch_optional(Query::select().column(a("user_id")).from(a("console_credentials")).and_where(col("email").eq(email)))
                .await?;
            Ok(row.is_some())
        })
        .await
    }

    /// The password of the console account with this (lowercase) email.
    pub async fn console_credential(&self, email: &str) -> Result<Option<StoredCredential>> {
        self.in_system(Intent::Read, async |tx| {
            let row = tx
                .fetch_optional(
                    Query::select()
                        .expr_as(tc("console_credentials", "tenant_id"), a("tenant_id"))
                        .expr_as(tc("console_credentials", "user_id"), a("user_id"))
                        .expr_as(tc("console_credentials", "password_hash"), a("password_hash"))
                        .expr_as(tc("users", "status"), a("user_status"))
                        .from(a("console_credentials"))
                        .inner_join(
                            a("users"),
                            tc("users", "tenant_id")
                                .equals((a("console_credentials"), a("tenant_id")))
                                .and(tc("users", "livemode").equals((a("console_credentials"), a("livemode"))))
                                .and(tc("users", "id").equals((a("console_credentials"), a("user_id")))),
                        )
                        .and_where(tc("console_credentials", "email").eq(email)),
                )
                .await?;
            let Some(r) = row else { return Ok(None) };
            let missing = || incomplete("console credential");
            Ok(Some(StoredCredential {
                tenant_id: r.opt_uuid("tenant_id")?.ok_or_else(missing)?,
                user_id: r.opt_uuid("user_id")?.ok_or_else(missing)?,
                password_hash: r.opt_string("password_hash")?.ok_or_else(missing)?,
                user_status: r.opt_string("user_status")?.ok_or_else(missing)?,
            }))
        })
        .await
    }

    /// Stores the password of a live user. A taken email is `Error::Conflict`.
    pub async fn console_insert_credential(
        &self,
        tenant: Uuid,
        user: Uuid,
        email: &str,
        password_hash: &str,
        now: DateTime<Utc>,
    ) -> Result<()> {
        self.in_system(Intent::Write, async |tx| {
            tx.execute(
                Query::insert()
                    .into_table(a("console_credentials"))
                    .columns(["tenant_id", "user_id", "email", "password_hash", "created_at", "updated_at"].map(a))
                    .values_panic([tenant.into(), user.into(), email.into(), password_hash.into(), now.into(), now.into()]),
            )
            .await?;
            Ok(())
        })
        .await
    }

    /// Replaces a stored password hash (a rehash with today's parameters).
    pub async fn console_set_password_hash(&self, tenant: Uuid, user: Uuid, password_hash: &str, now: DateTime<Utc>) -> Result<()> {
        self.in_system(Intent::Write, async |tx| {
            tx.execute(
                Query::update()
                    .table(a("console_credentials"))
                    .value(a("password_hash"), password_hash)
                    .value(a("updated_at"), now)
                    .and_where(col("tenant_id").eq(tenant))
                    .and_where(col("user_id").eq(user)),
            )
            .await?;
            Ok(())
        })
        .await
    }

    /// Removes a tenant that a failed sign-up had begun to create (its sessions,
    /// passwords, users, roles, service accounts), so a sign-up is all or nothing.
    pub async fn console_discard_tenant(&self, tenant: Uuid) -> Result<()> {
        self.in_system(Intent::Write, async |tx| {
            for table in ["console_sessions", "console_credentials", "users", "roles", "api_keys", "service_accounts"] {
                tx.execute(Query::delete().from_table(a(table)).and_where(col("tenant_id").eq(tenant))).await?;
            }
            tx.execute(Query::delete().from_table(a("tenants")).and_where(col("id").eq(tenant))).await?;
            Ok(())
        })
        .await
    }
}
