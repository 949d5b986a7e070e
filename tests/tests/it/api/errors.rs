//! Bad input of every kind gets a clear 4xx in the error body and changes nothing;
//! every response carries a request id; a panic is a 500, not a dropped connection.

use gable_tests::{both, world, TestApp};
use serde_json::json;

async fn bad_bodies_change_nothing(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    let unit = w.id("units");
    let before = app.count_rows("leases").await;
    let url = format!("{}/v1/leases", app.sandbox);
    let post = |body: &'static str, ct: &'static str| app.client.post(&url).bearer_auth(&t.test_key).header("content-type", ct).body(body);
    app.raw(post("{\"unit_id\": ", "application/json")).await.assert_error(400, "invalid_json");
    app.raw(post("not json", "application/json")).await.assert_error(400, "invalid_json");
    app.raw(post("[]", "application/json")).await.assert_error(400, "invalid_request");
    app.raw(post("{}", "text/plain")).await.assert_error(415, "unsupported_media_type");
    app.raw(app.client.post(&url).bearer_auth(&t.test_key).body("{}")).await.assert_error(415, "unsupported_media_type");
    let huge = format!("{{\"memo\": \"{}\"}}", "x".repeat(1_100_000));
    app.raw(app.client.post(&url).bearer_auth(&t.test_key).header("content-type", "application/json").body(huge))
        .await
        .assert_error(413, "payload_too_large");

    let base = json!({ "unit_id": unit, "start_date": "2027-01-01", "rent": 1000, "currency": "USD" });
    let cases: Vec<(serde_json::Value, &str)> = vec![
        (json!({ "start_date": "2027-01-01", "rent": 1000, "currency": "USD" }), "unit_id"),
        (merge(&base, json!({ "unit_id": "not-a-uuid" })), "unit_id"),
        (merge(&base, json!({ "unit_id": 42 })), "unit_id"),
        (merge(&base, json!({ "start_date": "01/02/2027" })), "start_date"),
        (merge(&base, json!({ "end_date": "2026-01-01" })), "end_date"),
        (merge(&base, json!({ "rent": -5 })), "rent"),
        (merge(&base, json!({ "rent": "12.345" })), "rent"),
        (merge(&base, json!({ "rent": true })), "rent"),
        (merge(&base, json!({ "currency": "usd" })), "currency"),
        (merge(&base, json!({ "currency": "XYZ" })), "currency"),
        (merge(&base, json!({ "rent_due_day": 31 })), "rent_due_day"),
        (merge(&base, json!({ "rent_due_day": 1.5 })), "rent_due_day"),
        (merge(&base, json!({ "status": "active" })), "status"),
        (merge(&base, json!({ "property_id": w.id("properties") })), "property_id"),
        (merge(&base, json!({ "id": "01a20289-ac79-74c8-8ee9-716e09a7883f" })), "id"),
        (merge(&base, json!({ "colour": "blue" })), "colour"),
        (merge(&base, json!({ "metadata": { "k": 5 } })), "metadata.k"),
        (merge(&base, json!({ "metadata": "x" })), "metadata"),
        // `null` where the description allows none: a field with a default, a required one.
        (merge(&base, json!({ "rent_due_day": null })), "rent_due_day"),
        (merge(&base, json!({ "unit_id": null })), "unit_id"),
        // U+0000 anywhere: PostgreSQL cannot store it, so neither database takes it.
        (merge(&base, json!({ "metadata": { "note": "a\u{0}b" } })), "metadata.note"),
        (merge(&base, json!({ "metadata": { "k\u{0}": "v" } })), "metadata.k\\u0000"),
        (merge(&base, json!({ "currency": "U\u{0}D" })), "currency"),
    ];
    for (body, param) in cases {
        let r = app.call(&t.test_key, "POST", "/v1/leases", Some(body.clone())).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.param(), param, "body {body}");
    }
    let lease = w.id("leases");
    let lease_path = format!("/v1/leases/{lease}");
    let patch = |body| app.call(&t.test_key, "PATCH", &lease_path, Some(body));
    patch(json!({})).await.assert_error(400, "invalid_request");
    let r = patch(json!({ "unit_id": unit })).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "unit_id");
    let r = patch(json!({ "rent": null })).await;
    r.assert_error(400, "validation_failed");
    let r = patch(json!({ "currency": "EUR" })).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "currency");
    assert_eq!(app.count_rows("leases").await, before, "a refused request wrote something");
    let still = app.call(&t.test_key, "GET", &format!("/v1/leases/{lease}"), None).await;
    assert_eq!(still.body["data"]["rent"], json!(1450));
}
both!(bad_bodies_change_nothing);

fn merge(base: &serde_json::Value, extra: serde_json::Value) -> serde_json::Value {
    let mut b = base.clone();
    for (k, v) in extra.as_object().unwrap() {
        b[k] = v.clone();
    }
    b
}

async fn unknown_paths_methods_and_versions(app: &TestApp) {
    let t = app.tenant("A").await;
    app.call(&t.test_key, "GET", "/v1/spaceships", None).await.assert_error(404, "not_found");
    app.call(&t.test_key, "GET", "/v1/units/not-a-uuid", None).await.assert_error(400, "invalid_parameter");
    app.call(&t.test_key, "GET", &format!("/v1/units/{}", uuid::Uuid::now_v7()), None).await.assert_error(404, "not_found");
    app.call(&t.test_key, "GET", "/v1/units/01a20289-ac79-74c8-8ee9-716e09a7883f/extra/deep", None).await.assert_error(404, "not_found");
    app.call(&t.test_key, "PUT", "/v1/units", None).await.assert_error(405, "method_not_allowed");
    app.call(&t.test_key, "GET", "/elsewhere", None).await.assert_error(404, "not_found");
    let r =
        app.raw(app.client.get(format!("{}/v1/units", app.sandbox)).bearer_auth(&t.test_key).header("gable-version", "1999-01-01")).await;
    r.assert_error(400, "unsupported_version");
    let r =
        app.raw(app.client.get(format!("{}/v1/units", app.sandbox)).bearer_auth(&t.test_key).header("gable-version", "2026-11-22")).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.headers["gable-version"], "2026-11-22");
    // Request-Id on success and failure alike, equal to meta.request_id.
    assert_eq!(r.body["meta"]["request_id"].as_str().unwrap(), r.headers["request-id"].to_str().unwrap());
}
both!(unknown_paths_methods_and_versions);

async fn credentials_are_checked(app: &TestApp) {
    let t = app.tenant("A").await;
    app.raw(app.client.get(format!("{}/v1/units", app.sandbox))).await.assert_error(401, "unauthenticated");
    app.call("gbl_test_wrong", "GET", "/v1/units", None).await.assert_error(401, "unauthenticated");
    app.raw(app.client.get(format!("{}/v1/units", app.sandbox)).header("authorization", format!("Basic {}", t.test_key)))
        .await
        .assert_error(401, "unauthenticated");
    app.call(&format!("{}x", t.test_key), "GET", "/v1/units", None).await.assert_error(401, "unauthenticated");
    // Revocation takes effect at once.
    let sa = app.store.service_account(t.id, "tests").await.unwrap();
    let key = app.store.create_key(t.id, sa, false, vec!["*".into()], None).await.unwrap();
    assert_eq!(app.call(&key.secret, "GET", "/v1/units", None).await.status, 200);
    assert!(app.store.revoke_key(t.id, key.id).await.unwrap());
    app.call(&key.secret, "GET", "/v1/units", None).await.assert_error(401, "unauthenticated");
}
both!(credentials_are_checked);

#[tokio::test]
async fn a_panicking_handler_answers_500_in_the_error_body() {
    let router = gable::http::with_common_layers(
        axum::Router::new().route(
            "/boom",
            axum::routing::get(|| async {
                if std::hint::black_box(true) {
                    panic!("boom");
                }
                "unreachable"
            }),
        ),
        "live",
        std::time::Duration::from_secs(30),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, router).await.unwrap() });
    let r = reqwest::get(format!("http://{addr}/boom")).await.unwrap();
    assert_eq!(r.status(), 500);
    let rid = r.headers()["request-id"].to_str().unwrap().to_string();
    let body: serde_json::Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], "internal_error");
    assert_eq!(body["error"]["request_id"], rid.as_str());
    assert!(!body["error"]["message"].as_str().unwrap().contains("boom"), "internals leaked");
}
