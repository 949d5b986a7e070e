//! `gable listen` as a developer runs it beside their app: each event of the sandbox is
//! forwarded to a real HTTP receiver signed exactly as a webhook delivery (the receiver
//! verifies it with the secret `listen` printed, which stays the same at every start), one
//! line per event says what the receiver answered, a failure is shown and not retried, and
//! a connection cut mid-burst loses and repeats nothing.

use std::time::Duration;

use gable::domain::webhooks;
use gable_tests::cli::{Cli, Running};
use gable_tests::proxy::Proxy;
use gable_tests::receiver::Receiver;
use gable_tests::{both, TestApp};
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(10);

async fn lead(app: &TestApp, key: &str, name: &str) -> String {
    app.create(key, "leads", json!({ "name": name, "email": "lead@example.com" })).await["id"].as_str().expect("id").to_string()
}

/// The secret `listen` announced on its `Ready` line.
async fn ready_secret(listen: &mut Running) -> String {
    let ready = listen.told("Your webhook signing secret is", WAIT).await;
    ready.split_whitespace().find(|w| w.starts_with("whsec_")).expect("a whsec_ secret on the Ready line").to_string()
}

/// The event a lead's creation caused, as the API shows it.
async fn event_of(app: &TestApp, key: &str, lead: &str) -> Value {
    let events = app.call(key, "GET", &format!("/v1/events?filter[related_object_id]={lead}"), None).await;
    events.body["data"].as_array().expect("events").iter().find(|e| e["type"] == "lead.created").cloned().expect("the lead's event")
}

async fn events_are_forwarded_signed_as_deliveries(app: &TestApp) {
    let t = app.tenant("Listening CLI").await;
    let receiver = Receiver::start().await;
    let cli = Cli::new(&app.sandbox, &t.test_key);

    let mut listen = cli.spawn(&["listen", "--forward-to", &receiver.url("/ok")]);
    let said = listen.told("Listening to", WAIT).await;
    assert!(said.contains("the sandbox (test mode)") && said.contains(&app.sandbox), "names the environment: {said}");
    let secret = ready_secret(&mut listen).await;
    let leads = [lead(app, &t.test_key, "Ann").await, lead(app, &t.test_key, "Bo").await];

    let got = receiver.wait_for(2, 10).await;
    for (request, lead) in got.iter().zip(&leads) {
        let event = event_of(app, &t.test_key, lead).await;
        // The body is the event as the API shows it, with a delivery's headers.
        assert_eq!(request.json(), event, "forwarded in order, as GET /v1/events/{{id}}");
        assert_eq!(request.header("gable-event-id"), event["id"].as_str());
        assert_eq!(request.header("content-type"), Some("application/json"));
        assert!(request.header("user-agent").is_some_and(|ua| ua.starts_with("Gable-Webhooks/")));
        let verified = webhooks::verify(
            &request.body,
            request.header("gable-timestamp"),
            request.header("gable-signature"),
            &secret,
            chrono::Utc::now(),
        );
        assert_eq!(verified, Ok(()), "the receiver verifies it with the secret listen printed");
        let line = listen.line(WAIT).await.expect("a line per event");
        let id = event["id"].as_str().unwrap();
        assert!(line.contains("lead.created") && line.contains(id) && line.contains("-> 200 ("), "{line}");
    }

    // Stopped with Ctrl-C: a summary, success.
    listen.signal("INT");
    let (ok, said) = listen.wait(WAIT).await;
    assert!(ok, "Ctrl-C is a clean stop: {said:?}");
    assert!(said.iter().any(|l| l.contains("Stopped after 2 event(s): 2 forwarded with a 2xx answer, 0 not")), "{said:?}");

    // The secret is the same at the next start (an app configured once keeps verifying),
    // and `--print-secret` prints just it.
    let printed = cli.run(&["listen", "--print-secret"]).await;
    assert!(printed.success, "{printed:?}");
    assert_eq!(printed.stdout.trim(), secret);
    // Another key's secret is another.
    let other = app.key(t.id, false, &["*"], None).await;
    let theirs = Cli::new(&app.sandbox, &other).run(&["listen", "--print-secret"]).await;
    assert!(theirs.success && theirs.stdout.trim() != secret && theirs.stdout.trim().starts_with("whsec_"), "{theirs:?}");
    for out in [&printed, &theirs] {
        assert!(!out.stdout.contains(&t.test_key) && !out.stderr.contains(&t.test_key), "the key is never printed");
    }
}
both!(events_are_forwarded_signed_as_deliveries);

async fn a_failure_is_shown_and_not_retried_and_printing_is_for_scripts(app: &TestApp) {
    let t = app.tenant("Failing CLI").await;
    let receiver = Receiver::start().await;
    let cli = Cli::new(&app.sandbox, &t.test_key);
    let mut listen = cli.spawn(&["listen", "--forward-to", &receiver.url("/fail"), "--format", "json"]);
    ready_secret(&mut listen).await;
    let made = lead(app, &t.test_key, "Cy").await;
    let line: Value = serde_json::from_str(&listen.line(WAIT).await.expect("a line")).expect("a JSON line");
    assert_eq!(line["event"]["data"]["object"]["id"], made.as_str());
    assert_eq!(line["forward"]["status"], 500);
    assert!(line["forward"]["latency_ms"].is_u64(), "{line}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(receiver.received().len(), 1, "shown, not retried");
    drop(listen);

    // Nothing listening at the address: the line says why; the command goes on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
    let nowhere = format!("http://{}/hooks", closed.local_addr().expect("addr"));
    drop(closed);
    let mut listen = cli.spawn(&["listen", "--forward-to", &nowhere]);
    ready_secret(&mut listen).await;
    lead(app, &t.test_key, "Di").await;
    let line = listen.line(WAIT).await.expect("a line");
    assert!(line.contains("-> failed: ") && line.to_lowercase().contains("refused"), "{line}");
    drop(listen);

    // Without --forward-to, only the asked-for types are printed, each as the API shows it.
    let mut listen = cli.spawn(&["listen", "--events", "workorder.created", "--format", "json"]);
    let said = listen.told("Ready: sandbox (test) events (workorder.created)", WAIT).await;
    assert!(!said.contains(&t.test_key));
    lead(app, &t.test_key, "Ed").await;
    let property = app.property(&t.test_key).await;
    let order = app.create(&t.test_key, "workorders", json!({ "property_id": property["id"], "title": "Tap" })).await;
    let printed: Value = serde_json::from_str(&listen.line(WAIT).await.expect("a line")).expect("JSON");
    assert_eq!(printed["type"], "workorder.created", "the lead's event is not asked for");
    assert_eq!(printed["data"]["object"]["id"], order["id"]);
    let shown = app.call(&t.test_key, "GET", &format!("/v1/events/{}", printed["id"].as_str().unwrap()), None).await;
    assert_eq!(shown.body["data"], printed);
}
both!(a_failure_is_shown_and_not_retried_and_printing_is_for_scripts);

async fn a_cut_connection_loses_and_repeats_nothing(app: &TestApp) {
    let t = app.tenant("Blip CLI").await;
    let receiver = Receiver::start().await;
    let proxy = Proxy::start(&app.sandbox).await;
    let cli = Cli::new(&proxy.url(), &t.test_key);
    let mut listen = cli.spawn(&["listen", "--forward-to", &receiver.url("/ok")]);
    ready_secret(&mut listen).await;
    let mut made = vec![];
    for i in 0..5 {
        made.push(lead(app, &t.test_key, &format!("Before {i}")).await);
    }
    receiver.wait_for(5, 10).await;
    // The network drops the stream; events keep coming while listen is away.
    proxy.cut();
    for i in 0..5 {
        made.push(lead(app, &t.test_key, &format!("During {i}")).await);
    }
    listen.told("Connection lost", WAIT).await;
    listen.told("Connected again; no event was missed", WAIT).await;
    for i in 0..5 {
        made.push(lead(app, &t.test_key, &format!("After {i}")).await);
    }
    let got = receiver.wait_for(15, 15).await;
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let got_ids: Vec<String> =
        receiver.received().iter().map(|r| r.json()["data"]["object"]["id"].as_str().unwrap_or_default().to_string()).collect();
    assert_eq!(got.len(), 15);
    assert_eq!(got_ids, made, "every event once, in order, across the reconnection");

    // A refusal is not retried: a revoked key ends the command with the API's reason.
    let sa = app.store.service_account(t.id, "cli").await.expect("service account");
    let issued = app.store.create_key(t.id, sa, false, vec!["*".into()], None).await.expect("key");
    let mut listen = Cli::new(&app.sandbox, &issued.secret).spawn(&["listen"]);
    ready_secret(&mut listen).await;
    assert!(app.store.revoke_key(t.id, issued.id).await.expect("revoke"));
    let (ok, said) = listen.wait(WAIT).await;
    assert!(!ok, "{said:?}");
    assert!(said.iter().any(|l| l.contains("error: the server refused to stream events") && l.contains("unauthenticated")), "{said:?}");

    // So is a key that may not read events, before anything is streamed.
    let narrow = app.key(t.id, false, &["properties:read"], None).await;
    let out = Cli::new(&app.sandbox, &narrow).run(&["listen"]).await;
    assert!(!out.success && out.stderr.contains("403 insufficient_scope"), "{out:?}");
}
both!(a_cut_connection_loses_and_repeats_nothing);

/// The key's rate limit is not a refusal of the stream: `listen` waits as `Retry-After`
/// says and connects; SIGTERM stops it as Ctrl-C does.
async fn the_rate_limit_is_waited_out_and_sigterm_stops_it(app: &TestApp) {
    let t = app.tenant("Limited CLI").await;
    let cli = Cli::new(&app.sandbox, &t.test_key);
    let mut limited = false;
    for _ in 0..10 {
        limited |= app.call(&t.test_key, "GET", "/v1/leads", None).await.status == 429;
    }
    assert!(limited, "the key is over its limit");
    let out = cli.run(&["listen", "--print-secret"]).await;
    assert!(out.success && out.stdout.starts_with("whsec_"), "{out:?}");
    assert!(out.stderr.contains("Over the key's rate limit") && out.stderr.contains("429 rate_limited"), "{out:?}");

    let mut listen = cli.spawn(&["listen"]);
    ready_secret(&mut listen).await;
    listen.signal("TERM");
    let (ok, said) = listen.wait(WAIT).await;
    assert!(ok, "SIGTERM is a clean stop: {said:?}");
    assert!(said.iter().any(|l| l.starts_with("Stopped after 0 event(s)")), "{said:?}");
}
both!(the_rate_limit_is_waited_out_and_sigterm_stops_it, |b| b.rate_limits(100, 2));
