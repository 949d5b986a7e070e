//! Webhook signatures checked by a second, independent implementation,
//! on SQLite and PostgreSQL. `tests/webhooks/receiver.py`, written in Python from the
//! header contract alone, verifies what Gable really sends (before and after a secret
//! rotation) and refuses tampering, a wrong secret and stale timestamps; and the receiver
//! printed in the README is extracted and run the same way, so the example is proven.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gable::domain::webhooks::{generate_secret, sign, TOLERANCE_SECS};
use gable_tests::TestApp;
use serde_json::{json, Value};

const WAIT: Duration = Duration::from_secs(15);

/// A `python3` child process, killed and reaped when dropped so that a failed assertion
/// leaves no receiver behind. Its stdout lines are collected as they come.
struct Python {
    child: Child,
    stdout: Arc<Mutex<Vec<String>>>,
}

impl Python {
    fn start(script: &Path, args: &[&str], env: &[(&str, &str)]) -> Python {
        let mut child = Command::new("python3")
            .arg(script)
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("python3 on PATH");
        let out = child.stdout.take().expect("piped stdout");
        let stdout = Arc::new(Mutex::new(Vec::new()));
        let lines = stdout.clone();
        // A thread, not a task: the read blocks until the process writes or exits.
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        Python { child, stdout }
    }

    fn stdout(&self) -> Vec<String> {
        self.stdout.lock().unwrap().clone()
    }

    /// Waits until `ready`, failing at once (not at the deadline) if the process died.
    async fn wait_until(&mut self, what: &str, ready: impl Fn(&Python) -> bool) {
        let deadline = Instant::now() + WAIT;
        while !ready(self) {
            if let Some(status) = self.child.try_wait().expect("child status") {
                panic!("python3 exited ({status}) before {what}; its stderr is above");
            }
            assert!(Instant::now() < deadline, "no {what} within {WAIT:?}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Python {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tests/webhooks/receiver.py` on a port, with its log of one JSON line per request.
struct PyReceiver {
    _process: Python,
    port: u16,
    log: PathBuf,
}

impl PyReceiver {
    /// Starts it on `port` (0: a free one, read from its first stdout line).
    async fn start(log: &Path, port: u16, secret: &str) -> PyReceiver {
        let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("webhooks/receiver.py");
        let args = [port.to_string(), log.display().to_string()];
        let mut process = Python::start(&script, &[&args[0], &args[1]], &[("GABLE_WEBHOOK_SECRET", secret)]);
        process.wait_until("its port on stdout", |p| !p.stdout().is_empty()).await;
        let bound: u16 = process.stdout()[0].trim().parse().expect("the first stdout line is the port");
        assert!(port == 0 || bound == port, "asked for {port}, bound {bound}");
        PyReceiver { _process: process, port: bound, log: log.to_path_buf() }
    }

    /// Stops it and starts it again with another secret on the same port, which is the
    /// subscription's URL. The log file is appended to, so earlier lines stay.
    async fn restart(self, secret: &str) -> PyReceiver {
        let (port, log) = (self.port, self.log.clone());
        drop(self);
        PyReceiver::start(&log, port, secret).await
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/gable", self.port)
    }

    fn lines(&self) -> Vec<Value> {
        let text = std::fs::read_to_string(&self.log).unwrap_or_default();
        text.lines().map(|l| serde_json::from_str(l).expect("a JSON line")).collect()
    }

    /// Waits until the log has at least `n` lines, and returns them all.
    async fn wait_for(&self, n: usize) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        loop {
            let lines = self.lines();
            if lines.len() >= n {
                return lines;
            }
            assert!(Instant::now() < deadline, "the Python receiver logged {lines:?}, expected {n} lines");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A port nobody listens on right now, for a receiver that cannot report its own.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Hook {
    id: String,
    secret: String,
}

async fn subscribe(app: &TestApp, key: &str, url: &str) -> Hook {
    let r = app.call(key, "POST", "/v1/webhooks", Some(json!({ "url": url, "events": ["*"] }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    Hook { id: r.body["data"]["id"].as_str().unwrap().into(), secret: r.body["data"]["secret"].as_str().unwrap().into() }
}

async fn rotate(app: &TestApp, key: &str, hook: &Hook) -> String {
    let r = app.call(key, "POST", &format!("/v1/webhooks/{}/rotate_secret", hook.id), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"]["secret"].as_str().unwrap().to_string()
}

async fn deliver(app: &TestApp) {
    gable::jobs::deliver_due(&app.background).await.expect("deliveries");
}

/// The subscription's register once it holds `n` attempts, none in flight, by attempt
/// order (the background worker may have sent some before `deliver` was called).
async fn settled(app: &TestApp, key: &str, hook: &str, n: usize) -> Vec<Value> {
    let deadline = Instant::now() + WAIT;
    loop {
        let mut all = app.all_pages(key, &format!("/v1/webhook-deliveries?filter[webhook_id]={hook}&sort=created_at")).await;
        all.sort_by_key(|d| (d["created_at"].as_str().map(String::from), d["attempt"].as_i64()));
        let recorded = all.iter().filter(|a| a["status"] != "pending" || a["trigger"] == "retry").count();
        if all.len() >= n && recorded == all.len() {
            return all;
        }
        assert!(Instant::now() < deadline, "the register has {all:?}, expected {n} settled attempts");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Makes one event of each of three types and a test send: four deliveries to a `*`
/// subscription. Returns the ids of the three real events.
async fn make_events(app: &TestApp, key: &str, hook: &Hook) -> Vec<String> {
    app.create(key, "leads", json!({ "name": "Ada", "email": "ada@example.com" })).await;
    let address = json!({ "line1": "1 A St", "city": "X", "country": "US" });
    let property = app.create(key, "properties", json!({ "name": "P", "kind": "residential", "address": address })).await;
    let order = app.create(key, "workorders", json!({ "property_id": property["id"], "title": "Leak" })).await;
    for action in ["start", "complete"] {
        let r = app.call(key, "POST", &format!("/v1/workorders/{}/{action}", order["id"].as_str().unwrap()), None).await;
        assert_eq!(r.status, 200, "{action}: {}", r.text);
    }
    let r = app.call(key, "POST", &format!("/v1/webhooks/{}/test", hook.id), Some(json!({ "type": "lease.signed" }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let events = app.all_pages(key, "/v1/events").await;
    let mut types: Vec<_> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    types.sort();
    assert_eq!(types, ["lead.created", "workorder.completed", "workorder.created"], "{events:?}");
    events.iter().map(|e| e["id"].as_str().unwrap().to_string()).collect()
}

/// Deliveries built by the test rather than by Gable, each with what a verifying
/// receiver must answer: the real body signed right (200), then tampered with, signed
/// with a wrong secret, stale, too far ahead and unsigned (400). Sent in this order.
async fn forgeries(app: &TestApp, url: &str, secret: &str) -> Vec<(String, u16)> {
    // The receivers read the real clock, not the server's manual one.
    let now = chrono::Utc::now().timestamp();
    let stale = now - TOLERANCE_SECS - 1;
    let ahead = now + TOLERANCE_SECS + 60;
    let mut sent = vec![];
    let cases: [(&str, i64, Option<&str>, bool, u16); 7] = [
        ("signed", now, Some(secret), false, 200),
        // A garbage value beside the right one: any matching `v1=` value is enough.
        ("rotating", now, Some(secret), false, 200),
        ("tampered", now, Some(secret), true, 400),
        ("wrong secret", now, Some("whsec_not_the_secret"), false, 400),
        ("stale", stale, Some(secret), false, 400),
        ("ahead", ahead, Some(secret), false, 400),
        ("unsigned", now, None, false, 400),
    ];
    for (case, ts, key, tamper, expected) in cases {
        let id = uuid::Uuid::now_v7().to_string();
        let created_at = chrono::DateTime::from_timestamp(now, 0).unwrap().to_rfc3339();
        let event = json!({ "id": id, "object": "event", "type": "lead.created", "created_at": created_at,
            "data": { "object": { "object": "lead", "name": format!("Mallory ({case})") } } });
        let body = serde_json::to_vec(&event).unwrap();
        let mut req = app.client.post(url).header("Content-Type", "application/json").header("Gable-Event-Id", &id);
        req = req.header("Gable-Timestamp", ts.to_string());
        if let Some(key) = key {
            let mut signature = format!("v1={}", sign(key, ts, &body));
            if case == "rotating" {
                signature = format!("v1={} {signature}", sign(&generate_secret(), ts, &body));
            }
            req = req.header("Gable-Signature", signature);
        }
        let mut body = body;
        if tamper {
            // One byte of difference that keeps the body valid JSON.
            let at = body.iter().position(|b| *b == b'M').unwrap();
            body[at] = b'W';
        }
        let r = app.raw(req.body(body)).await;
        assert_eq!(r.status, expected, "{case}: {}", r.text);
        sent.push((id, expected));
    }
    sent
}

async fn python_verifies_every_delivery(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let dir = tempfile::tempdir().unwrap();
    // The receiver needs the secret and the subscription needs the receiver's port: the
    // subscription comes first, at a placeholder URL (no event exists yet to send there).
    let hook = subscribe(app, key, "http://127.0.0.1:9/placeholder").await;
    let rx = PyReceiver::start(&dir.path().join("received.jsonl"), 0, &hook.secret).await;
    let r = app.call(key, "PATCH", &format!("/v1/webhooks/{}", hook.id), Some(json!({ "url": rx.url() }))).await;
    assert_eq!(r.status, 200, "{}", r.text);

    let events = make_events(app, key, &hook).await;
    deliver(app).await;
    let lines = rx.wait_for(4).await;
    assert_eq!(lines.len(), 4, "{lines:?}");
    for line in &lines {
        assert_eq!((&line["verified"], &line["reason"]), (&json!(true), &Value::Null), "{line}");
    }
    let mut types: Vec<_> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    types.sort();
    assert_eq!(types, ["lead.created", "lease.signed", "workorder.completed", "workorder.created"]);
    for id in &events {
        assert_eq!(lines.iter().filter(|l| l["event_id"] == json!(id)).count(), 1, "event {id} delivered once: {lines:?}");
    }
    // Gable saw the Python side's verdict, not just any 200.
    for a in settled(app, key, &hook.id, 4).await {
        assert_eq!((a["status"].as_str(), a["response_status"].as_i64()), (Some("succeeded"), Some(200)), "{a}");
        assert_eq!(a["response_excerpt"], "verified");
    }

    // What it must refuse, and why.
    let sent = forgeries(app, &rx.url(), &hook.secret).await;
    let lines = rx.wait_for(4 + sent.len()).await;
    let reasons: Vec<_> = lines[4..].iter().map(|l| (l["verified"].as_bool().unwrap(), l["reason"].as_str())).collect();
    assert_eq!(
        reasons,
        [
            (true, None),
            (true, None),
            (false, Some("no matching signature")),
            (false, Some("no matching signature")),
            (false, Some("stale timestamp")),
            (false, Some("stale timestamp")),
            (false, Some("missing Gable-Signature")),
        ]
    );
    for ((id, _), line) in sent.iter().zip(&lines[4..]) {
        assert_eq!(line["event_id"], json!(id));
    }

    // A rotation: for a day both secrets sign, and a receiver holding either accepts.
    let new_secret = rotate(app, key, &hook).await;
    let rx = rx.restart(&new_secret).await;
    let before = rx.lines().len();
    app.create(key, "leads", json!({ "name": "Bob" })).await;
    deliver(app).await;
    let line = rx.wait_for(before + 1).await[before].clone();
    assert_eq!((&line["type"], &line["verified"]), (&json!("lead.created"), &json!(true)), "{line}");
    let bob = line["event_id"].as_str().unwrap().to_string();
    let register = settled(app, key, &hook.id, 5).await;
    let attempt = register.iter().find(|a| a["event_id"] == json!(bob)).expect("Bob's delivery in the register");
    assert_eq!(attempt["request_headers"]["Gable-Signature"].as_str().unwrap().matches("v1=").count(), 2, "{attempt}");

    // The same event replayed to a receiver that still holds only the old secret.
    let rx = rx.restart(&hook.secret).await;
    let r = app.call(key, "POST", &format!("/v1/events/{bob}/replay"), None).await;
    assert_eq!(r.status, 201, "{}", r.text);
    deliver(app).await;
    let line = rx.wait_for(before + 2).await[before + 1].clone();
    assert_eq!((&line["event_id"], &line["verified"]), (&json!(bob), &json!(true)), "{line}");

    // And to one holding neither: refused, and Gable records the refusal and its reason.
    let rx = rx.restart(&generate_secret()).await;
    let r = app.call(key, "POST", &format!("/v1/events/{bob}/replay"), None).await;
    assert_eq!(r.status, 201, "{}", r.text);
    deliver(app).await;
    let line = rx.wait_for(before + 3).await[before + 2].clone();
    assert_eq!((&line["event_id"], &line["verified"], &line["reason"]), (&json!(bob), &json!(false), &json!("no matching signature")));
    let register = settled(app, key, &hook.id, 7).await;
    let refused: Vec<_> = register.iter().filter(|a| a["response_status"] == 400).collect();
    assert_eq!(refused.len(), 1, "{register:?}");
    assert_ne!(refused[0]["status"], "succeeded");
    assert_eq!(refused[0]["response_excerpt"], "no matching signature");
}
gable_tests::both!(python_verifies_every_delivery, |b| b.local_webhooks());

/// The Python receiver between the README's marker comments, as printed there.
fn readme_receiver() -> String {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).expect("README.md");
    let start = readme.find("<!-- receiver:start -->").expect("the README marks its receiver's start");
    let end = readme.find("<!-- receiver:end -->").expect("the README marks its receiver's end");
    let block = &readme[start..end];
    let code = block.split("```python\n").nth(1).and_then(|b| b.split("```").next()).expect("a ```python block between the markers");
    let lines = code.lines().count();
    assert!((10..=20).contains(&lines), "the README receiver is {lines} lines; the issue asks for 10 to 20");
    code.to_string()
}

/// The README's receiver, as a reader would run it: `GABLE_WEBHOOK_SECRET` and `PORT`.
async fn start_readme_receiver(script: &Path, port: u16, secret: &str) -> Python {
    let port_text = port.to_string();
    let mut process = Python::start(script, &[], &[("GABLE_WEBHOOK_SECRET", secret), ("PORT", &port_text)]);
    let addr = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    process.wait_until("it listens", |_| std::net::TcpStream::connect(addr).is_ok()).await;
    process
}

async fn the_readme_receiver_works(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key.as_str();
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("receiver.py");
    std::fs::write(&script, readme_receiver()).unwrap();
    let port = free_port();
    let url = format!("http://127.0.0.1:{port}/gable");
    let hook = subscribe(app, key, &url).await;
    let rx = start_readme_receiver(&script, port, &hook.secret).await;

    let events = make_events(app, key, &hook).await;
    deliver(app).await;
    for a in settled(app, key, &hook.id, 4).await {
        assert_eq!((a["status"].as_str(), a["response_status"].as_i64()), (Some("succeeded"), Some(200)), "{a}");
    }
    // It handled each event after verifying it (its one line of output per event).
    let deadline = Instant::now() + WAIT;
    while rx.stdout().len() < 4 {
        assert!(Instant::now() < deadline, "the README receiver printed {:?}", rx.stdout());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let printed = rx.stdout().join("\n");
    for id in &events {
        assert!(printed.contains(id.as_str()), "{id} not in {printed}");
    }
    assert!(printed.contains("lease.signed"), "the test send: {printed}");

    forgeries(app, &url, &hook.secret).await;

    // After a rotation, a reader who switched to the new secret still accepts.
    let new_secret = rotate(app, key, &hook).await;
    drop(rx);
    let _rx = start_readme_receiver(&script, port, &new_secret).await;
    app.create(key, "leads", json!({ "name": "Bob" })).await;
    deliver(app).await;
    let register = settled(app, key, &hook.id, 5).await;
    assert_eq!(register.len(), 5, "{register:?}");
    assert!(register.iter().all(|a| a["status"] == "succeeded" && a["response_status"] == 200), "{register:?}");
}
gable_tests::both!(the_readme_receiver_works, |b| b.local_webhooks());
