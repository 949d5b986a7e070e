//! Health checks on every listener; Prometheus metrics only on the metrics listener.

use gable_tests::process::Database;
use gable_tests::Backend;
use serde_json::Value;

async fn health_and_metrics(backend: Backend) {
    let Some(db) = Database::fresh(backend).await else { return };
    let gable = db.server().arg("--metrics-addr").arg("127.0.0.1:0").arg("--rate-limit-test").arg("3").start().await;
    let metrics = gable.metrics.clone().expect("the metrics listener is announced");
    let (_, key) = db.tenant_and_key("test").await;
    let client = reqwest::Client::new();

    for base in [&gable.live, &gable.sandbox, &metrics] {
        let r = client.get(format!("{base}/healthz")).send().await.unwrap();
        assert_eq!(r.status(), 200, "{base}/healthz");
        let r = client.get(format!("{base}/readyz")).send().await.unwrap();
        assert_eq!(r.status(), 200, "{base}/readyz");
        let ready: Value = r.json().await.unwrap();
        assert_eq!(ready["status"], "ready", "{ready}");
        assert_eq!(ready["checks"]["database"]["ok"], true, "{ready}");
        assert_eq!(ready["checks"]["migrations"]["pending"], 0, "{ready}");
        let loops: Vec<&str> =
            ready["checks"]["workers"]["loops"].as_array().unwrap().iter().map(|l| l["name"].as_str().unwrap()).collect();
        assert!(loops.contains(&"deliveries") && loops.contains(&"reports") && loops.contains(&"scheduler"), "{ready}");
    }
    // Metrics are never on the public listeners.
    for base in [&gable.live, &gable.sandbox] {
        let r = client.get(format!("{base}/metrics")).send().await.unwrap();
        assert_eq!(r.status(), 404, "{base}/metrics must not be served publicly");
    }

    // Traffic: a list, a 404 with the key, an idempotent replay, rate-limit refusals.
    let list = format!("{}/v1/properties", gable.sandbox);
    assert_eq!(client.get(&list).bearer_auth(&key).send().await.unwrap().status(), 200);
    let body =
        serde_json::json!({ "name": "Metered", "kind": "residential", "address": { "line1": "1 Elm", "city": "Austin", "country": "US" } });
    // Three requests fit the burst of 3 per second.
    for _ in 0..2 {
        let r = client.post(&list).bearer_auth(&key).header("Idempotency-Key", "metrics-replay-1").json(&body).send().await.unwrap();
        assert_eq!(r.status(), 201);
    }
    let mut limited = 0;
    for _ in 0..6 {
        if client.get(&list).bearer_auth(&key).send().await.unwrap().status() == 429 {
            limited += 1;
        }
    }
    assert!(limited > 0, "the limit of 3/s refused some of 6 quick requests");

    let text = client.get(format!("{metrics}/metrics")).send().await.unwrap().text().await.unwrap();
    let line = |prefix: &str| text.lines().find(|l| l.starts_with(prefix)).map(str::to_string);
    let requests = r#"gable_http_requests_total{listener="sandbox",method="GET",route="/v1/{resource}",status="200"}"#;
    assert!(line(requests).is_some(), "requests by route template and status:\n{text}");
    assert!(
        text.contains(r#"gable_http_request_duration_seconds_bucket{listener="sandbox",method="GET",route="/v1/{resource}""#),
        "{text}"
    );
    assert!(!text.contains("metrics-replay-1") && !text.contains(&key), "no key or header value in metrics");
    let value = |prefix: &str| line(prefix).and_then(|l| l.rsplit(' ').next().and_then(|v| v.parse::<f64>().ok()));
    assert_eq!(value(r#"gable_rate_limited_total{listener="sandbox"}"#), Some(limited as f64), "{text}");
    assert_eq!(value(r#"gable_idempotent_replays_total{listener="sandbox"}"#), Some(1.0), "{text}");
    assert!(line("gable_db_connections_max").is_some(), "{text}");
    assert!(line(r#"gable_db_connections{state="in_use"}"#).is_some(), "{text}");
    // PostgreSQL's two listeners (key revocations, due deliveries) hold a connection each,
    // shown apart from the work's.
    let listening = if backend == Backend::Postgres { 2.0 } else { 0.0 };
    assert_eq!(value(r#"gable_db_connections{state="listening"}"#), Some(listening), "{text}");
    assert_eq!(value("gable_webhook_backlog"), Some(0.0), "{text}");
    assert_eq!(value("gable_webhook_oldest_due_age_seconds"), Some(0.0), "{text}");
    assert_eq!(value("gable_ready"), Some(1.0), "{text}");
    // Counted by the log, read at the scrape: present, and nothing dropped at this load.
    assert_eq!(value("gable_request_log_dropped_total"), Some(0.0), "{text}");
    assert!(text.contains("# HELP gable_http_requests_total"), "described: {text}");
    gable.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_checks_and_metrics_sqlite() {
    health_and_metrics(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_checks_and_metrics_postgres() {
    health_and_metrics(Backend::Postgres).await;
}
