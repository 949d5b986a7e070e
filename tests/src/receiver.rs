//! A real HTTP receiver for webhook tests: records every request it gets (headers and
//! the raw body bytes) and answers as its path says:
//! `/ok` 200 · `/flaky/N` 500 for the first N requests, then 200 · `/gone` 410 ·
//! `/redirect` 302 to `/ok` · `/slow/MS` 200 after MS milliseconds · `/fail` 500 ·
//! `/echo` 200 with the body it got (as receivers made for debugging do).

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use axum::Router;

/// One request as received.
#[derive(Debug, Clone)]
pub struct Received {
    pub path: String,
    pub headers: HashMap<String, String>,
    pub body: Vec<u8>,
}

impl Received {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(&name.to_ascii_lowercase()).map(String::as_str)
    }
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).expect("a JSON body")
    }
}

#[derive(Clone, Default)]
struct Log {
    received: Arc<Mutex<Vec<Received>>>,
    counts: Arc<Mutex<HashMap<String, usize>>>,
}

pub struct Receiver {
    pub addr: SocketAddr,
    log: Log,
    task: tokio::task::JoinHandle<()>,
}

impl Receiver {
    pub async fn start() -> Receiver {
        let log = Log::default();
        let app = Router::new()
            .route("/ok", post(ok))
            .route("/fail", post(fail))
            .route("/gone", post(gone))
            .route("/redirect", post(redirect))
            .route("/flaky/{n}", post(flaky))
            .route("/slow/{ms}", post(slow))
            .route("/echo", post(echo))
            .with_state(log.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
        let addr = listener.local_addr().expect("receiver address");
        let task = tokio::spawn(async move {
            let _ = axum::serve(listener, app).await;
        });
        Receiver { addr, log, task }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub fn received(&self) -> Vec<Received> {
        self.log.received.lock().unwrap().clone()
    }

    /// Waits until at least `n` requests arrived (or panics after `secs`).
    pub async fn wait_for(&self, n: usize, secs: u64) -> Vec<Received> {
        let deadline = std::time::Instant::now() + Duration::from_secs(secs);
        loop {
            let got = self.received();
            if got.len() >= n {
                return got;
            }
            assert!(std::time::Instant::now() < deadline, "the receiver got {} requests, expected {n}", got.len());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn record(log: &Log, path: String, headers: &HeaderMap, body: Bytes) -> usize {
    let headers = headers.iter().map(|(k, v)| (k.as_str().to_string(), v.to_str().unwrap_or_default().to_string())).collect();
    log.received.lock().unwrap().push(Received { path: path.clone(), headers, body: body.to_vec() });
    let mut counts = log.counts.lock().unwrap();
    let n = counts.entry(path).or_default();
    *n += 1;
    *n
}

async fn ok(State(log): State<Log>, headers: HeaderMap, body: Bytes) -> Response {
    record(&log, "/ok".into(), &headers, body);
    (StatusCode::OK, [("x-receiver", "ok")], "thanks").into_response()
}

async fn fail(State(log): State<Log>, headers: HeaderMap, body: Bytes) -> Response {
    record(&log, "/fail".into(), &headers, body);
    (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response()
}

async fn gone(State(log): State<Log>, headers: HeaderMap, body: Bytes) -> Response {
    record(&log, "/gone".into(), &headers, body);
    (StatusCode::GONE, "gone").into_response()
}

async fn redirect(State(log): State<Log>, headers: HeaderMap, body: Bytes) -> Response {
    record(&log, "/redirect".into(), &headers, body);
    (StatusCode::FOUND, [("location", "/ok")], "").into_response()
}

async fn flaky(State(log): State<Log>, Path(n): Path<usize>, headers: HeaderMap, body: Bytes) -> Response {
    let seen = record(&log, format!("/flaky/{n}"), &headers, body);
    if seen <= n {
        (StatusCode::SERVICE_UNAVAILABLE, "not yet").into_response()
    } else {
        (StatusCode::OK, "finally").into_response()
    }
}

async fn slow(State(log): State<Log>, Path(ms): Path<u64>, headers: HeaderMap, body: Bytes) -> Response {
    record(&log, format!("/slow/{ms}"), &headers, body);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    (StatusCode::OK, "late").into_response()
}

async fn echo(State(log): State<Log>, headers: HeaderMap, body: Bytes) -> Response {
    record(&log, "/echo".into(), &headers, body.clone());
    (StatusCode::OK, [("content-type", "application/json")], body).into_response()
}
