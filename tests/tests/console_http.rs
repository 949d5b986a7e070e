//! The console's session cookie over HTTP: HttpOnly and SameSite=Lax always, Secure
//! when Gable is served over https.

use gable_tests::{Backend, TestApp};

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
    let app = TestApp::spawn_with_public_url("https://console.example.com").await;
    let cookie = sign_up_cookie(&app).await;
    for attr in ["HttpOnly", "SameSite=Lax", "Secure", "Path=/"] {
        assert!(cookie.split(';').any(|a| a.trim() == attr), "cookie lacks {attr}: {cookie}");
    }
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_cookie_over_plain_http_is_not_marked_secure() {
    let app = TestApp::spawn(Backend::Sqlite).await;
    let cookie = sign_up_cookie(&app).await;
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");
    assert!(!cookie.split(';').any(|a| a.trim() == "Secure"), "Secure over http would lose the cookie: {cookie}");
    app.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cross_site_post_is_refused_before_anything_runs() {
    let app = TestApp::spawn(Backend::Sqlite).await;
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
