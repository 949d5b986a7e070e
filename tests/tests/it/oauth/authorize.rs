//! The authorization endpoint and its consent page over HTTP with a console session
//! (`docs/oauth.md`): signed-out users are sent to sign in and back, a bad
//! request is shown on Gable's page and never redirected, PKCE S256 is
//! mandatory, a user grants no more than their role holds, and the redirect carries
//! `code`, `state` and `iss` (RFC 9207). The code then works at the token endpoint.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use gable::accounts::service::{NewUser, Sessions, SignUp, Team};
use gable::accounts::AccountService;
use gable_tests::{both, Res, TestApp};
use serde_json::json;
use sha2::{Digest, Sha256};

const REDIRECT: &str = "https://ledger.example.com/callback";
const VERIFIER: &str = "consent-verifier-0123456789-0123456789-0123456789";
const PASSWORD: &str = "correct horse battery staple";

fn no_redirects() -> reqwest::Client {
    reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client")
}

fn authorize_query(client_id: &str, scope: &str, method: Option<&str>) -> String {
    let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(VERIFIER.as_bytes()));
    let mut q = url::form_urlencoded::Serializer::new(String::new());
    q.append_pair("response_type", "code")
        .append_pair("client_id", client_id)
        .append_pair("redirect_uri", REDIRECT)
        .append_pair("scope", scope)
        .append_pair("state", "xyz 123")
        .append_pair("code_challenge", &challenge);
    if let Some(m) = method {
        q.append_pair("code_challenge_method", m);
    }
    q.finish()
}

/// A property manager signed up in the console (an owner), with the console service.
async fn sign_up_owner(app: &TestApp) -> (AccountService, gable::accounts::service::NewSession) {
    let console = AccountService::new(app.state.ops.clone());
    let form = SignUp { company: "Maple PM".into(), name: "Olive".into(), email: "olive@example.com".into(), password: PASSWORD.into() };
    let owner = console.sign_up(form, "127.0.0.1").await.expect("sign-up");
    (console, owner)
}

async fn get(app: &TestApp, path: &str, cookie: Option<&str>) -> Res {
    let mut req = no_redirects().get(format!("{}{path}", app.live));
    if let Some(c) = cookie {
        req = req.header("Cookie", format!("gable_session={c}"));
    }
    app.raw(req).await
}

/// The consent form's answer, as the browser posts it from Gable's page.
async fn answer(app: &TestApp, cookie: &str, page: &Res, decision: &str, grants: &[&str]) -> Res {
    let mut form: Vec<(String, String)> = hidden_fields(&page.text);
    form.push(("decision".into(), decision.into()));
    for g in grants {
        form.push(("grant".into(), g.to_string()));
    }
    let req = no_redirects()
        .post(format!("{}/oauth/authorize", app.live))
        .header("Cookie", format!("gable_session={cookie}"))
        .header("Origin", app.live.clone())
        .form(&form);
    app.raw(req).await
}

/// The hidden inputs of the consent page (`name="…" value="…"`, as Gable writes them).
fn hidden_fields(html: &str) -> Vec<(String, String)> {
    html.split("<input type=\"hidden\" ")
        .skip(1)
        .filter_map(|rest| {
            let name = rest.strip_prefix("name=\"")?.split('"').next()?.to_string();
            let value = rest.split("value=\"").nth(1)?.split('"').next()?;
            let value = value.replace("&quot;", "\"").replace("&#39;", "'").replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&");
            Some((name, value))
        })
        .collect()
}

fn location(r: &Res) -> url::Url {
    assert_eq!(r.status, 303, "{}", r.text);
    let l = r.headers["location"].to_str().unwrap();
    url::Url::parse(l).or_else(|_| url::Url::parse(&format!("http://gable.invalid{l}"))).unwrap()
}

fn param(u: &url::Url, name: &str) -> Option<String> {
    u.query_pairs().find(|(k, _)| k == name).map(|(_, v)| v.to_string())
}

async fn consent_issues_a_code_the_token_endpoint_takes(app: &TestApp) {
    let (_, owner) = sign_up_owner(app).await;
    // The app is another tenant's: a third-party app.
    let vendor = app.store.create_tenant("Ledger Sync Inc").await.unwrap();
    let uris = vec![REDIRECT.to_string()];
    let (client, secret) =
        gable::oauth::register_client(&app.store, vendor, "Ledger Sync", &uris, false, true, app.clock.now()).await.unwrap();
    let secret = secret.unwrap();
    let q = authorize_query(&client.client_id, "properties:read leases:read", Some("S256"));

    // Signed out: to the console's sign-in, and back here after it.
    let r = get(app, &format!("/oauth/authorize?{q}"), None).await;
    let to = location(&r);
    assert_eq!(to.path(), "/sign-in");
    assert_eq!(param(&to, "next").unwrap(), format!("/oauth/authorize?{q}"));

    // Signed in: the consent page names the app and the scopes in words.
    let page = get(app, &format!("/oauth/authorize?{q}"), Some(&owner.token)).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(
        page.text.contains("Ledger Sync") && page.text.contains("Read properties") && page.text.contains("Read leases"),
        "{}",
        page.text
    );
    let csp = page.headers["content-security-policy"].to_str().unwrap();
    assert!(csp.contains("frame-ancestors 'none'") && csp.contains("form-action 'self' https://ledger.example.com"), "{csp}");
    assert_eq!(page.headers["cache-control"], "no-store");

    // Deny: back to the app with access_denied, its state and the issuer.
    let denied = location(&answer(app, &owner.token, &page, "deny", &[]).await);
    assert_eq!(param(&denied, "error").as_deref(), Some("access_denied"));
    assert_eq!(param(&denied, "state").as_deref(), Some("xyz 123"));
    assert_eq!(param(&denied, "iss").as_deref(), Some(app.live.trim_end_matches('/')));

    // Allow what the user ticks (one of two): a code, then tokens for that scope only.
    let allowed = location(&answer(app, &owner.token, &page, "allow", &["properties:read"]).await);
    assert!(allowed.as_str().starts_with(REDIRECT));
    assert_eq!(param(&allowed, "state").as_deref(), Some("xyz 123"));
    assert_eq!(param(&allowed, "iss").as_deref(), Some(app.live.trim_end_matches('/')));
    let code = param(&allowed, "code").expect("a code");
    let form = [("grant_type", "authorization_code"), ("code", code.as_str()), ("redirect_uri", REDIRECT), ("code_verifier", VERIFIER)];
    let r = app.raw(app.client.post(format!("{}/oauth/token", app.live)).basic_auth(&client.client_id, Some(&secret)).form(&form)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["scope"], json!("properties:read"));
    let access = r.body["access_token"].as_str().unwrap().to_string();
    assert_eq!(app.call_on(true, &access, "GET", "/v1/properties", None).await.status, 200);
    app.call_on(true, &access, "GET", "/v1/leases", None).await.assert_error(403, "insufficient_scope");

    // A stale or missing CSRF token, or a cross-site post: refused, nothing issued.
    let mut forged = page.text.replace(&owner.me.csrf, "forged");
    forged.push(' ');
    let fake = Res { status: 200, headers: page.headers.clone(), body: json!(null), text: forged };
    assert_eq!(answer(app, &owner.token, &fake, "allow", &["properties:read"]).await.status, 403);
    let req = no_redirects()
        .post(format!("{}/oauth/authorize", app.live))
        .header("Cookie", format!("gable_session={}", owner.token))
        .header("Origin", "https://evil.example")
        .form(&hidden_fields(&page.text));
    assert_eq!(app.raw(req).await.status, 403);
}
both!(consent_issues_a_code_the_token_endpoint_takes);

async fn bad_requests_are_shown_never_redirected(app: &TestApp) {
    let (console, owner) = sign_up_owner(app).await;
    let vendor = app.store.create_tenant("Vendor").await.unwrap();
    let uris = vec![REDIRECT.to_string()];
    let (client, _) = gable::oauth::register_client(&app.store, vendor, "Ledger Sync", &uris, true, true, app.clock.now()).await.unwrap();

    // Unknown app or unregistered redirect URI: a page, never a redirect (no open redirect).
    let q = authorize_query("gci_unknown", "properties:read", Some("S256"));
    let r = get(app, &format!("/oauth/authorize?{q}"), Some(&owner.token)).await;
    assert_eq!(r.status, 400);
    assert!(r.headers.get("location").is_none() && r.text.contains("no app with this client_id"), "{}", r.text);
    let q = authorize_query(&client.client_id, "properties:read", Some("S256")).replace("callback", "elsewhere");
    let r = get(app, &format!("/oauth/authorize?{q}"), Some(&owner.token)).await;
    assert_eq!(r.status, 400);
    assert!(r.headers.get("location").is_none(), "{:?}", r.headers);

    // The app's own mistakes are shown too, naming the error for its developer: no PKCE,
    // `plain`, a bad scope, not `code`. Nothing goes to the app before the user decides.
    let cases = [
        (authorize_query(&client.client_id, "properties:read", Some("plain")), "invalid_request"),
        (authorize_query(&client.client_id, "properties:read", None), "invalid_request"),
        (authorize_query(&client.client_id, "properties:read", Some("S256")).replace("code_challenge=", "x="), "invalid_request"),
        (authorize_query(&client.client_id, "root:everything", Some("S256")), "invalid_scope"),
        (
            authorize_query(&client.client_id, "properties:read", Some("S256")).replace("response_type=code", "response_type=token"),
            "unsupported_response_type",
        ),
    ];
    for (q, error) in cases {
        let r = get(app, &format!("/oauth/authorize?{q}"), Some(&owner.token)).await;
        assert_eq!(r.status, 400, "{q}: {}", r.text);
        assert!(r.headers.get("location").is_none(), "{q}: {:?}", r.headers);
        assert!(r.text.contains(error), "{q}: {}", r.text);
    }

    // A read-only user cannot grant writes: only reads are offered, writes listed as refused.
    let roles = console.roles(&owner.me).await.unwrap();
    let read_only = roles.iter().find(|r| r.permissions == ["*:read"]).expect("the read-only role");
    let user = NewUser { email: "rory@example.com".into(), name: "Rory".into(), role_id: read_only.id.clone(), password: PASSWORD.into() };
    console.create_user(&owner.me, user).await.unwrap();
    let rory = console.sign_in("rory@example.com", PASSWORD, "127.0.0.1", None).await.unwrap();
    let q = authorize_query(&client.client_id, "properties:read payments:write", Some("S256"));
    let page = get(app, &format!("/oauth/authorize?{q}"), Some(&rory.token)).await;
    assert_eq!(page.status, 200, "{}", page.text);
    assert!(page.text.contains("value=\"properties:read\" checked"), "{}", page.text);
    assert!(!page.text.contains("value=\"payments:write\""), "a write is never offered to a read-only user");
    assert!(page.text.contains("will not get"));
    // Even a forged tick for the write grants only the read.
    let allowed = location(&answer(app, &rory.token, &page, "allow", &["properties:read", "payments:write"]).await);
    let code = param(&allowed, "code").expect("a code");
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("client_id", client.client_id.as_str()),
    ];
    let r = app.raw(app.client.post(format!("{}/oauth/token", app.live)).form(&form)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["scope"], json!("properties:read"));
    // Only writes asked of a read-only user: nothing to allow, only deny.
    let q = authorize_query(&client.client_id, "payments:write", Some("S256"));
    let page = get(app, &format!("/oauth/authorize?{q}"), Some(&rory.token)).await;
    assert!(page.text.contains("allows none") && !page.text.contains("value=\"allow\""), "{}", page.text);
}
both!(bad_requests_are_shown_never_redirected);
