//! OAuth grants (`oauth_grants`): one authorization and the family of its code and tokens;
//! reading them with their user and role, listing and revoking them.

use chrono::{DateTime, Utc};
use sea_query::Query;
use uuid::Uuid;

use crate::error::Result;
use crate::store::sql::{a, col, incomplete, tc};
use crate::store::{Intent, Row, Store, Tx};

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

const GRANT_COLUMNS: [&str; 8] = ["id", "client_id", "tenant_id", "user_id", "livemode", "scopes", "revoked_at", "last_used_at"];

pub(super) fn grant_of(row: &Row) -> Result<Grant> {
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
pub(super) fn with_grant(table: &str) -> sea_query::SelectStatement {
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
