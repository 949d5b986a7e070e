//! No event is lost to a crash: the real `gable serve` is killed with SIGKILL
//! in the middle of a burst of 1,000 events, restarted on the same database, and every
//! event that exists reaches the receiver (at least once), on SQLite and PostgreSQL.

use std::collections::HashSet;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::HeaderMap;
use axum::routing::post;
use serde_json::{json, Value};

use crate::common::{stores, BIN, MASTER_KEY};

/// A free local port (bound, then released for the server to take).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Starts `gable serve` on the given ports; the receiver's network is allowed.
fn start(store: &[String], live: u16, sandbox: u16, with_key: bool) -> Child {
    let mut cmd = Command::new(BIN);
    cmd.args(store).args([
        "serve",
        "--addr",
        &format!("127.0.0.1:{live}"),
        "--sandbox-addr",
        &format!("127.0.0.1:{sandbox}"),
        "--webhook-allow-cidrs",
        "127.0.0.0/8",
        // A burst of 1,000 creates with one test key: not a test of its rate limit.
        "--rate-limit-test",
        "0",
    ]);
    for var in ["DATABASE_URL", "GABLE_CONFIG", "GABLE_ADDR", "GABLE_SANDBOX_ADDR", "GABLE_MASTER_KEY"] {
        cmd.env_remove(var);
    }
    if with_key {
        cmd.env("GABLE_MASTER_KEY", MASTER_KEY);
    }
    cmd.env("GABLE_LOG", "warn").stdout(Stdio::null()).stderr(Stdio::null()).spawn().unwrap()
}

async fn wait_until_up(client: &reqwest::Client, base: &str) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while client.get(format!("{base}/v1/openapi.json")).send().await.is_err() {
        assert!(Instant::now() < deadline, "the server did not come up");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

type Seen = Arc<Mutex<Vec<String>>>;

async fn receive(State(seen): State<Seen>, headers: HeaderMap, _body: Bytes) -> &'static str {
    let id = headers.get("gable-event-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    seen.lock().unwrap().push(id);
    "ok"
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_killed_server_loses_no_event() {
    let seen: Seen = Arc::default();
    let app = axum::Router::new().route("/hook", post(receive)).with_state(seen.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let receiver: SocketAddr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await });
    let client = reqwest::Client::new();

    for (name, store, dir) in stores() {
        seen.lock().unwrap().clear();
        let tenant: Value =
            serde_json::from_slice(&Command::new(BIN).args(&store).args(["tenant", "create", "--name", "Crash"]).output().unwrap().stdout)
                .unwrap();
        let tid = tenant["id"].as_str().unwrap().to_string();
        let key_out =
            Command::new(BIN).args(&store).args(["key", "create", "--tenant", &tid, "--env", "test", "--scopes", "*"]).output().unwrap();
        let key: Value = serde_json::from_slice(&key_out.stdout).unwrap();
        let key = key["secret"].as_str().unwrap().to_string();
        // SQLite generates its master key into the data directory; PostgreSQL needs one.
        let postgres = name == "postgres";
        let (live, sandbox) = (free_port(), free_port());
        let mut server = start(&store, live, sandbox, postgres);
        let base = format!("http://127.0.0.1:{sandbox}");
        wait_until_up(&client, &base).await;
        if let Some(dir) = &dir {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(dir.path().join("master.key")).expect("a generated master key").permissions().mode();
            assert_eq!(mode & 0o777, 0o600, "{name}: the master key file is private");
        }
        let hook = client
            .post(format!("{base}/v1/webhooks"))
            .bearer_auth(&key)
            .json(&json!({ "url": format!("http://{receiver}/hook"), "events": ["lead.created"] }))
            .send()
            .await
            .unwrap();
        assert_eq!(hook.status(), 201, "{name}: {}", hook.text().await.unwrap());

        // The burst: 1,000 creates, 16 at a time; the server is killed half-way.
        let created = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let mut burst = Vec::new();
        for worker in 0..16 {
            let (client, base, key, created) = (client.clone(), base.clone(), key.clone(), created.clone());
            burst.push(tokio::spawn(async move {
                for i in 0..1000 / 16 + 1 {
                    let body = json!({ "name": format!("Lead {worker}-{i}") });
                    match client.post(format!("{base}/v1/leads")).bearer_auth(&key).json(&body).send().await {
                        Ok(r) if r.status() == 201 => {
                            created.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        }
                        _ => return,
                    }
                }
            }));
        }
        while created.load(std::sync::atomic::Ordering::SeqCst) < 400 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        server.kill().unwrap(); // SIGKILL: no shutdown, attempts cut off mid-flight
        server.wait().unwrap();
        for b in burst {
            let _ = b.await;
        }
        let before_restart = seen.lock().unwrap().len();

        let mut server = start(&store, live, sandbox, postgres);
        wait_until_up(&client, &base).await;
        // Every event that exists (its transaction committed) reaches the receiver.
        let mut events = HashSet::new();
        let mut cursor: Option<String> = None;
        loop {
            let mut url = format!("{base}/v1/events?limit=100&filter[type]=lead.created");
            if let Some(c) = &cursor {
                url.push_str(&format!("&cursor={c}"));
            }
            let page: Value = client.get(&url).bearer_auth(&key).send().await.unwrap().json().await.unwrap();
            events.extend(page["data"].as_array().unwrap().iter().map(|e| e["id"].as_str().unwrap().to_string()));
            match page["meta"]["next_cursor"].as_str() {
                Some(c) => cursor = Some(c.to_string()),
                None => break,
            }
        }
        assert!(events.len() >= 400, "{name}: {} events", events.len());
        let deadline = Instant::now() + Duration::from_secs(120);
        loop {
            let got: HashSet<String> = seen.lock().unwrap().iter().cloned().collect();
            let missing = events.difference(&got).count();
            if missing == 0 {
                break;
            }
            assert!(Instant::now() < deadline, "{name}: {missing} of {} events never arrived", events.len());
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        eprintln!(
            "{name}: {} events, {} received before the kill, {} deliveries in all",
            events.len(),
            before_restart,
            seen.lock().unwrap().len()
        );
        server.kill().unwrap();
        server.wait().unwrap();
    }
}
