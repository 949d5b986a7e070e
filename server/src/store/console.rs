//! The console's storage: passwords, sessions, service accounts, key listings, and the
//! reads of the `users` and `roles` collections the console shows.
//!
//! Where each table is read (docs/console.md has the reasons):
//! - `console_credentials` (by email at sign-in) and `console_sessions` (by token hash on
//!   every console request) are Gable's own bookkeeping: system transactions, with the
//!   tenant condition written into every statement that acts for a tenant.
//! - `service_accounts` and `api_keys` are system tables too (as in `keys.rs`).
//! - `users` and `roles` are collections: listed in tenant transactions (row-level
//!   security on PostgreSQL), created through `Store::create`. Only the session lookup
//!   (which must find the user before any tenant is known) and `last_sign_in_at` (a
//!   read-only field Gable itself sets) touch them from a system transaction.

use chrono::{DateTime, Utc};
use sea_query::{Alias, Expr, Order, Query, SelectStatement};
use uuid::Uuid;

use super::keys::announce_evictions;
use super::records::Scope;
use super::{Intent, Row, Store};
use crate::domain::value::Val;
use crate::error::{Error, Result};

fn a(name: &str) -> Alias {
    Alias::new(name)
}

/// `table.column`.
fn tc(table: &str, column: &str) -> Expr {
    Expr::col((a(table), a(column)))
}

fn col(name: &str) -> Expr {
    Expr::col(a(name))
}

fn incomplete(what: &str) -> Error {
    Error::internal(anyhow::anyhow!("{what} row is incomplete"))
}

fn strings(v: Option<serde_json::Value>) -> Result<Vec<String>> {
    match v {
        Some(v) if !v.is_null() => serde_json::from_value(v).map_err(Error::internal),
        _ => Ok(vec![]),
    }
}

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

#[derive(Debug, Clone)]
pub struct ServiceAccountRow {
    pub id: Uuid,
    pub name: String,
    pub status: String,
    pub created_at: DateTime<Utc>,
    pub active_keys: i64,
}

#[derive(Debug, Clone)]
pub struct KeyRow {
    pub id: Uuid,
    pub service_account_id: Uuid,
    pub livemode: bool,
    pub prefix: String,
    pub scopes: Vec<String>,
    pub property_ids: Option<Vec<String>>,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub revoked_at: Option<DateTime<Utc>>,
}

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

/// What happened to a service account asked to change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    Done,
    /// No such account in the tenant (or it is deleted).
    Missing,
    /// Another account of the tenant has the name.
    NameTaken,
}

impl Store {
    // ---- passwords ---------------------------------------------------------------

    /// Whether a console account with this (lowercase) email exists anywhere in Gable.
    pub async fn console_email_taken(&self, email: &str) -> Result<bool> {
        let mut tx = self.begin_system(Intent::Read).await?;
        let row = tx
            .fetch_optional(Query::select().column(a("user_id")).from(a("console_credentials")).and_where(col("email").eq(email)))
            .await?;
        tx.commit().await?;
        Ok(row.is_some())
    }

    /// The password of the console account with this (lowercase) email.
    pub async fn console_credential(&self, email: &str) -> Result<Option<StoredCredential>> {
        let mut tx = self.begin_system(Intent::Read).await?;
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
        tx.commit().await?;
        let Some(r) = row else { return Ok(None) };
        let missing = || incomplete("console credential");
        Ok(Some(StoredCredential {
            tenant_id: r.opt_uuid("tenant_id")?.ok_or_else(missing)?,
            user_id: r.opt_uuid("user_id")?.ok_or_else(missing)?,
            password_hash: r.opt_string("password_hash")?.ok_or_else(missing)?,
            user_status: r.opt_string("user_status")?.ok_or_else(missing)?,
        }))
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
        let mut tx = self.begin_system(Intent::Write).await?;
        let d = tx.dialect();
        tx.execute(
            Query::insert()
                .into_table(a("console_credentials"))
                .columns(["tenant_id", "user_id", "email", "password_hash", "created_at", "updated_at"].map(a))
                .values_panic([
                    d.uuid(tenant).into(),
                    d.uuid(user).into(),
                    email.into(),
                    password_hash.into(),
                    d.ts(now).into(),
                    d.ts(now).into(),
                ]),
        )
        .await?;
        tx.commit().await
    }

    /// Replaces a stored password hash (a rehash with today's parameters).
    pub async fn console_set_password_hash(&self, tenant: Uuid, user: Uuid, password_hash: &str, now: DateTime<Utc>) -> Result<()> {
        let mut tx = self.begin_system(Intent::Write).await?;
        let d = tx.dialect();
        tx.execute(
            Query::update()
                .table(a("console_credentials"))
                .value(a("password_hash"), password_hash)
                .value(a("updated_at"), d.ts(now))
                .and_where(col("tenant_id").eq(d.uuid(tenant)))
                .and_where(col("user_id").eq(d.uuid(user))),
        )
        .await?;
        tx.commit().await
    }

    // ---- sessions ----------------------------------------------------------------

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
        let mut tx = self.begin_system(Intent::Write).await?;
        let d = tx.dialect();
        if let Some(prev) = previous_hash {
            tx.execute(Query::delete().from_table(a("console_sessions")).and_where(col("token_hash").eq(prev))).await?;
        }
        tx.execute(
            Query::delete()
                .from_table(a("console_sessions"))
                .and_where(col("tenant_id").eq(d.uuid(s.tenant_id)))
                .and_where(col("user_id").eq(d.uuid(s.user_id)))
                .and_where(col("expires_at").lte(d.ts(s.now)).or(col("last_seen_at").lte(d.ts(idle_cutoff)))),
        )
        .await?;
        tx.execute(
            Query::insert()
                .into_table(a("console_sessions"))
                .columns(["token_hash", "tenant_id", "user_id", "csrf", "livemode", "created_at", "last_seen_at", "expires_at"].map(a))
                .values_panic([
                    s.token_hash.into(),
                    d.uuid(s.tenant_id).into(),
                    d.uuid(s.user_id).into(),
                    s.csrf.into(),
                    s.livemode.into(),
                    d.ts(s.now).into(),
                    d.ts(s.now).into(),
                    d.ts(s.expires_at).into(),
                ]),
        )
        .await?;
        if signed_in {
            // A read-only field of the user record that only Gable sets; not an edit of
            // the record, so `updated_at` stays.
            tx.execute(
                Query::update()
                    .table(a("users"))
                    .value(a("last_sign_in_at"), d.ts(s.now))
                    .and_where(col("tenant_id").eq(d.uuid(s.tenant_id)))
                    .and_where(col("livemode").eq(true))
                    .and_where(col("id").eq(d.uuid(s.user_id))),
            )
            .await?;
        }
        tx.commit().await
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
        let mut tx = self.begin_system(Intent::Read).await?;
        let row = tx.fetch_optional(&sel).await?;
        tx.commit().await?;
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
            permissions: strings(row.opt_json("permissions")?)?,
            csrf: row.opt_string("csrf")?.ok_or_else(missing)?,
            livemode: row.opt_bool("livemode")?.ok_or_else(missing)?,
            created_at: row.opt_datetime("created_at")?.ok_or_else(missing)?,
            last_seen_at: row.opt_datetime("last_seen_at")?.ok_or_else(missing)?,
            expires_at: row.opt_datetime("expires_at")?.ok_or_else(missing)?,
        }))
    }

    /// Records that a session was used.
    pub async fn console_touch_session(&self, token_hash: &str, now: DateTime<Utc>) -> Result<()> {
        let mut tx = self.begin_system(Intent::Write).await?;
        let d = tx.dialect();
        tx.execute(
            Query::update().table(a("console_sessions")).value(a("last_seen_at"), d.ts(now)).and_where(col("token_hash").eq(token_hash)),
        )
        .await?;
        tx.commit().await
    }

    pub async fn console_end_session(&self, token_hash: &str) -> Result<()> {
        let mut tx = self.begin_system(Intent::Write).await?;
        tx.execute(Query::delete().from_table(a("console_sessions")).and_where(col("token_hash").eq(token_hash))).await?;
        tx.commit().await
    }

    /// Switches a session's environment; false when there is no such session.
    pub async fn console_set_session_livemode(&self, token_hash: &str, livemode: bool) -> Result<bool> {
        let mut tx = self.begin_system(Intent::Write).await?;
        let n = tx
            .execute(
                Query::update().table(a("console_sessions")).value(a("livemode"), livemode).and_where(col("token_hash").eq(token_hash)),
            )
            .await?;
        tx.commit().await?;
        Ok(n > 0)
    }

    /// Removes a tenant that a failed sign-up had begun to create (its sessions,
    /// passwords, users, roles, service accounts), so a sign-up is all or nothing.
    pub async fn console_discard_tenant(&self, tenant: Uuid) -> Result<()> {
        let mut tx = self.begin_system(Intent::Write).await?;
        let d = tx.dialect();
        for table in ["console_sessions", "console_credentials", "users", "roles", "api_keys", "service_accounts"] {
            tx.execute(Query::delete().from_table(a(table)).and_where(col("tenant_id").eq(d.uuid(tenant)))).await?;
        }
        tx.execute(Query::delete().from_table(a("tenants")).and_where(col("id").eq(d.uuid(tenant)))).await?;
        tx.commit().await
    }

    // ---- service accounts --------------------------------------------------------

    fn service_accounts_select(d: super::Dialect, tenant: Uuid) -> SelectStatement {
        let mut sel = Query::select();
        sel.columns(["id", "name", "status", "created_at"].map(a))
            .expr_as(
                Expr::cust(
                    "(SELECT COUNT(*) FROM api_keys WHERE api_keys.tenant_id = service_accounts.tenant_id \
                     AND api_keys.service_account_id = service_accounts.id AND api_keys.revoked_at IS NULL)",
                ),
                a("active_keys"),
            )
            .from(a("service_accounts"))
            .and_where(col("tenant_id").eq(d.uuid(tenant)))
            .and_where(col("deleted_at").is_null());
        sel
    }

    fn service_account_row(r: &Row) -> Result<ServiceAccountRow> {
        let missing = || incomplete("service account");
        Ok(ServiceAccountRow {
            id: r.opt_uuid("id")?.ok_or_else(missing)?,
            name: r.opt_string("name")?.ok_or_else(missing)?,
            status: r.opt_string("status")?.ok_or_else(missing)?,
            created_at: r.opt_datetime("created_at")?.ok_or_else(missing)?,
            active_keys: r.opt_i64("active_keys")?.unwrap_or(0),
        })
    }

    /// The tenant's service accounts that are not deleted, newest first.
    pub async fn console_service_accounts(&self, tenant: Uuid) -> Result<Vec<ServiceAccountRow>> {
        let mut tx = self.begin_system(Intent::Read).await?;
        let mut sel = Self::service_accounts_select(tx.dialect(), tenant);
        sel.order_by(a("created_at"), Order::Desc).order_by(a("id"), Order::Desc);
        let rows = tx.fetch_all(&sel).await?;
        tx.commit().await?;
        rows.iter().map(Self::service_account_row).collect()
    }

    /// One of the tenant's service accounts, unless deleted.
    pub async fn console_service_account(&self, tenant: Uuid, id: Uuid) -> Result<Option<ServiceAccountRow>> {
        let mut tx = self.begin_system(Intent::Read).await?;
        let d = tx.dialect();
        let mut sel = Self::service_accounts_select(d, tenant);
        sel.and_where(col("id").eq(d.uuid(id)));
        let row = tx.fetch_optional(&sel).await?;
        tx.commit().await?;
        row.as_ref().map(Self::service_account_row).transpose()
    }

    /// Whether another live account of the tenant has the name.
    async fn name_taken(tx: &mut super::Tx, tenant: Uuid, name: &str, except: Option<Uuid>) -> Result<bool> {
        let d = tx.dialect();
        let mut sel = Query::select();
        sel.column(a("id"))
            .from(a("service_accounts"))
            .and_where(col("tenant_id").eq(d.uuid(tenant)))
            .and_where(col("name").eq(name))
            .and_where(col("deleted_at").is_null());
        if let Some(id) = except {
            sel.and_where(col("id").ne(d.uuid(id)));
        }
        Ok(tx.fetch_optional(&sel).await?.is_some())
    }

    /// Creates a service account; `None` when the name is taken.
    pub async fn console_create_service_account(&self, tenant: Uuid, name: &str, now: DateTime<Utc>) -> Result<Option<Uuid>> {
        let mut tx = self.begin_system(Intent::Write).await?;
        let d = tx.dialect();
        if Self::name_taken(&mut tx, tenant, name, None).await? {
            return Ok(None);
        }
        let id = Uuid::now_v7();
        tx.execute(
            Query::insert()
                .into_table(a("service_accounts"))
                .columns(["tenant_id", "id", "name", "status", "created_at"].map(a))
                .values_panic([d.uuid(tenant).into(), d.uuid(id).into(), name.into(), "active".into(), d.ts(now).into()]),
        )
        .await?;
        tx.commit().await?;
        Ok(Some(id))
    }

    pub async fn console_rename_service_account(&self, tenant: Uuid, id: Uuid, name: &str) -> Result<Changed> {
        let mut tx = self.begin_system(Intent::Write).await?;
        let d = tx.dialect();
        if Self::name_taken(&mut tx, tenant, name, Some(id)).await? {
            return Ok(Changed::NameTaken);
        }
        let n = tx
            .execute(
                Query::update()
                    .table(a("service_accounts"))
                    .value(a("name"), name)
                    .and_where(col("tenant_id").eq(d.uuid(tenant)))
                    .and_where(col("id").eq(d.uuid(id)))
                    .and_where(col("deleted_at").is_null()),
            )
            .await?;
        tx.commit().await?;
        Ok(if n == 0 { Changed::Missing } else { Changed::Done })
    }

    /// The secret hashes of a service account's keys that are not revoked.
    async fn active_key_hashes(tx: &mut super::Tx, tenant: Uuid, service_account: Uuid) -> Result<Vec<(Uuid, String)>> {
        let d = tx.dialect();
        let rows = tx
            .fetch_all(
                Query::select()
                    .columns(["id", "secret_hash"].map(a))
                    .from(a("api_keys"))
                    .and_where(col("tenant_id").eq(d.uuid(tenant)))
                    .and_where(col("service_account_id").eq(d.uuid(service_account)))
                    .and_where(col("revoked_at").is_null()),
            )
            .await?;
        rows.iter()
            .map(|r| {
                Ok((
                    r.opt_uuid("id")?.ok_or_else(|| incomplete("api key"))?,
                    r.opt_string("secret_hash")?.ok_or_else(|| incomplete("api key"))?,
                ))
            })
            .collect()
    }

    /// Enables or disables a service account. Disabling refuses its keys at once: the
    /// key lookup requires an active account, and the keys are evicted from the key
    /// cache here and (PostgreSQL) in every process sharing the database.
    pub async fn console_set_service_account_status(&self, tenant: Uuid, id: Uuid, active: bool) -> Result<Changed> {
        let mut tx = self.begin_system(Intent::Write).await?;
        let d = tx.dialect();
        let n = tx
            .execute(
                Query::update()
                    .table(a("service_accounts"))
                    .value(a("status"), if active { "active" } else { "disabled" })
                    .and_where(col("tenant_id").eq(d.uuid(tenant)))
                    .and_where(col("id").eq(d.uuid(id)))
                    .and_where(col("deleted_at").is_null()),
            )
            .await?;
        if n == 0 {
            return Ok(Changed::Missing);
        }
        let hashes: Vec<String> =
            if active { vec![] } else { Self::active_key_hashes(&mut tx, tenant, id).await?.into_iter().map(|(_, h)| h).collect() };
        announce_evictions(&mut tx, &hashes).await?;
        tx.commit().await?;
        self.evict_keys(&hashes);
        Ok(Changed::Done)
    }

    /// Marks a service account deleted (its keys are refused from the commit on, since
    /// the key lookup requires an account not deleted) and returns the ids of its keys
    /// not yet revoked, for the caller to revoke; `None` when there is no such account.
    pub async fn console_mark_service_account_deleted(&self, tenant: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<Option<Vec<Uuid>>> {
        let mut tx = self.begin_system(Intent::Write).await?;
        let d = tx.dialect();
        let n = tx
            .execute(
                Query::update()
                    .table(a("service_accounts"))
                    .value(a("deleted_at"), d.ts(now))
                    .and_where(col("tenant_id").eq(d.uuid(tenant)))
                    .and_where(col("id").eq(d.uuid(id)))
                    .and_where(col("deleted_at").is_null()),
            )
            .await?;
        if n == 0 {
            return Ok(None);
        }
        let keys = Self::active_key_hashes(&mut tx, tenant, id).await?;
        let hashes: Vec<String> = keys.iter().map(|(_, h)| h.clone()).collect();
        announce_evictions(&mut tx, &hashes).await?;
        tx.commit().await?;
        self.evict_keys(&hashes);
        Ok(Some(keys.into_iter().map(|(k, _)| k).collect()))
    }

    // ---- keys --------------------------------------------------------------------

    fn key_row(r: &Row) -> Result<KeyRow> {
        let missing = || incomplete("api key");
        let property_ids = match r.opt_json("property_ids")? {
            Some(v) if !v.is_null() => Some(serde_json::from_value(v).map_err(Error::internal)?),
            _ => None,
        };
        Ok(KeyRow {
            id: r.opt_uuid("id")?.ok_or_else(missing)?,
            service_account_id: r.opt_uuid("service_account_id")?.ok_or_else(missing)?,
            livemode: r.opt_bool("livemode")?.ok_or_else(missing)?,
            prefix: r.opt_string("prefix")?.ok_or_else(missing)?,
            scopes: strings(r.opt_json("scopes")?)?,
            property_ids,
            created_at: r.opt_datetime("created_at")?.ok_or_else(missing)?,
            last_used_at: r.opt_datetime("last_used_at")?,
            revoked_at: r.opt_datetime("revoked_at")?,
        })
    }

    fn keys_select(d: super::Dialect, tenant: Uuid) -> SelectStatement {
        // Never the secret hash: what leaves here is shown.
        let mut sel = Query::select();
        sel.columns(
            ["id", "service_account_id", "livemode", "prefix", "scopes", "property_ids", "created_at", "last_used_at", "revoked_at"].map(a),
        )
        .from(a("api_keys"))
        .and_where(col("tenant_id").eq(d.uuid(tenant)));
        sel
    }

    /// A service account's keys in both environments, newest first.
    pub async fn console_keys(&self, tenant: Uuid, service_account: Uuid) -> Result<Vec<KeyRow>> {
        let mut tx = self.begin_system(Intent::Read).await?;
        let d = tx.dialect();
        let mut sel = Self::keys_select(d, tenant);
        sel.and_where(col("service_account_id").eq(d.uuid(service_account)))
            .order_by(a("created_at"), Order::Desc)
            .order_by(a("id"), Order::Desc);
        let rows = tx.fetch_all(&sel).await?;
        tx.commit().await?;
        rows.iter().map(Self::key_row).collect()
    }

    /// One of the tenant's keys.
    pub async fn console_key(&self, tenant: Uuid, key: Uuid) -> Result<Option<KeyRow>> {
        let mut tx = self.begin_system(Intent::Read).await?;
        let d = tx.dialect();
        let mut sel = Self::keys_select(d, tenant);
        sel.and_where(col("id").eq(d.uuid(key)));
        let row = tx.fetch_optional(&sel).await?;
        tx.commit().await?;
        row.as_ref().map(Self::key_row).transpose()
    }

    // ---- users and roles (collections, read in tenant transactions) -------------

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
                        Val::Json(j) => strings(Some(j.clone()))?,
                        _ => vec![],
                    },
                })
            })
            .collect()
    }
}
