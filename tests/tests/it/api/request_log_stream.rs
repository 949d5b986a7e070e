//! The request log's stream (`GET /v1/request-logs/stream`, docs/api.md "The request
//! log's stream"): each call recorded after the stream began comes once, as `GET
//! /v1/request-logs/{id}` shows it, narrowed by the list's filters; a reconnection with
//! `Last-Event-ID` gets the calls made after that one; and it is behind the log's walls:
//! `request-logs:read`, its own tenant and environment, a revoked key's stream ending.

use std::time::Duration;

use gable_tests::sse::{data, EventStream};
use gable_tests::{both, TestApp};
use serde_json::json;

use super::request_logs::request_id;

/// The log's writer runs at the lowest CPU priority: on a machine busy with the rest of
/// the suite a call can wait seconds to be written (how soon is the benchmarks' to say).
const WAIT: Duration = Duration::from_secs(15);
/// Several looks (250 ms each) and the writer's batches (at most 250 ms apart).
const QUIET: Duration = Duration::from_millis(1500);

fn url(app: &TestApp, livemode: bool, query: &str) -> String {
    format!("{}/v1/request-logs/stream{query}", app.base(livemode))
}

async fn each_new_call_comes_once_as_the_log_shows_it(app: &TestApp) {
    let t = app.tenant("Tailing").await;
    let key = &t.test_key;
    let before = app.call(key, "GET", "/v1/properties", None).await;
    let before_id = request_id(&before);
    // The call made before the stream must be in the log before the stream starts, so the
    // stream's first look finds it (and leaves it out).
    super::request_logs::logged(app, false, key, &before_id).await;
    let mut s = EventStream::open(&app.client, &url(app, false, ""), key, None).await.expect("opened");
    assert_eq!(s.ready["object"], "request_log_stream");
    assert_eq!(s.ready["livemode"], false);

    let refused = app.call(key, "POST", "/v1/properties", Some(json!({ "name": "No kind" }))).await;
    assert_eq!(refused.status, 400);
    let listed = app.call(key, "GET", "/v1/units?limit=1", None).await;
    let made = [request_id(&refused), request_id(&listed)];
    // The test's own reads of the log are calls too (the waits above, the checks below):
    // they may come in between, and are the only others that may.
    let mut got = vec![];
    while got.len() < made.len() {
        let e = s.next(WAIT).await.unwrap_or_else(|| panic!("the calls made came; got {got:?}"));
        let call = data(&e);
        assert_eq!(e.id, call["id"].as_str().unwrap(), "the message's id is the call's");
        assert!(!got.contains(&e.id) && e.id != before_id, "sent twice, or made before the stream: {call}");
        if made.contains(&e.id) {
            let shown = app.call(key, "GET", &format!("/v1/request-logs/{}", e.id), None).await;
            assert_eq!(shown.body["data"], call, "the stream's call is GET /v1/request-logs/{{id}}'s");
            got.push(e.id);
        } else {
            assert_eq!(call["path"].as_str().map(|p| p.starts_with("/v1/request-logs/")), Some(true), "{call}");
        }
    }
    while let Some(e) = s.next(QUIET).await {
        let call = data(&e);
        assert!(!made.contains(&e.id) && e.id != before_id, "sent twice or from before: {call}");
        assert_eq!(call["path"].as_str().map(|p| p.starts_with("/v1/request-logs/")), Some(true), "{call}");
    }
}
both!(each_new_call_comes_once_as_the_log_shows_it);

async fn filters_narrow_it_and_a_reconnection_resumes(app: &TestApp) {
    let t = app.tenant("Filtered").await;
    let key = &t.test_key;
    let q = "?filter[status_class]=4xx&filter[path][contains]=/v1/properties&fields[request-logs]=id,status,path";
    let mut s = EventStream::open(&app.client, &url(app, false, q), key, None).await.expect("opened");
    app.call(key, "GET", "/v1/properties", None).await;
    app.call(key, "GET", "/v1/units/not-an-id", None).await;
    let refused = app.call(key, "POST", "/v1/properties", Some(json!({ "name": "No kind" }))).await;
    let e = s.next(WAIT).await.expect("the refused call");
    assert_eq!(e.id, request_id(&refused));
    let call = data(&e);
    assert_eq!(call, json!({ "id": e.id, "object": "request_log", "status": 400, "path": "/v1/properties" }), "the fieldset");
    assert!(s.next(QUIET).await.is_none(), "a 200 and another path's 404 are filtered out");
    drop(s);

    // Away for two refusals; back with the last id seen: both come, the one seen does not.
    let first = app.call(key, "PATCH", "/v1/properties/nope", Some(json!({}))).await;
    let second = app.call(key, "DELETE", "/v1/properties/nope", None).await;
    for r in [&first, &second] {
        super::request_logs::logged(app, false, key, &request_id(r)).await;
    }
    let mut s = EventStream::open(&app.client, &url(app, false, q), key, Some(&e.id)).await.expect("resumed");
    assert_eq!(s.ready["resumed_after"], json!(e.id));
    let mut got: Vec<String> = s.take(2, WAIT).await.into_iter().map(|e| e.id).collect();
    got.sort();
    let mut want = vec![request_id(&first), request_id(&second)];
    want.sort();
    assert_eq!(got, want);

    // Bad input: the list's own errors, and no parameter of the list's paging.
    for (query, param) in [
        ("?filter[nope]=1", "filter[nope]"),
        ("?filter[status_class]=6xx", "filter[status_class]"),
        ("?limit=5", "limit"),
        ("?sort=status", "sort"),
    ] {
        let refused = EventStream::open(&app.client, &url(app, false, query), key, None).await.err().expect("refused");
        assert_eq!(refused.status, 400, "{query}: {:?}", refused.body);
        assert_eq!(refused.body["error"]["param"], param, "{query}");
    }
    let bad_last = app.raw(app.client.get(url(app, false, "")).bearer_auth(key).header("last-event-id", "nope")).await;
    bad_last.assert_error(400, "invalid_request");
}
both!(filters_narrow_it_and_a_reconnection_resumes);

async fn it_is_behind_the_logs_walls(app: &TestApp) {
    let t = app.tenant("Walled").await;
    let other = app.tenant("Elsewhere").await;
    let mut s = EventStream::open(&app.client, &url(app, false, ""), &t.test_key, None).await.expect("opened");
    // Another tenant's calls and this tenant's live calls are not this stream's.
    app.call(&other.test_key, "GET", "/v1/properties", None).await;
    app.call_on(true, &t.live_key, "GET", "/v1/properties", None).await;
    let mine = app.call(&t.test_key, "GET", "/v1/leases", None).await;
    let e = s.next(WAIT).await.expect("this tenant's sandbox call");
    assert_eq!(e.id, request_id(&mine));
    assert!(s.next(QUIET).await.is_none(), "nothing of another tenant or environment");
    drop(s);

    // Without request-logs:read, and property-limited: refused before it begins.
    let reader = app.key(t.id, false, &["properties:read", "events:read"], None).await;
    let refused = EventStream::open(&app.client, &url(app, false, ""), &reader, None).await.err().expect("refused");
    assert_eq!((refused.status, refused.code()), (403, "insufficient_scope"));

    // A key revoked while it streams: the stream ends with the reason.
    let sa = app.store.service_account(t.id, "tests").await.expect("service account");
    let issued = app.store.create_key(t.id, sa, false, vec!["request-logs:read".into()], None).await.expect("key");
    let mut s = EventStream::open(&app.client, &url(app, false, ""), &issued.secret, None).await.expect("opened");
    assert!(app.store.revoke_key(t.id, issued.id).await.expect("revoked"));
    let mut ended = None;
    while let Some(e) = s.next(WAIT).await {
        if e.event == "end" {
            ended = Some(data(&e));
            break;
        }
    }
    let ended = ended.expect("an end event");
    assert_eq!(ended["error"]["code"], "unauthenticated", "{ended}");
    assert!(s.next(QUIET).await.is_none(), "closed after end");
}
both!(it_is_behind_the_logs_walls);
