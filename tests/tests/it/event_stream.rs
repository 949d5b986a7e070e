//! The event stream (`GET /v1/events/stream`, docs/api.md "The event stream"): a listener
//! gets each new event once, in commit order, as `GET /v1/events/{id}` shows it; resumes
//! after `Last-Event-ID` missing none and repeating none; and is behind the same walls as a
//! webhook subscription: the scopes of what the events carry, no property-limited
//! credential, its own tenant and environment, a revoked key's stream ending at the next
//! look, and at most five streams per credential.

use std::time::Duration;

use gable_tests::sse::{data, EventStream};
use gable_tests::{both, TestApp};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(5);
/// Long enough for several looks (250 ms each) to have found nothing.
const QUIET: Duration = Duration::from_millis(1500);

fn stream_url(app: &TestApp, livemode: bool, query: &str) -> String {
    format!("{}/v1/events/stream{query}", app.base(livemode))
}

async fn lead(app: &TestApp, key: &str, name: &str) -> Value {
    app.create(key, "leads", json!({ "name": name, "email": "lead@example.com" })).await
}

fn id(v: &Value) -> String {
    v["id"].as_str().expect("an id").to_string()
}

async fn a_listener_gets_each_event_once_in_order_and_resumes_after_the_last(app: &TestApp) {
    let t = app.tenant("Listening").await;
    // Made before the stream opened: not sent (a stream starts now).
    lead(app, &t.test_key, "Before").await;
    let mut s = EventStream::open(&app.client, &stream_url(app, false, ""), &t.test_key, None).await.expect("opened");
    assert_eq!(s.ready["object"], "event_stream");
    assert_eq!(s.ready["livemode"], false);
    assert_eq!(s.ready["events"], json!(["*"]));
    let secret = s.ready["signing_secret"].as_str().expect("a signing secret").to_string();
    assert!(secret.starts_with("whsec_") && secret.len() > 40, "{secret}");

    let made: Vec<String> =
        [lead(app, &t.test_key, "A").await, lead(app, &t.test_key, "B").await, lead(app, &t.test_key, "C").await].iter().map(id).collect();
    let got = s.take(3, WAIT).await;
    assert_eq!(got.len(), 3, "each new event comes: {got:?}");
    let objects: Vec<String> = got.iter().map(|e| data(e)["data"]["object"]["id"].as_str().unwrap_or_default().to_string()).collect();
    assert_eq!(objects, made, "in the order they were made");
    for e in &got {
        let event = data(e);
        assert_eq!(e.id, event["id"].as_str().unwrap(), "the message's id is the event's");
        assert_eq!(event["type"], "lead.created");
        // As the API shows it.
        let shown = app.call(&t.test_key, "GET", &format!("/v1/events/{}", e.id), None).await;
        assert_eq!(shown.status, 200);
        assert_eq!(shown.body["data"], event, "the stream's event is GET /v1/events/{{id}}'s");
    }
    assert!(s.next(QUIET).await.is_none(), "nothing else, nothing twice");
    drop(s);

    // Two more while nobody listens, then a listener resuming after the last it saw.
    let missed: Vec<String> = [lead(app, &t.test_key, "D").await, lead(app, &t.test_key, "E").await].iter().map(id).collect();
    let last = got[2].id.clone();
    let mut again = EventStream::open(&app.client, &stream_url(app, false, ""), &t.test_key, Some(&last)).await.expect("resumed");
    assert_eq!(again.ready["resumed_after"], last.as_str());
    assert_eq!(again.ready["signing_secret"], secret.as_str(), "the same secret for the same key, every time");
    let caught_up = again.take(2, WAIT).await;
    let objects: Vec<String> = caught_up.iter().map(|e| data(e)["data"]["object"]["id"].as_str().unwrap_or_default().to_string()).collect();
    assert_eq!(objects, missed, "exactly what was missed");
    assert!(again.next(QUIET).await.is_none(), "and nothing before it again");

    // Another key of the tenant has a secret of its own.
    let other = app.key(t.id, false, &["*"], None).await;
    let theirs = EventStream::open(&app.client, &stream_url(app, false, ""), &other, None).await.expect("opened");
    assert_ne!(theirs.ready["signing_secret"], secret.as_str());
}
both!(a_listener_gets_each_event_once_in_order_and_resumes_after_the_last);

async fn a_listener_gets_only_the_types_it_asked_for(app: &TestApp) {
    let t = app.tenant("Filtering").await;
    let property = app.property(&t.test_key).await;
    let mut s =
        EventStream::open(&app.client, &stream_url(app, false, "?events=workorder.created"), &t.test_key, None).await.expect("opened");
    assert_eq!(s.ready["events"], json!(["workorder.created"]));
    lead(app, &t.test_key, "Not this").await;
    let wo = app.create(&t.test_key, "workorders", json!({ "property_id": property["id"], "title": "Tap" })).await;
    let got = s.next(WAIT).await.expect("the work order's event");
    assert_eq!(data(&got)["type"], "workorder.created");
    assert_eq!(data(&got)["data"]["object"]["id"], wo["id"]);
    assert!(s.next(QUIET).await.is_none(), "no lead.created");

    // Unknown names and malformed resumptions are refused with what is wrong.
    let bad = EventStream::open(&app.client, &stream_url(app, false, "?events=lead.made"), &t.test_key, None).await.err().expect("refused");
    assert_eq!((bad.status, bad.code()), (400, "validation_failed"), "{:?}", bad.body);
    let bad = EventStream::open(&app.client, &stream_url(app, false, ""), &t.test_key, Some("not-an-id")).await.err().expect("refused");
    assert_eq!((bad.status, bad.code()), (400, "invalid_request"), "{:?}", bad.body);
    assert_eq!(bad.body["error"]["param"], "Last-Event-ID");
}
both!(a_listener_gets_only_the_types_it_asked_for);

async fn listening_is_behind_the_walls_of_a_subscription(app: &TestApp) {
    let t = app.tenant("Walled").await;
    let made = lead(app, &t.test_key, "Walled").await;
    let event = app.call(&t.test_key, "GET", &format!("/v1/events?filter[related_object_id]={}", id(&made)), None).await;
    let event_id = event.body["data"][0]["id"].as_str().expect("the lead's event").to_string();
    let url = stream_url(app, false, "");

    // Without events:read.
    let k = app.key(t.id, false, &["leads:read"], None).await;
    let r = EventStream::open(&app.client, &url, &k, None).await.err().expect("refused");
    assert_eq!((r.status, r.code()), (403, "insufficient_scope"), "{:?}", r.body);
    // Events whose records it cannot read: all of them (`*`), or lead.created by name.
    let k = app.key(t.id, false, &["events:read", "workorders:read"], None).await;
    let r = EventStream::open(&app.client, &url, &k, None).await.err().expect("refused");
    assert_eq!((r.status, r.code()), (403, "insufficient_scope"), "every type needs every type's reads: {:?}", r.body);
    let r = EventStream::open(&app.client, &stream_url(app, false, "?events=lead.created"), &k, None).await.err().expect("refused");
    assert_eq!((r.status, r.code()), (403, "insufficient_scope"), "{:?}", r.body);
    assert_eq!(r.body["error"]["details"]["required_scope"], "leads:read");
    assert!(EventStream::open(&app.client, &stream_url(app, false, "?events=workorder.created"), &k, None).await.is_ok(), "what it reads");
    // Limited to properties: events are tenant-wide.
    let property = app.property(&t.test_key).await;
    let pid = uuid::Uuid::parse_str(property["id"].as_str().unwrap()).unwrap();
    let k = app.key(t.id, false, &["events:read", "workorders:read"], Some(vec![pid])).await;
    let r = EventStream::open(&app.client, &stream_url(app, false, "?events=workorder.created"), &k, None).await.err().expect("refused");
    assert_eq!((r.status, r.code()), (403, "property_forbidden"), "{:?}", r.body);

    // Another tenant resuming after this tenant's event learns nothing of it.
    let other = app.tenant("Elsewhere").await;
    let r = EventStream::open(&app.client, &url, &other.test_key, Some(&event_id)).await.err().expect("refused");
    assert_eq!((r.status, r.code()), (400, "invalid_request"), "{:?}", r.body);
    // And hears none of its events.
    let mut theirs = EventStream::open(&app.client, &url, &other.test_key, None).await.expect("opened");
    lead(app, &t.test_key, "Not for them").await;
    assert!(theirs.next(QUIET).await.is_none(), "another tenant's events never reach a listener");

    // The environments: a live listener hears no sandbox event, and a sandbox event is
    // not a live stream's position.
    let mut live = EventStream::open(&app.client, &stream_url(app, true, ""), &t.live_key, None).await.expect("opened");
    assert_eq!(live.ready["livemode"], true);
    lead(app, &t.test_key, "Sandbox only").await;
    assert!(live.next(QUIET).await.is_none(), "a sandbox event never reaches a live listener");
    let r = EventStream::open(&app.client, &stream_url(app, true, ""), &t.live_key, Some(&event_id)).await.err().expect("refused");
    assert_eq!((r.status, r.code()), (400, "invalid_request"), "{:?}", r.body);
}
both!(listening_is_behind_the_walls_of_a_subscription);

async fn a_revoked_keys_stream_ends_and_a_sixth_stream_is_refused(app: &TestApp) {
    let t = app.tenant("Revoking").await;
    let sa = app.store.service_account(t.id, "tests").await.unwrap();
    let issued = app.store.create_key(t.id, sa, false, vec!["*".into()], None).await.unwrap();
    let url = stream_url(app, false, "");
    let mut open = vec![];
    for _ in 0..5 {
        open.push(EventStream::open(&app.client, &url, &issued.secret, None).await.expect("five streams"));
    }
    let sixth = EventStream::open(&app.client, &url, &issued.secret, None).await.err().expect("a sixth is refused");
    assert_eq!((sixth.status, sixth.code()), (429, "too_many_streams"), "{:?}", sixth.body);
    // Another credential is not held back by this one's streams.
    assert!(EventStream::open(&app.client, &url, &t.test_key, None).await.is_ok());
    // A closed stream frees its place.
    open.pop();
    let mut s = None;
    for _ in 0..20 {
        if let Ok(opened) = EventStream::open(&app.client, &url, &issued.secret, None).await {
            s = Some(opened);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let mut s = s.expect("a closed stream's place is free again");

    assert!(app.store.revoke_key(t.id, issued.id).await.unwrap());
    let end = s.next(WAIT).await.expect("the stream says why it ends");
    assert_eq!(end.event, "end");
    assert_eq!(data(&end)["error"]["code"], "unauthenticated", "{end:?}");
    assert!(s.next(WAIT).await.is_none(), "and ends");
    lead(app, &t.test_key, "After").await;
    for mut other in open {
        let e = other.next(WAIT).await.expect("each of the key's streams ends");
        assert_eq!(e.event, "end", "{e:?}");
    }
}
both!(a_revoked_keys_stream_ends_and_a_sixth_stream_is_refused);
