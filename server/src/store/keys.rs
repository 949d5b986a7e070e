//! Tenants, service accounts and API keys: Gable's own bookkeeping, outside any tenant.

use chrono::{DateTime, Utc};
use rand::{distributions::Alphanumeric, rngs::OsRng, Rng};
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use super::{Intent, Store};
use crate::error::{Error, Result};

/// Authenticated keys, kept briefly so a request costs one database query, not two.
/// A revocation (or disabling the key's service account) evicts its key at once in the
/// revoking process and, on PostgreSQL, in every process (NOTIFY on
/// `REVOCATION_CHANNEL`); elsewhere (the CLI revoking
/// under a running SQLite server) the entry lives at most `KEY_CACHE_TTL`.
#[derive(Clone)]
pub struct KeyCache(moka::sync::Cache<String, ApiKey>);

pub const KEY_CACHE_TTL: std::time::Duration = std::time::Duration::from_secs(2);
pub const REVOCATION_CHANNEL: &str = "gable_key_revoked";

impl KeyCache {
    pub fn new() -> Self {
        KeyCache(moka::sync::Cache::builder().max_capacity(100_000).time_to_live(KEY_CACHE_TTL).build())
    }
    pub fn evict(&self, secret_hash: &str) {
        self.0.invalidate(secret_hash);
    }
    pub fn clear(&self) {
        self.0.invalidate_all();
    }
}

impl Default for KeyCache {
    fn default() -> Self {
        Self::new()
    }
}

/// `last_used_at` is written at most this often, so reads do not turn into writes.
const LAST_USED_PRECISION_SECS: i64 = 60;

/// A key as the authentication layer sees it (never the secret).
#[derive(Debug, Clone)]
pub struct ApiKey {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub livemode: bool,
    pub scopes: Vec<String>,
    pub property_ids: Option<Vec<Uuid>>,
    pub revoked: bool,
    pub last_used_at: Option<DateTime<Utc>>,
}

/// How much of a key is kept in plain (`gbl_test_AbCd`): what the console lists beside a
/// key and the request log shows, never enough to use it.
pub const PREFIX_CHARS: usize = 13;

/// A freshly created key: the only time the secret exists outside the caller's hands.
#[derive(Debug, serde::Serialize)]
pub struct IssuedKey {
    pub id: Uuid,
    pub tenant_id: Uuid,
    pub service_account_id: Uuid,
    pub environment: &'static str,
    pub prefix: String,
    pub secret: String,
    pub scopes: Vec<String>,
    pub property_ids: Option<Vec<Uuid>>,
}

pub fn hash_secret(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// `gbl_live_…` / `gbl_test_…` with 43 base-62 characters: about 256 bits from the OS.
pub fn generate_secret(livemode: bool) -> String {
    random_secret(if livemode { "gbl_live_" } else { "gbl_test_" })
}

/// A secret with a prefix that says what it is (`gbl_…`, `gft_…`, `gat_…`): 43 base-62
/// characters, about 256 bits from the OS. Gable keeps only its SHA-256.
pub fn random_secret(prefix: &str) -> String {
    let body: String = OsRng.sample_iter(&Alphanumeric).take(43).map(char::from).collect();
    format!("{prefix}{body}")
}

use sea_query::{Alias, Expr, Query, Value};

impl Store {
    pub async fn create_tenant(&self, name: &str) -> Result<Uuid> {
        let tenant = Uuid::now_v7();
        self.in_system(Intent::Write, async |tx| {
            tx.execute(
                Query::insert()
                    .into_table(Alias::new("tenants"))
                    .columns([Alias::new("id"), Alias::new("name"), Alias::new("created_at")])
                    .values_panic([tenant.into(), name.into(), Utc::now().into()]),
            )
            .await?;
            Ok(tenant)
        })
        .await
    }

    pub async fn tenant_exists(&self, tenant: Uuid) -> Result<bool> {
        self.in_system(Intent::Read, async |tx| {
            let row = tx
                .fetch_optional(
                    Query::select().column(Alias::new("id")).from(Alias::new("tenants")).and_where(Expr::col(Alias::new("id")).eq(tenant)),
                )
                .await?;
            Ok(row.is_some())
        })
        .await
    }

    pub async fn count_tenants(&self) -> Result<i64> {
        self.in_system(Intent::Read, async |tx| {
            let row =
                tx.fetch_optional(Query::select().expr_as(Expr::cust("COUNT(*)"), Alias::new("n")).from(Alias::new("tenants"))).await?;
            Ok(row.map(|r| r.opt_i64("n")).transpose()?.flatten().unwrap_or(0))
        })
        .await
    }

    /// The tenant's service account of this name (not deleted), created if missing.
    pub async fn service_account(&self, tenant: Uuid, name: &str) -> Result<Uuid> {
        match self.service_account_once(tenant, name).await {
            // Created by someone else meanwhile (names are unique among accounts not deleted).
            Err(Error::Conflict(_)) => self.service_account_once(tenant, name).await,
            found => found,
        }
    }

    async fn service_account_once(&self, tenant: Uuid, name: &str) -> Result<Uuid> {
        self.in_system(Intent::Write, async |tx| {
            let existing = tx
                .fetch_optional(
                    Query::select()
                        .column(Alias::new("id"))
                        .from(Alias::new("service_accounts"))
                        .and_where(Expr::col(Alias::new("tenant_id")).eq(tenant))
                        .and_where(Expr::col(Alias::new("name")).eq(name))
                        .and_where(Expr::col(Alias::new("deleted_at")).is_null()),
                )
                .await?;
            let sa = match existing {
                Some(row) => row.opt_uuid("id")?.ok_or_else(|| Error::internal(anyhow::anyhow!("service account without id")))?,
                None => {
                    let sa = Uuid::now_v7();
                    tx.execute(
                        Query::insert()
                            .into_table(Alias::new("service_accounts"))
                            .columns([Alias::new("tenant_id"), Alias::new("id"), Alias::new("name"), Alias::new("created_at")])
                            .values_panic([tenant.into(), sa.into(), name.into(), Utc::now().into()]),
                    )
                    .await?;
                    sa
                }
            };
            Ok(sa)
        })
        .await
    }

    pub async fn create_key(
        &self,
        tenant: Uuid,
        service_account: Uuid,
        livemode: bool,
        scopes: Vec<String>,
        property_ids: Option<Vec<Uuid>>,
    ) -> Result<IssuedKey> {
        crate::domain::scopes::validate("scopes", &scopes)?;
        if property_ids.is_some() {
            crate::domain::scopes::validate_for_properties("scopes", &scopes)?;
        }
        let secret = generate_secret(livemode);
        let key_id = Uuid::now_v7();
        let prefix: String = secret.chars().take(PREFIX_CHARS).collect();
        self.in_system(Intent::Write, async |tx| {
            if let Some(props) = &property_ids {
                // Every constrained property must exist in the tenant and environment.
                for p in props {
                    let found = tx
                        .fetch_optional(
                            Query::select()
                                .column(Alias::new("id"))
                                .from(Alias::new("properties"))
                                .and_where(Expr::col(Alias::new("tenant_id")).eq(tenant))
                                .and_where(Expr::col(Alias::new("livemode")).eq(livemode))
                                .and_where(Expr::col(Alias::new("id")).eq(*p)),
                        )
                        .await?;
                    if found.is_none() {
                        return Err(Error::NotFound { message: format!("no such property {p}"), param: Some("properties".into()) });
                    }
                }
            }
            tx.execute(
                Query::insert()
                    .into_table(Alias::new("api_keys"))
                    .columns(
                        [
                            "id",
                            "tenant_id",
                            "service_account_id",
                            "livemode",
                            "prefix",
                            "secret_hash",
                            "scopes",
                            "property_ids",
                            "created_at",
                        ]
                        .map(Alias::new),
                    )
                    .values_panic([
                        key_id.into(),
                        tenant.into(),
                        service_account.into(),
                        livemode.into(),
                        prefix.clone().into(),
                        hash_secret(&secret).into(),
                        serde_json::json!(scopes).into(),
                        match &property_ids {
                            Some(p) => serde_json::json!(p).into(),
                            None => Value::Json(None).into(),
                        },
                        Utc::now().into(),
                    ]),
            )
            .await?;
            Ok(IssuedKey {
                id: key_id,
                tenant_id: tenant,
                service_account_id: service_account,
                environment: if livemode { "live" } else { "test" },
                prefix,
                secret,
                scopes,
                property_ids,
            })
        })
        .await
    }

    /// Finds the key a secret belongs to. The lookup is by hash; the stored hash is then
    /// compared in constant time as well.
    pub async fn find_key(&self, secret: &str) -> Result<Option<ApiKey>> {
        self.find_key_by_hash(&hash_secret(secret)).await
    }

    async fn find_key_by_hash(&self, hash: &str) -> Result<Option<ApiKey>> {
        if let Some(k) = self.keys.0.get(hash) {
            return Ok(Some(k));
        }
        let found = self.find_key_uncached(hash).await?;
        if let Some(k) = &found {
            self.keys.0.insert(hash.to_string(), k.clone());
        }
        Ok(found)
    }

    /// The active key a secret belongs to, recording its use (at most once a minute).
    pub async fn active_key(&self, secret: &str, now: DateTime<Utc>) -> Result<Option<ApiKey>> {
        let hash = hash_secret(secret);
        let Some(mut key) = self.find_key_by_hash(&hash).await?.filter(|k| !k.revoked) else { return Ok(None) };
        if key.last_used_at.is_none_or(|t| (now - t).num_seconds() >= LAST_USED_PRECISION_SECS) {
            key.last_used_at = Some(now);
            self.keys.0.insert(hash, key.clone());
            let store = self.clone();
            let id = key.id;
            tokio::spawn(async move {
                if let Err(e) = store.touch_key(id, now).await {
                    tracing::warn!(error = %e, "could not record last_used_at");
                }
            });
        }
        Ok(Some(key))
    }

    /// The key of a secret hash, if its service account is active: a disabled or deleted
    /// account's keys are refused like unknown ones.
    async fn find_key_uncached(&self, hash: &str) -> Result<Option<ApiKey>> {
        let hash = hash.to_string();
        let (k, sa) = (Alias::new("api_keys"), Alias::new("service_accounts"));
        let kc = |c: &str| Expr::col((k.clone(), Alias::new(c)));
        let sc = |c: &str| Expr::col((sa.clone(), Alias::new(c)));
        self.in_system(Intent::Read, async |tx| {
            let row = tx
                .fetch_optional(
                    Query::select()
                        .columns(
                            ["id", "tenant_id", "livemode", "secret_hash", "scopes", "property_ids", "revoked_at", "last_used_at"]
                                .map(|c| (k.clone(), Alias::new(c))),
                        )
                        .from(k.clone())
                        .inner_join(
                            sa.clone(),
                            sc("tenant_id")
                                .equals((k.clone(), Alias::new("tenant_id")))
                                .and(sc("id").equals((k.clone(), Alias::new("service_account_id")))),
                        )
                        .and_where(kc("secret_hash").eq(hash.clone()))
                        .and_where(sc("status").eq("active"))
                        .and_where(sc("deleted_at").is_null()),
                )
                .await?;
            let Some(row) = row else { return Ok(None) };
            let stored = row.opt_string("secret_hash")?.unwrap_or_default();
            if !bool::from(stored.as_bytes().ct_eq(hash.as_bytes())) {
                return Ok(None);
            }
            let missing = || Error::internal(anyhow::anyhow!("api key row is incomplete"));
            let scopes: Vec<String> = serde_json::from_value(row.opt_json("scopes")?.ok_or_else(missing)?).map_err(Error::internal)?;
            let property_ids: Option<Vec<Uuid>> = match row.opt_json("property_ids")? {
                Some(v) if !v.is_null() => Some(serde_json::from_value(v).map_err(Error::internal)?),
                _ => None,
            };
            Ok(Some(ApiKey {
                id: row.opt_uuid("id")?.ok_or_else(missing)?,
                tenant_id: row.opt_uuid("tenant_id")?.ok_or_else(missing)?,
                livemode: row.opt_bool("livemode")?.ok_or_else(missing)?,
                scopes,
                property_ids,
                revoked: row.opt_datetime("revoked_at")?.is_some(),
                last_used_at: row.opt_datetime("last_used_at")?,
            }))
        })
        .await
    }

    pub async fn touch_key(&self, key: Uuid, at: DateTime<Utc>) -> Result<()> {
        self.in_system(Intent::Write, async |tx| {
            tx.execute(
                Query::update()
                    .table(Alias::new("api_keys"))
                    .value(Alias::new("last_used_at"), at)
                    .and_where(Expr::col(Alias::new("id")).eq(key)),
            )
            .await?;
            Ok(())
        })
        .await
    }

    /// Revokes a key; it is refused from the next request on, in every process.
    pub async fn revoke_key(&self, tenant: Uuid, key: Uuid) -> Result<bool> {
        let revoked = self
            .in_system(Intent::Write, async |tx| {
                let row = tx
                    .fetch_optional(
                        Query::update()
                            .table(Alias::new("api_keys"))
                            .value(Alias::new("revoked_at"), Utc::now())
                            .and_where(Expr::col(Alias::new("id")).eq(key))
                            .and_where(Expr::col(Alias::new("tenant_id")).eq(tenant))
                            .and_where(Expr::col(Alias::new("revoked_at")).is_null())
                            .returning_col(Alias::new("secret_hash")),
                    )
                    .await?;
                let Some(hash) = row.map(|r| r.opt_string("secret_hash")).transpose()?.flatten() else {
                    return Ok(None);
                };
                announce_evictions(tx, std::slice::from_ref(&hash)).await?;
                Ok(Some(hash))
            })
            .await?;
        // Evicted once committed: a lookup in between would cache the key again.
        self.evict_keys(revoked.as_slice());
        Ok(revoked.is_some())
    }

    /// Forgets authenticated keys in this process's cache. Call after the transaction
    /// that refused them (and announced it with `announce_evictions`) has committed.
    pub fn evict_keys(&self, secret_hashes: &[String]) {
        for h in secret_hashes {
            self.keys.evict(h);
        }
    }
}

/// Tells every process sharing the database (PostgreSQL) to forget these keys: the
/// notifications are delivered when `tx` commits, so none arrives for a change that
/// was rolled back. On SQLite (one server process) this does nothing.
pub async fn announce_evictions(tx: &mut super::Tx, secret_hashes: &[String]) -> Result<()> {
    if tx.dialect() == super::Dialect::Postgres {
        for h in secret_hashes {
            tx.execute(Query::select().expr(Expr::cust_with_values("pg_notify($1, $2)", [REVOCATION_CHANNEL, h.as_str()]))).await?;
        }
    }
    Ok(())
}
