//! The soak benchmark's load: a mix of what integrators do, first flat out to measure the
//! capacity, then for a long while at a share of it, reporting each minute.
//!
//! The mix, per 20 requests: 12 filtered list pages, 2 single-record reads, 3 leads
//! created (each a `lead.created` event delivered to this program's receiver) and 3
//! idempotent test payments (each a payment, `payment.succeeded`, a journal entry and a
//! delivered event). Every answer must be 2xx; anything else, or no answer, is an error.
//! Prints a line a minute (requests/s, errors, p50/p99, the server's resident memory)
//! and a summary: capacity, the soak's rate, errors, p99 and memory at start and end,
//! and whether every event was delivered.
//!
//!     soak <sandbox base URL> <key> <gable pid> <capacity seconds> <soak seconds> <share>

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use uuid::Uuid;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// The server's resident memory in MiB (`VmRSS` of /proc/<pid>/status).
fn rss_mib(pid: u32) -> f64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find(|l| l.starts_with("VmRSS:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map_or(0.0, |kb| kb / 1024.0)
}

#[derive(Default)]
struct Tally {
    /// This minute's latencies; `all` gets them when the minute is reported.
    latencies_ms: Mutex<Vec<f64>>,
    all: Mutex<Vec<f64>>,
    requests: AtomicU64,
    errors: AtomicU64,
    /// Creates answered 201 whose event the receiver must get.
    events: AtomicU64,
}

struct Load {
    http: reqwest::Client,
    base: String,
    key: String,
    lease: String,
}

impl Load {
    /// One request of the mix (by `n`); `Ok(true)` when it made an event.
    async fn one(&self, n: u64) -> Result<bool, String> {
        let r = match n % 20 {
            0..=11 => self
                .http
                .get(format!("{}/v1/leases?filter[status]=active&sort=-start_date&limit=25", self.base))
                .bearer_auth(&self.key)
                .send(),
            12 | 13 => self.http.get(format!("{}/v1/leases/{}", self.base, self.lease)).bearer_auth(&self.key).send(),
            14..=16 => self
                .http
                .post(format!("{}/v1/leads", self.base))
                .bearer_auth(&self.key)
                .header("Idempotency-Key", Uuid::new_v4().to_string())
                .json(&json!({ "name": "Soak lead", "email": "soak@example.com" }))
                .send(),
            _ => self
                .http
                .post(format!("{}/v1/payments", self.base))
                .bearer_auth(&self.key)
                .header("Idempotency-Key", Uuid::new_v4().to_string())
                .json(&json!({ "amount": "12.50", "currency": "USD", "method": "cash", "scenario": "succeeded" }))
                .send(),
        };
        let r = r.await.map_err(|e| format!("no answer: {e}"))?;
        let status = r.status();
        let _ = r.bytes().await;
        if !status.is_success() {
            return Err(format!("{status} on request kind {}", n % 20));
        }
        Ok(n % 20 >= 14)
    }
}

/// Runs the mix with `clients` workers for `secs`; at most `rate` requests a second when
/// given. Reports each minute when `report` is set. Returns the requests made.
async fn run(load: Arc<Load>, tally: Arc<Tally>, clients: usize, secs: u64, rate: Option<f64>, pid: u32, report: bool) -> u64 {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(secs);
    let next = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (load, tally, next) = (load.clone(), tally.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if let Some(rate) = rate {
                        // The n-th request starts no earlier than n / rate seconds in.
                        let at = started + Duration::from_secs_f64(n as f64 / rate);
                        tokio::time::sleep_until(at.into()).await;
                    }
                    if Instant::now() >= deadline {
                        return;
                    }
                    let t = Instant::now();
                    match load.one(n).await {
                        Ok(made_event) => {
                            if made_event {
                                tally.events.fetch_add(1, Ordering::Relaxed);
                            }
                        }
                        Err(e) => {
                            if tally.errors.fetch_add(1, Ordering::Relaxed) < 5 {
                                eprintln!("error: {e}");
                            }
                        }
                    }
                    tally.requests.fetch_add(1, Ordering::Relaxed);
                    tally.latencies_ms.lock().unwrap().push(t.elapsed().as_secs_f64() * 1000.0);
                }
            })
        })
        .collect();
    if report {
        let tally = tally.clone();
        tokio::spawn(async move {
            let mut last = (0u64, 0u64);
            let mut minute = 0;
            loop {
                tokio::time::sleep(Duration::from_secs(60)).await;
                if Instant::now() >= deadline {
                    return;
                }
                minute += 1;
                let mut lat = std::mem::take(&mut *tally.latencies_ms.lock().unwrap());
                lat.sort_by(f64::total_cmp);
                tally.all.lock().unwrap().extend_from_slice(&lat);
                let (req, err) = (tally.requests.load(Ordering::Relaxed), tally.errors.load(Ordering::Relaxed));
                println!(
                    "minute {minute:>2}: {:>6.0} req/s, {} errors, p50 {:.1} ms, p99 {:.1} ms, server RSS {:.1} MiB",
                    (req - last.0) as f64 / 60.0,
                    err - last.1,
                    percentile(&lat, 0.5),
                    percentile(&lat, 0.99),
                    rss_mib(pid)
                );
                last = (req, err);
            }
        });
    }
    for w in workers {
        let _ = w.await;
    }
    tally.requests.load(Ordering::Relaxed)
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, base, key, pid, capacity_secs, soak_secs, share] = &args[..] else {
        eprintln!("usage: soak <base URL> <key> <gable pid> <capacity seconds> <soak seconds> <share>");
        std::process::exit(2);
    };
    let pid: u32 = pid.parse().expect("pid");
    let (capacity_secs, soak_secs): (u64, u64) = (capacity_secs.parse().expect("seconds"), soak_secs.parse().expect("seconds"));
    let share: f64 = share.parse().expect("share");
    let http = reqwest::Client::new();

    // The receiver: counts deliveries by event id.
    let received = Arc::new(Mutex::new(std::collections::HashSet::<String>::new()));
    let app = {
        let received = received.clone();
        axum::Router::new().route(
            "/hook",
            axum::routing::post(move |headers: axum::http::HeaderMap| {
                let received = received.clone();
                async move {
                    if let Some(id) = headers.get("gable-event-id").and_then(|v| v.to_str().ok()) {
                        received.lock().unwrap().insert(id.to_string());
                    }
                    "ok"
                }
            }),
        )
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind receiver");
    let hook = format!("http://{}/hook", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("receiver") });
    let r = http
        .post(format!("{base}/v1/webhooks"))
        .bearer_auth(key)
        .json(&json!({ "url": hook, "events": ["lead.created", "payment.succeeded"] }))
        .send()
        .await
        .expect("subscribe");
    assert!(r.status().is_success(), "subscribe: {}", r.status());
    let leases: Value =
        http.get(format!("{base}/v1/leases?limit=1")).bearer_auth(key).send().await.expect("a lease").json().await.expect("json");
    let lease = leases["data"][0]["id"].as_str().expect("the store is seeded with leases").to_string();
    let load = Arc::new(Load { http, base: base.clone(), key: key.clone(), lease });

    // Capacity: flat out with 64 clients.
    let tally = Arc::new(Tally::default());
    let made = run(load.clone(), tally.clone(), 64, capacity_secs, None, pid, false).await;
    let capacity = made as f64 / capacity_secs as f64;
    let capacity_events = tally.events.load(Ordering::Relaxed);
    let rate = capacity * share;
    println!(
        "capacity: {capacity:.0} req/s (64 clients, {capacity_secs} s, {} errors); soaking at {rate:.0} req/s for {soak_secs} s",
        tally.errors.load(Ordering::Relaxed)
    );

    // The soak.
    let tally = Arc::new(Tally::default());
    let rss_start = rss_mib(pid);
    let made = run(load.clone(), tally.clone(), 64, soak_secs, Some(rate), pid, true).await;
    let rss_end = rss_mib(pid);
    // Every event of both phases must arrive; those still on their way get a minute.
    let expected = capacity_events + tally.events.load(Ordering::Relaxed);
    let waited = Instant::now();
    let delivered = loop {
        let n = received.lock().unwrap().len() as u64;
        if n >= expected || waited.elapsed() > Duration::from_secs(60) {
            break n;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let mut lat = std::mem::take(&mut *tally.all.lock().unwrap());
    lat.extend(std::mem::take(&mut *tally.latencies_ms.lock().unwrap()));
    lat.sort_by(f64::total_cmp);
    let errors = tally.errors.load(Ordering::Relaxed);
    println!(
        "soak: {made} requests in {soak_secs} s ({:.0} req/s), {errors} errors, p50 {:.1} ms p99 {:.1} ms; \
         server RSS {rss_start:.1} MiB at start, {rss_end:.1} MiB at end ({:+.1} %); events {delivered}/{expected} delivered",
        made as f64 / soak_secs as f64,
        percentile(&lat, 0.5),
        percentile(&lat, 0.99),
        (rss_end - rss_start) / rss_start * 100.0,
    );
    if errors > 0 || delivered < expected {
        std::process::exit(1);
    }
}
