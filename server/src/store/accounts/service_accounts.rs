//! The console's service accounts (`service_accounts`): listing, creating, renaming,
//! enabling, disabling and deleting them. Disabling or deleting one refuses its keys, so
//! this file announces those keys' evictions too.

use chrono::{DateTime, Utc};
use sea_query::{Expr, Order, Query, SelectStatement, SimpleExpr, UpdateStatement};
use uuid::Uuid;

use crate::error::Result;
use crate::store::keys::announce_evictions;
use crate::store::sql::{a, col, incomplete};
use crate::store::{Intent, Row, Store, Tx};

#[derive(Debug, Clone)]
pub struct ServiceAccountRow {
    pub id: Uuid,
    pub name: String,
    pub status: String,
    pub created_at: DateTime<Utc>,
    pub active_keys: i64,
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
    fn service_accounts_select(tenant: Uuid) -> SelectStatement {
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
            .and_where(col("tenant_id").eq(tenant))
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
        self.in_system(Intent::Read, async |tx| {
            let mut sel = Self::service_accounts_select(tenant);
            sel.order_by(a("created_at"), Order::Desc).order_by(a("id"), Order::Desc);
            let rows = tx.fetch_all(&sel).await?;
            rows.iter().map(Self::service_account_row).collect()
        })
        .await
    }

    /// One of the tenant's service accounts, unless deleted.
    pub async fn console_service_account(&self, tenant: Uuid, id: Uuid) -> Result<Option<ServiceAccountRow>> {
        self.in_system(Intent::Read, async |tx| {
            let mut sel = Self::service_accounts_select(tenant);
            sel.and_where(col("id").eq(id));
            let row = tx.fetch_optional(&sel).await?;
            row.as_ref().map(Self::service_account_row).transpose()
        })
        .await
    }

    /// Whether another live account of the tenant has the name.
    async fn name_taken(tx: &mut Tx, tenant: Uuid, name: &str, except: Option<Uuid>) -> Result<bool> {
        let mut sel = Query::select();
        sel.column(a("id"))
            .from(a("service_accounts"))
            .and_where(col("tenant_id").eq(tenant))
            .and_where(col("name").eq(name))
            .and_where(col("deleted_at").is_null());
        if let Some(id) = except {
            sel.and_where(col("id").ne(id));
        }
        Ok(tx.fetch_optional(&sel).await?.is_some())
    }

    /// Creates a service account; `None` when the name is taken.
    pub async fn console_create_service_account(&self, tenant: Uuid, name: &str, now: DateTime<Utc>) -> Result<Option<Uuid>> {
        self.in_system(Intent::Write, async |tx| {
            if Self::name_taken(tx, tenant, name, None).await? {
                return Ok(None);
            }
            let id = Uuid::now_v7();
            tx.execute(
                Query::insert()
                    .into_table(a("service_accounts"))
                    .columns(["tenant_id", "id", "name", "status", "created_at"].map(a))
                    .values_panic([tenant.into(), id.into(), name.into(), "active".into(), now.into()]),
            )
            .await?;
            Ok(Some(id))
        })
        .await
    }

    pub async fn console_rename_service_account(&self, tenant: Uuid, id: Uuid, name: &str) -> Result<Changed> {
        self.in_system(Intent::Write, async |tx| {
            if Self::name_taken(tx, tenant, name, Some(id)).await? {
                return Ok(Changed::NameTaken);
            }
            let n = tx.execute(&update_account(tenant, id, "name", name)).await?;
            Ok(if n == 0 { Changed::Missing } else { Changed::Done })
        })
        .await
    }

    /// The secret hashes of a service account's keys that are not revoked.
    async fn active_key_hashes(tx: &mut Tx, tenant: Uuid, service_account: Uuid) -> Result<Vec<(Uuid, String)>> {
        let rows = tx
            .fetch_all(
                Query::select()
                    .columns(["id", "secret_hash"].map(a))
                    .from(a("api_keys"))
                    .and_where(col("tenant_id").eq(tenant))
                    .and_where(col("service_account_id").eq(service_account))
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
        let changed = self
            .in_system(Intent::Write, async |tx| {
                let n = tx.execute(&update_account(tenant, id, "status", if active { "active" } else { "disabled" })).await?;
                if n == 0 {
                    return Ok(None);
                }
                let hashes: Vec<String> =
                    if active { vec![] } else { Self::active_key_hashes(tx, tenant, id).await?.into_iter().map(|(_, h)| h).collect() };
                announce_evictions(tx, &hashes).await?;
                Ok(Some(hashes))
            })
            .await?;
        // Evicted once committed: a lookup in between would cache the keys again.
        let Some(hashes) = changed else { return Ok(Changed::Missing) };
        self.evict_keys(&hashes);
        Ok(Changed::Done)
    }

    /// Marks a service account deleted (its keys are refused from the commit on, since
    /// the key lookup requires an account not deleted) and returns the ids of its keys
    /// not yet revoked, for the caller to revoke; `None` when there is no such account.
    pub async fn console_mark_service_account_deleted(&self, tenant: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<Option<Vec<Uuid>>> {
        let deleted = self
            .in_system(Intent::Write, async |tx| {
                let n = tx.execute(&update_account(tenant, id, "deleted_at", now)).await?;
                if n == 0 {
                    return Ok(None);
                }
                let keys = Self::active_key_hashes(tx, tenant, id).await?;
                let hashes: Vec<String> = keys.iter().map(|(_, h)| h.clone()).collect();
                announce_evictions(tx, &hashes).await?;
                Ok(Some(keys))
            })
            .await?;
        // Evicted once committed: a lookup in between would cache the keys again.
        let Some(keys) = deleted else { return Ok(None) };
        self.evict_keys(&keys.iter().map(|(_, h)| h.clone()).collect::<Vec<_>>());
        Ok(Some(keys.into_iter().map(|(k, _)| k).collect()))
    }
}

/// An update of one column of a tenant's service account that is not deleted.
fn update_account(tenant: Uuid, id: Uuid, column: &str, value: impl Into<SimpleExpr>) -> UpdateStatement {
    Query::update()
        .table(a("service_accounts"))
        .value(a(column), value)
        .and_where(col("tenant_id").eq(tenant))
        .and_where(col("id").eq(id))
        .and_where(col("deleted_at").is_null())
        .to_owned()
}
