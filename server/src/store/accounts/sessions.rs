//! Console sessions (`console_sessions`): starting, looking up, touching, switching and
//! ending them. Read on every console request, so they are one file of their own.

use chrono::{DateTime, Utc};
use sea_query::Query;
use uuid::Uuid;

use crate::error::Result;
use crate::store::sql::{a, col, incomplete, tc};
use crate::store::{Intent, Store};

/// A session with everything the console shows about its user.
#[derive(Debug, Clone)]
pub struct StoredSession {
    pub tenant_id: Uuid,
    pub tenant_name: String,
    pub user_id: Uuid,
    pub email: String,
    pub name: String,
    pub user_status: String,
    pub role_name: Option<String>,
    pub permissions: Vec<String>,
    pub csrf: String,
    pub livemode: bool,
    pub created_at: DateTime<Utc>,
    pub last_seen_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

/// A session to start.
pub struct NewSessionRow<'a> {
    pub token_hash: &'a str,
    pub tenant_id: Uuid,
    pub user_id: Uuid,
    pub csrf: &'a str,
    pub livemode: bool,
    pub now: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
}

impl Store {
    /// Starts a session in one transaction: inserts it, ends `previous` (rotation),
    /// removes the user's sessions that expired (`expires_at` or idle since before
    /// `idle_cutoff`), and records the user's `last_sign_in_at` when `signed_in`.
    pub async fn console_start_session(
        &self,
        s: &NewSessionRow<'_>,
        previous_hash: Option<&str>,
        idle_cutoff: DateTime<Utc>,
        signed_in: bool,
    ) -> Result<()> {
        self.in_system(Intent::Write, async |tx| {
            if let Some(prev) = previous_hash {
                tx.execute(Query::delete().from_table(a("console_sessions")).and_where(col("token_hash").eq(prev))).await?;
            }
            tx.execute(
                Query::delete()
                    .from_table(a("console_sessions"))
                    .and_where(col("tenant_id").eq(s.tenant_id))
                    .and_where(col("user_id").eq(s.user_id))
                    .and_where(col("expires_at").lte(s.now).or(col("last_seen_at").lte(idle_cutoff))),
            )
            .await?;
            tx.execute(
                Query::insert()
                    .into_table(a("console_sessions"))
                    .columns(["token_hash", "tenant_id", "user_id", "csrf", "livemode", "created_at", "last_seen_at", "expires_at"].map(a))
                    .values_panic([
                        s.token_hash.into(),
                        s.tenant_id.into(),
                        s.user_id.into(),
                        s.csrf.into(),
                        s.livemode.into(),
                        s.now.into(),
                        s.now.into(),
                        s.expires_at.into(),
                    ]),
            )
            .await?;
            if signed_in {
                // A read-only field of the user record that only Gable sets; not an edit of
                // the record, so `updated_at` stays.
                tx.execute(
                    Query::update()
                        .table(a("users"))
                        .value(a("last_sign_in_at"), s.now)
                        .and_where(col("tenant_id").eq(s.tenant_id))
                        .and_where(col("livemode").eq(true))
                        .and_where(col("id").eq(s.user_id)),
                )
                .await?;
            }
            Ok(())
        })
        .await
    }

    /// The session of a token hash, with its user, role and tenant.
    pub async fn console_session(&self, token_hash: &str) -> Result<Option<StoredSession>> {
        let (s, u, r, t) = ("console_sessions", "users", "roles", "tenants");
        let mut sel = Query::select();
        for c in ["tenant_id", "user_id", "csrf", "livemode", "created_at", "last_seen_at", "expires_at"] {
            sel.expr_as(tc(s, c), a(c));
        }
        sel.expr_as(tc(t, "name"), a("tenant_name"))
            .expr_as(tc(u, "email"), a("email"))
            .expr_as(tc(u, "name"), a("user_name"))
            .expr_as(tc(u, "status"), a("user_status"))
            .expr_as(tc(r, "name"), a("role_name"))
            .expr_as(tc(r, "permissions"), a("permissions"))
            .from(a(s))
            .inner_join(
                a(u),
                tc(u, "tenant_id")
                    .equals((a(s), a("tenant_id")))
                    .and(tc(u, "livemode").eq(true))
                    .and(tc(u, "id").equals((a(s), a("user_id")))),
            )
            .inner_join(a(t), tc(t, "id").equals((a(s), a("tenant_id"))))
            .left_join(
                a(r),
                tc(r, "tenant_id")
                    .equals((a(u), a("tenant_id")))
                    .and(tc(r, "livemode").equals((a(u), a("livemode"))))
                    .and(tc(r, "id").equals((a(u), a("role_id")))),
            )
            .and_where(tc(s, "token_hash").eq(token_hash));
        self.in_system(Intent::Read, async |tx| {
            let row = tx.fetch_optional(&sel).await?;
            let Some(row) = row else { return Ok(None) };
            let missing = || incomplete("console session");
            Ok(Some(StoredSession {
                tenant_id: row.opt_uuid("tenant_id")?.ok_or_else(missing)?,
                tenant_name: row.opt_string("tenant_name")?.ok_or_else(missing)?,
                user_id: row.opt_uuid("user_id")?.ok_or_else(missing)?,
                email: row.opt_string("email")?.ok_or_else(missing)?,
                name: row.opt_string("user_name")?.ok_or_else(missing)?,
                user_status: row.opt_string("user_status")?.ok_or_else(missing)?,
                role_name: row.opt_string("role_name")?,
                permissions: row.strings("permissions")?,
                csrf: row.opt_string("csrf")?.ok_or_else(missing)?,
                livemode: row.opt_bool("livemode")?.ok_or_else(missing)?,
                created_at: row.opt_datetime("created_at")?.ok_or_else(missing)?,
                last_seen_at: row.opt_datetime("last_seen_at")?.ok_or_else(missing)?,
                expires_at: row.opt_datetime("expires_at")?.ok_or_else(missing)?,
            }))
        })
        .await
    }

    /// Records that a session was used.
    pub async fn console_touch_session(&self, token_hash: &str, now: DateTime<Utc>) -> Result<()> {
        self.in_system(Intent::Write, async |tx| {
            tx.execute(
                Query::update().table(a("console_sessions")).value(a("last_seen_at"), now).and_where(col("token_hash").eq(token_hash)),
            )
            .await?;
            Ok(())
        })
        .await
    }

    pub async fn console_end_session(&self, token_hash: &str) -> Result<()> {
        self.in_system(Intent::Write, async |tx| {
            tx.execute(Query::delete().from_table(a("console_sessions")).and_where(col("token_hash").eq(token_hash))).await?;
            Ok(())
        })
        .await
    }

    /// Switches a session's environment; false when there is no such session.
    pub async fn console_set_session_livemode(&self, token_hash: &str, livemode: bool) -> Result<bool> {
        self.in_system(Intent::Write, async |tx| {
            let n = tx
                .execute(
                    Query::update().table(a("console_sessions")).value(a("livemode"), livemode).and_where(col("token_hash").eq(token_hash)),
                )
                .await?;
            Ok(n > 0)
        })
        .await
    }
}
