//! The request log (`/v1/request-logs`): every call of a credential is recorded, off the
//! request path, with what it sent and what it got, the events it caused, and found by
//! the filters an integrator debugging a call reaches for. The walls around it and the
//! secrets kept out of it are `security::request_logs`.

use std::time::{Duration, Instant};

use gable_tests::{Res, TestApp};
use serde_json::{json, Value};
use uuid::Uuid;

/// The request's id, from its `Request-Id` header.
pub fn request_id(r: &Res) -> String {
    r.headers.get("request-id").and_then(|v| v.to_str().ok()).expect("Request-Id").to_string()
}

/// The log record of a request, once the writer has written it. It writes at least every
/// quarter second, but at the lowest CPU priority: on a machine busy with the rest of the
/// suite it can wait seconds for a core. This checks that the call arrives; how soon is
/// measured by the benchmarks (docs/benchmarks.md, "The request log").
pub async fn logged(app: &TestApp, livemode: bool, key: &str, id: &str) -> Value {
    let started = Instant::now();
    loop {
        let r = app.call_on(livemode, key, "GET", &format!("/v1/request-logs/{id}"), None).await;
        if r.status == 200 {
            return r.body["data"].clone();
        }
        assert_eq!(r.status, 404, "{}", r.text);
        assert!(started.elapsed() < Duration::from_secs(30), "request {id} was not in the log within 30 s");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A call with a refused body, a write with an `Idempotency-Key` and its replay: each
/// is recorded with its line, status, error, bodies, credential and idempotency.
async fn a_call_is_recorded_with_what_it_sent_and_got(app: &TestApp) {
    let t = app.tenant("Logged").await;
    let key = &t.test_key;

    // A refused create: its error code and the body as sent.
    let bad = json!({ "name": "No kind", "address": { "line1": "1 A St", "city": "X", "country": "US" } });
    let r = app.call(key, "POST", "/v1/properties", Some(bad)).await;
    assert_eq!(r.status, 400, "{}", r.text);
    let refused = logged(app, false, key, &request_id(&r)).await;
    assert_eq!(refused["object"], "request_log");
    assert_eq!(refused["livemode"], false);
    assert_eq!(refused["method"], "POST");
    assert_eq!(refused["path"], "/v1/properties");
    assert_eq!(refused["route"], "/v1/{resource}");
    assert_eq!(refused["status"], 400);
    assert_eq!(refused["status_class"], "4xx");
    assert_eq!(refused["error_code"], r.body["error"]["code"]);
    let sent: Value = serde_json::from_str(refused["request_body"].as_str().unwrap()).unwrap();
    assert_eq!(sent["name"], "No kind");
    assert_eq!(refused["response_body"].as_str().unwrap(), r.text, "the answer as the client got it");
    assert_eq!(refused["request_body_truncated"], false);
    assert_eq!(refused["credential_type"], "api_key");
    assert_eq!(refused["key_prefix"].as_str().unwrap(), &key[..13]);
    assert_eq!(refused["api_version"], r.headers["gable-version"].to_str().unwrap());
    assert_eq!(refused["client_ip"], "127.0.0.1");
    assert_eq!(refused["request_headers"]["authorization"], "[redacted]");
    assert!(refused["duration_ms"].as_f64().unwrap() > 0.0);

    // A write with a key, then its replay.
    let body = json!({ "name": "Maple Court", "kind": "residential", "address": { "line1": "1 A St", "city": "X", "country": "US" } });
    let post = |k: &'static str| {
        app.client
            .post(format!("{}/v1/properties", app.sandbox))
            .bearer_auth(key)
            .header("Idempotency-Key", k)
            .header("User-Agent", "gable-tests/1")
            .json(&body)
    };
    let first = app.raw(post("logged-key-0001")).await;
    assert_eq!(first.status, 201, "{}", first.text);
    let again = app.raw(post("logged-key-0001")).await;
    assert_eq!(again.headers["idempotent-replayed"], "true");
    let made = logged(app, false, key, &request_id(&first)).await;
    assert_eq!(made["status"], 201);
    assert_eq!(made["status_class"], "2xx");
    assert!(made["error_code"].is_null());
    assert!(made["query"].is_null());
    assert_eq!(made["idempotency_key"], "logged-key-0001");
    assert_eq!(made["idempotent_replayed"], false);
    assert_eq!(made["user_agent"], "gable-tests/1");
    let replay = logged(app, false, key, &request_id(&again)).await;
    assert_eq!(replay["idempotent_replayed"], true);
    assert_eq!(replay["response_body"], made["response_body"], "the replay answered what the first did");

    // A read: its query and answer, no body sent.
    let read = app
        .call(key, "GET", &format!("/v1/properties/{}?fields[properties]=id,name", first.body["data"]["id"].as_str().unwrap()), None)
        .await;
    assert_eq!(read.status, 200, "{}", read.text);
    let read_log = logged(app, false, key, &request_id(&read)).await;
    assert_eq!(read_log["query"], "fields[properties]=id,name");
    assert!(read_log["request_body"].is_null());
    assert_eq!(read_log["route"], "/v1/{resource}/{id}");
    assert_eq!(serde_json::from_str::<Value>(read_log["response_body"].as_str().unwrap()).unwrap(), read.body);
}
gable_tests::both!(a_call_is_recorded_with_what_it_sent_and_got);

/// The filters of the issue: status, status class, method, path, credential, request id,
/// idempotency key and a time range; newest first; cursor paging. A reader key of its own
/// looks (its own reads are recorded too, and filtered out by credential).
async fn the_log_is_found_by_what_an_integrator_knows(app: &TestApp) {
    let t = app.tenant("Filtered").await;
    let key = &t.test_key;
    let reader = app.key(t.id, false, &["request-logs:read"], None).await;
    let other_key = app.key(t.id, false, &["properties:read"], None).await;
    let missing = app.call(key, "GET", &format!("/v1/leases/{}", Uuid::now_v7()), None).await;
    assert_eq!(missing.status, 404);
    let mut ids = vec![request_id(&missing)];
    for _ in 0..3 {
        ids.push(request_id(&app.call(&other_key, "GET", "/v1/properties", None).await));
    }
    let keyed = app
        .raw(
            app.client
                .post(format!("{}/v1/properties", app.sandbox))
                .bearer_auth(key)
                .header("Idempotency-Key", "filter-key-0001")
                .json(&json!({ "name": "Q", "kind": "residential", "address": { "line1": "1", "city": "X", "country": "US" } })),
        )
        .await;
    ids.push(request_id(&keyed));
    let mut records = vec![];
    for id in &ids {
        records.push(logged(app, false, &reader, id).await);
    }
    let mine = records[0]["credential_id"].as_str().unwrap().to_string();
    let theirs = records[1]["credential_id"].as_str().unwrap().to_string();
    let reader = &reader;
    let list = |q: String| async move {
        let r = app.call(reader, "GET", &format!("/v1/request-logs?{q}"), None).await;
        assert_eq!(r.status, 200, "{q}: {}", r.text);
        r.body["data"].as_array().unwrap().iter().map(|l| l["id"].as_str().unwrap().to_string()).collect::<Vec<_>>()
    };
    let missing_id = &ids[0];
    let of_mine = format!("filter[credential_id]={mine}");
    assert_eq!(list(format!("filter[status]=404&{of_mine}")).await, vec![missing_id.clone()]);
    assert_eq!(list(format!("filter[status_class]=4xx&{of_mine}")).await, vec![missing_id.clone()]);
    assert_eq!(list(format!("filter[error_code]=not_found&{of_mine}")).await, vec![missing_id.clone()]);
    assert_eq!(list("filter[method]=POST".into()).await, vec![ids[4].clone()]);
    assert_eq!(list("filter[idempotency_key]=filter-key-0001".into()).await, vec![ids[4].clone()]);
    assert_eq!(list(format!("filter[id]={missing_id}")).await, vec![missing_id.clone()]);
    assert_eq!(list("filter[path][contains]=leases".into()).await, vec![missing_id.clone()]);
    assert_eq!(list(format!("filter[route]=/v1/{{resource}}/{{id}}&{of_mine}")).await, vec![missing_id.clone()]);
    // The other key's three reads, newest first, two to a page.
    let mut expected: Vec<String> = ids[1..4].to_vec();
    expected.reverse();
    let pages = app.all_pages(reader, &format!("/v1/request-logs?filter[credential_id]={theirs}&limit=2")).await;
    assert_eq!(pages.iter().map(|l| l["id"].as_str().unwrap().to_string()).collect::<Vec<_>>(), expected);
    // A time range: everything since the first call, nothing long before.
    let start = records[0]["created_at"].as_str().unwrap();
    let since = list(format!("filter[created_at][gte]={start}&{of_mine}")).await;
    assert_eq!(since, vec![ids[4].clone(), missing_id.clone()]);
    assert!(list("filter[created_at][lt]=2020-01-01T00:00:00Z".into()).await.is_empty());
    // Refusals name what is wrong.
    let r = app.call(reader, "GET", "/v1/request-logs?filter[status_class]=6xx", None).await;
    r.assert_error(400, "invalid_parameter");
    let r = app.call(reader, "GET", "/v1/request-logs?filter[request_body]=x", None).await;
    r.assert_error(400, "invalid_parameter");
    // Written by Gable only.
    let r = app.call(key, "POST", "/v1/request-logs", Some(json!({}))).await;
    r.assert_error(405, "method_not_allowed");
    let r = app.call(key, "DELETE", &format!("/v1/request-logs/{missing_id}"), None).await;
    r.assert_error(405, "method_not_allowed");
}
gable_tests::both!(the_log_is_found_by_what_an_integrator_knows);

/// A call's events: the record lists them, each event names the call, and both are
/// reachable from the other (`filter[request_id]`, `expand[]=events`).
async fn a_call_links_to_the_events_it_caused(app: &TestApp) {
    let t = app.tenant("Eventful").await;
    let key = &t.test_key;
    let p = app.property(key).await;
    let unit = app.create(key, "units", json!({ "property_id": p["id"], "number": "1" })).await;
    let listing = app.create(key, "listings", json!({ "unit_id": unit["id"], "title": "Flat", "rent": "900.00", "currency": "USD" })).await;
    let r = app.call(key, "POST", &format!("/v1/listings/{}/publish", listing["id"].as_str().unwrap()), Some(json!({}))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let id = request_id(&r);
    let log = logged(app, false, key, &id).await;
    let events = app.call(key, "GET", &format!("/v1/events?filter[request_id]={id}"), None).await;
    assert_eq!(events.status, 200, "{}", events.text);
    let events = events.body["data"].as_array().unwrap().clone();
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["type"], "listing.published");
    assert_eq!(events[0]["request_id"], json!(id));
    assert_eq!(log["event_ids"], json!([events[0]["id"]]));
    let expanded = app.call(key, "GET", &format!("/v1/request-logs/{id}?expand[]=events"), None).await;
    assert_eq!(expanded.status, 200, "{}", expanded.text);
    assert_eq!(expanded.body["data"]["event_ids"][0]["type"], "listing.published", "{}", expanded.text);
    // A read causes none; an event of the scheduler names no request.
    let read = app.call(key, "GET", "/v1/listings", None).await;
    assert_eq!(logged(app, false, key, &request_id(&read)).await["event_ids"], json!([]));
}
gable_tests::both!(a_call_links_to_the_events_it_caused);

/// Records are kept as long as the setting says (2 days here), then purged by the scheduler.
async fn records_are_purged_after_their_retention(app: &TestApp) {
    let t = app.tenant("Kept").await;
    let r = app.call(&t.test_key, "GET", "/v1/properties", None).await;
    let id = request_id(&r);
    logged(app, false, &t.test_key, &id).await;
    app.clock.advance(chrono::Duration::hours(47));
    app.run_jobs().await;
    assert_eq!(app.count_where("request_logs", &format!("id = '{id}'")).await, 1, "kept for 2 days");
    app.clock.advance(chrono::Duration::hours(2));
    app.run_jobs().await;
    assert_eq!(app.count_where("request_logs", &format!("id = '{id}'")).await, 0, "purged after 2 days");
}
gable_tests::both!(records_are_purged_after_their_retention, |b| b.args(|a| a.request_log_retention_days = 2));

/// An operator may turn the log off (a retention of 0 days): a node so set records no
/// call, and its scheduler purges what other settings had kept.
async fn a_retention_of_zero_days_turns_the_log_off(app: &TestApp) {
    let t = app.tenant("Unlogged").await;
    let earlier = request_id(&app.call(&t.test_key, "GET", "/v1/properties", None).await);
    logged(app, false, &t.test_key, &earlier).await;

    let off = app.second_node().args(|a| a.request_log_retention_days = 0).spawn().await;
    let r = off.call(&t.test_key, "GET", "/v1/units", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let unlogged = request_id(&r);
    // The call was answered: a recorded one would be queued by now, and a flush writes it.
    off.state.ops.request_log().flush(&off.store).await.expect("flush");
    assert_eq!(off.count_where("request_logs", &format!("id = '{unlogged}'")).await, 0, "a call while the log is off is not recorded");

    off.clock.advance(chrono::Duration::seconds(1));
    off.run_jobs().await;
    assert_eq!(off.count_where("request_logs", &format!("id = '{earlier}'")).await, 0, "what was kept is purged");
    let listed = off.call(&t.test_key, "GET", "/v1/request-logs", None).await;
    assert_eq!((listed.status, listed.body["data"].as_array().map(Vec::len)), (200, Some(0)), "{}", listed.text);
    off.stop().await;
}
gable_tests::both!(a_retention_of_zero_days_turns_the_log_off);
