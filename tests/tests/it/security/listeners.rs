//! What an unauthenticated client can do to a listener (third review): slow readers,
//! made-up methods in metric labels, unbounded bodies, the public readiness check.
//!
//! These run the real binary on SQLite only: they are about the listener, which is the
//! same whichever database is behind it (the readiness check's text, which differs, is
//! tested with PostgreSQL going down in `production::outage`).

use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};

use gable_tests::process::{Database, Server};
use gable_tests::Backend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};

fn addr(base: &str) -> SocketAddr {
    base.trim_start_matches("http://").parse().expect("a socket address")
}

/// A socket to `to` from the loopback address `from`, with a receive buffer of `rcvbuf`
/// bytes when given.
async fn connect(to: SocketAddr, from: Ipv4Addr, rcvbuf: Option<u32>) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("a socket");
    if let Some(size) = rcvbuf {
        socket.set_recv_buffer_size(size).expect("a small receive buffer");
    }
    socket.bind(SocketAddr::new(IpAddr::V4(from), 0)).expect("bind");
    socket.connect(to).await.expect("connect")
}

/// Reads until the peer closes or `within` passes: what was read, and whether it closed.
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (Vec<u8>, bool) {
    let mut got = Vec::new();
    let deadline = Instant::now() + within;
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (got, true),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (got, false),
        }
    }
}

async fn server(db: &Database, flags: &[&str]) -> Server {
    let mut b = db.server();
    for f in flags {
        b = b.arg(f);
    }
    b.start().await
}

fn client_from(ip: Ipv4Addr) -> reqwest::Client {
    reqwest::Client::builder().local_address(IpAddr::V4(ip)).timeout(Duration::from_secs(3)).build().expect("a client")
}

const HOME: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);
const ELSEWHERE: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

/// Finding 1: six sockets that pipelined twenty `GET /v1/openapi.json` each (746 KB
/// answers) with a 1 KB receive buffer and never read held every connection of a
/// listener with `--max-connections 6`, and `/healthz` went unanswered for 25 s.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_readers_cannot_hold_the_listener_and_health_stays_answerable() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let flags = [
        "--max-connections",
        "6",
        "--header-read-timeout-secs",
        "2",
        "--request-timeout-secs",
        "3",
        "--write-timeout-secs",
        "2",
        "--max-connections-per-client",
        "0",
    ];
    let gable = server(&db, &flags).await;
    let target = addr(&gable.sandbox);
    let pipelined = "GET /v1/openapi.json HTTP/1.1\r\nHost: gable\r\n\r\n".repeat(20);
    let mut readers_that_never_read = Vec::new();
    for _ in 0..6 {
        let mut s = connect(target, ELSEWHERE, Some(1024)).await;
        s.write_all(pipelined.as_bytes()).await.expect("send the requests");
        readers_that_never_read.push(s);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let opened = Instant::now();

    // Every regular connection is taken; the health check is answered from the reserve,
    // and another request is refused at once rather than left waiting.
    let client = client_from(HOME);
    let started = Instant::now();
    let r = client.get(format!("{}/healthz", gable.sandbox)).send().await.expect("the health check is answered");
    assert_eq!(r.status(), 200);
    let r = client.get(format!("{}/v1/properties", gable.sandbox)).send().await.expect("answered");
    assert_eq!(r.status(), 503, "refused while every connection is taken");
    assert_eq!(r.headers().get("retry-after").and_then(|v| v.to_str().ok()), Some("1"));
    let body: serde_json::Value = r.json().await.expect("the error body");
    assert_eq!(body["error"]["code"], "service_unavailable", "{body}");
    assert!(started.elapsed() < Duration::from_secs(1), "answered after {:?}", started.elapsed());

    // The server closed each socket once its answer stopped moving (2 s), long before
    // the twenty answers (15 MB) could have been sent.
    tokio::time::sleep(Duration::from_secs(4)).await;
    for mut s in readers_that_never_read {
        let (got, closed) = read_until_closed(&mut s, Duration::from_secs(3)).await;
        let answers = got.windows(15).filter(|w| w == b"HTTP/1.1 200 OK").count();
        assert!(closed, "a reader that never read was kept {:?}", opened.elapsed());
        assert!(answers < 20, "all twenty answers were sent ({} bytes)", got.len());
    }
    // The connections are free again: a request is served normally.
    let r = client.get(format!("{}/v1/properties", gable.sandbox)).send().await.expect("answered");
    assert_eq!(r.status(), 401, "served (no key)");
    gable.kill().await;
}

/// Finding 1, the per-client limit: one address cannot take every connection of a
/// listener; others are still served, and a trusted proxy (which carries many clients)
/// is not limited.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_client_cannot_take_every_connection() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let flags = ["--max-connections", "8", "--max-connections-per-client", "3", "--header-read-timeout-secs", "3"];
    let gable = server(&db, &flags).await;
    let target = addr(&gable.sandbox);
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(connect(target, HOME, None).await);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // A fourth connection from the same address is answered 503 and closed at once.
    let mut fourth = connect(target, HOME, None).await;
    let _ = fourth.write_all(b"GET /healthz HTTP/1.1\r\nHost: gable\r\n\r\n").await;
    let started = Instant::now();
    let (got, closed) = read_until_closed(&mut fourth, Duration::from_secs(2)).await;
    let answer = String::from_utf8_lossy(&got);
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.contains("\"service_unavailable\"") && answer.contains("too many connections"), "{answer}");
    assert!(closed && started.elapsed() < Duration::from_secs(1), "closed {closed} after {:?}", started.elapsed());
    // Another address is served as usual beside them.
    let r = client_from(ELSEWHERE).get(format!("{}/v1/properties", gable.sandbox)).send().await.expect("answered");
    assert_eq!(r.status(), 401);
    // Once one of the three closes, the address may connect again.
    drop(idle.pop());
    tokio::time::sleep(Duration::from_millis(200)).await;
    let r = client_from(HOME).get(format!("{}/healthz", gable.sandbox)).send().await.expect("answered");
    assert_eq!(r.status(), 200);
    drop(idle);
    gable.kill().await;

    // Behind a trusted proxy every client arrives from the proxy's address: not limited.
    let flags = ["--max-connections-per-client", "3", "--trusted-proxy", "127.0.0.1/32"];
    let gable = server(&db, &flags).await;
    let target = addr(&gable.sandbox);
    let mut open = Vec::new();
    for _ in 0..5 {
        open.push(connect(target, HOME, None).await);
    }
    for s in open.iter_mut() {
        s.write_all(b"GET /healthz HTTP/1.1\r\nHost: gable\r\nConnection: close\r\n\r\n").await.expect("send");
        let (got, _) = read_until_closed(s, Duration::from_secs(2)).await;
        assert!(got.starts_with(b"HTTP/1.1 200"), "{}", String::from_utf8_lossy(&got));
    }
    gable.kill().await;
}

/// Finding 2: the raw method was a metric label, and old label sets were never dropped:
/// 300 requests with made-up 41-letter methods grew `/metrics` from 4 KB to 750 KB, and
/// 20,000-letter methods made one scrape 478 MB.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn made_up_methods_do_not_become_metric_labels() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let gable = server(&db, &["--metrics-addr", "127.0.0.1:0", "--rate-limit-test", "0"]).await;
    let metrics = gable.metrics.clone().expect("the metrics listener");
    let client = reqwest::Client::new();
    let scrape = || async { client.get(format!("{metrics}/metrics")).send().await.expect("scrape").text().await.expect("text") };
    let before = scrape().await.len();
    let mut sent = 0;
    for i in 0..300usize {
        let made_up = format!("M{i:040}");
        let method = reqwest::Method::from_bytes(made_up.as_bytes()).expect("a token");
        client.request(method, format!("{}/v1/properties", gable.sandbox)).send().await.expect("answered");
        sent += 1;
    }
    let long = "X".repeat(20_000);
    for _ in 0..5 {
        let method = reqwest::Method::from_bytes(long.as_bytes()).expect("a token");
        let _ = client.request(method, format!("{}/v1/leases", gable.sandbox)).send().await;
    }
    let text = scrape().await;
    assert!(!text.contains("M0000") && !text.contains("XXXXXXXX"), "a made-up method became a label");
    let others: f64 = text
        .lines()
        .filter(|l| l.starts_with("gable_http_requests_total{") && l.contains(r#"method="OTHER""#))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum();
    assert!(others >= sent as f64, "the made-up methods are counted as OTHER ({others} of {sent}):\n{text}");
    assert!(text.len() < before + 16 * 1024, "the scrape grew from {before} to {} bytes", text.len());
    gable.kill().await;
}

/// Finding 7: a body sent without a declared length (chunked) skipped the 1 MiB check
/// that a declared `Content-Length` meets, on the API and (up to axum's 2 MiB) on the
/// console's server functions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_body_over_the_limit_is_refused_everywhere() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let gable = server(&db, &[]).await;
    let (_, key) = db.tenant_and_key("test").await;
    let client = reqwest::Client::new();
    // 1.5 MiB of valid JSON, streamed: reqwest sends a stream chunked, with no length.
    let chunked = || {
        let padding = "a".repeat(1536 * 1024);
        let json = format!(
            r#"{{"name":"Chunked","kind":"residential","address":{{"line1":"1 Elm","city":"Austin","country":"US"}},"metadata":{{"pad":"{padding}"}}}}"#
        );
        let chunks: Vec<Result<Vec<u8>, std::io::Error>> = json.into_bytes().chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
        reqwest::Body::wrap_stream(futures::stream::iter(chunks))
    };
    let r = client
        .post(format!("{}/v1/properties", gable.sandbox))
        .bearer_auth(&key)
        .header("content-type", "application/json")
        .header("idempotency-key", "chunked-0001")
        .body(chunked())
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), 413);
    let body: serde_json::Value = r.json().await.expect("the error body");
    assert_eq!(body["error"]["code"], "payload_too_large", "{body}");
    let list: serde_json::Value =
        client.get(format!("{}/v1/properties", gable.sandbox)).bearer_auth(&key).send().await.unwrap().json().await.unwrap();
    assert!(list["data"].as_array().unwrap().iter().all(|p| p["name"] != "Chunked"), "nothing was written: {list}");

    // The console's server functions: a sign-in form of 1.5 MiB is refused, not read.
    let r = client
        .post(format!("{}/api/sign_in", gable.live))
        .header("content-type", "application/x-www-form-urlencoded")
        .body({
            let form = format!("email=a%40example.com&password={}", "p".repeat(1536 * 1024));
            let chunks: Vec<Result<Vec<u8>, std::io::Error>> = form.into_bytes().chunks(64 * 1024).map(|c| Ok(c.to_vec())).collect();
            reqwest::Body::wrap_stream(futures::stream::iter(chunks))
        })
        .send()
        .await
        .expect("answered");
    assert_eq!(r.status(), 413, "a 1.5 MiB server-function body");
    let body: serde_json::Value = r.json().await.expect("the error body");
    assert_eq!(body["error"]["code"], "payload_too_large", "{body}");
    gable.kill().await;
}
