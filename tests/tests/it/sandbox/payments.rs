//! Test payments in the sandbox (`createTestPayment`): each scenario's
//! status, events, ledger entries and invoice effects; every malformed header and body
//! refused with the field named and nothing written; `scenario` refused in live mode.

use gable_tests::{both, Res, TestApp};
use serde_json::{json, Value};
use uuid::Uuid;

/// An open invoice of `amount_due` USD on a lease (property, unit, lease made first);
/// returns (lease id, invoice id).
async fn open_invoice(app: &TestApp, k: &str, amount_due: i64) -> (String, String) {
    let id = |v: Value| v["id"].as_str().expect("id").to_string();
    let property = id(app
        .create(
            k,
            "properties",
            json!({ "name": "Maple Court", "kind": "residential",
                    "address": { "line1": "1 Maple St", "city": "Portland", "region": "OR", "postal_code": "97201", "country": "US" } }),
        )
        .await);
    let unit = id(app.create(k, "units", json!({ "property_id": property, "number": "1A", "currency": "USD" })).await);
    let lease = id(app
        .create(
            k,
            "leases",
            json!({ "unit_id": unit, "start_date": "2027-01-01", "end_date": "2027-12-31", "rent": 1450, "currency": "USD" }),
        )
        .await);
    let invoice = id(app
        .create(k, "invoices", json!({ "lease_id": lease, "amount_due": amount_due, "currency": "USD", "due_date": "2027-01-01" }))
        .await);
    let r = app.call(k, "POST", &format!("/v1/invoices/{invoice}/open"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    (lease, invoice)
}

/// `POST /v1/payments` with a fresh key.
async fn pay(app: &TestApp, k: &str, body: Value) -> Res {
    app.call(k, "POST", "/v1/payments", Some(body)).await
}

/// The types of the events about a record, oldest first.
async fn event_types(app: &TestApp, k: &str, related: &str) -> Vec<String> {
    app.all_pages(k, &format!("/v1/events?limit=100&sort=created_at&filter[related_object_id]={related}"))
        .await
        .iter()
        .map(|e| e["type"].as_str().expect("type").to_string())
        .collect()
}

/// The ledger entries a payment posted: each as its (account, debit, credit) lines.
async fn entries(app: &TestApp, k: &str, payment: &str) -> Vec<Vec<(String, String, String)>> {
    let mut es = app.all_pages(k, &format!("/v1/accounting-entries?filter[source_id]={payment}&sort=created_at")).await;
    es.sort_by_key(|e| !e["reverses_id"].is_null());
    es.iter()
        .map(|e| {
            e["lines"]
                .as_array()
                .expect("lines")
                .iter()
                .map(|l| (l["account"].as_str().unwrap().to_string(), l["debit"].to_string(), l["credit"].to_string()))
                .collect()
        })
        .collect()
}

async fn invoice(app: &TestApp, k: &str, id: &str) -> Value {
    let r = app.call(k, "GET", &format!("/v1/invoices/{id}"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"].clone()
}

async fn each_scenario_does_what_it_says(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    let (lease, inv) = open_invoice(app, k, 1450).await;

    // succeeded: settled at once, the money booked, the invoice paid.
    let r = pay(
        app,
        k,
        json!({ "scenario": "succeeded", "amount": 1450, "currency": "USD", "invoice_id": inv, "description": "January rent" }),
    )
    .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let p = &r.body["data"];
    assert_eq!(r.body["object"], "payment");
    assert_eq!((p["scenario"].clone(), p["status"].clone()), (json!("succeeded"), json!("succeeded")));
    assert_eq!(p["amount"], json!(1450));
    assert_eq!(p["lease_id"], json!(lease), "a payment of an invoice pays its lease");
    assert_eq!(p["description"], "January rent");
    assert!(p["succeeded_at"].is_string() && p["failure_code"].is_null());
    let paid = p["id"].as_str().unwrap().to_string();
    assert_eq!(event_types(app, k, &paid).await, ["payment.succeeded"].map(String::from));
    let cash = vec![("cash".to_string(), "1450".to_string(), "0".to_string()), ("accounts_receivable".into(), "0".into(), "1450".into())];
    assert_eq!(entries(app, k, &paid).await, vec![cash.clone()]);
    let i = invoice(app, k, &inv).await;
    assert_eq!((i["status"].clone(), i["amount_paid"].clone()), (json!("paid"), json!(1450)));

    // reversed: succeeds, then is reversed: both events, the mirror entry, the invoice reopened.
    let (_, inv2) = open_invoice(app, k, 900).await;
    let r = pay(app, k, json!({ "scenario": "reversed", "amount": 900, "currency": "USD", "invoice_id": inv2 })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let p = &r.body["data"];
    assert_eq!((p["scenario"].clone(), p["status"].clone()), (json!("reversed"), json!("reversed")));
    assert!(p["succeeded_at"].is_string() && p["reversed_at"].is_string());
    let reversed = p["id"].as_str().unwrap().to_string();
    assert_eq!(event_types(app, k, &reversed).await, ["payment.succeeded", "payment.reversed"].map(String::from));
    let booked = vec![("cash".to_string(), "900".to_string(), "0".to_string()), ("accounts_receivable".into(), "0".into(), "900".into())];
    let mirror: Vec<_> = booked.iter().map(|(a, d, c)| (a.clone(), c.clone(), d.clone())).collect();
    assert_eq!(entries(app, k, &reversed).await, vec![booked, mirror]);
    let i = invoice(app, k, &inv2).await;
    assert_eq!((i["status"].clone(), i["amount_paid"].clone()), (json!("open"), json!(0)), "the reversal reopens the invoice");

    // failed: declined, no money, the invoice untouched.
    let r = pay(app, k, json!({ "scenario": "failed", "amount": 900, "currency": "USD", "invoice_id": inv2 })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let p = &r.body["data"];
    assert_eq!((p["scenario"].clone(), p["status"].clone()), (json!("failed"), json!("failed")));
    assert_eq!(p["failure_code"], "card_declined");
    assert!(p["failure_message"].as_str().is_some_and(|m| !m.is_empty()));
    assert!(p["succeeded_at"].is_null());
    let failed = p["id"].as_str().unwrap().to_string();
    assert_eq!(event_types(app, k, &failed).await, ["payment.failed"].map(String::from));
    assert!(entries(app, k, &failed).await.is_empty(), "a failed payment books nothing");
    let i = invoice(app, k, &inv2).await;
    assert_eq!((i["status"].clone(), i["amount_paid"].clone()), (json!("open"), json!(0)));

    // Without an invoice: a payment on a lease, or on nothing, in another currency.
    let r =
        pay(app, k, json!({ "scenario": "succeeded", "amount": 12.5, "currency": "USD", "lease_id": lease, "metadata": { "ref": "x1" } }))
            .await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["metadata"]["ref"], "x1");
    let r = pay(app, k, json!({ "scenario": "succeeded", "amount": 1000, "currency": "JPY" })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["amount"], json!(1000));
    // The lease's currency is the payment's.
    let r = pay(app, k, json!({ "scenario": "succeeded", "amount": 10, "currency": "EUR", "lease_id": lease })).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "currency");
}
both!(each_scenario_does_what_it_says);

async fn malformed_requests_are_refused_and_write_nothing(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    let (_, inv) = open_invoice(app, k, 100).await;
    let payments = app.count_rows("payments").await;
    let events = app.count_rows("events").await;
    let url = format!("{}/v1/payments", app.base(false));
    let good = json!({ "scenario": "succeeded", "amount": 10, "currency": "USD" });
    let send = |key: Option<String>, body: Vec<u8>| {
        let mut req = app.client.post(&url).bearer_auth(k).header("Content-Type", "application/json").body(body);
        if let Some(key) = key {
            req = req.header("Idempotency-Key", key);
        }
        app.raw(req)
    };
    let fresh = || Some(Uuid::new_v4().to_string());
    let bytes = |v: &Value| serde_json::to_vec(v).unwrap();

    // The header: required, 8 to 200 characters.
    let r = send(None, bytes(&good)).await;
    r.assert_error(400, "missing_idempotency_key");
    assert_eq!(r.param(), "Idempotency-Key");
    for bad in ["1234567".to_string(), "k".repeat(201), "has space in it".to_string()] {
        let r = send(Some(bad.clone()), bytes(&good)).await;
        r.assert_error(400, "invalid_parameter");
        assert_eq!(r.param(), "Idempotency-Key", "{bad}");
    }
    for ok in ["12345678".to_string(), "k".repeat(200)] {
        let r = send(Some(ok), bytes(&good)).await;
        assert_eq!(r.status, 201, "8 and 200 characters are keys: {}", r.text);
    }
    let payments = payments + 2;
    let events = app.count_rows("events").await.max(events);

    // The body: each field named.
    let cases: Vec<(Value, &str)> = vec![
        (json!({ "amount": 10, "currency": "USD" }), "scenario"),
        (json!({ "scenario": "succeeded", "currency": "USD" }), "amount"),
        (json!({ "scenario": "succeeded", "amount": 10 }), "currency"),
        (json!({ "scenario": "succeeded", "amount": 0, "currency": "USD" }), "amount"),
        (json!({ "scenario": "succeeded", "amount": -5, "currency": "USD" }), "amount"),
        (json!({ "scenario": "succeeded", "amount": 10.001, "currency": "USD" }), "amount"),
        (json!({ "scenario": "succeeded", "amount": 1.5, "currency": "JPY" }), "amount"),
        (json!({ "scenario": "succeeded", "amount": "ten", "currency": "USD" }), "amount"),
        (json!({ "scenario": "succeeded", "amount": 10, "currency": "usd" }), "currency"),
        (json!({ "scenario": "succeeded", "amount": 10, "currency": "US" }), "currency"),
        (json!({ "scenario": "succeeded", "amount": 10, "currency": "XYZ" }), "currency"),
        (json!({ "scenario": "approved", "amount": 10, "currency": "USD" }), "scenario"),
        (json!({ "scenario": "succeeded", "amount": 10, "currency": "USD", "tip": 2 }), "tip"),
        (json!({ "scenario": "succeeded", "amount": 10, "currency": "USD", "status": "succeeded" }), "status"),
        (json!({ "scenario": "succeeded", "amount": 10, "currency": "USD", "invoice_id": "nope" }), "invoice_id"),
        (json!({ "scenario": "succeeded", "amount": 10, "currency": "USD", "invoice_id": Uuid::new_v4() }), "invoice_id"),
        (json!({ "scenario": "succeeded", "amount": 10, "currency": "EUR", "invoice_id": inv }), "currency"),
        (json!({ "scenario": "succeeded", "amount": 10, "currency": "USD", "lease_id": Uuid::new_v4() }), "lease_id"),
        (json!({ "scenario": "succeeded", "amount": 10, "currency": "USD", "description": "d".repeat(501) }), "description"),
    ];
    for (body, param) in cases {
        let r = send(fresh(), bytes(&body)).await;
        // A reference to nothing is a 404 naming the field; everything else a 400.
        let code = r.body["error"]["code"].as_str().unwrap_or_default();
        assert!(
            (r.status == 400 && ["validation_failed", "invalid_request"].contains(&code)) || (r.status == 404 && code == "not_found"),
            "{body}: {}",
            r.text
        );
        assert_eq!(r.param(), param, "{body}: {}", r.text);
    }
    let r = send(fresh(), b"{\"scenario\": \"succeeded\", ".to_vec()).await;
    r.assert_error(400, "invalid_json");
    let r = send(fresh(), bytes(&json!(["succeeded", 10, "USD"]))).await;
    r.assert_error(400, "invalid_request");
    assert_eq!(app.count_rows("payments").await, payments, "refused requests wrote no payment");
    assert_eq!(app.count_rows("events").await, events, "refused requests wrote no event");
}
both!(malformed_requests_are_refused_and_write_nothing);

async fn live_mode_refuses_scenarios(app: &TestApp) {
    let t = app.tenant("A").await;
    let live = |body: Value| app.call_on(true, &t.live_key, "POST", "/v1/payments", Some(body));
    let r = live(json!({ "scenario": "succeeded", "amount": 10, "currency": "USD", "method": "cash" })).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "scenario");
    assert!(r.body["error"]["message"].as_str().unwrap().contains("sandbox"), "{}", r.text);
    // A live payment is money received outside Gable: pending until staff confirm it.
    let r = live(json!({ "amount": 10, "currency": "USD", "method": "bank_transfer" })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!((r.body["data"]["status"].clone(), r.body["data"]["scenario"].clone()), (json!("pending"), Value::Null));
    // The key is required in live mode too.
    let req = app.client.post(format!("{}/v1/payments", app.base(true))).bearer_auth(&t.live_key).json(&json!({
        "amount": 10, "currency": "USD", "method": "cash"
    }));
    app.raw(req).await.assert_error(400, "missing_idempotency_key");
}
both!(live_mode_refuses_scenarios);
