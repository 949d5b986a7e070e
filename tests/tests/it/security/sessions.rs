//! The console over HTTP: the session cookie (HttpOnly and SameSite=Lax always, Secure
//! when Gable is reached over https, also behind a trusted TLS-terminating proxy), and
//! sign-up throttling keyed by the right client address, behind a proxy or not, and HSTS
//! exactly when the console is reached over https.

use gable_tests::{both, Backend, TestApp};

async fn sign_up_cookie(app: &TestApp) -> String {
    let host = app.live.trim_start_matches("http://").to_string();
    let r = app
        .client
        .post(format!("{}/api/sign_up", app.live))
        .header("origin", format!("http://{host}"))
        .form(&[("company", "Cookie Co"), ("name", "Cora"), ("email", "cora@example.com"), ("password", "correct horse battery")])
        .send()
        .await
        .expect("sign-up request");
    assert!(r.status().is_success() || r.status().is_redirection(), "sign-up answered {}", r.status());
    r.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|c| c.starts_with("gable_session="))
        .expect("a session cookie")
        .to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cookie_is_secure_over_https() {
    let app = TestApp::builder(Backend::Sqlite).public_url("https://console.example.com").spawn().await;
    let cookie = sign_up_cookie(&app).await;
    for attr in ["HttpOnly", "SameSite=Lax", "Secure", "Path=/"] {
        assert!(cookie.split(';').any(|a| a.trim() == attr), "cookie lacks {attr}: {cookie}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cookie_over_plain_http_is_not_marked_secure() {
    let app = TestApp::builder(Backend::Sqlite).spawn().await;
    let cookie = sign_up_cookie(&app).await;
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
    assert!(!cookie.split(';').any(|a| a.trim() == "Secure"), "Secure over http would lose the cookie: {cookie}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_site_post_is_refused_before_anything_runs() {
    let app = TestApp::builder(Backend::Sqlite).spawn().await;
    let r = app
        .client
        .post(format!("{}/api/sign_up", app.live))
        .header("origin", "https://evil.example")
        .form(&[("company", "Evil"), ("name", "E"), ("email", "e@example.com"), ("password", "correct horse battery")])
        .send()
        .await
        .expect("request");
    assert_eq!(r.status(), 403);
    assert_eq!(app.count_rows("tenants").await, 0, "the forged sign-up created a tenant");
    app.stop().await;
}

/// A sign-up form post with extra headers: `Ok(cookie)` or `Err(the refusal's text)`.
async fn sign_up_with(app: &TestApp, email: &str, headers: &[(&str, &str)]) -> Result<String, String> {
    let host = app.live.trim_start_matches("http://").to_string();
    let client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    let mut req = client.post(format!("{}/api/sign_up", app.live)).header("origin", format!("http://{host}")).form(&[
        ("company", "Proxy Co"),
        ("name", "Pia"),
        ("email", email),
        ("password", "correct horse battery"),
    ]);
    for (name, value) in headers {
        req = req.header(*name, *value);
    }
    let r = req.send().await.expect("sign-up request");
    let cookie = r.headers().get_all("set-cookie").iter().filter_map(|v| v.to_str().ok()).find(|c| c.starts_with("gable_session="));
    match cookie {
        Some(c) => Ok(c.to_string()),
        None => Err(format!("{}: {}", r.status(), r.text().await.unwrap_or_default())),
    }
}

fn is_secure(cookie: &str) -> bool {
    cookie.split(';').any(|a| a.trim() == "Secure")
}

fn assert_throttled(r: Result<String, String>) {
    let refusal = r.expect_err("expected the sign-up to be throttled");
    assert!(refusal.contains("Too many attempts"), "{refusal}");
}

/// The peer (127.0.0.1) is not a trusted proxy: whatever it forwards, it is one client.
async fn forwarding_headers_from_an_untrusted_peer_are_ignored(app: &TestApp) {
    for i in 0..10 {
        let (xff, fwd) = (format!("203.0.113.{i}"), format!("for=198.51.100.{i}"));
        let cookie = sign_up_with(app, &format!("u{i}@spray.example"), &[("x-forwarded-for", &xff), ("forwarded", &fwd)]).await;
        cookie.unwrap_or_else(|e| panic!("sign-up {i} within the burst: {e}"));
    }
    assert_throttled(sign_up_with(app, "u10@spray.example", &[("x-forwarded-for", "203.0.113.99")]).await);
    assert_throttled(sign_up_with(app, "u11@spray.example", &[("forwarded", "for=198.51.100.99")]).await);
    assert_eq!(app.count_rows("tenants").await, 10);
}
both!(forwarding_headers_from_an_untrusted_peer_are_ignored, |b| b.trusted_proxies(&["10.0.0.0/8"]));

/// The peer is a trusted proxy: the client is the right-most address it did not add itself.
async fn behind_a_trusted_proxy_the_forwarded_client_is_throttled(app: &TestApp) {
    for i in 0..10 {
        // The client prepends a different made-up address every time; the proxy appends the real one.
        let xff = format!("192.0.2.{i}, 203.0.113.5");
        sign_up_with(app, &format!("c{i}@proxy.example"), &[("x-forwarded-for", &xff)]).await.expect("within the burst");
    }
    assert_throttled(sign_up_with(app, "c10@proxy.example", &[("x-forwarded-for", "192.0.2.77, 203.0.113.5")]).await);
    // Other clients behind the same proxy are not held back by that one.
    sign_up_with(app, "d@proxy.example", &[("x-forwarded-for", "203.0.113.6")]).await.expect("another client");
    sign_up_with(app, "e@proxy.example", &[("forwarded", "for=203.0.113.7;proto=https")]).await.expect("another client, RFC 7239");
    // Through a second trusted hop (127.0.0.1 appended by an inner proxy), still that client.
    assert_throttled(sign_up_with(app, "c11@proxy.example", &[("x-forwarded-for", "203.0.113.5, 127.0.0.1")]).await);
}
both!(behind_a_trusted_proxy_the_forwarded_client_is_throttled, |b| b.trusted_proxies(&["127.0.0.1"]));

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cookie_is_secure_behind_a_trusted_tls_proxy() {
    // The public URL is plain http (as the proxy reaches Gable); the proxy says https.
    let app = TestApp::builder(Backend::Sqlite).trusted_proxies(&["127.0.0.1"]).spawn().await;
    let cookie =
        sign_up_with(&app, "tls@proxy.example", &[("x-forwarded-for", "203.0.113.8"), ("x-forwarded-proto", "https")]).await.unwrap();
    assert!(is_secure(&cookie), "{cookie}");
    let cookie = sign_up_with(&app, "rfc@proxy.example", &[("forwarded", "for=203.0.113.9;proto=https")]).await.unwrap();
    assert!(is_secure(&cookie), "{cookie}");
    let cookie = sign_up_with(&app, "plain@proxy.example", &[("x-forwarded-proto", "http")]).await.unwrap();
    assert!(!is_secure(&cookie), "the proxy said http: {cookie}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_peer_cannot_claim_https() {
    for trusted in [&[][..], &["10.0.0.0/8"][..]] {
        let app = TestApp::builder(Backend::Sqlite).trusted_proxies(trusted).spawn().await;
        let cookie = sign_up_with(&app, "claim@example.com", &[("x-forwarded-proto", "https")]).await.unwrap();
        assert!(!is_secure(&cookie), "trusting {trusted:?}: {cookie}");
        let cookie = sign_up_with(&app, "claim2@example.com", &[("forwarded", "proto=https")]).await.unwrap();
        assert!(!is_secure(&cookie), "trusting {trusted:?}: {cookie}");
        app.stop().await;
    }
}

/// A console call (the `get_me` server function, as the pages make it) with extra
/// headers: its HSTS header. (Not a rendered page: the tests' workspace build unifies the
/// frontend's features into Leptos, which cannot render pages outside the real server.)
async fn hsts(app: &TestApp, headers: &[(&str, &str)]) -> Option<String> {
    let host = app.live.trim_start_matches("http://").to_string();
    let mut req = app
        .client
        .post(format!("{}/api/get_me", app.live))
        .header("origin", format!("http://{host}"))
        .header("content-type", "application/x-www-form-urlencoded")
        .body("");
    for (k, v) in headers {
        req = req.header(*k, *v);
    }
    let r = req.send().await.expect("get_me");
    assert!(r.status().is_success(), "{}", r.status());
    r.headers().get("strict-transport-security").and_then(|v| v.to_str().ok()).map(str::to_string)
}

/// A browser that once reached the console over https never again sends its cookie in the
/// clear (HSTS), and nobody can switch that on (or off) by claiming https from outside.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_console_asks_for_https_only_when_reached_over_https() {
    let app = TestApp::builder(Backend::Sqlite).public_url("https://console.example.com").spawn().await;
    assert_eq!(hsts(&app, &[]).await.as_deref(), Some("max-age=31536000"));
    app.stop().await;

    let app = TestApp::builder(Backend::Sqlite).trusted_proxies(&["127.0.0.1"]).spawn().await;
    assert_eq!(hsts(&app, &[("x-forwarded-proto", "https")]).await.as_deref(), Some("max-age=31536000"), "a trusted TLS proxy");
    assert_eq!(hsts(&app, &[]).await, None, "plain http");
    app.stop().await;

    let app = TestApp::builder(Backend::Sqlite).trusted_proxies(&["10.0.0.0/8"]).spawn().await;
    assert_eq!(hsts(&app, &[("x-forwarded-proto", "https")]).await, None, "an untrusted peer cannot claim https");
    app.stop().await;
}
