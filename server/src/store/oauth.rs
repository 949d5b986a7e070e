//! OAuth 2.1's storage (`crate::ops::oauth`): apps, grants (one authorization and the
//! family of its code and tokens), codes and tokens. System tables, read outside any
//! tenant: an app of one tenant is authorized by users of others, and a token is found
//! by its hash before anyone knows its tenant. Codes, secrets and tokens are kept only
//! as SHA-256.

use chrono::{DateTime, Utc};
use sea_query::Query;
use uuid::Uuid;

use super::keys::{hash_secret, random_secret};
use super::sql::{a, col, incomplete, tc};
use super::{Intent, Row, Store, Tx};
use crate::error::Result;

/// A registered app.
#[derive(Debug, Clone)]
pub struct Client {
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

impl Client {
    pub fn is_public(&self) -> bool {
        self.secret_hash.is_none()
    }
}

/// An app to register.
pub struct NewClient<'a> {
    pub tenant_id: Uuid,
    pub name: &'a str,
    pub redirect_uris: &'a [String],
    pub public: bool,
    pub livemode: bool,
    pub now: DateTime<Utc>,
}

/// A grant with what a token needs of it.
#[derive(Debug, Clone)]
pub struct Grant {
    pub id: Uuid,
    pub client: Uuid,
    pub tenant_id: Uuid,
    pub user_id: Uuid,
    pub livemode: bool,
    pub scopes: Vec<String>,
    pub revoked: bool,
    /// When a token of the grant last reached the API (to the minute).
    pub last_used_at: Option<DateTime<Utc>>,
    /// Whether the granting user is active (a live `users` record with status `active`).
    pub user_active: bool,
    /// The permissions of the granting user's current role (none without a role): a
    /// grant acts only within them, whatever it holds.
    pub role_permissions: Vec<String>,
}

/// A code as stored, with its grant.
#[derive(Debug, Clone)]
pub struct Code {
    pub grant: Grant,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub expires_at: DateTime<Utc>,
    pub used: bool,
}

/// A token as stored, with its grant.
#[derive(Debug, Clone)]
pub struct Token {
    pub grant: Grant,
    pub kind: String,
    pub scopes: Vec<String>,
    pub expires_at: DateTime<Utc>,
    pub used: bool,
}

/// A freshly issued pair: the only time the secrets exist outside the client's hands.
#[derive(Debug, Clone)]
pub struct Issued {
    pub access_token: String,
    pub refresh_token: String,
    pub scopes: Vec<String>,
}

const GRANT_COLUMNS: [&str; 8] = ["id", "client_id", "tenant_id", "user_id", "livemode", "scopes", "revoked_at", "last_used_at"];

fn grant_of(row: &Row) -> Result<Grant> {
    let missing = || incomplete("oauth grant");
    Ok(Grant {
        id: row.opt_uuid("g_id")?.ok_or_else(missing)?,
        client: row.opt_uuid("g_client_id")?.ok_or_else(missing)?,
        tenant_id: row.opt_uuid("g_tenant_id")?.ok_or_else(missing)?,
        user_id: row.opt_uuid("g_user_id")?.ok_or_else(missing)?,
        livemode: row.opt_bool("g_livemode")?.ok_or_else(missing)?,
        scopes: row.strings("g_scopes")?,
        revoked: row.opt_datetime("g_revoked_at")?.is_some(),
        last_used_at: row.opt_datetime("g_last_used_at")?,
        user_active: row.opt_string("g_user_status")?.as_deref() == Some("active"),
        role_permissions: row.strings("g_role_permissions")?,
    })
}

fn client_of(r: &Row) -> Result<Client> {
    let missing = || incomplete("oauth client");
    Ok(Client {
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

/// A standing authorization as "Connected apps" lists it.
#[derive(Debug, Clone)]
pub struct GrantRow {
    pub id: Uuid,
    /// The app (`oauth_clients.id`).
    pub client: Uuid,
    pub user_id: Uuid,
    pub email: String,
    pub app_name: String,
    pub livemode: bool,
    pub scopes: Vec<String>,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

/// The join condition of a live tenant record (`users`, `roles`) named by `from.column`,
/// in `from`'s tenant: users and roles are live records whatever the grant's environment.
fn live_record(table: &str, from: &str, column: &str) -> sea_query::SimpleExpr {
    tc(table, "tenant_id")
        .equals((a(from), a("tenant_id")))
        .and(tc(table, "livemode").eq(true))
        .and(tc(table, "id").equals((a(from), a(column))))
}

/// A select of `table` joined to its grant, the grant's columns as `g_*`.
fn with_grant(table: &str) -> sea_query::SelectStatement {
    let mut q = Query::select();
    q.from(a(table)).inner_join(a("oauth_grants"), tc("oauth_grants", "id").equals((a(table), a("grant_id"))));
    for c in GRANT_COLUMNS {
        q.expr_as(tc("oauth_grants", c), a(&format!("g_{c}")));
    }
    // The user and their role, in the same query: tokens act only while their user is
    // active, and only within what the user's role allows now (a demotion takes effect
    // at the next request).
    q.expr_as(tc("users", "status"), a("g_user_status"))
        .expr_as(tc("roles", "permissions"), a("g_role_permissions"))
        .left_join(a("users"), live_record("users", "oauth_grants", "user_id"))
        .left_join(a("roles"), live_record("roles", "users", "role_id"));
    q
}

impl Store {
    // ---- apps --------------------------------------------------------------------

    /// Registers an app; returns it and, for a confidential client, its secret (once).
    pub async fn oauth_create_client(&self, new: NewClient<'_>) -> Result<(Client, Option<String>)> {
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
            let client = Client {
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
    pub async fn oauth_client(&self, client_id: &str) -> Result<Option<Client>> {
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
    pub async fn oauth_clients_of(&self, tenant: Uuid) -> Result<Vec<Client>> {
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

    /// The standing authorizations users of a tenant gave (`user`: one user's only), with
    /// their apps' names and the users' emails, newest first.
    pub async fn oauth_grants_of(&self, tenant: Uuid, user: Option<Uuid>) -> Result<Vec<GrantRow>> {
        let (g, c, u) = ("oauth_grants", "oauth_clients", "users");
        self.in_system(Intent::Read, async |tx| {
            let mut q = Query::select();
            for col_name in ["id", "client_id", "user_id", "livemode", "scopes", "created_at", "last_used_at"] {
                q.expr_as(tc(g, col_name), a(col_name));
            }
            q.expr_as(tc(c, "name"), a("app_name"))
                .expr_as(tc(u, "email"), a("email"))
                .from(a(g))
                .inner_join(a(c), tc(c, "id").equals((a(g), a("client_id"))))
                .left_join(a(u), live_record(u, g, "user_id"))
                .and_where(tc(g, "tenant_id").eq(tenant))
                .and_where(tc(g, "revoked_at").is_null())
                .order_by((a(g), a("created_at")), sea_query::Order::Desc);
            if let Some(user) = user {
                q.and_where(tc(g, "user_id").eq(user));
            }
            let rows = tx.fetch_all(&q).await?;
            let missing = || incomplete("oauth grant");
            rows.iter()
                .map(|r| {
                    Ok(GrantRow {
                        id: r.opt_uuid("id")?.ok_or_else(missing)?,
                        client: r.opt_uuid("client_id")?.ok_or_else(missing)?,
                        user_id: r.opt_uuid("user_id")?.ok_or_else(missing)?,
                        email: r.opt_string("email")?.unwrap_or_default(),
                        app_name: r.opt_string("app_name")?.ok_or_else(missing)?,
                        livemode: r.opt_bool("livemode")?.ok_or_else(missing)?,
                        scopes: r.strings("scopes")?,
                        created_at: r.opt_datetime("created_at")?.ok_or_else(missing)?,
                        last_used_at: r.opt_datetime("last_used_at")?,
                    })
                })
                .collect()
        })
        .await
    }

    /// Disconnects an app from a user of the tenant: every standing grant that user gave
    /// the app of `grant` ends, at once (authorizing an app twice makes two grants, and
    /// "Connected apps" shows them as one). With `user`, only that user's. False when the
    /// tenant has no such standing grant.
    pub async fn oauth_revoke_connection(&self, tenant: Uuid, user: Option<Uuid>, grant: Uuid, now: DateTime<Utc>) -> Result<bool> {
        self.in_system(Intent::Write, async |tx| {
            let mut find = Query::select();
            find.columns(["client_id", "user_id"].map(a))
                .from(a("oauth_grants"))
                .and_where(col("tenant_id").eq(tenant))
                .and_where(col("id").eq(grant))
                .and_where(col("revoked_at").is_null());
            if let Some(user) = user {
                find.and_where(col("user_id").eq(user));
            }
            let Some(row) = tx.fetch_optional(&find).await? else { return Ok(false) };
            let missing = || incomplete("oauth grant");
            let (client, user) = (row.opt_uuid("client_id")?.ok_or_else(missing)?, row.opt_uuid("user_id")?.ok_or_else(missing)?);
            tx.execute(
                Query::update()
                    .table(a("oauth_grants"))
                    .value(a("revoked_at"), now)
                    .and_where(col("tenant_id").eq(tenant))
                    .and_where(col("client_id").eq(client))
                    .and_where(col("user_id").eq(user))
                    .and_where(col("revoked_at").is_null()),
            )
            .await?;
            Ok(true)
        })
        .await
    }

    // ---- codes -------------------------------------------------------------------

    /// Records a user's consent as a grant and returns its authorization code (once).
    #[allow(clippy::too_many_arguments)]
    pub async fn oauth_issue_code(
        &self,
        client: &Client,
        tenant_id: Uuid,
        user_id: Uuid,
        scopes: &[String],
        redirect_uri: &str,
        code_challenge: &str,
        now: DateTime<Utc>,
    ) -> Result<String> {
        let grant = Uuid::now_v7();
        let code = random_secret(crate::domain::oauth::CODE_PREFIX);
        self.in_system(Intent::Write, async |tx| {
            tx.execute(
                Query::insert()
                    .into_table(a("oauth_grants"))
                    .columns(["id", "client_id", "tenant_id", "user_id", "livemode", "scopes", "created_at"].map(a))
                    .values_panic([
                        grant.into(),
                        client.id.into(),
                        tenant_id.into(),
                        user_id.into(),
                        client.livemode.into(),
                        serde_json::json!(scopes).into(),
                        now.into(),
                    ]),
            )
            .await?;
            tx.execute(
                Query::insert()
                    .into_table(a("oauth_codes"))
                    .columns(["code_hash", "grant_id", "redirect_uri", "code_challenge", "created_at", "expires_at"].map(a))
                    .values_panic([
                        hash_secret(&code).into(),
                        grant.into(),
                        redirect_uri.into(),
                        code_challenge.into(),
                        now.into(),
                        (now + crate::domain::oauth::CODE_LIFETIME).into(),
                    ]),
            )
            .await?;
            Ok(code)
        })
        .await
    }

    /// Looks a code up, inside a write transaction the caller finishes.
    pub async fn oauth_code(tx: &mut Tx, code: &str) -> Result<Option<Code>> {
        let mut q = with_grant("oauth_codes");
        q.columns(["redirect_uri", "code_challenge", "expires_at", "used_at"].map(|c| (a("oauth_codes"), a(c))))
            .and_where(tc("oauth_codes", "code_hash").eq(hash_secret(code)));
        let Some(r) = tx.fetch_optional(&q).await? else { return Ok(None) };
        let missing = || incomplete("oauth code");
        Ok(Some(Code {
            grant: grant_of(&r)?,
            redirect_uri: r.opt_string("redirect_uri")?.ok_or_else(missing)?,
            code_challenge: r.opt_string("code_challenge")?.ok_or_else(missing)?,
            expires_at: r.opt_datetime("expires_at")?.ok_or_else(missing)?,
            used: r.opt_datetime("used_at")?.is_some(),
        }))
    }

    /// Marks a code used; false when it already was (a concurrent exchange won).
    pub async fn oauth_use_code(tx: &mut Tx, code: &str, now: DateTime<Utc>) -> Result<bool> {
        let n = tx
            .execute(
                Query::update()
                    .table(a("oauth_codes"))
                    .value(a("used_at"), now)
                    .and_where(col("code_hash").eq(hash_secret(code)))
                    .and_where(col("used_at").is_null()),
            )
            .await?;
        Ok(n == 1)
    }

    // ---- tokens ------------------------------------------------------------------

    /// Issues an access token and a refresh token of a grant.
    pub async fn oauth_issue_tokens(tx: &mut Tx, grant: Uuid, scopes: &[String], now: DateTime<Utc>) -> Result<Issued> {
        use crate::domain::oauth::{ACCESS_LIFETIME, ACCESS_PREFIX, REFRESH_LIFETIME, REFRESH_PREFIX};
        let access = random_secret(ACCESS_PREFIX);
        let refresh = random_secret(REFRESH_PREFIX);
        for (secret, kind, lifetime) in [(&access, "access", ACCESS_LIFETIME), (&refresh, "refresh", REFRESH_LIFETIME)] {
            tx.execute(
                Query::insert()
                    .into_table(a("oauth_tokens"))
                    .columns(["token_hash", "grant_id", "kind", "scopes", "created_at", "expires_at"].map(a))
                    .values_panic([
                        hash_secret(secret).into(),
                        grant.into(),
                        kind.into(),
                        serde_json::json!(scopes).into(),
                        now.into(),
                        (now + lifetime).into(),
                    ]),
            )
            .await?;
        }
        Ok(Issued { access_token: access, refresh_token: refresh, scopes: scopes.to_vec() })
    }

    /// Looks a token up by its secret, in `tx`.
    pub async fn oauth_token_in(tx: &mut Tx, secret: &str) -> Result<Option<Token>> {
        let mut q = with_grant("oauth_tokens");
        q.columns(["kind", "scopes", "expires_at", "used_at"].map(|c| (a("oauth_tokens"), a(c))))
            .and_where(tc("oauth_tokens", "token_hash").eq(hash_secret(secret)));
        let Some(r) = tx.fetch_optional(&q).await? else { return Ok(None) };
        let missing = || incomplete("oauth token");
        Ok(Some(Token {
            grant: grant_of(&r)?,
            kind: r.opt_string("kind")?.ok_or_else(missing)?,
            scopes: r.strings("scopes")?,
            expires_at: r.opt_datetime("expires_at")?.ok_or_else(missing)?,
            used: r.opt_datetime("used_at")?.is_some(),
        }))
    }

    /// Looks a token up by its secret.
    pub async fn oauth_token(&self, secret: &str) -> Result<Option<Token>> {
        if secret.len() > 200 {
            return Ok(None);
        }
        self.in_system(Intent::Read, async |tx| {
            let t = Self::oauth_token_in(tx, secret).await?;
            Ok(t)
        })
        .await
    }

    /// Marks a refresh token used (rotated); false when it already was.
    pub async fn oauth_use_token(tx: &mut Tx, secret: &str, now: DateTime<Utc>) -> Result<bool> {
        let n = tx
            .execute(
                Query::update()
                    .table(a("oauth_tokens"))
                    .value(a("used_at"), now)
                    .and_where(col("token_hash").eq(hash_secret(secret)))
                    .and_where(col("used_at").is_null()),
            )
            .await?;
        Ok(n == 1)
    }

    /// Ends an access token now (RFC 7009 for an access token: its grant lives on).
    pub async fn oauth_expire_token(&self, secret: &str, now: DateTime<Utc>) -> Result<()> {
        self.in_system(Intent::Write, async |tx| {
            tx.execute(
                Query::update()
                    .table(a("oauth_tokens"))
                    .value(a("expires_at"), now)
                    .and_where(col("token_hash").eq(hash_secret(secret)))
                    .and_where(col("expires_at").gt(now)),
            )
            .await?;
            Ok(())
        })
        .await
    }

    /// Revokes a grant: every code and token of its family stops working.
    pub async fn oauth_revoke_grant_in(tx: &mut Tx, grant: Uuid, now: DateTime<Utc>) -> Result<()> {
        tx.execute(
            Query::update()
                .table(a("oauth_grants"))
                .value(a("revoked_at"), now)
                .and_where(col("id").eq(grant))
                .and_where(col("revoked_at").is_null()),
        )
        .await?;
        Ok(())
    }

    /// As [`Store::oauth_revoke_grant_in`], in its own transaction (a reuse is refused
    /// whatever else happens, so the revocation must stand on its own).
    pub async fn oauth_revoke_grant(&self, grant: Uuid, now: DateTime<Utc>) -> Result<()> {
        self.in_system(Intent::Write, async |tx| {
            Self::oauth_revoke_grant_in(tx, grant, now).await?;
            Ok(())
        })
        .await
    }

    /// Records that a grant's token reached the API (what "Connected apps" shows).
    pub async fn oauth_touch_grant(&self, grant: Uuid, now: DateTime<Utc>) -> Result<()> {
        self.in_system(Intent::Write, async |tx| {
            tx.execute(Query::update().table(a("oauth_grants")).value(a("last_used_at"), now).and_where(col("id").eq(grant))).await?;
            Ok(())
        })
        .await
    }
}

/// Revokes every standing grant a user of a tenant made, in `tx` (a tenant transaction
/// may: on PostgreSQL the grants sit behind the tenant wall for exactly this); returns
/// how many.
pub async fn revoke_user_grants(tx: &mut Tx, tenant: Uuid, user: Uuid, now: DateTime<Utc>) -> Result<u64> {
    tx.execute(
        Query::update()
            .table(a("oauth_grants"))
            .value(a("revoked_at"), now)
            .and_where(col("tenant_id").eq(tenant))
            .and_where(col("user_id").eq(user))
            .and_where(col("revoked_at").is_null()),
    )
    .await
}
