//! The SSRF-safe outbound client against a real local receiver: refused
//! with the allow-list empty, delivered with 127.0.0.0/8 allowed, redirects not followed,
//! a total timeout, and only an excerpt of a huge body read. No database is involved.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::{Request, State};
use axum::http::{HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use gable::outbound::{Client, Guard, SendError, EXCERPT_LIMIT, USER_AGENT};
use url::Url;

/// What the receiver was sent: path, headers, body.
type Seen = Arc<Mutex<Vec<(String, HeaderMap, Bytes)>>>;

struct Receiver {
    port: u16,
    seen: Seen,
}

impl Receiver {
    /// A receiver on 127.0.0.1 with a free port: `/` acknowledges, `/redirect` answers 302
    /// to `/target`, `/slow` answers after 3 s, `/huge` streams 64 MiB.
    async fn start() -> Receiver {
        let seen: Seen = Arc::default();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let router = Router::new()
            .route("/", post(|| async { (StatusCode::OK, [("x-receiver", "got it")], "thanks") }))
            .route(
                "/redirect",
                post(move || async move { (StatusCode::FOUND, [("location", format!("http://127.0.0.1:{port}/target"))], "") }),
            )
            .route("/target", post(|| async { StatusCode::OK }))
            .route(
                "/slow",
                post(|| async {
                    tokio::time::sleep(Duration::from_secs(3)).await;
                    StatusCode::OK
                }),
            )
            // What the routes above were sent is recorded; `/huge` only answers.
            .route_layer(middleware::from_fn_with_state(seen.clone(), record))
            .route(
                "/huge",
                post(|| async {
                    let chunk = Bytes::from(vec![b'x'; 64 * 1024]);
                    let chunks = futures::stream::iter((0..1024).map(move |_| Ok::<_, std::io::Error>(chunk.clone())));
                    (StatusCode::OK, Body::from_stream(chunks))
                }),
            );
        tokio::spawn(async move { axum::serve(listener, router).await.expect("receiver") });
        Receiver { port, seen }
    }

    fn url(&self, host: &str, path: &str) -> Url {
        Url::parse(&format!("http://{host}:{}{path}", self.port)).expect("url")
    }

    fn paths(&self) -> Vec<String> {
        self.seen.lock().expect("lock").iter().map(|(p, _, _)| p.clone()).collect()
    }
}

/// Records a request's path, headers and body before its route answers it.
async fn record(State(seen): State<Seen>, request: Request, next: Next) -> Response {
    let (parts, body) = request.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.expect("body");
    seen.lock().expect("lock").push((parts.uri.path().to_owned(), parts.headers.clone(), body.clone()));
    next.run(Request::from_parts(parts, Body::from(body))).await
}

fn loopback_allowed() -> Guard {
    Guard::new(vec!["127.0.0.0/8".parse().expect("cidr")])
}

const HEADERS: [(&str, &str); 2] = [("Gable-Event-Id", "evt_123"), ("Gable-Signature", "v1=abc")];

#[tokio::test]
async fn with_the_allow_list_empty_local_receivers_are_refused_and_see_nothing() {
    let receiver = Receiver::start().await;
    let client = Client::new(Guard::default()).expect("client");
    for (host, reason) in [
        ("127.0.0.1", "127.0.0.1 is a loopback address".to_owned()),
        ("localhost", "localhost is this machine (a loopback address)".to_owned()),
        ("2130706433", "127.0.0.1 is a loopback address".to_owned()),
        ("127.1", "127.0.0.1 is a loopback address".to_owned()),
        ("[::ffff:127.0.0.1]", "the IPv4-mapped form of 127.0.0.1, a loopback address".to_owned()),
        ("[::1]", "::1 is a loopback address".to_owned()),
    ] {
        let url = receiver.url(host, "/");
        let refusal = client.guard().check_url(&url).await.expect_err("refused at subscription time");
        assert!(refusal.reason().contains(&reason), "{url}: {refusal}");
        match client.post_json(&url, &HEADERS, b"{}".to_vec()).await {
            Err(SendError::Refused(r)) => assert!(r.contains(&reason), "{url}: {r}"),
            other => panic!("{url}: expected a refusal, got {other:?}"),
        }
    }
    assert_eq!(receiver.paths(), Vec::<String>::new(), "the receiver saw nothing");
}

#[tokio::test]
async fn with_loopback_allowed_the_request_is_delivered() {
    let receiver = Receiver::start().await;
    let client = Client::new(loopback_allowed()).expect("client");
    let body = br#"{"id":"evt_123","type":"lease.created"}"#.to_vec();
    for host in ["127.0.0.1", "localhost"] {
        let url = receiver.url(host, "/");
        assert_eq!(client.guard().check_url(&url).await, Ok(()), "{url}");
        let response = client.post_json(&url, &HEADERS, body.clone()).await.expect("delivered");
        assert_eq!(response.status, 200);
        assert!(response.is_success());
        assert_eq!(response.header("X-Receiver"), Some("got it"));
        assert!(response.headers.iter().any(|(n, v)| n == "content-length" && v == "6"), "{:?}", response.headers);
        assert_eq!(response.body_excerpt, "thanks");
        assert!(!response.truncated);
        assert!(response.latency_ms < 5_000, "{}", response.latency_ms);
    }
    let seen = receiver.seen.lock().expect("lock").clone();
    assert_eq!(seen.len(), 2);
    for (path, headers, got) in seen {
        assert_eq!(path, "/");
        assert_eq!(got.as_ref(), body.as_slice(), "the body exactly as sent");
        assert_eq!(headers["content-type"], "application/json");
        assert_eq!(headers["user-agent"], USER_AGENT);
        assert_eq!(headers["gable-event-id"], "evt_123");
        assert_eq!(headers["gable-signature"], "v1=abc");
    }
}

#[tokio::test]
async fn redirects_are_answers_not_followed() {
    let receiver = Receiver::start().await;
    let client = Client::new(loopback_allowed()).expect("client");
    let response = client.post_json(&receiver.url("127.0.0.1", "/redirect"), &HEADERS, b"{}".to_vec()).await.expect("answered");
    assert_eq!(response.status, 302);
    assert!(!response.is_success());
    assert_eq!(response.header("location"), Some(format!("http://127.0.0.1:{}/target", receiver.port).as_str()));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(receiver.paths(), ["/redirect"], "the redirect target was never requested");
}

#[tokio::test]
async fn a_receiver_slower_than_the_timeout_is_a_timeout() {
    let receiver = Receiver::start().await;
    let client = Client::with_timeout(loopback_allowed(), Duration::from_secs(1)).expect("client");
    let started = Instant::now();
    let err = client.post_json(&receiver.url("127.0.0.1", "/slow"), &HEADERS, b"{}".to_vec()).await.expect_err("timed out");
    assert_eq!(err, SendError::Timeout);
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(900) && took < Duration::from_millis(2500), "{took:?}");
    assert_eq!(receiver.paths(), ["/slow"], "the request was sent; the answer was too late");
}

#[tokio::test]
async fn a_huge_body_is_read_only_as_far_as_the_excerpt() {
    let receiver = Receiver::start().await;
    let client = Client::with_timeout(loopback_allowed(), Duration::from_secs(5)).expect("client");
    let response = client.post_json(&receiver.url("127.0.0.1", "/huge"), &HEADERS, b"{}".to_vec()).await.expect("answered");
    assert_eq!(response.status, 200);
    assert_eq!(response.body_excerpt.len(), EXCERPT_LIMIT);
    assert!(response.body_excerpt.bytes().all(|b| b == b'x'));
    assert!(response.truncated, "the body went on past the excerpt");
    // 64 MiB were offered; reading them all would take far longer than the excerpt did.
    assert!(response.latency_ms < 2_000, "{}", response.latency_ms);
}

#[tokio::test]
async fn nothing_listening_is_a_connection_failure() {
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        listener.local_addr().expect("addr").port()
    };
    let client = Client::new(loopback_allowed()).expect("client");
    let url = Url::parse(&format!("http://127.0.0.1:{port}/")).expect("url");
    let err = client.post_json(&url, &HEADERS, b"{}".to_vec()).await.expect_err("nothing listens");
    assert_eq!(err, SendError::Connect("connection refused".into()));
    assert_eq!(err.to_string(), "connection failed: connection refused");
}
