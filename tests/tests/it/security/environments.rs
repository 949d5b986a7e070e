//! Live mode is live: rules that differ by environment are checked
//! with the environment known. Webhook URLs and flow origins use https in live mode
//! (the sandbox also takes http); `scenario` is required in the sandbox, where a test
//! payment's outcome runs at once, and refused in live mode; a live payment records money
//! received outside Gable (cash, cheque, bank transfer, other): it starts `pending`, and
//! its `succeed` is staff confirming that the money arrived.

use gable_tests::TestApp;
use serde_json::json;

async fn live_rules_differ_from_the_sandbox(app: &TestApp) {
    let t = app.tenant("A").await;
    let (live_key, test_key) = (t.live_key.as_str(), t.test_key.as_str());
    let live = |method: &'static str, path: String, body| async move { app.call_on(true, live_key, method, &path, Some(body)).await };
    let sandbox = |method: &'static str, path: String, body| async move { app.call_on(false, test_key, method, &path, Some(body)).await };
    let webhook = |url: &str| json!({ "url": url, "events": ["*"] });

    // Webhook URLs: https in live mode, on create and on update.
    let r = live("POST", "/v1/webhooks".into(), webhook("http://hooks.example.com/gable")).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "url");
    let r = live("POST", "/v1/webhooks".into(), webhook("https://hooks.example.com/gable")).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let r = live("PATCH", format!("/v1/webhooks/{id}"), json!({ "url": "http://hooks.example.com/other" })).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "url");
    let r = sandbox("POST", "/v1/webhooks".into(), webhook("http://hooks.sandbox.example/gable")).await;
    assert_eq!(r.status, 201, "{}", r.text);

    // Flow origins likewise (a booking token needs a unit with a nightly rate).
    let unit_in = |livemode: bool| async move {
        let key = if livemode { live_key } else { test_key };
        let property =
            json!({ "name": "Shore", "kind": "residential", "address": { "line1": "1 Shore", "city": "Miami", "country": "US" } });
        let p = app.call_on(livemode, key, "POST", "/v1/properties", Some(property)).await;
        assert_eq!(p.status, 201, "{}", p.text);
        let unit = json!({ "property_id": p.body["data"]["id"], "number": "1", "nightly_rate": 120, "currency": "USD" });
        let u = app.call_on(livemode, key, "POST", "/v1/units", Some(unit)).await;
        assert_eq!(u.status, 201, "{}", u.text);
        u.body["data"]["id"].clone()
    };
    let live_unit = unit_in(true).await;
    let r = live("POST", "/v1/flow-tokens".into(), json!({ "flow": "booking", "origin": "http://shop.example.com", "unit_id": live_unit }))
        .await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "origin");
    let r =
        live("POST", "/v1/flow-tokens".into(), json!({ "flow": "booking", "origin": "https://shop.example.com", "unit_id": live_unit }))
            .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(r.body["data"]["token"].as_str().unwrap().starts_with("gft_"), "the token is shown once, on create");
    let test_unit = unit_in(false).await;
    let r =
        sandbox("POST", "/v1/flow-tokens".into(), json!({ "flow": "booking", "origin": "http://localhost:3000", "unit_id": test_unit }))
            .await;
    assert_eq!(r.status, 201, "{}", r.text);

    // Payments: a scenario is a sandbox rehearsal; live mode records real money.
    let before = app.count_rows("payments").await;
    let r =
        live("POST", "/v1/payments".into(), json!({ "amount": 10, "currency": "USD", "method": "cash", "scenario": "succeeded" })).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "scenario");
    // Gable processes no cards or ACH debits: a live card payment cannot be recorded.
    for body in [json!({ "amount": 10, "currency": "USD" }), json!({ "amount": 10, "currency": "USD", "method": "ach" })] {
        let r = live("POST", "/v1/payments".into(), body).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.param(), "method");
    }
    assert_eq!(app.count_rows("payments").await, before, "refused payments wrote nothing");
    let r = live("POST", "/v1/payments".into(), json!({ "amount": 10, "currency": "USD", "method": "check" })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["livemode"], true);
    assert_eq!(r.body["data"]["status"], "pending", "a live payment waits for staff to confirm it");
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let r = live("POST", format!("/v1/payments/{id}/succeed"), json!({})).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["status"], "succeeded");
    // A cheque that bounces: staff say why, as a code and in words.
    let r = live("POST", "/v1/payments".into(), json!({ "amount": 20, "currency": "USD", "method": "check" })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let id = r.body["data"]["id"].as_str().unwrap().to_string();
    let why = json!({ "failure_code": "insufficient_funds", "failure_message": "The cheque bounced." });
    let r = live("POST", format!("/v1/payments/{id}/fail"), why).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let failed = &r.body["data"];
    assert_eq!(
        (&failed["status"], &failed["failure_code"], &failed["failure_message"]),
        (&json!("failed"), &json!("insufficient_funds"), &json!("The cheque bounced."))
    );
    // Staff confirm with `payments:write`; a read-only key cannot.
    let reader = app.key(t.id, true, &["*:read"], None).await;
    let r = app.call_on(true, &reader, "POST", "/v1/payments", Some(json!({ "amount": 5, "currency": "USD", "method": "cash" }))).await;
    r.assert_error(403, "insufficient_scope");

    // The sandbox: every test payment names its scenario, which runs at once.
    let before = app.count_rows("payments").await;
    let r = sandbox("POST", "/v1/payments".into(), json!({ "amount": 10, "currency": "USD" })).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "scenario");
    assert!(r.body["error"]["message"].as_str().unwrap().contains("required in the sandbox"), "{}", r.text);
    assert_eq!(app.count_rows("payments").await, before, "a test payment without a scenario writes nothing");
    let r = sandbox("POST", "/v1/payments".into(), json!({ "amount": 10, "currency": "USD", "scenario": "failed" })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let declined = &r.body["data"];
    assert_eq!(declined["scenario"], "failed");
    assert_eq!(declined["livemode"], false);
    assert_eq!((&declined["status"], &declined["failure_code"]), (&json!("failed"), &json!("card_declined")), "{declined}");
    assert!(declined["failure_message"].as_str().is_some_and(|m| !m.is_empty()), "{declined}");
}
gable_tests::both!(live_rules_differ_from_the_sandbox);
