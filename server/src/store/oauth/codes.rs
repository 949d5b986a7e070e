//! OAuth authorization codes (`oauth_codes`): issued with the grant a consent makes, looked
//! up and used once.

use chrono::{DateTime, Utc};
use sea_query::Query;
use uuid::Uuid;

use super::clients::OAuthClient;
use super::grants::{grant_of, with_grant, Grant};
use crate::error::Result;
use crate::store::keys::{hash_secret, random_secret};
use crate::store::sql::{a, col, incomplete, tc};
use crate::store::{Intent, Store, Tx};

/// A code as stored, with its grant.
#[derive(Debug, Clone)]
pub struct Code {
    pub grant: Grant,
    pub redirect_uri: String,
    pub code_challenge: String,
    pub expires_at: DateTime<Utc>,
    pub used: bool,
}

impl Store {
    /// Records a user's consent as a grant and returns its authorization code (once).
    #[allow(clippy::too_many_arguments)]
    pub async fn oauth_issue_code(
        &self,
        client: &OAuthClient,
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
}
