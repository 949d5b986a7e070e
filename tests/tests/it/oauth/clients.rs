//! Real OAuth clients against Gable's authorization server: the `oauth2` crate
//! and Python's `authlib` each complete the authorization-code flow with PKCE — a console
//! user signed in (by HTTP, with the session cookie) grants the app on the consent page —
//! then call the API within the granted scope, refresh, and are revoked.

use gable::accounts::service::{Sessions, SignUp};
use gable::accounts::AccountService;
use gable_tests::{both, TestApp};
use oauth2::basic::BasicClient;
use oauth2::{
    AuthUrl, AuthorizationCode, ClientId, ClientSecret, CsrfToken, PkceCodeChallenge, RedirectUrl, Scope, TokenResponse, TokenUrl,
};
use serde_json::{json, Value};

const REDIRECT: &str = "http://127.0.0.1:9/callback";
const PASSWORD: &str = "correct horse battery staple";

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}

/// A property manager signs up in the console; returns their session token.
async fn manager(app: &TestApp) -> String {
    let console = AccountService::new(app.state.ops.clone());
    let form = SignUp { company: "Maple PM".into(), name: "Olive".into(), email: "olive@example.com".into(), password: PASSWORD.into() };
    console.sign_up(form, "127.0.0.1").await.expect("sign-up").token
}

/// What the user's browser does with an authorization URL: open it with the session, then
/// press Allow on the consent page; returns where Gable sends the browser back.
async fn consent(app: &TestApp, session: &str, authorize_url: &str) -> url::Url {
    let http = no_redirects();
    let page = http.get(authorize_url).header("Cookie", format!("gable_session={session}")).send().await.unwrap();
    assert_eq!(page.status(), 200);
    let html = page.text().await.unwrap();
    let mut form: Vec<(String, String)> = html
        .split("<input ")
        .skip(1)
        .filter_map(|rest| {
            let name = rest.split("name=\"").nth(1)?.split('"').next()?.to_string();
            let value = rest.split("value=\"").nth(1)?.split('"').next()?.replace("&amp;", "&");
            Some((name, value))
        })
        .collect();
    form.push(("decision".into(), "allow".into()));
    let r = http
        .post(format!("{}/oauth/authorize", app.live))
        .header("Cookie", format!("gable_session={session}"))
        .header("Origin", app.live.clone())
        .form(&form)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 303);
    url::Url::parse(r.headers()["location"].to_str().unwrap()).unwrap()
}

fn param(u: &url::Url, name: &str) -> Option<String> {
    u.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.to_string())
}

async fn the_oauth2_crate_completes_the_flow(app: &TestApp) {
    let session = manager(app).await;
    let vendor = app.store.create_tenant("Ledger Sync Inc").await.unwrap();
    let (registered, secret) =
        gable::oauth::register_client(&app.store, vendor, "Ledger Sync", &[REDIRECT.to_string()], false, true, app.clock.now())
            .await
            .unwrap();
    let app_secret = secret.unwrap();
    let client = BasicClient::new(ClientId::new(registered.client_id.clone()))
        .set_client_secret(ClientSecret::new(app_secret.clone()))
        .set_auth_uri(AuthUrl::new(format!("{}/oauth/authorize", app.live)).unwrap())
        .set_token_uri(TokenUrl::new(format!("{}/oauth/token", app.live)).unwrap())
        .set_redirect_uri(RedirectUrl::new(REDIRECT.into()).unwrap());
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, state) = client
        .authorize_url(CsrfToken::new_random)
        .add_scope(Scope::new("properties:read".into()))
        .add_scope(Scope::new("leases:read".into()))
        .set_pkce_challenge(challenge)
        .url();
    let back = consent(app, &session, url.as_str()).await;
    assert_eq!(param(&back, "state").as_deref(), Some(state.secret().as_str()));
    assert_eq!(param(&back, "iss").as_deref(), Some(app.live.trim_end_matches('/')));
    let code = param(&back, "code").expect("a code");

    let http = no_redirects();
    let token = client.exchange_code(AuthorizationCode::new(code)).set_pkce_verifier(verifier).request_async(&http).await.expect("tokens");
    let scopes: Vec<String> = token.scopes().unwrap().iter().map(|s| s.to_string()).collect();
    assert_eq!(scopes, ["properties:read", "leases:read"]);
    let access = token.access_token().secret().clone();
    let r = app.call_on(true, &access, "GET", "/v1/leases", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    app.call_on(true, &access, "POST", "/v1/properties", Some(json!({}))).await.assert_error(403, "insufficient_scope");

    // Refresh (rotating), then revoke from the app's side: the family is gone.
    let refreshed = client.exchange_refresh_token(token.refresh_token().unwrap()).request_async(&http).await.expect("refresh");
    assert_ne!(refreshed.refresh_token().unwrap().secret(), token.refresh_token().unwrap().secret());
    assert!(client.exchange_refresh_token(token.refresh_token().unwrap()).request_async(&http).await.is_err(), "a spent refresh token");
    let newest = client.exchange_refresh_token(refreshed.refresh_token().unwrap()).request_async(&http).await;
    assert!(newest.is_err(), "the reuse above revoked the family");
    app.call_on(true, refreshed.access_token().secret(), "GET", "/v1/leases", None).await.assert_error(401, "unauthenticated");

    // A fresh authorization, revoked through RFC 7009.
    let (challenge, verifier) = PkceCodeChallenge::new_random_sha256();
    let (url, _) =
        client.authorize_url(CsrfToken::new_random).add_scope(Scope::new("properties:read".into())).set_pkce_challenge(challenge).url();
    let code = param(&consent(app, &session, url.as_str()).await, "code").unwrap();
    let token = client.exchange_code(AuthorizationCode::new(code)).set_pkce_verifier(verifier).request_async(&http).await.unwrap();
    assert_eq!(app.call_on(true, token.access_token().secret(), "GET", "/v1/properties", None).await.status, 200);
    // The crate revokes over https only (a safety of its own); on this http test server the
    // same RFC 7009 request is made by hand.
    let r = http
        .post(format!("{}/oauth/revoke", app.live))
        .basic_auth(&registered.client_id, Some(&app_secret))
        .form(&[("token", token.refresh_token().unwrap().secret().as_str()), ("token_type_hint", "refresh_token")])
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 200);
    app.call_on(true, token.access_token().secret(), "GET", "/v1/properties", None).await.assert_error(401, "unauthenticated");
}
both!(the_oauth2_crate_completes_the_flow);

/// Python's authlib (`tests/oauth/authlib_client.py`, in the tools' venv): a client from
/// another ecosystem completes the flow and calls the API.
async fn authlib_completes_the_flow(app: &TestApp) {
    let session = manager(app).await;
    let vendor = app.store.create_tenant("Syndicator Inc").await.unwrap();
    let (registered, secret) =
        gable::oauth::register_client(&app.store, vendor, "Syndicator", &[REDIRECT.to_string()], false, true, app.clock.now())
            .await
            .unwrap();
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/..");
    let python = std::env::var("GABLE_PYTHON").unwrap_or_else(|_| format!("{root}/.tools/venv/bin/python"));
    let out = tokio::process::Command::new(&python)
        .arg(format!("{root}/tests/oauth/authlib_client.py"))
        .env("GABLE_URL", app.live.trim_end_matches('/'))
        .env("GABLE_SESSION", &session)
        .env("CLIENT_ID", &registered.client_id)
        .env("CLIENT_SECRET", secret.unwrap())
        .env("REDIRECT_URI", REDIRECT)
        .output()
        .await
        .unwrap_or_else(|e| panic!("{python} did not run ({e}); .ci/install-tools installs the venv with authlib"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "authlib client failed: {stderr}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    assert_eq!(report["scope"], json!("properties:read"));
    assert_eq!(report["properties_status"], json!(200));
    assert_eq!(report["leases_status"], json!(403), "beyond the granted scope");
    assert_eq!(report["refreshed"], json!(true));
    assert_eq!(report["after_revoke_status"], json!(401));
}
both!(authlib_completes_the_flow);
