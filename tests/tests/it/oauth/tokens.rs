//! OAuth 2.1's token side (`docs/oauth.md`): the code exchange with PKCE,
//! client authentication, rotating refresh tokens with reuse detection, revocation,
//! introspection, metadata, and what an access token may do on the API.
//!
//! The authorization endpoint and its consent page are not built yet: these tests make
//! the code as consent will (`Store::oauth_issue_code`, the user's tenant and scopes).

use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use base64::Engine;
use chrono::Duration;
use gable::store::oauth::OAuthClient;
use gable_tests::{both, Res, TestApp};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

const REDIRECT: &str = "https://app.example.com/callback";
const VERIFIER: &str = "a-verifier-of-more-than-43-characters-0123456789abcdef";

fn challenge(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

/// An active live user of the tenant (console staff) with a role holding everything: an
/// app acts only within its user's role (`security::oauth` tests demotions).
async fn user(app: &TestApp, live_key: &str, email: &str) -> Uuid {
    let role = app
        .call_on(true, live_key, "POST", "/v1/roles", Some(json!({ "name": format!("Manager of {email}"), "permissions": ["*"] })))
        .await;
    assert_eq!(role.status, 201, "{}", role.text);
    let body = json!({ "email": email, "name": "Una User", "role_id": role.body["data"]["id"] });
    let r = app.call_on(true, live_key, "POST", "/v1/users", Some(body)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    r.body["data"]["id"].as_str().unwrap().parse().unwrap()
}

async fn client(app: &TestApp, tenant: Uuid, public: bool, livemode: bool) -> (OAuthClient, Option<String>) {
    let uris = vec![REDIRECT.to_string(), "http://127.0.0.1:8765/cb".to_string()];
    gable::oauth::register_client(&app.store, tenant, "Ledger Sync", &uris, public, livemode, app.clock.now()).await.expect("client")
}

/// What consent will do: a code for the user's tenant, scopes, redirect URI and challenge.
async fn code(app: &TestApp, c: &OAuthClient, tenant: Uuid, user: Uuid, scopes: &[&str]) -> String {
    let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
    app.store.oauth_issue_code(c, tenant, user, &scopes, REDIRECT, &challenge(VERIFIER), app.clock.now()).await.expect("code")
}

/// A form POST to an OAuth endpoint of the production listener.
async fn post(app: &TestApp, path: &str, form: &[(&str, &str)], basic: Option<(&str, &str)>) -> Res {
    let body = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(form).finish();
    let mut req = app.client.post(format!("{}{path}", app.live)).header("Content-Type", "application/x-www-form-urlencoded").body(body);
    if let Some((id, secret)) = basic {
        req = req.header("Authorization", format!("Basic {}", STANDARD.encode(format!("{id}:{secret}"))));
    }
    app.raw(req).await
}

async fn exchange(app: &TestApp, c: &OAuthClient, secret: Option<&str>, code: &str, verifier: &str) -> Res {
    let form = [("grant_type", "authorization_code"), ("code", code), ("redirect_uri", REDIRECT), ("code_verifier", verifier)];
    match secret {
        Some(s) => post(app, "/oauth/token", &form, Some((&c.client_id, s))).await,
        None => {
            let mut f = form.to_vec();
            f.push(("client_id", &c.client_id));
            post(app, "/oauth/token", &f, None).await
        }
    }
}

fn oauth_error(r: &Res, status: u16, code: &str) {
    assert_eq!(r.status, status, "{}", r.text);
    assert_eq!(r.body["error"], json!(code), "{}", r.text);
    assert!(r.body["error_description"].as_str().is_some_and(|d| !d.is_empty()), "{}", r.text);
    assert_eq!(r.headers.get("cache-control").and_then(|v| v.to_str().ok()), Some("no-store"));
}

fn token(r: &Res, field: &str) -> String {
    r.body[field].as_str().unwrap_or_else(|| panic!("{field} in {}", r.text)).to_string()
}

async fn codes_are_exchanged_once_with_pkce(app: &TestApp) {
    let t = app.tenant("A").await;
    let una = user(app, &t.live_key, "una@example.com").await;
    let (c, secret) = client(app, t.id, false, true).await;
    let secret = secret.expect("a confidential client has a secret");
    assert!(c.client_id.starts_with("gci_") && secret.starts_with("gcs_"));

    let code1 = code(app, &c, t.id, una, &["properties:read", "leases:read"]).await;
    let r = exchange(app, &c, Some(&secret), &code1, VERIFIER).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!((r.body["token_type"].clone(), r.body["expires_in"].clone()), (json!("Bearer"), json!(3600)));
    assert_eq!(r.body["scope"], json!("properties:read leases:read"));
    let access = token(&r, "access_token");
    assert!(access.starts_with("gat_") && access.len() >= 40, "≥ 192 bits");
    assert!(token(&r, "refresh_token").starts_with("grt_"));

    // The token acts like a key with the granted scopes, in the user's tenant.
    let r = app.call_on(true, &access, "GET", "/v1/properties", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = app.call_on(true, &access, "POST", "/v1/payments", Some(json!({}))).await;
    r.assert_error(403, "insufficient_scope");
    let challenge_header = r.headers["www-authenticate"].to_str().unwrap().to_string();
    assert!(
        challenge_header.contains(r#"error="insufficient_scope""#) && challenge_header.contains(r#"scope="payments:write""#),
        "{challenge_header}"
    );

    // A second use of the code is refused and revokes what the first gave.
    let r = exchange(app, &c, Some(&secret), &code1, VERIFIER).await;
    oauth_error(&r, 400, "invalid_grant");
    let r = app.call_on(true, &access, "GET", "/v1/properties", None).await;
    r.assert_error(401, "unauthenticated");
    assert!(r.headers["www-authenticate"].to_str().unwrap().contains("invalid_token"));

    // Each refusal spends the code: wrong verifier, redirect URI, client; expired.
    let code2 = code(app, &c, t.id, una, &["properties:read"]).await;
    oauth_error(&exchange(app, &c, Some(&secret), &code2, &format!("{VERIFIER}x")).await, 400, "invalid_grant");
    oauth_error(&exchange(app, &c, Some(&secret), &code2, VERIFIER).await, 400, "invalid_grant");
    let code3 = code(app, &c, t.id, una, &["properties:read"]).await;
    let form = [
        ("grant_type", "authorization_code"),
        ("code", &code3),
        ("redirect_uri", "https://app.example.com/other"),
        ("code_verifier", VERIFIER),
    ];
    oauth_error(&post(app, "/oauth/token", &form, Some((&c.client_id, &secret))).await, 400, "invalid_grant");
    let (other, other_secret) = client(app, t.id, false, true).await;
    let code4 = code(app, &c, t.id, una, &["properties:read"]).await;
    oauth_error(&exchange(app, &other, other_secret.as_deref(), &code4, VERIFIER).await, 400, "invalid_grant");
    let code5 = code(app, &c, t.id, una, &["properties:read"]).await;
    app.clock.advance(Duration::minutes(11));
    oauth_error(&exchange(app, &c, Some(&secret), &code5, VERIFIER).await, 400, "invalid_grant");
    // No verifier at all.
    let code6 = code(app, &c, t.id, una, &["properties:read"]).await;
    let form = [("grant_type", "authorization_code"), ("code", code6.as_str()), ("redirect_uri", REDIRECT)];
    oauth_error(&post(app, "/oauth/token", &form, Some((&c.client_id, &secret))).await, 400, "invalid_request");

    // Client authentication: unknown client, wrong secret (Basic: 401 with a challenge).
    let r = exchange(app, &c, Some("gcs_wrong"), &code6, VERIFIER).await;
    oauth_error(&r, 401, "invalid_client");
    assert!(r.headers["www-authenticate"].to_str().unwrap().starts_with("Basic"));
    let form = [("grant_type", "authorization_code"), ("code", code6.as_str()), ("client_id", "gci_nope"), ("client_secret", "x")];
    oauth_error(&post(app, "/oauth/token", &form, None).await, 400, "invalid_client");
    let form = [("grant_type", "authorization_code"), ("client_id", c.client_id.as_str())];
    oauth_error(&post(app, "/oauth/token", &form, None).await, 400, "invalid_client");
    // Malformed requests.
    let form = [("grant_type", "password"), ("client_id", c.client_id.as_str()), ("client_secret", secret.as_str())];
    oauth_error(&post(app, "/oauth/token", &form, None).await, 400, "unsupported_grant_type");
    let form = [
        ("grant_type", "refresh_token"),
        ("grant_type", "refresh_token"),
        ("client_id", c.client_id.as_str()),
        ("client_secret", secret.as_str()),
    ];
    oauth_error(&post(app, "/oauth/token", &form, None).await, 400, "invalid_request");
    let r = app.raw(app.client.post(format!("{}/oauth/token", app.live)).json(&json!({ "grant_type": "authorization_code" }))).await;
    oauth_error(&r, 400, "invalid_request");
}
both!(codes_are_exchanged_once_with_pkce);

async fn refresh_tokens_rotate_and_reuse_revokes_the_family(app: &TestApp) {
    let t = app.tenant("A").await;
    let una = user(app, &t.live_key, "una@example.com").await;
    // A public client: PKCE alone, client_id in the body.
    let (c, secret) = client(app, t.id, true, true).await;
    assert!(secret.is_none());
    let una_code = code(app, &c, t.id, una, &["properties:read", "leases:read"]).await;
    let first = exchange(app, &c, None, &una_code, VERIFIER).await;
    assert_eq!(first.status, 200, "{}", first.text);
    let refresh = |rt: String, scope: Option<&'static str>| {
        let id = c.client_id.clone();
        async move {
            let mut form = vec![("grant_type", "refresh_token".to_string()), ("refresh_token", rt), ("client_id", id)];
            if let Some(s) = scope {
                form.push(("scope", s.to_string()));
            }
            let form: Vec<(&str, &str)> = form.iter().map(|(k, v)| (*k, v.as_str())).collect();
            post(app, "/oauth/token", &form, None).await
        }
    };
    let second = refresh(token(&first, "refresh_token"), None).await;
    assert_eq!(second.status, 200, "{}", second.text);
    assert_ne!(token(&second, "refresh_token"), token(&first, "refresh_token"), "each use rotates");
    assert_eq!(app.call_on(true, &token(&second, "access_token"), "GET", "/v1/leases", None).await.status, 200);
    // Narrowing is allowed; widening is not.
    oauth_error(&refresh(token(&second, "refresh_token"), Some("payments:write")).await, 400, "invalid_scope");
    let third = refresh(token(&second, "refresh_token"), Some("properties:read")).await;
    assert_eq!(third.status, 200, "{}", third.text);
    assert_eq!(third.body["scope"], json!("properties:read"));
    app.call_on(true, &token(&third, "access_token"), "GET", "/v1/leases", None).await.assert_error(403, "insufficient_scope");

    // An old refresh token again: refused, and the whole family with it.
    oauth_error(&refresh(token(&first, "refresh_token"), None).await, 400, "invalid_grant");
    for access in [token(&second, "access_token"), token(&third, "access_token")] {
        app.call_on(true, &access, "GET", "/v1/properties", None).await.assert_error(401, "unauthenticated");
    }
    oauth_error(&refresh(token(&third, "refresh_token"), None).await, 400, "invalid_grant");
}
both!(refresh_tokens_rotate_and_reuse_revokes_the_family);

async fn tokens_act_in_their_users_tenant_and_environment(app: &TestApp) {
    let a = app.tenant("A").await;
    let b = app.tenant("B").await;
    let address = json!({ "line1": "1 Elm", "city": "Austin", "country": "US" });
    for (key, name) in [(&a.live_key, "A's"), (&b.live_key, "B's")] {
        let r = app
            .call_on(true, key, "POST", "/v1/properties", Some(json!({ "name": name, "kind": "residential", "address": address })))
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    // An app registered by tenant A, authorized by a user of tenant B: acts in B only.
    let (c, secret) = client(app, a.id, false, true).await;
    let bea = user(app, &b.live_key, "bea@example.com").await;
    let bea_code = code(app, &c, b.id, bea, &["properties:read"]).await;
    let r = exchange(app, &c, secret.as_deref(), &bea_code, VERIFIER).await;
    let access = token(&r, "access_token");
    let r = app.call_on(true, &access, "GET", "/v1/properties", None).await;
    let names: Vec<Value> = r.body["data"].as_array().unwrap().iter().map(|p| p["name"].clone()).collect();
    assert_eq!(names, vec![json!("B's")], "never another tenant's data");
    // A live app's token on the sandbox listener, and a sandbox app's on production.
    app.call_on(false, &access, "GET", "/v1/properties", None).await.assert_error(401, "key_environment_mismatch");
    let (sc, ss) = client(app, a.id, false, false).await;
    let ada = user(app, &a.live_key, "ada@example.com").await;
    let ada_code = code(app, &sc, a.id, ada, &["properties:read"]).await;
    let sandbox_access = token(&exchange(app, &sc, ss.as_deref(), &ada_code, VERIFIER).await, "access_token");
    app.call_on(true, &sandbox_access, "GET", "/v1/properties", None).await.assert_error(401, "key_environment_mismatch");
    assert_eq!(app.call_on(false, &sandbox_access, "GET", "/v1/properties", None).await.status, 200);
    // Tokens expire after an hour.
    app.clock.advance(Duration::minutes(61));
    app.call_on(false, &sandbox_access, "GET", "/v1/properties", None).await.assert_error(401, "unauthenticated");
}
both!(tokens_act_in_their_users_tenant_and_environment);

async fn revocation_introspection_and_metadata(app: &TestApp) {
    let t = app.tenant("A").await;
    let una = user(app, &t.live_key, "una@example.com").await;
    let (c, secret) = client(app, t.id, false, true).await;
    let secret = secret.unwrap();
    let basic = Some((c.client_id.as_str(), secret.as_str()));
    let pair = exchange(app, &c, Some(&secret), &code(app, &c, t.id, una, &["properties:read"]).await, VERIFIER).await;
    let (access, refresh) = (token(&pair, "access_token"), token(&pair, "refresh_token"));

    // Use is recorded (to the minute) on the authorization, for "Connected apps".
    let before = app.count_where("oauth_grants", "last_used_at IS NOT NULL").await;
    assert_eq!(app.call_on(true, &access, "GET", "/v1/properties", None).await.status, 200);
    assert_eq!(app.count_where("oauth_grants", "last_used_at IS NOT NULL").await, before + 1);
    let r = post(app, "/oauth/introspect", &[("token", &access)], basic).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(
        (r.body["active"].clone(), r.body["scope"].clone(), r.body["token_type"].clone()),
        (json!(true), json!("properties:read"), json!("Bearer"))
    );
    assert_eq!(r.body["sub"], json!(una));
    // A public client may not introspect; another client's token is inactive to it.
    let (public, _) = client(app, t.id, true, true).await;
    oauth_error(
        &post(app, "/oauth/introspect", &[("token", &access), ("client_id", &public.client_id)], None).await,
        400,
        "unauthorized_client",
    );
    let (other, other_secret) = client(app, t.id, false, true).await;
    let r = post(app, "/oauth/introspect", &[("token", &access)], Some((&other.client_id, other_secret.as_deref().unwrap()))).await;
    assert_eq!(r.body, json!({ "active": false }));

    // RFC 7009: an access token ends alone; unknown tokens answer the same.
    let r = post(app, "/oauth/revoke", &[("token", &access)], basic).await;
    assert_eq!(r.status, 200, "{}", r.text);
    app.call_on(true, &access, "GET", "/v1/properties", None).await.assert_error(401, "unauthenticated");
    assert_eq!(post(app, "/oauth/introspect", &[("token", &access)], basic).await.body, json!({ "active": false }));
    assert_eq!(post(app, "/oauth/revoke", &[("token", "grt_unknown")], basic).await.status, 200);
    // A refresh token revokes the authorization.
    assert_eq!(post(app, "/oauth/revoke", &[("token", &refresh)], basic).await.status, 200);
    let form = [("grant_type", "refresh_token"), ("refresh_token", refresh.as_str())];
    oauth_error(&post(app, "/oauth/token", &form, basic).await, 400, "invalid_grant");

    // A disabled user's tokens stop working.
    let pair = exchange(app, &c, Some(&secret), &code(app, &c, t.id, una, &["properties:read"]).await, VERIFIER).await;
    let access = token(&pair, "access_token");
    assert_eq!(app.call_on(true, &access, "GET", "/v1/properties", None).await.status, 200);
    let r = app.call_on(true, &t.live_key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "status": "disabled" }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    app.call_on(true, &access, "GET", "/v1/properties", None).await.assert_error(401, "unauthenticated");
    // Disabling revoked the grants for good: enabled again, the user's apps must ask again.
    let r = app.call_on(true, &t.live_key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "status": "active" }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    app.call_on(true, &access, "GET", "/v1/properties", None).await.assert_error(401, "unauthenticated");
    let form = [("grant_type", "refresh_token"), ("refresh_token", pair.body["refresh_token"].as_str().unwrap())];
    oauth_error(&post(app, "/oauth/token", &form, basic).await, 400, "invalid_grant");

    // RFC 8414 metadata, on the production address only.
    let r = app.raw(app.client.get(format!("{}/.well-known/oauth-authorization-server", app.live))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let m = &r.body;
    assert_eq!(m["issuer"], json!(app.live.trim_end_matches('/')));
    assert_eq!(m["token_endpoint"], json!(format!("{}/oauth/token", app.live)));
    assert_eq!(m["code_challenge_methods_supported"], json!(["S256"]));
    assert_eq!(m["authorization_response_iss_parameter_supported"], json!(true));
    assert!(m["scopes_supported"].as_array().unwrap().contains(&json!("payments:write")));
    let r = app.raw(app.client.get(format!("{}/.well-known/oauth-authorization-server", app.sandbox))).await;
    assert_eq!(r.status, 404);
}
both!(revocation_introspection_and_metadata);
