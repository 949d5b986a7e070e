//! The console's listing of API keys (`api_keys`), without their secret hashes: what
//! the console shows of a service account's keys. Creating, authenticating and revoking
//! keys is `store/keys.rs`.

use chrono::{DateTime, Utc};
use sea_query::{Order, Query, SelectStatement};
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::store::sql::{a, col, incomplete};
use crate::store::{Intent, Row, Store};

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

impl Store {
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
            scopes: r.strings("scopes")?,
            property_ids,
            created_at: r.opt_datetime("created_at")?.ok_or_else(missing)?,
            last_used_at: r.opt_datetime("last_used_at")?,
            revoked_at: r.opt_datetime("revoked_at")?,
        })
    }

    fn keys_select(tenant: Uuid) -> SelectStatement {
        // Never the secret hash: what leaves here is shown.
        let mut sel = Query::select();
        sel.columns(
            ["id", "service_account_id", "livemode", "prefix", "scopes", "property_ids", "created_at", "last_used_at", "revoked_at"].map(a),
        )
        .from(a("api_keys"))
        .and_where(col("tenant_id").eq(tenant));
        sel
    }

    /// A service account's keys in both environments, newest first.
    pub async fn console_keys(&self, tenant: Uuid, service_account: Uuid) -> Result<Vec<KeyRow>> {
        self.in_system(Intent::Read, async |tx| {
            let mut sel = Self::keys_select(tenant);
            sel.and_where(col("service_account_id").eq(service_account))
                .order_by(a("created_at"), Order::Desc)
                .order_by(a("id"), Order::Desc);
            let rows = tx.fetch_all(&sel).await?;
            rows.iter().map(Self::key_row).collect()
        })
        .await
    }

    /// One of the tenant's keys.
    pub async fn console_key(&self, tenant: Uuid, key: Uuid) -> Result<Option<KeyRow>> {
        self.in_system(Intent::Read, async |tx| {
            let mut sel = Self::keys_select(tenant);
            sel.and_where(col("id").eq(key));
            let row = tx.fetch_optional(&sel).await?;
            row.as_ref().map(Self::key_row).transpose()
        })
        .await
    }
}
