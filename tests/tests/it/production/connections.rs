//! Slow and abusive clients cannot hold the process: each is cut off by a limit while
//! normal requests are answered promptly.

use std::time::{Duration, Instant};

use gable_tests::process::{Database, Server};
use gable_tests::Backend;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

fn addr(base: &str) -> String {
    base.trim_start_matches("http://").to_string()
}

/// Reads until the peer closes (or `within` passes); returns what was read, and whether
/// the connection was closed by the server.
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (String, bool) {
    let mut got = Vec::new();
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0)) | Ok(Err(_)) => return (String::from_utf8_lossy(&got).into_owned(), true),
            Ok(Ok(n)) => got.extend_from_slice(&buf[..n]),
            Err(_) => return (String::from_utf8_lossy(&got).into_owned(), false),
        }
    }
}

/// Reads one answer: its head, and as many body bytes as its `Content-Length` says.
async fn read_answer(stream: &mut TcpStream, within: Duration) -> String {
    let mut got = Vec::new();
    let deadline = Instant::now() + within;
    let mut buf = [0u8; 4096];
    loop {
        let text = String::from_utf8_lossy(&got).into_owned();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap_or(0)))
                .unwrap_or(0);
            if got.len() >= end + 4 + length {
                return text;
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => got.extend_from_slice(&buf[..n]),
            _ => return text,
        }
    }
}

async fn server(db: &Database, extra: &[&str]) -> Server {
    let mut b = db.server().arg("--header-read-timeout-secs").arg("2").arg("--request-timeout-secs").arg("2");
    for a in extra {
        b = b.arg(a);
    }
    b.start().await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_slow_clients_are_cut_off_while_others_are_served() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    // All from one address: no limit per client here (`security::listeners` tests it).
    let gable = server(&db, &["--max-connections-per-client", "0"]).await;
    let target = addr(&gable.sandbox);
    // 300 clients trickle a request head, one byte every half second.
    let head = b"GET /v1/properties HTTP/1.1\r\nHost: gable\r\nAuthorization: Bearer x\r\n\r\n";
    let mut slow = Vec::new();
    for _ in 0..300 {
        let stream = TcpStream::connect(&target).await.expect("connect");
        slow.push(tokio::spawn(async move {
            let mut stream = stream;
            let opened = Instant::now();
            for byte in head {
                if stream.write_all(&[*byte]).await.is_err() {
                    break;
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            }
            let (_, closed) = read_until_closed(&mut stream, Duration::from_secs(10)).await;
            (closed, opened.elapsed())
        }));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // A normal client is answered at once beside them.
    let client = reqwest::Client::new();
    let started = Instant::now();
    let r = client.get(format!("{}/healthz", gable.sandbox)).send().await.expect("healthz");
    assert_eq!(r.status(), 200);
    let r = client.get(format!("{}/v1/properties", gable.sandbox)).send().await.expect("a normal request");
    assert_eq!(r.status(), 401, "answered (no key)");
    assert!(started.elapsed() < Duration::from_secs(1), "normal requests took {:?} beside 300 slow clients", started.elapsed());
    // Every slow client was cut off by the 2 s header-read timeout, long before its head
    // (72 bytes, 36 s) was complete.
    for task in slow {
        let (closed, after) = task.await.expect("slow client");
        assert!(closed, "a slow client's connection was not closed");
        assert!(after < Duration::from_secs(6), "a slow client was closed only after {after:?}");
    }
    gable.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_kept_alive_connection_is_closed_after_the_header_read_timeout() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let gable = server(&db, &[]).await;
    let mut stream = TcpStream::connect(addr(&gable.sandbox)).await.expect("connect");
    stream.write_all(b"GET /healthz HTTP/1.1\r\nHost: gable\r\n\r\n").await.unwrap();
    let started = Instant::now();
    let (answer, closed) = read_until_closed(&mut stream, Duration::from_secs(8)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(closed, "the idle connection was kept open");
    let after = started.elapsed();
    assert!(after >= Duration::from_millis(1500) && after < Duration::from_secs(5), "closed after {after:?}");
    gable.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_declared_oversized_body_is_refused_before_it_is_sent_and_a_huge_head_gets_431() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let gable = server(&db, &["--max-header-bytes", "16384"]).await;
    let (_, key) = db.tenant_and_key("test").await;
    // 2 MiB declared, nothing sent: the answer comes at once.
    let mut stream = TcpStream::connect(addr(&gable.sandbox)).await.expect("connect");
    let head = format!(
        "POST /v1/properties HTTP/1.1\r\nHost: gable\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nIdempotency-Key: big-body-0001\r\nContent-Length: {}\r\n\r\n",
        2 << 20
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let answer = read_answer(&mut stream, Duration::from_secs(3)).await;
    assert!(started.elapsed() < Duration::from_secs(1), "answered after {:?}", started.elapsed());
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    assert!(answer.contains("\"payload_too_large\""), "the documented error body: {answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"), "{answer}");
    // The connection ends once the server stops reading what the client might still send.
    let (_, closed) = read_until_closed(&mut stream, Duration::from_secs(8)).await;
    assert!(closed, "the connection stayed open");
    // Nothing was stored for the key: the same key with a small body is a new request.
    let client = reqwest::Client::new();
    let r = client
        .post(format!("{}/v1/properties", gable.sandbox))
        .bearer_auth(&key)
        .header("Idempotency-Key", "big-body-0001")
        .json(&serde_json::json!({ "name": "Small", "kind": "residential", "address": { "line1": "1 Elm", "city": "Austin", "country": "US" } }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert!(r.headers().get("idempotent-replayed").is_none());

    // A head over the limit: 431, and the server goes on.
    let mut stream = TcpStream::connect(addr(&gable.sandbox)).await.expect("connect");
    let huge = format!("GET /healthz HTTP/1.1\r\nHost: gable\r\nX-Padding: {}\r\n\r\n", "a".repeat(40_000));
    let _ = stream.write_all(huge.as_bytes()).await;
    let (answer, _) = read_until_closed(&mut stream, Duration::from_secs(3)).await;
    assert!(answer.starts_with("HTTP/1.1 431"), "{answer:.80}");
    assert_eq!(client.get(format!("{}/healthz", gable.sandbox)).send().await.unwrap().status(), 200);
    gable.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_request_past_its_time_is_answered_503_in_the_error_body() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let gable = server(&db, &[]).await;
    let (_, key) = db.tenant_and_key("test").await;
    // The head arrives, then the body trickles: the request timeout (2 s) answers.
    let mut stream = TcpStream::connect(addr(&gable.sandbox)).await.expect("connect");
    let body = br#"{"name":"Slowly sent","kind":"residential","address":{"line1":"1 Elm","city":"Austin","country":"US"}}"#;
    let head = format!(
        "POST /v1/properties HTTP/1.1\r\nHost: gable\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nIdempotency-Key: slow-body-0001\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let started = Instant::now();
    let (mut reader, mut writer) = stream.into_split();
    let trickle = tokio::spawn(async move {
        for b in body {
            if writer.write_all(&[*b]).await.is_err() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(300)).await;
        }
    });
    let mut got = vec![0u8; 4096];
    let n = tokio::time::timeout(Duration::from_secs(6), reader.read(&mut got)).await.expect("answered in time").unwrap();
    let answer = String::from_utf8_lossy(&got[..n]).into_owned();
    trickle.abort();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("retry-after: 1"), "{answer}");
    assert!(answer.contains("\"service_unavailable\"") && answer.contains("request_id"), "{answer}");
    let after = started.elapsed();
    assert!(after >= Duration::from_millis(1800) && after < Duration::from_secs(4), "answered after {after:?}");
    // Nothing was written.
    let client = reqwest::Client::new();
    let list: serde_json::Value =
        client.get(format!("{}/v1/properties", gable.sandbox)).bearer_auth(&key).send().await.unwrap().json().await.unwrap();
    assert!(list["data"].as_array().unwrap().iter().all(|p| p["name"] != "Slowly sent"), "{list}");
    gable.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn at_the_connection_cap_the_reserve_answers_health_checks_then_clients_wait() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let gable = server(&db, &["--max-connections", "8", "--max-connections-per-client", "0"]).await;
    let target = addr(&gable.sandbox);
    // Eight idle connections take every regular slot (each is closed by the 2 s header
    // timeout).
    let mut idle = Vec::new();
    for _ in 0..8 {
        idle.push(TcpStream::connect(&target).await.expect("connect"));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The reserve answers the health check, and refuses the rest at once.
    let client = reqwest::Client::new();
    let r = client.get(format!("{}/healthz", gable.sandbox)).timeout(Duration::from_millis(800)).send().await.expect("answered");
    assert_eq!(r.status(), 200);
    let r = client.get(format!("{}/v1/properties", gable.sandbox)).timeout(Duration::from_millis(800)).send().await.expect("answered");
    assert_eq!(r.status(), 503);
    // The reserve's sixteen taken too: a client waits in the kernel's queue.
    for _ in 0..16 {
        idle.push(TcpStream::connect(&target).await.expect("connect"));
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let started = Instant::now();
    let waited = client.get(format!("{}/healthz", gable.sandbox)).timeout(Duration::from_millis(800)).send().await;
    assert!(waited.is_err(), "a client was served while every connection and the reserve were taken");
    // Once the idle ones are cut off, it is served.
    let r = client
        .get(format!("{}/v1/properties", gable.sandbox))
        .timeout(Duration::from_secs(6))
        .send()
        .await
        .expect("served after the cap freed");
    assert_eq!(r.status(), 401, "served by the regular connections again");
    assert!(started.elapsed() >= Duration::from_millis(1000), "served after {:?}", started.elapsed());
    drop(idle);
    gable.kill().await;
}
