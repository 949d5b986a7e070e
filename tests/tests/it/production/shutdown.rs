//! SIGTERM under load: requests in flight are answered (never a 5xx, never a cut-off
//! answer), and the process exits 0; whatever outlasts the shutdown deadline (a request,
//! a webhook delivery attempt) is cut off then.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gable_tests::process::Database;
use gable_tests::receiver::Receiver;
use gable_tests::Backend;
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends a lead whose body arrives over `over`, on a connection of its own; returns the
/// answer's status line (or what went wrong).
async fn slow_lead(addr: String, key: String, idem: &'static str, over: Duration) -> String {
    let body = json!({ "name": "Slow lead", "email": "slow@example.com" }).to_string().into_bytes();
    let mut stream = TcpStream::connect(&addr).await.expect("connect");
    let head = format!(
        "POST /v1/leads HTTP/1.1\r\nHost: gable\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nIdempotency-Key: {idem}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let pause = over / body.len() as u32;
    for b in &body {
        if stream.write_all(&[*b]).await.is_err() {
            return "the connection was closed while sending".into();
        }
        tokio::time::sleep(pause).await;
    }
    let mut got = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut got)).await;
    String::from_utf8_lossy(&got).lines().next().unwrap_or("no answer").to_string()
}

async fn sigterm_under_load(backend: Backend) {
    let Some(db) = Database::fresh(backend).await else { return };
    let receiver = Receiver::start().await;
    let gable = db
        .server()
        .arg("--shutdown-timeout-secs")
        .arg("4")
        .arg("--rate-limit-test")
        .arg("0")
        .arg("--webhook-allow-cidrs")
        .arg("127.0.0.0/8")
        .start()
        .await;
    let (_, key) = db.tenant_and_key("test").await;
    let client = reqwest::Client::new();
    let base = gable.sandbox.clone();
    let addr = base.trim_start_matches("http://").to_string();
    // A receiver that takes 20 s: a delivery attempt is under way at the signal.
    let r = client
        .post(format!("{base}/v1/webhooks"))
        .bearer_auth(&key)
        .json(&json!({ "url": receiver.url("/slow/20000"), "events": ["lead.created"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);

    // Eight writers, and two requests whose bodies take 1.5 s (answered after the signal)
    // and 8 s (still running at the deadline).
    let statuses = Arc::new(Mutex::new(Vec::<u16>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..8 {
        let (client, base, key, statuses, stop) = (client.clone(), base.clone(), key.clone(), statuses.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let sent = client
                    .post(format!("{base}/v1/leads"))
                    .bearer_auth(&key)
                    .header("Idempotency-Key", format!("term-{w}-{n}"))
                    .json(&json!({ "name": "Lead", "email": "l@example.com" }))
                    .send()
                    .await;
                match sent {
                    Ok(r) => statuses.lock().unwrap().push(r.status().as_u16()),
                    // After the signal the listener is closed: new connections are refused.
                    Err(_) => tokio::time::sleep(Duration::from_millis(50)).await,
                }
            }
        }));
    }
    let in_flight = tokio::spawn(slow_lead(addr.clone(), key.clone(), "term-slow-1", Duration::from_millis(1500)));
    let outlasting = tokio::spawn(slow_lead(addr.clone(), key.clone(), "term-slow-2", Duration::from_secs(8)));
    tokio::time::sleep(Duration::from_millis(700)).await;
    let delivered_before = receiver.received().len();
    assert!(delivered_before > 0, "a delivery attempt is under way");

    gable.signal("TERM");
    let signalled = Instant::now();
    let exit = {
        let gable = gable;
        gable.wait(Duration::from_secs(15)).await
    };
    let took = signalled.elapsed();
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    assert_eq!(exit, Some(0), "exit status");
    assert!(took >= Duration::from_secs(3) && took < Duration::from_secs(7), "exited {took:?} after SIGTERM (deadline 4 s)");
    assert!(in_flight.await.unwrap().starts_with("HTTP/1.1 201"), "a request in flight at the signal is answered");
    let cut = outlasting.await.unwrap();
    assert!(!cut.starts_with("HTTP/1.1 5"), "a request cut at the deadline gets no 5xx: {cut}");
    let statuses = statuses.lock().unwrap().clone();
    assert!(statuses.len() > 20, "the load ran: {} answers", statuses.len());
    assert!(statuses.iter().all(|s| *s == 201), "every answer under load is 201: {statuses:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_load_answers_what_is_in_flight_then_exits_at_the_deadline_sqlite() {
    sigterm_under_load(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_under_load_answers_what_is_in_flight_then_exits_at_the_deadline_postgres() {
    sigterm_under_load(Backend::Postgres).await;
}

/// The log is written by a thread of its own, off the requests' path: after a burst of
/// requests and SIGTERM, every request still has its access line (found by its request
/// id), and the shutdown's last line is there after them. Nothing is lost on the way out.
async fn every_log_line_is_out_before_the_process_exits(backend: Backend) {
    use futures::StreamExt as _;
    let Some(db) = Database::fresh(backend).await else { return };
    let gable = db.server().arg("--rate-limit-test").arg("0").start().await;
    let (_, key) = db.tenant_and_key("test").await;
    let client = reqwest::Client::new();
    let url = format!("{}/v1/leads", gable.sandbox);
    let ids: Vec<String> = futures::stream::iter(0..600)
        .map(|_| {
            let (client, url, key) = (client.clone(), url.clone(), key.clone());
            async move {
                let r = client.get(&url).bearer_auth(&key).send().await.expect("an answer");
                assert_eq!(r.status(), 200);
                r.headers()["request-id"].to_str().unwrap().to_string()
            }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    gable.signal("TERM");
    let (exit, log) = gable.wait_with_log(Duration::from_secs(40)).await;
    assert_eq!(exit, Some(0), "exit status");
    let lines: Vec<serde_json::Value> = log.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let logged: std::collections::HashSet<&str> =
        lines.iter().filter(|l| l["target"] == "gable::access").filter_map(|l| l["fields"]["request_id"].as_str()).collect();
    let missing: Vec<_> = ids.iter().filter(|id| !logged.contains(id.as_str())).collect();
    assert!(missing.is_empty(), "{} of {} requests have no access line, e.g. {:?}", missing.len(), ids.len(), missing.first());
    let last = lines.iter().rposition(|l| l["target"] == "gable::access").expect("access lines");
    let down = lines.iter().rposition(|l| l["fields"]["message"] == "shutting down").expect("the shutdown is logged");
    assert!(down > last, "the shutdown's line comes after the last request's");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_log_line_is_out_before_the_process_exits_sqlite() {
    every_log_line_is_out_before_the_process_exits(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_log_line_is_out_before_the_process_exits_postgres() {
    every_log_line_is_out_before_the_process_exits(Backend::Postgres).await;
}
