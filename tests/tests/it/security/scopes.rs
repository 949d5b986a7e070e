//! A scope reads only what it names (second review, point 3). A webhook delivery carries
//! its event's `data.object`, and so does an event: a credential that cannot read
//! payments must not get them by subscribing, testing, recovering or replaying, nor by
//! listing events.

use gable_tests::{Res, TestApp};
use serde_json::{json, Value};

const URL: &str = "https://hooks.example.com/gable";

/// A `403 insufficient_scope` naming `scope` as the one needed.
pub(super) fn refused(r: &Res, scope: &str) {
    r.assert_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required_scope"], scope, "{}", r.text);
}

pub(super) fn id(v: &Value) -> String {
    v["id"].as_str().expect("an id").to_string()
}

/// A tenant with a lead made and a payment taken, so that events of both kinds exist.
async fn with_events(app: &TestApp, key: &str) -> (String, String) {
    app.create(key, "leads", json!({ "name": "Lee Lead", "email": "lee@example.com" })).await;
    app.create(key, "payments", json!({ "amount": 10, "currency": "USD", "method": "cash", "scenario": "succeeded" })).await;
    let events = app.all_pages(key, "/v1/events").await;
    let of = |t: &str| id(events.iter().find(|e| e["type"] == t).unwrap_or_else(|| panic!("a {t} event in {events:?}")));
    (of("lead.created"), of("payment.succeeded"))
}

/// Finding 3: `webhooks:write` alone subscribed to `["*"]` and so received every
/// payment, lease and application in full.
async fn webhooks_write_alone_cannot_subscribe_to_what_it_cannot_read(app: &TestApp) {
    let t = app.tenant("A").await;
    let weak = app.key(t.id, false, &["webhooks:write"], None).await;
    refused(&app.call(&weak, "POST", "/v1/webhooks", Some(json!({ "url": URL, "events": ["*"] }))).await, "listings:read");
    refused(&app.call(&weak, "POST", "/v1/webhooks", Some(json!({ "url": URL, "events": ["payment.succeeded"] }))).await, "payments:read");
    assert_eq!(app.count_rows("webhooks").await, 0, "nothing written");

    // With the read it needs, the same subscription is made; `*` still needs every read.
    let payments = app.key(t.id, false, &["webhooks:write", "payments:read"], None).await;
    let r = app.call(&payments, "POST", "/v1/webhooks", Some(json!({ "url": URL, "events": ["payment.succeeded"] }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let mine = id(&r.body["data"]);
    refused(&app.call(&payments, "POST", "/v1/webhooks", Some(json!({ "url": URL, "events": ["*"] }))).await, "listings:read");
    let all = app.key(t.id, false, &["webhooks:write", "*:read"], None).await;
    assert_eq!(app.call(&all, "POST", "/v1/webhooks", Some(json!({ "url": URL, "events": ["*"] }))).await.status, 201);

    // Changing what a subscription takes, or where it sends, needs the same reads.
    let owners = app.create(&t.test_key, "webhooks", json!({ "url": URL, "events": ["lease.sent"] })).await;
    let path = format!("/v1/webhooks/{}", id(&owners));
    refused(&app.call(&weak, "PATCH", &path, Some(json!({ "url": "https://attacker.example.com/x" }))).await, "leases:read");
    refused(&app.call(&payments, "PATCH", &path, Some(json!({ "url": "https://attacker.example.com/x" }))).await, "leases:read");
    refused(&app.call(&payments, "PATCH", &format!("/v1/webhooks/{mine}"), Some(json!({ "events": ["*"] }))).await, "listings:read");
    let r = app.call(&t.test_key, "GET", &path, None).await;
    assert_eq!(r.body["data"]["url"], json!(URL), "unchanged");
    // A description is not what it sends: that change needs only webhooks:write.
    assert_eq!(app.call(&weak, "PATCH", &path, Some(json!({ "description": "ours" }))).await.status, 200);

    // A credential limited to properties subscribes to nothing: subscriptions are tenant-wide.
    let p = app
        .create(
            &t.test_key,
            "properties",
            json!({ "name": "Elm", "kind": "residential", "address": { "line1": "1 Elm St", "city": "Portland", "country": "US" } }),
        )
        .await;
    let limited = app.key(t.id, false, &["webhooks:write", "*:read"], Some(vec![id(&p).parse().unwrap()])).await;
    let r = app.call(&limited, "POST", "/v1/webhooks", Some(json!({ "url": URL, "events": ["payment.succeeded"] }))).await;
    r.assert_error(403, "property_forbidden");
}

/// Finding 3: `webhooks:write` alone resent 30 days of every event through `recover`,
/// and `test` and `replay` sent what it could not read.
async fn webhooks_write_alone_cannot_resend_what_it_cannot_read(app: &TestApp) {
    let t = app.tenant("A").await;
    let hook = app.create(&t.test_key, "webhooks", json!({ "url": URL, "events": ["*"] })).await;
    let (_, payment_event) = with_events(app, &t.test_key).await;
    let weak = app.key(t.id, false, &["webhooks:write"], None).await;
    let since = json!({ "since": "2020-01-01T00:00:00Z" });
    // What a refused command would have written (the worker's own retries come and go).
    let resent = r#""trigger" IN ('replay', 'recovery', 'test')"#;

    refused(&app.call(&weak, "POST", &format!("/v1/webhooks/{}/recover", id(&hook)), Some(since.clone())).await, "listings:read");
    let test = json!({ "type": "payment.succeeded" });
    refused(&app.call(&weak, "POST", &format!("/v1/webhooks/{}/test", id(&hook)), Some(test.clone())).await, "payments:read");
    refused(&app.call(&weak, "POST", &format!("/v1/events/{payment_event}/replay"), Some(json!({}))).await, "events:read");
    let with_events = app.key(t.id, false, &["webhooks:write", "events:read"], None).await;
    refused(&app.call(&with_events, "POST", &format!("/v1/events/{payment_event}/replay"), Some(json!({}))).await, "payments:read");
    let delivery = app.all_pages(&t.test_key, "/v1/webhook-deliveries?filter[event_type]=payment.succeeded").await;
    let delivery = id(delivery.first().expect("the payment's delivery"));
    refused(&app.call(&weak, "POST", &format!("/v1/webhook-deliveries/{delivery}/replay"), Some(json!({}))).await, "payments:read");
    assert_eq!(app.count_where("webhook_deliveries", resent).await, 0, "nothing was queued");

    // With the reads, each works.
    let able = app.key(t.id, false, &["webhooks:write", "*:read"], None).await;
    assert_eq!(app.call(&able, "POST", &format!("/v1/webhooks/{}/test", id(&hook)), Some(test)).await.status, 201);
    assert_eq!(app.call(&able, "POST", &format!("/v1/webhook-deliveries/{delivery}/replay"), Some(json!({}))).await.status, 201);
    assert_eq!(app.call(&able, "POST", &format!("/v1/webhooks/{}/recover", id(&hook)), Some(since)).await.status, 200);
}

/// Finding 3 (the same hole on the read side): `events:read` listed every event with its
/// full record. An event is listed and read only with its record's collection.
async fn events_read_shows_only_events_of_readable_collections(app: &TestApp) {
    let t = app.tenant("A").await;
    let (lead_event, payment_event) = with_events(app, &t.test_key).await;
    let events_only = app.key(t.id, false, &["events:read"], None).await;
    let r = app.call(&events_only, "GET", "/v1/events", None).await;
    assert_eq!((r.status, r.body["data"].clone()), (200, json!([])), "{}", r.text);

    let payments = app.key(t.id, false, &["events:read", "payments:read"], None).await;
    let listed = app.all_pages(&payments, "/v1/events").await;
    assert!(!listed.is_empty());
    assert!(listed.iter().all(|e| e["type"].as_str().unwrap().starts_with("payment.")), "{listed:?}");
    assert_eq!(app.call(&payments, "GET", &format!("/v1/events/{payment_event}"), None).await.status, 200);
    refused(&app.call(&payments, "GET", &format!("/v1/events/{lead_event}"), None).await, "leads:read");
    // Filters cannot widen it.
    let r = app.call(&payments, "GET", "/v1/events?filter[type]=lead.created", None).await;
    assert_eq!(r.body["data"], json!([]), "{}", r.text);
    // `*:read` sees them all.
    let all = app.key(t.id, false, &["*:read"], None).await;
    assert!(app.all_pages(&all, "/v1/events").await.len() > listed.len());
}

gable_tests::both!(webhooks_write_alone_cannot_subscribe_to_what_it_cannot_read);
gable_tests::both!(webhooks_write_alone_cannot_resend_what_it_cannot_read);
gable_tests::both!(events_read_shows_only_events_of_readable_collections);
