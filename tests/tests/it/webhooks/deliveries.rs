//! Webhooks end to end, on SQLite and PostgreSQL, against a real receiver:
//! subscriptions with sealed secrets, signed deliveries, the register, retries on the
//! injectable clock, 410 and redirects, rotation, replays, recovery and test sends.

use chrono::Duration;
use gable::domain::webhooks::verify;
use gable_tests::receiver::{Received, Receiver};
use gable_tests::{Backend, Res, TestApp};
use serde_json::{json, Value};

struct Hook {
    id: String,
    secret: String,
}

async fn subscribe(app: &TestApp, key: &str, url: &str, events: Value) -> Hook {
    let r = app.call(key, "POST", "/v1/webhooks", Some(json!({ "url": url, "events": events }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let secret = r.body["data"]["secret"].as_str().expect("the secret is in the create response").to_string();
    Hook { id: r.body["data"]["id"].as_str().unwrap().to_string(), secret }
}

fn verified(got: &Received, secret: &str, at: chrono::DateTime<chrono::Utc>) -> bool {
    verify(&got.body, got.header("gable-timestamp"), got.header("gable-signature"), secret, at).is_ok()
}

/// Verified as the receiver would have, when it arrived (the clock has moved since).
fn verified_on_arrival(got: &Received, secret: &str) -> bool {
    let sent: i64 = got.header("gable-timestamp").and_then(|t| t.parse().ok()).unwrap_or_default();
    verified(got, secret, chrono::DateTime::from_timestamp(sent, 0).unwrap_or_default())
}

/// Waits until the subscription's register has `n` attempts, none of them in flight
/// or due.
async fn settled(app: &TestApp, key: &str, hook: &str, n: usize) -> Vec<Value> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let all = attempts(app, key, hook).await;
        // A pending attempt is settled when it waits for a later time (a scheduled
        // retry); one already due is being made, and its outcome is on its way.
        let now = app.clock.now();
        let waiting = |a: &Value| a["next_attempt_at"].as_str().and_then(gable::domain::value::parse_datetime).is_some_and(|due| due > now);
        let recorded = all.iter().filter(|a| a["status"] != "pending" || waiting(a)).count();
        if all.len() >= n && recorded == all.len() {
            return all;
        }
        assert!(std::time::Instant::now() < deadline, "the register has {all:?}, expected {n} settled attempts");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

async fn attempts(app: &TestApp, key: &str, hook: &str) -> Vec<Value> {
    let mut all = app.all_pages(key, &format!("/v1/webhook-deliveries?filter[webhook_id]={hook}&sort=created_at")).await;
    all.sort_by_key(|d| d["attempt"].as_i64());
    all
}

/// `GET /v1/webhooks/{id}`: the subscription as it stands now.
async fn webhook(app: &TestApp, key: &str, id: &str) -> Res {
    app.call(key, "GET", &format!("/v1/webhooks/{id}"), None).await
}

async fn deliver(app: &TestApp) -> usize {
    gable::jobs::deliver_due(&app.background).await.expect("deliveries")
}

async fn signed_deliveries_reach_their_subscribers(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let rx = Receiver::start().await;
    // Unknown event names are refused, naming the name.
    let r =
        app.call(key, "POST", "/v1/webhooks", Some(json!({ "url": rx.url("/ok"), "events": ["lead.created", "lead.teleported"] }))).await;
    r.assert_error(400, "validation_failed");
    assert!(r.text.contains("lead.teleported"), "{}", r.text);

    let named = subscribe(app, key, &rx.url("/ok"), json!(["lead.created"])).await;
    let everything = subscribe(app, key, &rx.url("/ok"), json!(["*"])).await;
    assert!(named.secret.starts_with("whsec_") && named.secret.len() >= 6 + 43, "at least 256 bits");
    // The secret is shown once, and kept sealed: never in a read, never in plain.
    let r = webhook(app, key, &named.id).await;
    assert!(r.body["data"].get("secret").is_none() && !r.text.contains(&named.secret));
    assert_eq!(app.count_where("webhooks", &format!("secret_sealed LIKE '%{}%'", &named.secret[6..20])).await, 0);
    assert_eq!(app.count_where("webhooks", "secret_sealed IS NULL").await, 0);

    let listing = app.create(key, "leads", json!({ "name": "Ada", "email": "ada@example.com" })).await;
    deliver(app).await;
    let got = rx.wait_for(2, 10).await;
    let now = app.clock.now();
    for (hook, req) in [(&named, &got[0]), (&everything, &got[1])] {
        let body = req.json();
        assert_eq!(body["type"], "lead.created");
        assert_eq!(body["object"], "event");
        assert_eq!(body["data"]["object"]["id"], listing["id"]);
        assert_eq!(req.header("gable-event-id"), body["id"].as_str());
        assert_eq!(req.header("content-type"), Some("application/json"));
        assert!(req.header("user-agent").is_some_and(|ua| ua.contains("Gable")));
        let ts: i64 = req.header("gable-timestamp").unwrap().parse().unwrap();
        assert!((now.timestamp() - ts).abs() < 60);
        assert!(req.header("gable-signature").unwrap().starts_with("v1="));
        // One of the two verifies under each secret (the order of the two is not fixed).
        let _ = hook;
    }
    for hook in [&named, &everything] {
        assert_eq!(got.iter().filter(|g| verified(g, &hook.secret, now)).count(), 1, "exactly one delivery per subscription");
    }
    // A tampered body, a wrong secret and a stale timestamp do not verify.
    let mut tampered = got[0].clone();
    tampered.body.push(b' ');
    assert!(!verified(&tampered, &named.secret, now) && !verified(&tampered, &everything.secret, now));
    assert!(!verified(&got[0], "whsec_wrong", now));
    assert!(
        !verified(&got[0], &named.secret, now + Duration::seconds(301))
            && !verified(&got[0], &everything.secret, now + Duration::seconds(301))
    );

    // A type only the wildcard takes.
    let property = app.property(key).await;
    app.create(key, "workorders", json!({ "property_id": property["id"], "title": "Leak" })).await;
    deliver(app).await;
    let got = rx.wait_for(3, 10).await;
    assert_eq!(got.len(), 3);
    assert_eq!(got[2].json()["type"], "workorder.created");
    assert!(verified(&got[2], &everything.secret, app.clock.now()));

    // The register: one succeeded attempt each, with what was sent and answered.
    let named_attempts = attempts(app, key, &named.id).await;
    assert_eq!(named_attempts.len(), 1);
    let a = &named_attempts[0];
    assert_eq!((a["status"].as_str(), a["attempt"].as_i64(), a["trigger"].as_str()), (Some("succeeded"), Some(1), Some("event")));
    assert_eq!(a["response_status"], 200);
    assert_eq!(a["response_excerpt"], "thanks");
    assert_eq!(a["response_headers"]["x-receiver"], "ok");
    assert!(a["request_headers"]["Gable-Signature"].as_str().unwrap().starts_with("v1="));
    assert_eq!(a["event_type"], "lead.created");
    assert!(a["latency_ms"].as_i64().unwrap() >= 0);
    assert_eq!(attempts(app, key, &everything.id).await.len(), 2);
}
gable_tests::both!(signed_deliveries_reach_their_subscribers, |b| b.local_webhooks());

async fn failures_are_retried_on_schedule(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let rx = Receiver::start().await;
    let hook = subscribe(app, key, &rx.url("/flaky/2"), json!(["lead.created"])).await;
    app.create(key, "leads", json!({ "name": "Ada" })).await;
    deliver(app).await;
    rx.wait_for(1, 10).await;
    let first = settled(app, key, &hook.id, 2).await;
    assert_eq!(first.len(), 2, "the failed attempt and the next one, pending");
    assert_eq!((first[0]["status"].as_str(), first[0]["response_status"].as_i64()), (Some("retrying"), Some(503)));
    assert_eq!((first[1]["status"].as_str(), first[1]["trigger"].as_str()), (Some("pending"), Some("retry")));
    // Not before its time (5 s ± 20 %) … (the clock is set back a minute first, so a slow
    // machine's own seconds cannot make the retry due while the test looks)
    app.clock.advance(Duration::seconds(-60));
    assert_eq!(deliver(app).await, 0);
    app.clock.advance(Duration::seconds(67));
    deliver(app).await;
    rx.wait_for(2, 10).await;
    // … then 5 min ± 20 %.
    app.clock.advance(Duration::minutes(3));
    assert_eq!(deliver(app).await, 0);
    app.clock.advance(Duration::minutes(4));
    deliver(app).await;
    let got = rx.wait_for(3, 10).await;
    assert!(got.iter().all(|g| verified_on_arrival(g, &hook.secret)));
    let all = settled(app, key, &hook.id, 3).await;
    let statuses: Vec<_> = all.iter().map(|a| a["status"].as_str().unwrap()).collect();
    assert_eq!(statuses, ["retrying", "retrying", "succeeded"]);
    // The subscription's failing streak ended with the success.
    let r = webhook(app, key, &hook.id).await;
    assert!(r.body["data"]["failing_since"].is_null());
}
gable_tests::both!(failures_are_retried_on_schedule, |b| b.local_webhooks());

async fn gone_disables_and_redirects_are_not_followed(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let rx = Receiver::start().await;
    let gone = subscribe(app, key, &rx.url("/gone"), json!(["lead.created"])).await;
    let moved = subscribe(app, key, &rx.url("/redirect"), json!(["lead.created"])).await;
    app.create(key, "leads", json!({ "name": "Ada" })).await;
    deliver(app).await;
    let got = rx.wait_for(2, 10).await;
    assert!(got.iter().all(|g| g.path != "/ok"), "the redirect was followed");
    settled(app, key, &gone.id, 1).await;
    settled(app, key, &moved.id, 2).await;
    let r = webhook(app, key, &gone.id).await;
    assert_eq!(r.body["data"]["status"], "disabled");
    assert!(r.body["data"]["disabled_reason"].as_str().unwrap().contains("410"));
    let a = attempts(app, key, &gone.id).await;
    assert_eq!((a.len(), a[0]["status"].as_str()), (1, Some("failed")), "no retry after 410");
    let a = attempts(app, key, &moved.id).await;
    assert_eq!((a[0]["status"].as_str(), a[0]["response_status"].as_i64()), (Some("retrying"), Some(302)));
    // Re-enabled by its owner, it takes events again and its reason is gone.
    let r = app.call(key, "PATCH", &format!("/v1/webhooks/{}", gone.id), Some(json!({ "status": "enabled", "url": rx.url("/ok") }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.body["data"]["disabled_reason"].is_null());
}
gable_tests::both!(gone_disables_and_redirects_are_not_followed, |b| b.local_webhooks());

async fn rotation_signs_with_both_secrets_for_a_day(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let rx = Receiver::start().await;
    let hook = subscribe(app, key, &rx.url("/ok"), json!(["*"])).await;
    let r = app.call(key, "POST", &format!("/v1/webhooks/{}/rotate_secret", hook.id), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let new_secret = r.body["data"]["secret"].as_str().unwrap().to_string();
    assert_ne!(new_secret, hook.secret);
    app.create(key, "leads", json!({ "name": "Ada" })).await;
    deliver(app).await;
    let got = rx.wait_for(1, 10).await;
    let now = app.clock.now();
    assert_eq!(got[0].header("gable-signature").unwrap().matches("v1=").count(), 2);
    assert!(verified(&got[0], &hook.secret, now) && verified(&got[0], &new_secret, now));
    app.clock.advance(Duration::hours(25));
    app.create(key, "leads", json!({ "name": "Bob" })).await;
    deliver(app).await;
    let got = rx.wait_for(2, 10).await;
    let now = app.clock.now();
    assert_eq!(got[1].header("gable-signature").unwrap().matches("v1=").count(), 1);
    assert!(verified(&got[1], &new_secret, now) && !verified(&got[1], &hook.secret, now));
}
gable_tests::both!(rotation_signs_with_both_secrets_for_a_day, |b| b.local_webhooks());

async fn replays_recovery_and_test_sends(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let rx = Receiver::start().await;
    let hook = subscribe(app, key, &rx.url("/fail"), json!(["lead.created"])).await;
    let other = subscribe(app, key, &rx.url("/ok"), json!(["lead.created"])).await;
    for name in ["Ada", "Bob"] {
        app.create(key, "leads", json!({ "name": name })).await;
    }
    deliver(app).await;
    rx.wait_for(4, 10).await;
    // The background worker may have made the attempts: wait until the register holds
    // both failures (a receipt comes before its outcome is recorded).
    let path = format!("/v1/webhook-deliveries?filter[webhook_id]={}", hook.id);
    for _ in 0..200 {
        let failed = app.all_pages(key, &path).await.iter().filter(|d| d["response_status"] == 500).count();
        if failed >= 2 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(25)).await;
    }
    // The outage ends: the receiver moves, and everything missed since then is sent again.
    let since = gable::domain::value::format_datetime(&(app.clock.now() - Duration::minutes(1)));
    let r = app.call(key, "PATCH", &format!("/v1/webhooks/{}", hook.id), Some(json!({ "url": rx.url("/ok") }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = app.call(key, "POST", &format!("/v1/webhooks/{}/recover", hook.id), Some(json!({ "since": since }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    // Both events are queued again, unless a slow machine made one's 5-s retry already
    // (to the new URL): that one is on its way, not missing.
    let queued = r.body["data"]["deliveries_queued"].as_u64().unwrap();
    assert!((1..=2).contains(&queued), "{}", r.text);
    deliver(app).await;
    let got = rx.wait_for(6, 10).await;
    assert_eq!(got.iter().filter(|g| g.path == "/ok" && verified(g, &hook.secret, app.clock.now())).count(), 2);
    // Both events succeeded for this subscription (an expedited retry may still be
    // recording its outcome when the receiver already has it).
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        let recovered = attempts(app, key, &hook.id).await;
        if recovered.iter().filter(|a| a["status"] == "succeeded").count() == 2 {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{recovered:?}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    // Nothing is missing any more: a second recovery queues nothing.
    let r = app.call(key, "POST", &format!("/v1/webhooks/{}/recover", hook.id), Some(json!({ "since": since }))).await;
    assert_eq!(r.body["data"]["deliveries_queued"], 0);

    // Replay one delivery, then one event to every subscriber.
    let first = attempts(app, key, &other.id).await[0].clone();
    let r = app.call(key, "POST", &format!("/v1/webhook-deliveries/{}/replay", first["id"].as_str().unwrap()), None).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!((r.body["data"]["trigger"].as_str(), r.body["data"]["attempt"].as_i64()), (Some("replay"), Some(2)));
    let event = first["event_id"].as_str().unwrap();
    let r = app.call(key, "POST", &format!("/v1/events/{event}/replay"), None).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"].as_array().unwrap().len(), 2, "both subscriptions take lead.created");
    deliver(app).await;
    let got = rx.wait_for(9, 10).await;
    let replays: Vec<_> = got[6..].iter().map(|g| g.json()["id"].as_str().unwrap().to_string()).collect();
    assert!(replays.iter().all(|id| id == event));
    let ts: Vec<i64> = got.iter().filter_map(|g| g.header("gable-timestamp")?.parse().ok()).collect();
    assert!(ts.iter().all(|t| *t > 0));

    // A test send of any type, marked as a test, through the same path.
    let r = app.call(key, "POST", &format!("/v1/webhooks/{}/test", other.id), Some(json!({ "type": "lease.signed" }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["trigger"], "test");
    let r2 = app.call(key, "POST", &format!("/v1/webhooks/{}/test", other.id), Some(json!({ "type": "lease.exploded" }))).await;
    r2.assert_error(400, "validation_failed");
    deliver(app).await;
    let got = rx.wait_for(10, 10).await;
    let sample = got[9].json();
    assert_eq!((sample["type"].as_str(), sample["test"].as_bool()), (Some("lease.signed"), Some(true)));
    assert_eq!(sample["data"]["object"]["object"], "lease");
    assert!(verified(&got[9], &other.secret, app.clock.now()));
}
gable_tests::both!(replays_recovery_and_test_sends, |b| b.local_webhooks());

/// The SSRF guard with no allow-list: every spelling of a private or reserved address is
/// refused when subscribing (a clear 400), and an attempt to one is refused and recorded.
async fn private_addresses_are_refused(strict: &TestApp) {
    let rx = Receiver::start().await;
    let port = rx.addr.port();
    let t = strict.tenant("A").await;
    let key = t.test_key.as_str();
    for url in [
        format!("http://127.0.0.1:{port}/ok"),
        format!("http://localhost:{port}/ok"),
        format!("http://2130706433:{port}/ok"),
        format!("http://0177.0.0.1:{port}/ok"),
        format!("http://127.1:{port}/ok"),
        format!("http://[::ffff:127.0.0.1]:{port}/ok"),
        format!("http://[::1]:{port}/ok"),
        "http://169.254.169.254/latest/meta-data".to_string(),
        "http://10.0.0.8/hook".to_string(),
        "http://100.64.0.1/hook".to_string(),
        "http://192.0.2.10/hook".to_string(),
        "http://[fd00::1]/hook".to_string(),
        "http://user:pass@hooks.example.com/hook".to_string(),
        "ftp://hooks.example.com/hook".to_string(),
    ] {
        let r = strict.call(key, "POST", "/v1/webhooks", Some(json!({ "url": url, "events": ["*"] }))).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.param(), "url", "{url}");
    }
    // A second node of the deployment allows the receiver's network but delivers nothing
    // itself: subscribed there, the attempt is made here, refused before any connection,
    // and the register says why.
    let lenient = strict.second_node().local_webhooks().args(|a| a.delivery_concurrency = 0).spawn().await;
    let hook = subscribe(&lenient, key, &rx.url("/ok"), json!(["lead.created"])).await;
    lenient.create(key, "leads", json!({ "name": "Ada" })).await;
    deliver(strict).await;
    let a = settled(strict, key, &hook.id, 1).await;
    assert!(a[0]["error"].as_str().unwrap_or_default().contains("loopback"), "{a:?}");
    assert!(a[0]["response_status"].is_null());
    assert!(rx.received().is_empty(), "the receiver was reached");
    lenient.stop().await;
}
// The default settings: no allow-list.
gable_tests::both!(private_addresses_are_refused);

/// Five days of nothing but failures disable the subscription, saying why.
async fn five_days_of_failures_disable(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let rx = Receiver::start().await;
    let hook = subscribe(app, key, &rx.url("/fail"), json!(["lead.created"])).await;
    app.create(key, "leads", json!({ "name": "Ada" })).await;
    deliver(app).await;
    settled(app, key, &hook.id, 2).await;
    let r = webhook(app, key, &hook.id).await;
    assert!(r.body["data"]["failing_since"].is_string() && r.body["data"]["status"] == "enabled");
    app.clock.advance(Duration::days(5) + Duration::minutes(1));
    app.create(key, "leads", json!({ "name": "Bob" })).await;
    deliver(app).await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let r = webhook(app, key, &hook.id).await;
        if r.body["data"]["status"] == "disabled" {
            assert!(r.body["data"]["disabled_reason"].as_str().unwrap().contains("5 days"), "{}", r.text);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "still enabled: {}", r.text);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}
gable_tests::both!(five_days_of_failures_disable, |b| b.local_webhooks());

/// A receiver slower than the 10 s timeout: recorded as a timeout, and retried.
async fn slow_receivers_time_out_and_are_retried(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let rx = Receiver::start().await;
    let hook = subscribe(app, key, &rx.url("/slow/11000"), json!(["lead.created"])).await;
    // Before the create: the background worker may start the attempt as soon as the
    // create commits, before its answer is back here.
    let started = std::time::Instant::now();
    app.create(key, "leads", json!({ "name": "Ada" })).await;
    deliver(app).await;
    let a = settled(app, key, &hook.id, 2).await;
    assert!(started.elapsed() >= std::time::Duration::from_secs(10), "given up after {:?}", started.elapsed());
    assert_eq!(a[0]["status"], "retrying");
    assert!(a[0]["error"].as_str().unwrap().contains("timed out"), "{a:?}");
    // The retry is due 5 s (±20 %) later; the clock runs on while the first attempt waits,
    // so on a slow machine the retry may already have been made (and timed out) too.
    assert_eq!(a[1]["trigger"], "retry");
    assert!(matches!(a[1]["status"].as_str(), Some("pending" | "retrying")), "{a:?}");
}
gable_tests::both!(slow_receivers_time_out_and_are_retried, |b| b.local_webhooks());

/// Two processes on one PostgreSQL: each event reaches each subscriber exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_processes_deliver_each_event_once() {
    let Some(app) = TestApp::builder(Backend::Postgres).local_webhooks().try_spawn().await else { return };
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let rx = Receiver::start().await;
    subscribe(&app, key, &rx.url("/ok"), json!(["lead.created"])).await;
    let other = app.second_node().local_webhooks().spawn().await;
    let n = 300;
    let creates = (0..n).map(|i| {
        let node = if i % 2 == 0 { &app } else { &other };
        async move { node.create(key, "leads", json!({ "name": format!("Lead {i}") })).await }
    });
    // Sixteen at a time: the creates only make the events; what is tested is that two
    // processes deliver them. (All 300 at once ran past the pool's acquire timeout, 503,
    // on a loaded two-core machine.)
    use futures::StreamExt;
    futures::stream::iter(creates).buffer_unordered(16).collect::<Vec<_>>().await;
    let (a, b) = tokio::join!(gable::jobs::deliver_due(&app.background), gable::jobs::deliver_due(&other.background));
    a.unwrap();
    b.unwrap();
    let got = rx.wait_for(n, 30).await;
    // Let any duplicate arrive before counting.
    tokio::time::sleep(std::time::Duration::from_millis(500)).await;
    let got = if rx.received().len() > got.len() { rx.received() } else { got };
    let ids: std::collections::HashSet<String> = got.iter().map(|g| g.header("gable-event-id").unwrap().to_string()).collect();
    assert_eq!((got.len(), ids.len()), (n, n), "every event once, none twice");
    other.stop().await;
    app.stop().await;
}

/// Every event type of the catalogue can be delivered: a test send of each reaches the
/// receiver signed, with the type's record as `data.object`.
async fn every_event_type_is_deliverable(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let rx = Receiver::start().await;
    let hook = subscribe(app, key, &rx.url("/ok"), json!(["*"])).await;
    let types = gable::domain::events::EVENT_TYPES;
    for e in types {
        let r = app.call(key, "POST", &format!("/v1/webhooks/{}/test", hook.id), Some(json!({ "type": e.name }))).await;
        assert_eq!(r.status, 201, "{}: {}", e.name, r.text);
    }
    deliver(app).await;
    let got = rx.wait_for(types.len(), 20).await;
    for e in types {
        let req = got.iter().find(|g| g.json()["type"] == e.name).unwrap_or_else(|| panic!("{} never arrived", e.name));
        let body = req.json();
        let object = gable::domain::collections::collection(e.collection).unwrap().object;
        assert_eq!(body["data"]["object"]["object"], object, "{}", e.name);
        assert_eq!(body["test"], true);
        assert!(verified_on_arrival(req, &hook.secret), "{}", e.name);
    }
    assert_eq!(got.len(), types.len(), "one test delivery per type, nothing else");
}
gable_tests::both!(every_event_type_is_deliverable, |b| b.local_webhooks());

/// Outcomes are written for a whole batch in one statement: each attempt gets its own
/// values (not its neighbour's), a failure with a retry writes the next attempt, and an
/// attempt recorded already (by this or another process) is not written again.
async fn a_batch_of_outcomes_is_recorded_attempt_by_attempt(app: &TestApp) {
    use gable::store::deliveries::{self, Outcome};
    use gable::store::Intent;
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let hook = subscribe(app, key, "https://receiver.example/hook", json!(["lead.created"])).await;
    for name in ["Ada", "Grace", "Edsger"] {
        app.create(key, "leads", json!({ "name": name })).await;
    }
    let now = app.clock.now();
    let mut tx = app.store.begin_system(Intent::Write).await.unwrap();
    let mut claimed = deliveries::claim(&mut tx, now, Duration::seconds(30), 10, |_| 10).await.unwrap();
    tx.commit().await.unwrap();
    assert_eq!(claimed.len(), 3, "the three attempts are due: {:?}", attempts(app, key, &hook.id).await);
    claimed.sort_by_key(|c| c.id);
    let outcome = |status: Option<u16>, error: Option<&str>, retry: bool| Outcome {
        request_headers: json!({ "x-which": status.map_or("none".to_string(), |s| s.to_string()) }),
        response_status: status,
        response_headers: status.map(|s| json!({ "x-status": s })),
        response_excerpt: status.map(|s| format!("answered {s}")),
        latency_ms: status.map(|s| i64::from(s) / 10),
        error: error.map(str::to_string),
        succeeded: status == Some(200),
        gone: false,
        retry_at: retry.then(|| now + Duration::minutes(5)),
    };
    let outcomes =
        [outcome(Some(200), None, false), outcome(Some(503), Some("answered 503"), true), outcome(None, Some("timed out"), false)];
    let done: Vec<_> = claimed.iter().zip(&outcomes).collect();
    let mut tx = app.store.begin_system(Intent::Write).await.unwrap();
    assert_eq!(deliveries::finish_all(&mut tx, &done, now).await.unwrap(), vec![true, true, true]);
    tx.commit().await.unwrap();
    // Again, with a fresh outcome for the first: nothing is pending any more.
    let again = [outcome(Some(500), Some("late"), true)];
    let mut tx = app.store.begin_system(Intent::Write).await.unwrap();
    assert_eq!(deliveries::finish_all(&mut tx, &[(&claimed[0], &again[0])], now).await.unwrap(), vec![false]);
    tx.commit().await.unwrap();

    let all = attempts(app, key, &hook.id).await;
    assert_eq!(all.len(), 4, "three attempts and one retry: {all:?}");
    let row = |id: uuid::Uuid| all.iter().find(|a| a["id"] == json!(id)).unwrap_or_else(|| panic!("attempt {id} in {all:?}"));
    let (ok, failed, lost) = (row(claimed[0].id), row(claimed[1].id), row(claimed[2].id));
    assert_eq!((ok["status"].as_str(), ok["response_status"].as_i64(), ok["error"].as_str()), (Some("succeeded"), Some(200), None), "{ok}");
    assert_eq!(ok["latency_ms"], json!(20));
    assert_eq!(
        (failed["status"].as_str(), failed["response_status"].as_i64(), failed["error"].as_str()),
        (Some("retrying"), Some(503), Some("answered 503")),
        "{failed}"
    );
    assert_eq!(failed["latency_ms"], json!(50));
    assert_eq!(
        (lost["status"].as_str(), lost["response_status"].as_i64(), lost["error"].as_str()),
        (Some("failed"), None, Some("timed out")),
        "{lost}"
    );
    let retry: Vec<_> = all.iter().filter(|a| a["trigger"] == "retry").collect();
    assert_eq!(retry.len(), 1, "{all:?}");
    assert_eq!((retry[0]["status"].as_str(), retry[0]["event_id"].clone()), (Some("pending"), failed["event_id"].clone()), "{all:?}");
}
// No delivery worker: the test claims and records by hand.
gable_tests::both!(a_batch_of_outcomes_is_recorded_attempt_by_attempt, |b| b.args(|a| a.delivery_concurrency = 0));

/// A claim takes due attempts oldest first, only as many of a subscription as it has room
/// for, and marks exactly those as claimed: the candidates it passed over (no room) and
/// the rest of the queue stay claimable, and the claimed ones are not claimed again. The
/// claim's events are read with it, two tenants' at once.
async fn a_claim_marks_exactly_what_it_takes(app: &TestApp) {
    use gable::store::deliveries;
    use gable::store::Intent;
    let (a, b) = (app.tenant("A").await, app.tenant("B").await);
    let full = subscribe(app, &a.test_key, "https://receiver.example/full", json!(["lead.created"])).await;
    let open = subscribe(app, &a.test_key, "https://receiver.example/open", json!(["lead.created"])).await;
    let other = subscribe(app, &b.test_key, "https://receiver.example/other", json!(["lead.created"])).await;
    for name in ["Ada", "Grace", "Edsger"] {
        app.create(&a.test_key, "leads", json!({ "name": name })).await;
        app.create(&b.test_key, "leads", json!({ "name": name })).await;
    }
    let (full_id, open_id) = (full.id.parse::<uuid::Uuid>().unwrap(), open.id.parse::<uuid::Uuid>().unwrap());
    let claimed_rows = || app.count_where("webhook_deliveries", "claimed_until IS NOT NULL");
    assert_eq!(claimed_rows().await, 0);

    // Room for none of `full`'s attempts and two of `open`'s; `other` (tenant B) has room.
    let now = app.clock.now();
    let mut used = std::collections::HashMap::<uuid::Uuid, usize>::new();
    let room = move |w: uuid::Uuid| {
        let n = used.entry(w).or_default();
        *n += 1;
        match w {
            w if w == full_id => 0,
            w if w == open_id => 3usize.saturating_sub(*n),
            _ => 10,
        }
    };
    let mut tx = app.store.begin_system(Intent::Write).await.unwrap();
    let first = deliveries::claim(&mut tx, now, Duration::seconds(30), 10, room).await.unwrap();
    let events = deliveries::events_of(&mut tx, &first).await.unwrap();
    tx.commit().await.unwrap();
    let of = |w: &str| first.iter().filter(|c| c.webhook_id.to_string() == w).count();
    assert_eq!((of(&full.id), of(&open.id), of(&other.id)), (0, 2, 3), "{first:?}");
    let due: Vec<_> = first.iter().map(|c| c.id).collect();
    assert!(due.windows(2).all(|w| w[0] < w[1]), "oldest first (ids are time-ordered): {due:?}");
    assert_eq!(claimed_rows().await, 5, "exactly the attempts taken are marked, not the candidates passed over");
    assert_eq!(events.len(), 5, "each claimed attempt's event, of both tenants: {events:?}");
    assert!(first.iter().all(|c| events.contains_key(&c.event_id.unwrap())));

    let mut tx = app.store.begin_system(Intent::Write).await.unwrap();
    let second = deliveries::claim(&mut tx, now, Duration::seconds(30), 10, |_| 10).await.unwrap();
    tx.commit().await.unwrap();
    let ids: std::collections::HashSet<_> = second.iter().map(|c| c.id).collect();
    assert_eq!(second.len(), 4, "full's three and open's last: {second:?}");
    assert!(first.iter().all(|c| !ids.contains(&c.id)), "nothing claimed twice");
    assert_eq!(claimed_rows().await, 9);
}
// No delivery worker: the test claims by hand.
gable_tests::both!(a_claim_marks_exactly_what_it_takes, |b| b.args(|a| a.delivery_concurrency = 0));
