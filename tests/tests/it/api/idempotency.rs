//! Idempotency-Key on every POST (IETF Idempotency-Key draft): the same
//! key and request replays the stored answer with `Idempotent-Replayed: true`; the same
//! key while its request runs is `409 idempotency_key_in_use`; with another request it is
//! `422 idempotency_key_reused`; refusals are stored too; keys are per tenant,
//! environment and credential, hold across processes and restarts, and expire after
//! 24 hours. Concurrent retries book one payment, with one set of events and entries.

use chrono::Duration;
use gable_tests::{both, Res, TestApp};
use serde_json::{json, Value};
use uuid::Uuid;

/// A POST with an explicit key, to `base` (a node's sandbox listener).
async fn post(app: &TestApp, base: &str, k: &str, key: &str, path: &str, body: &Value) -> Res {
    let req = app.client.post(format!("{base}{path}")).bearer_auth(k).header("Idempotency-Key", key).json(body);
    app.raw(req).await
}

fn replayed(r: &Res) -> bool {
    r.headers.get("idempotent-replayed").is_some_and(|v| v == "true")
}

fn payment(amount: i64) -> Value {
    json!({ "scenario": "succeeded", "amount": amount, "currency": "USD" })
}

/// Rows of a payment's consequences: (payments, events, ledger entries) with this amount.
async fn booked(app: &TestApp) -> (i64, i64, i64) {
    (app.count_rows("payments").await, app.count_rows("events").await, app.count_rows("accounting_entries").await)
}

/// A draft invoice of 100 USD on a new lease; returns its id.
async fn draft_invoice(app: &TestApp, k: &str) -> String {
    let address = json!({ "line1": "1 Maple St", "city": "Portland", "region": "OR", "postal_code": "97201", "country": "US" });
    let prop = app.create(k, "properties", json!({ "name": "Maple Court", "kind": "residential", "address": address })).await;
    let unit = app.create(k, "units", json!({ "property_id": prop["id"], "number": "1A", "currency": "USD" })).await;
    let lease = app
        .create(
            k,
            "leases",
            json!({ "unit_id": unit["id"], "start_date": "2027-01-01", "end_date": "2027-12-31", "rent": 1450, "currency": "USD" }),
        )
        .await;
    let inv =
        app.create(k, "invoices", json!({ "lease_id": lease["id"], "amount_due": 100, "currency": "USD", "due_date": "2027-01-01" })).await;
    inv["id"].as_str().expect("id").to_string()
}

async fn a_retry_replays_the_first_answer(app: &TestApp) {
    let t = app.tenant("A").await;
    let (k, base) = (t.test_key.as_str(), app.base(false).to_string());
    let key = Uuid::new_v4().to_string();
    let first = post(app, &base, k, &key, "/v1/payments", &payment(25)).await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert!(!replayed(&first), "the first answer is not a replay");
    let after_first = booked(app).await;
    for _ in 0..3 {
        let again = post(app, &base, k, &key, "/v1/payments", &payment(25)).await;
        assert_eq!(again.status, 201, "{}", again.text);
        assert!(replayed(&again), "a retry says it is a replay");
        assert_eq!(again.body, first.body, "the stored answer, as first sent");
    }
    assert_eq!(booked(app).await, after_first, "retries wrote nothing");

    // The same key for another request: another body, another path, another method.
    let r = post(app, &base, k, &key, "/v1/payments", &payment(26)).await;
    r.assert_error(422, "idempotency_key_reused");
    assert_eq!(r.param(), "Idempotency-Key");
    let r = post(app, &base, k, &key, "/v1/properties", &json!({ "name": "X" })).await;
    r.assert_error(422, "idempotency_key_reused");
    assert_eq!(booked(app).await, after_first);

    // Keys are per credential and per environment: the same key elsewhere is a new request.
    let other = app.key(t.id, false, &["*"], None).await;
    let r = post(app, &base, &other, &key, "/v1/payments", &payment(25)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(!replayed(&r));
    assert_ne!(r.body["data"]["id"], first.body["data"]["id"]);
    let r =
        post(app, app.base(true), &t.live_key, &key, "/v1/payments", &json!({ "amount": 25, "currency": "USD", "method": "cash" })).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(!replayed(&r));

    // Actions and other POSTs too: opening an invoice twice with one key is one open.
    let inv = draft_invoice(app, k).await;
    let open = format!("/v1/invoices/{inv}/open");
    let key = Uuid::new_v4().to_string();
    let r1 = post(app, &base, k, &key, &open, &json!({})).await;
    assert_eq!(r1.status, 200, "{}", r1.text);
    let r2 = post(app, &base, k, &key, &open, &json!({})).await;
    assert_eq!((r2.status, replayed(&r2)), (200, true), "a retried action replays instead of failing: {}", r2.text);
    let r3 = app.call(k, "POST", &open, Some(json!({}))).await;
    r3.assert_error(409, "invalid_state_transition");
}
both!(a_retry_replays_the_first_answer);

async fn refusals_are_stored_and_server_time_expires_keys(app: &TestApp) {
    let t = app.tenant("A").await;
    let (k, base) = (t.test_key.as_str(), app.base(false).to_string());
    // A refusal is the key's answer: the retry gets it again, even once the request
    // would succeed (the client must use a new key for a new attempt).
    let inv = draft_invoice(app, k).await;
    let key = Uuid::new_v4().to_string();
    let body = json!({ "scenario": "succeeded", "amount": 100, "currency": "USD", "invoice_id": inv });
    let r = post(app, &base, k, &key, "/v1/payments", &body).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "invoice_id", "a draft invoice takes no payment");
    assert_eq!(app.call(k, "POST", &format!("/v1/invoices/{inv}/open"), None).await.status, 200);
    let again = post(app, &base, k, &key, "/v1/payments", &body).await;
    assert_eq!((again.status, replayed(&again)), (400, true), "{}", again.text);
    assert_eq!(again.body, r.body);
    let fresh = post(app, &base, k, &Uuid::new_v4().to_string(), "/v1/payments", &body).await;
    assert_eq!(fresh.status, 201, "a new key is a new attempt: {}", fresh.text);

    // After 24 hours a key is forgotten (and purged): the same key is a new request.
    let key = Uuid::new_v4().to_string();
    let first = post(app, &base, k, &key, "/v1/payments", &payment(30)).await;
    assert_eq!(first.status, 201, "{}", first.text);
    app.clock.advance(Duration::hours(23));
    let r = post(app, &base, k, &key, "/v1/payments", &payment(31)).await;
    r.assert_error(422, "idempotency_key_reused");
    app.clock.advance(Duration::hours(1) + Duration::seconds(5));
    app.run_jobs().await;
    assert_eq!(app.count_where("idempotency_keys", &format!("key = '{key}'")).await, 0, "expired keys are purged");
    let r = post(app, &base, k, &key, "/v1/payments", &payment(31)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(!replayed(&r));
    assert_ne!(r.body["data"]["id"], first.body["data"]["id"]);
}
both!(refusals_are_stored_and_server_time_expires_keys);

async fn a_request_in_flight_holds_its_key(app: &TestApp) {
    let t = app.tenant("A").await;
    let (k, base) = (t.test_key.as_str(), app.base(false).to_string());
    let key = Uuid::new_v4().to_string();
    let r = post(app, &base, k, &key, "/v1/payments", &payment(40)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    // Stage the key as its request left it mid-way: reserved until its creation time, no
    // answer yet; and read the clock from before that.
    let staged = app
        .exec(&format!(
            "UPDATE idempotency_keys SET response_status = NULL, response_sealed = NULL, locked_until = created_at WHERE key = '{key}'"
        ))
        .await;
    assert_eq!(staged, 1);
    app.clock.advance(Duration::seconds(-30));
    let r = post(app, &base, k, &key, "/v1/payments", &payment(40)).await;
    r.assert_error(409, "idempotency_key_in_use");
    assert_eq!(r.param(), "Idempotency-Key");
    // Another request with the key is still refused as reused, not as in use.
    post(app, &base, k, &key, "/v1/payments", &payment(41)).await.assert_error(422, "idempotency_key_reused");
    // A reservation that lapses (its process died) is taken over by the retry.
    app.clock.advance(Duration::seconds(60));
    let r = post(app, &base, k, &key, "/v1/payments", &payment(40)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert!(!replayed(&r));
    let again = post(app, &base, k, &key, "/v1/payments", &payment(40)).await;
    assert_eq!((again.status, replayed(&again)), (201, true));
    assert_eq!(again.body, r.body);
}
both!(a_request_in_flight_holds_its_key);

/// 50 concurrent POSTs with one key, spread over `bases` (one or two processes): one
/// payment, one set of events and entries; every other answer a replay of it or a 409.
async fn fifty_at_once(app: &TestApp, bases: &[String], k: &str) {
    let before = booked(app).await;
    let key = Uuid::new_v4().to_string();
    let body = payment(50);
    let answers = futures::future::join_all((0..50).map(|i| post(app, &bases[i % bases.len()], k, &key, "/v1/payments", &body))).await;
    let created: Vec<&Res> = answers.iter().filter(|r| r.status == 201).collect();
    assert!(!created.is_empty(), "one request made the payment");
    let ids: std::collections::BTreeSet<String> = created.iter().map(|r| r.body["data"]["id"].to_string()).collect();
    assert_eq!(ids.len(), 1, "every 201 is the same payment");
    assert_eq!(created.iter().filter(|r| !replayed(r)).count(), 1, "exactly one answer is not a replay");
    for r in &answers {
        assert!(r.status == 201 || r.body["error"]["code"] == "idempotency_key_in_use", "{} {}", r.status, r.text);
    }
    let (payments, events, entries) = booked(app).await;
    assert_eq!(payments - before.0, 1, "one payment");
    assert_eq!(events - before.1, 1, "one payment.succeeded");
    assert_eq!(entries - before.2, 1, "one ledger entry");
}

async fn concurrent_retries_book_one_payment(app: &TestApp) {
    let t = app.tenant("A").await;
    fifty_at_once(app, &[app.base(false).to_string()], &t.test_key).await;
    // A restarted process (its own pools and caches, the same database) replays the key.
    let node = app.second_node().spawn().await;
    let key = Uuid::new_v4().to_string();
    let first = post(app, app.base(false), &t.test_key, &key, "/v1/payments", &payment(60)).await;
    let later = post(app, node.base(false), &t.test_key, &key, "/v1/payments", &payment(60)).await;
    assert_eq!((later.status, replayed(&later)), (201, true), "{}", later.text);
    assert_eq!(later.body, first.body);
    // Two processes on one database share their keys.
    fifty_at_once(app, &[app.base(false).to_string(), node.base(false).to_string()], &t.test_key).await;
    node.stop().await;
}
both!(concurrent_retries_book_one_payment);
