//! OAuth apps (`oauth_clients`): registering, finding, changing and deleting them.

use chrono::{DateTime, Utc};
use sea_query::Query;
use uuid::Uuid;

use crate::error::Result;
use crate::store::keys::{hash_secret, random_secret};
use crate::store::sql::{a, col, incomplete};
use crate::store::{Intent, Row, Store};

/// A registered app.
#[derive(Debug, Clone)]
pub struct OAuthClient {
    pub id: Uuid,
    /// The tenant that registered it.
    pub tenant_id: Uuid,
    pub client_id: String,
    pub name: String,
    pub redirect_uris: Vec<String>,
    /// SHA-256 of the secret; `None` for a public client (PKCE alone).
    pub secret_hash: Option<String>,
    pub livemode: bool,
    pub created_at: DateTime<Utc>,
}

impl OAuthClient {
    pub fn is_public(&self) -> bool {
        self.secret_hash.is_none()
    }
}

/// An app to register.
pub struct NewOAuthClient<'a> {
    pub tenant_id: Uuid,
    pub name: &'a str,
    pub redirect_uris: &'a [String],
    pub public: bool,
    pub livemode: bool,
    pub now: DateTime<Utc>,
}

fn client_of(r: &Row) -> Result<OAuthClient> {
    let missing = || incomplete("oauth client");
    Ok(OAuthClient {
        id: r.opt_uuid("id")?.ok_or_else(missing)?,
        tenant_id: r.opt_uuid("tenant_id")?.ok_or_else(missing)?,
        client_id: r.opt_string("client_id")?.ok_or_else(missing)?,
        name: r.opt_string("name")?.ok_or_else(missing)?,
        redirect_uris: r.strings("redirect_uris")?,
        secret_hash: r.opt_string("secret_hash")?,
        livemode: r.opt_bool("livemode")?.ok_or_else(missing)?,
        created_at: r.opt_datetime("created_at")?.ok_or_else(missing)?,
    })
}

impl Store {
    /// Registers an app; returns it and, for a confidential client, its secret (once).
    pub async fn oauth_create_client(&self, new: NewOAuthClient<'_>) -> Result<(OAuthClient, Option<String>)> {
        let id = Uuid::now_v7();
        let client_id = random_secret(crate::domain::oauth::CLIENT_ID_PREFIX);
        let secret = (!new.public).then(|| random_secret(crate::domain::oauth::CLIENT_SECRET_PREFIX));
        let secret_hash = secret.as_deref().map(hash_secret);
        self.in_system(Intent::Write, async |tx| {
            tx.execute(
                Query::insert()
                    .into_table(a("oauth_clients"))
                    .columns(
                        ["id", "tenant_id", "client_id", "name", "redirect_uris", "secret_hash", "livemode", "created_at", "updated_at"]
                            .map(a),
                    )
                    .values_panic([
                        id.into(),
                        new.tenant_id.into(),
                        client_id.clone().into(),
                        new.name.into(),
                        serde_json::json!(new.redirect_uris).into(),
                        secret_hash.clone().into(),
                        new.livemode.into(),
                        new.now.into(),
                        new.now.into(),
                    ]),
            )
            .await?;
            let client = OAuthClient {
                id,
                tenant_id: new.tenant_id,
                client_id,
                name: new.name.to_string(),
                redirect_uris: new.redirect_uris.to_vec(),
                secret_hash,
                livemode: new.livemode,
                created_at: new.now,
            };
            Ok((client, secret))
        })
        .await
    }

    /// The app with this public `client_id`, unless deleted.
    pub async fn oauth_client(&self, client_id: &str) -> Result<Option<OAuthClient>> {
        if client_id.len() > 100 {
            return Ok(None);
        }
        self.in_system(Intent::Read, async |tx| {
            let row = tx
                .fetch_optional(
                    Query::select()
                        .columns(["id", "tenant_id", "client_id", "name", "redirect_uris", "secret_hash", "livemode", "created_at"].map(a))
                        .from(a("oauth_clients"))
                        .and_where(col("client_id").eq(client_id))
                        .and_where(col("deleted_at").is_null()),
                )
                .await?;
            row.as_ref().map(client_of).transpose()
        })
        .await
    }

    /// The apps a tenant registered, newest first (deleted ones left out).
    pub async fn oauth_clients_of(&self, tenant: Uuid) -> Result<Vec<OAuthClient>> {
        self.in_system(Intent::Read, async |tx| {
            let rows = tx
                .fetch_all(
                    Query::select()
                        .columns(["id", "tenant_id", "client_id", "name", "redirect_uris", "secret_hash", "livemode", "created_at"].map(a))
                        .from(a("oauth_clients"))
                        .and_where(col("tenant_id").eq(tenant))
                        .and_where(col("deleted_at").is_null())
                        .order_by(a("created_at"), sea_query::Order::Desc),
                )
                .await?;
            rows.iter().map(client_of).collect()
        })
        .await
    }

    /// Changes an app of the tenant: its redirect URIs and, when given, its secret's hash.
    /// False when the tenant has no such app.
    pub async fn oauth_update_client(
        &self,
        tenant: Uuid,
        id: Uuid,
        redirect_uris: Option<&[String]>,
        secret_hash: Option<&str>,
        now: DateTime<Utc>,
    ) -> Result<bool> {
        self.in_system(Intent::Write, async |tx| {
            let mut q = Query::update();
            q.table(a("oauth_clients")).value(a("updated_at"), now);
            if let Some(uris) = redirect_uris {
                q.value(a("redirect_uris"), serde_json::json!(uris));
            }
            if let Some(h) = secret_hash {
                q.value(a("secret_hash"), h);
            }
            q.and_where(col("tenant_id").eq(tenant)).and_where(col("id").eq(id)).and_where(col("deleted_at").is_null());
            let n = tx.execute(&q).await?;
            Ok(n == 1)
        })
        .await
    }

    /// Deletes an app of the tenant (softly) and revokes every authorization it holds.
    pub async fn oauth_delete_client(&self, tenant: Uuid, id: Uuid, now: DateTime<Utc>) -> Result<bool> {
        self.in_system(Intent::Write, async |tx| {
            let n = tx
                .execute(
                    Query::update()
                        .table(a("oauth_clients"))
                        .value(a("deleted_at"), now)
                        .and_where(col("tenant_id").eq(tenant))
                        .and_where(col("id").eq(id))
                        .and_where(col("deleted_at").is_null()),
                )
                .await?;
            tx.execute(
                Query::update()
                    .table(a("oauth_grants"))
                    .value(a("revoked_at"), now)
                    .and_where(col("client_id").eq(id))
                    .and_where(col("revoked_at").is_null()),
            )
            .await?;
            Ok(n == 1)
        })
        .await
    }
}
