//! The OAuth 2.1 authorization server's token side (`docs/oauth.md`): client
//! authentication, the authorization-code exchange with PKCE, rotating refresh tokens
//! with reuse detection, revocation (RFC 7009), introspection (RFC 7662), and what an
//! access token lets its bearer do. No HTTP here: `http::oauth` maps [`TokenError`] to
//! RFC 6749 §5.2 once.

use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use subtle::ConstantTimeEq;
use uuid::Uuid;

use crate::domain::oauth as rules;
use crate::error::Error;
use crate::store::keys::hash_secret;
use crate::store::oauth::{Grant, Issued, OAuthClient};
use crate::store::{Intent, Store};

/// Registers an app after checking its name and redirect URIs; returns it and, for a
/// confidential client, its secret (once).
pub async fn register_client(
    store: &Store,
    tenant: Uuid,
    name: &str,
    redirect_uris: &[String],
    public: bool,
    livemode: bool,
    now: DateTime<Utc>,
) -> std::result::Result<(OAuthClient, Option<String>), Error> {
    let name = name.trim();
    if name.is_empty() || name.chars().count() > 100 {
        return Err(Error::validation("name", "must be 1 to 100 characters"));
    }
    check_redirect_uris(redirect_uris)?;
    store.oauth_create_client(crate::store::oauth::NewOAuthClient { tenant_id: tenant, name, redirect_uris, public, livemode, now }).await
}

/// An app's redirect URIs: 1 to 10, each https or loopback http, no fragment.
pub fn check_redirect_uris(redirect_uris: &[String]) -> std::result::Result<(), Error> {
    if redirect_uris.is_empty() || redirect_uris.len() > rules::MAX_REDIRECT_URIS {
        return Err(Error::validation("redirect_uris", format!("must list 1 to {} redirect URIs", rules::MAX_REDIRECT_URIS)));
    }
    for uri in redirect_uris {
        rules::check_redirect_uri(uri).map_err(|m| Error::validation("redirect_uris", m))?;
    }
    Ok(())
}

/// An app as the CLI and the console show it (never its secret).
pub fn client_json(c: &OAuthClient) -> Value {
    json!({
        "object": "oauth_client",
        "id": c.id,
        "client_id": c.client_id,
        "name": c.name,
        "redirect_uris": c.redirect_uris,
        "public": c.is_public(),
        "livemode": c.livemode,
        "tenant_id": c.tenant_id,
        "created_at": crate::domain::value::format_datetime(&c.created_at),
    })
}

/// An error of the token, revocation or introspection endpoint (RFC 6749 §5.2).
#[derive(Debug)]
pub enum TokenError {
    InvalidRequest(String),
    /// Unknown client or bad secret; `basic` when the client sent HTTP Basic (the answer
    /// is then a 401 with `WWW-Authenticate: Basic`).
    InvalidClient {
        message: String,
        basic: bool,
    },
    InvalidGrant(String),
    UnauthorizedClient(String),
    UnsupportedGrantType(String),
    InvalidScope(String),
    /// Not the client's fault.
    Server(Error),
}

impl TokenError {
    pub fn code(&self) -> &'static str {
        match self {
            TokenError::InvalidRequest(_) => "invalid_request",
            TokenError::InvalidClient { .. } => "invalid_client",
            TokenError::InvalidGrant(_) => "invalid_grant",
            TokenError::UnauthorizedClient(_) => "unauthorized_client",
            TokenError::UnsupportedGrantType(_) => "unsupported_grant_type",
            TokenError::InvalidScope(_) => "invalid_scope",
            TokenError::Server(_) => "server_error",
        }
    }

    pub fn description(&self) -> String {
        match self {
            TokenError::InvalidRequest(m)
            | TokenError::InvalidGrant(m)
            | TokenError::UnauthorizedClient(m)
            | TokenError::UnsupportedGrantType(m)
            | TokenError::InvalidScope(m) => m.clone(),
            TokenError::InvalidClient { message, .. } => message.clone(),
            TokenError::Server(_) => "the authorization server failed; try again".into(),
        }
    }
}

impl From<Error> for TokenError {
    fn from(e: Error) -> Self {
        TokenError::Server(e)
    }
}

type Result<T> = std::result::Result<T, TokenError>;

/// How a client presented itself: `client_id` and, for a confidential client, its secret.
pub struct ClientAuth {
    pub client_id: String,
    pub secret: Option<String>,
    /// Whether it came as HTTP Basic (`client_secret_basic`).
    pub basic: bool,
}

/// The client, if it authenticates: a confidential client by its secret (compared as
/// hashes, in constant time), a public one by its id alone (PKCE binds its codes).
pub async fn authenticate_client(store: &Store, auth: &ClientAuth) -> Result<OAuthClient> {
    let refuse = |m: &str| TokenError::InvalidClient { message: m.to_string(), basic: auth.basic };
    let client = store.oauth_client(&auth.client_id).await?.ok_or_else(|| refuse("unknown client"))?;
    match (&client.secret_hash, &auth.secret) {
        (Some(stored), Some(given)) => {
            if !bool::from(stored.as_bytes().ct_eq(hash_secret(given).as_bytes())) {
                return Err(refuse("the client secret is not valid"));
            }
        }
        (Some(_), None) => {
            return Err(refuse("this client is confidential: authenticate with its secret (client_secret_basic or client_secret_post)"))
        }
        (None, Some(_)) => return Err(refuse("this client is public and has no secret; send client_id alone")),
        (None, None) => {}
    }
    Ok(client)
}

/// `grant_type=authorization_code`: a code, once, for the client, redirect URI and
/// verifier it was issued for. A code presented again revokes what its first use issued.
pub async fn exchange_code(
    store: &Store,
    client: &OAuthClient,
    code: &str,
    redirect_uri: &str,
    verifier: &str,
    now: DateTime<Utc>,
) -> Result<Issued> {
    let invalid = |m: &str| TokenError::InvalidGrant(m.to_string());
    let mut tx = store.begin_system(Intent::Write).await?;
    let Some(found) = Store::oauth_code(&mut tx, code).await? else {
        return Err(invalid("the authorization code is not valid"));
    };
    if found.used || !Store::oauth_use_code(&mut tx, code, now).await? {
        drop(tx);
        store.oauth_revoke_grant(found.grant.id, now).await?;
        tracing::warn!(grant = %found.grant.id, "an authorization code was presented twice; its grant is revoked");
        return Err(invalid("the authorization code was already used; the tokens it gave are revoked"));
    }
    // Every other refusal leaves the code spent: a code is tried once.
    let refusal = if found.grant.client != client.id {
        Some("the authorization code was issued to another client")
    } else if found.expires_at <= now {
        Some("the authorization code has expired; codes live 10 minutes")
    } else if found.redirect_uri != redirect_uri {
        Some("redirect_uri differs from the authorization request's")
    } else if !rules::verify_pkce(verifier, &found.code_challenge) {
        Some("code_verifier does not match the code_challenge")
    } else if found.grant.revoked {
        Some("the authorization was revoked")
    } else if !found.grant.user_active {
        Some("the user who authorized the app is disabled or deleted")
    } else if acting_scopes(&found.grant.scopes, &found.grant).is_empty() {
        Some("the user's role no longer allows any of the scopes the app was granted")
    } else {
        None
    };
    if let Some(m) = refusal {
        tx.commit().await?;
        return Err(invalid(m));
    }
    let mut issued = Store::oauth_issue_tokens(&mut tx, found.grant.id, &found.grant.scopes, now).await?;
    tx.commit().await?;
    issued.scopes = acting_scopes(&found.grant.scopes, &found.grant);
    Ok(issued)
}

/// `grant_type=refresh_token`: a new pair for a refresh token, which is spent. A spent
/// refresh token presented again revokes its whole family (RFC 9700 §4.14.2).
pub async fn refresh(store: &Store, client: &OAuthClient, token: &str, scope: Option<&str>, now: DateTime<Utc>) -> Result<Issued> {
    let invalid = |m: &str| TokenError::InvalidGrant(m.to_string());
    let mut tx = store.begin_system(Intent::Write).await?;
    let found = match Store::oauth_token_in(&mut tx, token).await? {
        Some(t) if t.kind == "refresh" && t.grant.client == client.id => t,
        _ => return Err(invalid("the refresh token is not valid")),
    };
    if found.used || !Store::oauth_use_token(&mut tx, token, now).await? {
        drop(tx);
        store.oauth_revoke_grant(found.grant.id, now).await?;
        tracing::warn!(grant = %found.grant.id, "a refresh token was presented twice; its grant is revoked");
        return Err(invalid("the refresh token was already used; every token of this authorization is revoked"));
    }
    // Refusals from here leave the refresh token unspent (the transaction is dropped):
    // an app whose user is enabled or promoted again can refresh then.
    if found.grant.revoked {
        return Err(invalid("the authorization was revoked"));
    }
    if found.expires_at <= now {
        return Err(invalid("the refresh token has expired"));
    }
    if !found.grant.user_active {
        return Err(invalid("the user who authorized the app is disabled or deleted"));
    }
    let scopes = match scope.filter(|s| !s.trim().is_empty()) {
        None => found.scopes.clone(),
        Some(s) => {
            let wanted = rules::parse_scope(s).map_err(TokenError::InvalidScope)?;
            if let Some(extra) = wanted.iter().find(|w| !found.scopes.contains(w)) {
                return Err(TokenError::InvalidScope(format!("`{extra}` was not granted; a refresh can only narrow the scopes")));
            }
            wanted
        }
    };
    let acting = acting_scopes(&scopes, &found.grant);
    if acting.is_empty() {
        return Err(invalid("the user's role no longer allows any of the scopes the app was granted"));
    }
    let mut issued = Store::oauth_issue_tokens(&mut tx, found.grant.id, &scopes, now).await?;
    tx.commit().await?;
    issued.scopes = acting;
    Ok(issued)
}

/// RFC 7009: a refresh token revokes its authorization; an access token ends alone.
/// Tokens of other clients, and unknown ones, are answered the same (nothing to tell).
pub async fn revoke(store: &Store, client: &OAuthClient, token: &str, now: DateTime<Utc>) -> Result<()> {
    match store.oauth_token(token).await? {
        Some(t) if t.grant.client == client.id && t.kind == "refresh" => store.oauth_revoke_grant(t.grant.id, now).await?,
        Some(t) if t.grant.client == client.id => store.oauth_expire_token(token, now).await?,
        _ => {}
    }
    Ok(())
}

/// RFC 7662 for confidential clients, about their own tokens: anything else is inactive.
pub async fn introspect(store: &Store, client: &OAuthClient, token: &str, now: DateTime<Utc>) -> Result<Value> {
    if client.is_public() {
        return Err(TokenError::UnauthorizedClient("introspection is for confidential clients".into()));
    }
    let inactive = json!({ "active": false });
    let Some(t) = store.oauth_token(token).await?.filter(|t| t.grant.client == client.id) else { return Ok(inactive) };
    if t.grant.revoked || t.expires_at <= now || t.used || !t.grant.user_active {
        return Ok(inactive);
    }
    Ok(json!({
        "active": true,
        "scope": acting_scopes(&t.scopes, &t.grant).join(" "),
        "client_id": client.client_id,
        "token_type": if t.kind == "access" { "Bearer" } else { "refresh_token" },
        "exp": t.expires_at.timestamp(),
        "sub": t.grant.user_id,
        "gable_tenant": t.grant.tenant_id,
        "livemode": t.grant.livemode,
    }))
}

/// What a token of `grant` holding `held` may do now: what it holds *and* what the
/// granting user's current role allows. Read at every use and every refresh, so a
/// demotion (a new role, or narrower permissions of the role) takes effect at once.
pub fn acting_scopes(held: &[String], grant: &Grant) -> Vec<String> {
    crate::domain::scopes::intersect(held, &grant.role_permissions)
}

/// What an access token lets its bearer do: act in the granting user's tenant, in its
/// client's environment, with the granted scopes that the user's role still allows.
#[derive(Debug, Clone)]
pub struct Access {
    pub grant: Uuid,
    /// The app (its client's id) and the user it acts for.
    pub client: Uuid,
    pub user: Uuid,
    pub tenant: Uuid,
    pub livemode: bool,
    pub scopes: Vec<String>,
}

/// The access a bearer token gives, if any: known, an access token, unexpired, its
/// authorization standing and its user active.
pub async fn access(store: &Store, secret: &str, now: DateTime<Utc>) -> std::result::Result<Option<Access>, Error> {
    let Some(t) = store.oauth_token(secret).await? else { return Ok(None) };
    if t.kind != "access" || t.grant.revoked || t.expires_at <= now || !t.grant.user_active {
        return Ok(None);
    }
    // To the minute, so reads do not all turn into writes (as API keys' `last_used_at`).
    if t.grant.last_used_at.is_none_or(|at| now - at >= chrono::Duration::minutes(1)) {
        store.oauth_touch_grant(t.grant.id, now).await?;
    }
    let scopes = acting_scopes(&t.scopes, &t.grant);
    let g = &t.grant;
    Ok(Some(Access { grant: g.id, client: g.client, user: g.user_id, tenant: g.tenant_id, livemode: g.livemode, scopes }))
}
