//! Protocol details: a 405 names what its path does allow, and money is
//! read and written exactly, never through a float.

use gable_tests::{both, TestApp};
use serde_json::json;

async fn method_not_allowed_names_the_allowed_methods(app: &TestApp) {
    let t = app.tenant("A").await;
    let property = app.property(&t.test_key).await;
    let pid = property["id"].as_str().unwrap();
    let event = uuid::Uuid::now_v7();
    let cases: Vec<(&str, String, &str)> = vec![
        ("PUT", "/v1/properties".into(), "GET, HEAD, POST"),
        ("PUT", format!("/v1/properties/{pid}"), "GET, HEAD, PATCH, DELETE"),
        ("POST", "/v1/events".into(), "GET, HEAD"),
        ("PATCH", format!("/v1/events/{event}"), "GET, HEAD"),
        ("DELETE", format!("/v1/webhook-deliveries/{event}"), "GET, HEAD"),
        ("GET", format!("/v1/properties/{pid}/archive"), "POST"),
        ("POST", "/v1/openapi.json".into(), "GET, HEAD"),
    ];
    for (method, path, allow) in cases {
        let r = app.call(&t.test_key, method, &path, Some(json!({}))).await;
        r.assert_error(405, "method_not_allowed");
        assert_eq!(r.headers.get("allow").and_then(|v| v.to_str().ok()), Some(allow), "{method} {path}");
    }
}
both!(method_not_allowed_names_the_allowed_methods);

async fn money_is_exact(app: &TestApp) {
    let t = app.tenant("A").await;
    let url = format!("{}/v1/payments", app.sandbox);
    // A raw request, so that the body is the exact text; a payment needs an idempotency key.
    let post = |body: &'static str| {
        app.client
            .post(&url)
            .bearer_auth(&t.test_key)
            .header("content-type", "application/json")
            .header("idempotency-key", uuid::Uuid::new_v4().to_string())
            .body(body)
    };
    // More decimals than the currency has are refused even where a float would round them away.
    let r = app.raw(post(r#"{"amount": 10.000000000000000001, "currency": "USD", "scenario": "succeeded"}"#)).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "amount");
    let r = app.raw(post(r#"{"amount": 1.0000000000000000001e1, "currency": "USD", "scenario": "succeeded"}"#)).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "amount");
    // The largest amounts come back digit for digit, in the currency's decimals.
    for (body, expect) in [
        (r#"{"amount": 999999999999.99, "currency": "USD", "scenario": "succeeded"}"#, r#""amount":999999999999.99"#),
        (r#"{"amount": 999999999999.999, "currency": "KWD", "scenario": "succeeded"}"#, r#""amount":999999999999.999"#),
        (r#"{"amount": "0.10", "currency": "USD", "scenario": "succeeded"}"#, r#""amount":0.1"#),
        (r#"{"amount": 1.25e3, "currency": "JPY", "scenario": "succeeded"}"#, r#""amount":1250"#),
    ] {
        let r = app.raw(post(body)).await;
        assert_eq!(r.status, 201, "{body}: {}", r.text);
        assert!(r.text.contains(expect), "{body} came back as {}", r.text);
    }
}
both!(money_is_exact);
