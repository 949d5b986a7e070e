//! Sandbox reset and the demo portfolio: a reset deletes a tenant's
//! sandbox data and clock, never live data, never keys, never another tenant's; the demo
//! portfolio, made through the operations, gives a first call data and a first test
//! payment an invoice to pay.

use chrono::Duration;
use gable_tests::{both, world, TestApp};
use serde_json::json;
use uuid::Uuid;

/// Rows of a tenant's environment across the tables that hold tenant data.
async fn rows(app: &TestApp, tenant: Uuid, live: bool) -> i64 {
    // The request log is written off the request path, so its rows of the calls just made
    // may still be arriving: it is counted apart (`the_request_log_goes_with_the_sandbox`).
    let mut tables: Vec<&str> = gable::domain::collections::COLLECTIONS.iter().map(|c| c.table).filter(|t| *t != "request_logs").collect();
    tables.extend(["ledger_lines", "webhook_deliveries", "idempotency_keys"]);
    let mut n = 0;
    for t in tables {
        n += app.count_where(t, &format!("tenant_id = '{tenant}' AND livemode = {}", if live { "TRUE" } else { "FALSE" })).await;
    }
    n
}

/// The sandbox's request log goes with the rest of it; the live log stays.
async fn the_request_log_goes_with_the_sandbox(app: &TestApp) {
    let a = app.tenant("A").await;
    let sandbox = app.call(&a.test_key, "GET", "/v1/units", None).await;
    let live = app.call_on(true, &a.live_key, "GET", "/v1/units", None).await;
    let written = |id: String| async move { app.count_where("request_logs", &format!("id = '{id}'")).await };
    let id = |r: &gable_tests::Res| r.headers["request-id"].to_str().unwrap().to_string();
    for _ in 0..40 {
        if written(id(&sandbox)).await + written(id(&live)).await == 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(written(id(&sandbox)).await, 1, "the sandbox call is in the log");
    reset(app, a.id).await;
    assert_eq!(written(id(&sandbox)).await, 0, "the sandbox's log is reset");
    assert_eq!(written(id(&live)).await, 1, "the live log stays");
}
both!(the_request_log_goes_with_the_sandbox);

/// A sandbox reset as `gable sandbox reset` and the console run it (without the demo):
/// the rows it deleted, the request log's among them.
async fn reset(app: &TestApp, tenant: Uuid) -> u64 {
    app.state.ops.reset_sandbox(tenant, false).await.expect("reset").rows_deleted
}

async fn a_reset_deletes_the_sandbox_and_nothing_else(app: &TestApp) {
    let a = app.tenant("A").await;
    let b = app.tenant("B").await;
    // Every collection in A's sandbox and in B's, payments with ledger lines, idempotency
    // keys (every harness POST carries one), a webhook with deliveries, an advanced clock.
    world::build(app, a.id, &a.test_key).await;
    world::build(app, b.id, &b.test_key).await;
    let hook = app.create(&a.test_key, "webhooks", json!({ "url": "https://hooks.example.com/x", "events": ["*"] })).await;
    app.call(&a.test_key, "POST", &format!("/v1/webhooks/{}/test", hook["id"].as_str().unwrap()), Some(json!({ "type": "lead.created" })))
        .await;
    let r = app
        .call(&a.test_key, "POST", "/v1/sandbox/clock/advance", Some(json!({ "to": (app.clock.now() + Duration::days(3)).to_rfc3339() })))
        .await;
    assert_eq!(r.status, 200, "{}", r.text);
    // And live data in A.
    let live = app.call_on(true, &a.live_key, "POST", "/v1/owners", Some(json!({ "name": "Live Owner" }))).await;
    assert_eq!(live.status, 201, "{}", live.text);
    let live_pay =
        app.call_on(true, &a.live_key, "POST", "/v1/payments", Some(json!({ "amount": 10, "currency": "USD", "method": "cash" }))).await;
    let live_pay = live_pay.body["data"]["id"].as_str().unwrap().to_string();
    app.call_on(true, &a.live_key, "POST", &format!("/v1/payments/{live_pay}/succeed"), None).await;

    let (a_live, b_sandbox) = (rows(app, a.id, true).await, rows(app, b.id, false).await);
    let a_sandbox = rows(app, a.id, false).await;
    let collections = gable::domain::collections::COLLECTIONS.len() as i64;
    assert!(a_sandbox > collections, "the sandbox holds a world, a record of each collection and more: {a_sandbox}");
    let keys = app.count_rows("api_keys").await;

    let deleted = reset(app, a.id).await;
    assert_eq!(rows(app, a.id, false).await, 0, "every sandbox row of the tenant");
    // Rows that go with their parent (`ON DELETE CASCADE`: delivery attempts of a deleted
    // event) are not counted by the statement that deletes the parent; the request log's
    // rows, which `rows` leaves out, are.
    assert!(deleted as i64 >= a_sandbox - 5, "{deleted} of {a_sandbox}");
    assert_eq!(rows(app, a.id, true).await, a_live, "live data untouched");
    assert_eq!(rows(app, b.id, false).await, b_sandbox, "another tenant's sandbox untouched");
    assert_eq!(app.count_rows("api_keys").await, keys, "keys untouched");
    // The test key still works, on an empty sandbox, on real time again.
    let r = app.call(&a.test_key, "GET", "/v1/properties", None).await;
    assert_eq!((r.status, r.body["data"].as_array().map(Vec::len)), (200, Some(0)), "{}", r.text);
    let r = app.call(&a.test_key, "GET", "/v1/sandbox/clock", None).await;
    let now = chrono::DateTime::parse_from_rfc3339(r.body["data"]["now"].as_str().unwrap()).unwrap();
    assert!((now.with_timezone(&chrono::Utc) - app.clock.now()).num_seconds().abs() < 5, "the clock is reset");
    let last = r.headers["request-id"].to_str().unwrap().to_string();
    let r = app.call_on(true, &a.live_key, "GET", &format!("/v1/payments/{live_pay}"), None).await;
    assert_eq!(r.body["data"]["status"], "succeeded");
    // Nothing but the request log of the calls since (written in order: once the last
    // sandbox call is, every one before it is).
    for _ in 0..40 {
        if app.count_where("request_logs", &format!("id = '{last}'")).await == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let logged = app.count_where("request_logs", &format!("tenant_id = '{}' AND livemode = FALSE", a.id)).await;
    assert!(logged >= 2, "the calls since the reset are in the log ({logged})");
    assert_eq!(reset(app, a.id).await as i64, logged, "a second reset finds nothing but the log of the calls since");
}
both!(a_reset_deletes_the_sandbox_and_nothing_else);

async fn the_demo_portfolio_is_ready_for_a_first_payment(app: &TestApp) {
    let t = app.tenant("Demo").await;
    let k = t.test_key.as_str();
    let p = gable::ops::demo::portfolio(&app.state.ops, t.id).await.expect("portfolio");
    assert!(p.rent_billed >= 1, "{p:?}");
    // The README's first call returns data.
    let props = app.all_pages(k, "/v1/properties").await;
    assert_eq!(props.len(), 1);
    assert_eq!(app.all_pages(k, "/v1/units").await.len(), 3);
    let listings = app.all_pages(k, "/v1/listings").await;
    assert_eq!((listings.len(), listings[0]["status"].clone()), (1, json!("published")));
    let lease = app.call(k, "GET", &format!("/v1/leases/{}", p.lease_id), None).await;
    assert_eq!(lease.body["data"]["status"], "active");
    assert_eq!(app.all_pages(k, "/v1/tenancies").await.len(), 1);
    // Its rent is invoiced; the first test payment pays it.
    let open = app.all_pages(k, "/v1/invoices?filter[status]=open&sort=due_date").await;
    assert_eq!(open.len(), p.rent_billed);
    let inv = &open[0];
    let r = app
        .call(
            k,
            "POST",
            "/v1/payments",
            Some(json!({ "scenario": "succeeded", "amount": inv["amount_due"], "currency": "USD", "invoice_id": inv["id"] })),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text);
    let paid = app.call(k, "GET", &format!("/v1/invoices/{}", inv["id"].as_str().unwrap()), None).await;
    assert_eq!(paid.body["data"]["status"], "paid");
    let events = app.all_pages(k, "/v1/events?filter[type]=payment.succeeded").await;
    assert_eq!(events.len(), 1);
    // Live mode has none of it.
    let r = app.call_on(true, &t.live_key, "GET", "/v1/properties", None).await;
    assert_eq!(r.body["data"].as_array().map(Vec::len), Some(0));
    // A reset then the portfolio again: the same, fresh.
    reset(app, t.id).await;
    gable::ops::demo::portfolio(&app.state.ops, t.id).await.expect("portfolio again");
    assert_eq!(app.all_pages(k, "/v1/properties").await.len(), 1);
    assert_eq!(app.all_pages(k, "/v1/payments").await.len(), 0);
}
both!(the_demo_portfolio_is_ready_for_a_first_payment);
