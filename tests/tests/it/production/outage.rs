//! A database outage under write load, on a PostgreSQL cluster of the test's own that is
//! stopped and started while Gable serves: requests answer `503 service_unavailable`
//! promptly (never a 500, never a hang), and when the database is back, requests, the
//! delivery worker and the scheduler carry on without a restart, having lost nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gable_tests::pg_cluster::Cluster;
use gable_tests::process::Database;
use gable_tests::receiver::Receiver;
use serde_json::{json, Value};

/// What one write got: the key, its status, how long it took, and the created id.
#[derive(Debug, Clone)]
struct Answer {
    key: String,
    status: u16,
    took: Duration,
    code: Option<String>,
    retry_after: Option<String>,
    id: Option<String>,
}

async fn create(client: &reqwest::Client, base: &str, secret: &str, key: &str) -> Answer {
    let body = json!({ "name": format!("Outage {key}"), "email": "lead@example.com" });
    let started = Instant::now();
    let r = client
        .post(format!("{base}/v1/leads"))
        .bearer_auth(secret)
        .header("Idempotency-Key", key)
        .json(&body)
        .timeout(Duration::from_secs(20))
        .send()
        .await
        .expect("an answer (never a dropped connection)");
    let took = started.elapsed();
    let status = r.status().as_u16();
    let retry_after = r.headers().get("retry-after").and_then(|v| v.to_str().ok()).map(String::from);
    let v: Value = r.json().await.unwrap_or(Value::Null);
    Answer {
        key: key.to_string(),
        status,
        took,
        code: v["error"]["code"].as_str().map(String::from),
        retry_after,
        id: v["data"]["id"].as_str().map(String::from),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_outage_answers_503_and_everything_recovers_without_a_restart() {
    let Some(cluster) = Cluster::create() else { return };
    cluster.start();
    let db = Database::postgres_at(&cluster.url());
    let receiver = Receiver::start().await;
    let gable = db
        .server()
        .arg("--webhook-allow-cidrs")
        .arg("127.0.0.0/8")
        .arg("--rate-limit-test")
        .arg("0")
        .arg("--request-timeout-secs")
        .arg("5")
        .arg("--scheduler-interval-secs")
        .arg("1")
        .arg("--metrics-addr")
        .arg("127.0.0.1:0")
        .start()
        .await;
    let metrics = gable.metrics.clone().expect("the metrics listener");
    let (_, secret) = db.tenant_and_key("test").await;
    let client = reqwest::Client::new();
    let base = gable.sandbox.clone();
    let r = client
        .post(format!("{base}/v1/webhooks"))
        .bearer_auth(&secret)
        .json(&json!({ "url": receiver.url("/ok"), "events": ["lead.created"] }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{}", r.text().await.unwrap_or_default());

    // Four writers, each with fresh keys, until told to stop.
    let answers = Arc::new(Mutex::new(Vec::<Answer>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut writers = Vec::new();
    for w in 0..4 {
        let (client, base, secret, answers, stop) = (client.clone(), base.clone(), secret.clone(), answers.clone(), stop.clone());
        writers.push(tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let a = create(&client, &base, &secret, &format!("outage-{w}-{n:05}")).await;
                answers.lock().unwrap().push(a);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
        }));
    }
    tokio::time::sleep(Duration::from_millis(1500)).await;

    cluster.stop();
    let down = Instant::now();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let ready = client.get(format!("{base}/readyz")).send().await.unwrap();
    assert_eq!(ready.status(), 503, "readiness fails while the database is down");
    let ready: Value = ready.json().await.unwrap();
    assert_eq!(ready["checks"]["database"]["ok"], false, "{ready}");
    // Why it fails is for the operator (the metrics listener), not the public: the
    // database's error names its host and port (third review, finding 7).
    let public = ready.to_string();
    assert!(!public.contains("error"), "the public readiness check shows failures' text: {public}");
    let detailed: Value = client.get(format!("{metrics}/readyz")).send().await.unwrap().json().await.unwrap();
    assert!(detailed["checks"]["database"]["error"].as_str().is_some_and(|e| !e.is_empty()), "{detailed}");
    assert_eq!(client.get(format!("{base}/healthz")).send().await.unwrap().status(), 200, "the process itself is up");
    tokio::time::sleep(Duration::from_secs(2)).await;

    cluster.start();
    let up = Instant::now();
    // Writes succeed again, without a restart.
    let recovered = loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let last = answers.lock().unwrap().iter().rev().take(4).all(|a| a.status == 201);
        if last {
            break up.elapsed();
        }
        assert!(up.elapsed() < Duration::from_secs(20), "writes did not recover within 20 s");
    };
    tokio::time::sleep(Duration::from_secs(1)).await;
    stop.store(true, Ordering::Relaxed);
    for w in writers {
        w.await.unwrap();
    }
    let answers = answers.lock().unwrap().clone();
    let slowest_503 = answers.iter().filter(|a| a.status == 503).map(|a| a.took).max().unwrap_or_default();
    eprintln!(
        "outage: {} writes ({} answered 503, the slowest in {slowest_503:?}), down for {:?}, writes answered 201 again {recovered:?} after the restart",
        answers.len(),
        answers.iter().filter(|a| a.status == 503).count(),
        up - down
    );

    // Only 201 and 503; each 503 in the documented body with Retry-After, and prompt.
    let unexpected: Vec<_> = answers.iter().filter(|a| a.status != 201 && a.status != 503).collect();
    assert!(unexpected.is_empty(), "statuses other than 201 and 503: {unexpected:?}");
    let refused: Vec<_> = answers.iter().filter(|a| a.status == 503).collect();
    assert!(!refused.is_empty(), "the outage was not seen");
    for a in &refused {
        assert_eq!(a.code.as_deref(), Some("service_unavailable"), "{a:?}");
        assert!(a.retry_after.is_some(), "a 503 without Retry-After: {a:?}");
        assert!(a.took < Duration::from_millis(3500), "a 503 took {:?}", a.took);
    }

    // Every answered write is stored; every refused one is retried with its key after the
    // outage and then made exactly once (a key its failed attempt still holds says when
    // to come back with Retry-After).
    let mut made: BTreeMap<String, String> = answers.iter().filter_map(|a| Some((a.key.clone(), a.id.clone()?))).collect();
    for a in &refused {
        let retried = loop {
            let r = create(&client, &base, &secret, &a.key).await;
            if r.status == 409 {
                let wait: u64 = r.retry_after.as_deref().and_then(|s| s.parse().ok()).expect("a 409 in_use says when to retry");
                assert!(wait <= 10, "the key is held for {wait} s");
                tokio::time::sleep(Duration::from_secs(wait.max(1))).await;
                continue;
            }
            break r;
        };
        assert_eq!(retried.status, 201, "{retried:?}");
        made.insert(a.key.clone(), retried.id.clone().expect("id"));
    }
    let ids: BTreeSet<String> = made.values().cloned().collect();
    assert_eq!(ids.len(), made.len(), "two keys made one record");
    let mut listed = BTreeSet::new();
    let mut url = format!("{base}/v1/leads?limit=100");
    loop {
        let page: Value = client.get(&url).bearer_auth(&secret).send().await.unwrap().json().await.unwrap();
        for p in page["data"].as_array().unwrap() {
            listed.insert(p["id"].as_str().unwrap().to_string());
        }
        match page["meta"]["next_cursor"].as_str() {
            Some(c) if page["meta"]["has_more"] == true => url = format!("{base}/v1/leads?limit=100&cursor={c}"),
            _ => break,
        }
    }
    assert_eq!(listed, ids, "the stored leads are exactly the ones answered 201, once each");

    // Every one's event reaches the receiver: the delivery worker recovered too.
    let got = receiver.wait_for(ids.len(), 60).await;
    let delivered: BTreeSet<String> = got.iter().filter_map(|g| g.json()["related_object_id"].as_str().map(String::from)).collect();
    assert_eq!(delivered, ids, "an event was not delivered");

    // The scheduler runs rounds again, and the process is ready.
    let ready: Value = client.get(format!("{base}/readyz")).send().await.unwrap().json().await.unwrap();
    assert_eq!(ready["status"], "ready", "{ready}");
    let scheduler = ready["checks"]["workers"]["loops"].as_array().unwrap().iter().find(|l| l["name"] == "scheduler").cloned().unwrap();
    assert!(scheduler["last_success_secs_ago"].as_u64().is_some_and(|s| s <= 3), "the scheduler runs rounds again: {scheduler}");
    let log = gable.log();
    assert!(!log.contains("\"level\":\"ERROR\"") || !log.contains("internal error"), "no internal error was logged:\n{log}");
    gable.kill().await;
}
