//! OAuth tokens (`oauth_tokens`): issuing an access and refresh pair, looking a token up,
//! and using (rotating) or ending one.

use chrono::{DateTime, Utc};
use sea_query::Query;
use uuid::Uuid;

use super::grants::{grant_of, with_grant, Grant};
use crate::error::Result;
use crate::store::keys::{hash_secret, random_secret};
use crate::store::sql::{a, col, incomplete, tc};
use crate::store::{Intent, Store, Tx};

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

impl Store {
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
}
