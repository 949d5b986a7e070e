//! The webhook delivery benchmark: a receiver and a load generator in one process, which
//! also starts and stops `gable serve` itself, because the throughput half needs a restart
//! in the middle and both halves need one clock for "sent" and "received".
//!
//! 1. Throughput (outage recovery): serve with `--delivery-concurrency 0`, subscribe
//!    `subs` subscriptions (all `*`) to the receiver, create `events` leads (each writes
//!    one pending attempt per subscription in its own transaction), stop serve, start it
//!    again with delivery on, and time how long the backlog takes to reach the receiver.
//! 2. Latency: on that second serve, with the first subscriptions disabled and one new
//!    one, create leads at `rate`/s for `seconds` s (open loop: a slow answer does not
//!    slow the schedule) and time each from its `201` (the commit is just before it) to
//!    the receipt of its `lead.created` (matched by `data.object.id`).
//!
//! Prints one line for `bench/webhooks`:
//! `create_eps delivered drain_s rate_from_start rate_steady duplicates lat_n lat_lost p50 p90 p99 max`
//! (rates per second, latencies in ms).
//!
//!     deliveries <sandbox base URL> <key> <subs> <events> <rate> <seconds> <log file> <gable ...serve args>

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use serde_json::{json, Value};
use tokio::process::{Child, Command};
use tokio::sync::Notify;

/// Clients creating the throughput backlog at once (as `bench/writes` uses).
const CREATORS: usize = 16;
/// Give up waiting for deliveries after this long without a new one.
const STALL: Duration = Duration::from_secs(30);

struct Receipt {
    at: Instant,
    sub: usize,
    event: String,
    object: Option<String>,
}

#[derive(Default)]
struct Receiver {
    count: AtomicUsize,
    log: Mutex<Vec<Receipt>>,
    arrived: Notify,
}

/// Answers 200 at once; the JSON is parsed here only to match latency samples, which
/// costs microseconds against the milliseconds measured.
async fn hook(State(r): State<Arc<Receiver>>, Path(sub): Path<usize>, headers: HeaderMap, body: Bytes) -> StatusCode {
    let at = Instant::now();
    let event = headers.get("gable-event-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
    let object = serde_json::from_slice::<Value>(&body).ok().and_then(|v| v["data"]["object"]["id"].as_str().map(String::from));
    r.log.lock().unwrap().push(Receipt { at, sub, event, object });
    r.count.fetch_add(1, Ordering::Relaxed);
    r.arrived.notify_waiters();
    StatusCode::OK
}

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

struct Serve {
    cmd: Vec<String>,
    log: PathBuf,
    base: String,
    http: reqwest::Client,
}

impl Serve {
    /// Starts `gable ... serve` with `extra` arguments and waits until it answers.
    async fn start(&self, extra: &[&str]) -> Child {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).expect("log file");
        let mut child = Command::new(&self.cmd[0])
            .args(&self.cmd[1..])
            .args(extra)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(log))
            .kill_on_drop(true)
            .spawn()
            .expect("start gable serve");
        for _ in 0..600 {
            if let Ok(r) = self.http.get(format!("{}/v1/openapi.json", self.base)).send().await {
                if r.status().is_success() {
                    return child;
                }
            }
            if let Ok(Some(status)) = child.try_wait() {
                panic!("gable serve exited ({status}); see {}", self.log.display());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        panic!("gable serve did not answer within 12 s; see {}", self.log.display());
    }

    /// SIGTERM, as an operator stops it, so it shuts down the way it would in production.
    async fn stop(mut child: Child) {
        if let Some(pid) = child.id() {
            let _ = std::process::Command::new("kill").args(["-TERM", &pid.to_string()]).status();
        }
        if tokio::time::timeout(Duration::from_secs(30), child.wait()).await.is_err() {
            let _ = child.kill().await;
        }
    }
}

async fn post(http: &reqwest::Client, url: String, key: &str, body: Value) -> Value {
    let r = http.post(&url).bearer_auth(key).json(&body).send().await.expect("request");
    let status = r.status();
    let text = r.text().await.expect("body");
    assert!(status.is_success(), "POST {url}: {status} {text}");
    serde_json::from_str(&text).expect("json")
}

async fn subscribe(http: &reqwest::Client, base: &str, key: &str, receiver: &str, sub: usize) -> String {
    let body = json!({"url": format!("{receiver}/hook/{sub}"), "events": ["*"], "description": format!("bench {sub}")});
    let v = post(http, format!("{base}/v1/webhooks"), key, body).await;
    v["data"]["id"].as_str().or_else(|| v["id"].as_str()).expect("webhook id").to_string()
}

async fn create_lead(http: &reqwest::Client, base: &str, key: &str, n: usize) -> String {
    let v = post(http, format!("{base}/v1/leads"), key, json!({"name": format!("Bench lead {n}")})).await;
    v["data"]["id"].as_str().or_else(|| v["id"].as_str()).expect("lead id").to_string()
}

/// Waits until `want` deliveries matching `counts` have arrived, or none for `STALL`.
async fn wait_for(r: &Receiver, want: usize, counts: impl Fn(&[Receipt]) -> usize) -> usize {
    let mut last = (0, Instant::now());
    loop {
        let arrived = r.arrived.notified();
        let n = counts(&r.log.lock().unwrap());
        if n >= want {
            return n;
        }
        if n != last.0 {
            last = (n, Instant::now());
        } else if last.1.elapsed() > STALL {
            eprintln!("no delivery for {} s: {n} of {want} arrived", STALL.as_secs());
            return n;
        }
        let _ = tokio::time::timeout(Duration::from_millis(200), arrived).await;
    }
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 10 {
        eprintln!("usage: deliveries <base URL> <key> <subs> <events> <rate> <seconds> <log file> <gable ...serve args>");
        std::process::exit(2);
    }
    let (base, key) = (args[1].clone(), args[2].clone());
    let subs: usize = args[3].parse().expect("subs");
    let events: usize = args[4].parse().expect("events");
    let rate: u64 = args[5].parse().expect("rate");
    let seconds: u64 = args[6].parse().expect("seconds");
    let http = reqwest::Client::builder().pool_max_idle_per_host(256).build().expect("client");
    let serve = Serve { cmd: args[8..].to_vec(), log: PathBuf::from(&args[7]), base: base.clone(), http: http.clone() };

    let receiver = Arc::new(Receiver::default());
    let app = axum::Router::new().route("/hook/{sub}", axum::routing::post(hook)).with_state(receiver.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let receiver_url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(async move { axum::serve(listener, app).await.expect("receiver") });

    // 1. The backlog, written while no process delivers.
    let child = serve.start(&["--delivery-concurrency", "0"]).await;
    let mut hooks = vec![];
    for s in 0..subs {
        hooks.push(subscribe(&http, &base, &key, &receiver_url, s).await);
    }
    let next = Arc::new(AtomicUsize::new(0));
    let t = Instant::now();
    let creators: Vec<_> = (0..CREATORS)
        .map(|_| {
            let (http, base, key, next) = (http.clone(), base.clone(), key.clone(), next.clone());
            tokio::spawn(async move {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= events {
                        break;
                    }
                    create_lead(&http, &base, &key, n).await;
                }
            })
        })
        .collect();
    for c in creators {
        c.await.expect("creator");
    }
    let create_eps = events as f64 / t.elapsed().as_secs_f64();
    assert_eq!(receiver.count.load(Ordering::Relaxed), 0, "nothing may be delivered with --delivery-concurrency 0");
    Serve::stop(child).await;

    // 2. A cold start with the backlog waiting: the clock starts before the process does.
    let want = subs * events;
    let t0 = Instant::now();
    let child = serve.start(&[]).await;
    let got = wait_for(&receiver, want, |log| log.len()).await;
    let (first, last, distinct) = {
        let log = receiver.log.lock().unwrap();
        let distinct: HashSet<(usize, &str)> = log.iter().map(|r| (r.sub, r.event.as_str())).collect();
        (log.first().map(|r| r.at), log.last().map(|r| r.at), distinct.len())
    };
    let (drain, steady) = match (first, last) {
        (Some(f), Some(l)) => ((l - t0).as_secs_f64(), (l - f).as_secs_f64()),
        _ => (f64::NAN, f64::NAN),
    };
    eprintln!(
        "throughput: {got} of {want} deliveries ({distinct} distinct) in {drain:.2} s from start; first after {:.3} s",
        first.map(|f| (f - t0).as_secs_f64()).unwrap_or(f64::NAN)
    );

    // 3. Latency at a steady rate, to one new subscription.
    for id in &hooks {
        let r = http
            .patch(format!("{base}/v1/webhooks/{id}"))
            .bearer_auth(&key)
            .json(&json!({"status": "disabled"}))
            .send()
            .await
            .expect("disable");
        assert!(r.status().is_success(), "disable webhook: {}", r.status());
    }
    subscribe(&http, &base, &key, &receiver_url, subs).await;
    let sent: Arc<Mutex<HashMap<String, Instant>>> = Arc::default();
    let mut tick = tokio::time::interval(Duration::from_micros(1_000_000 / rate.max(1)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Burst);
    let total = (rate * seconds) as usize;
    let mut tasks = Vec::with_capacity(total);
    for n in 0..total {
        tick.tick().await;
        let (http, base, key, sent) = (http.clone(), base.clone(), key.clone(), sent.clone());
        tasks.push(tokio::spawn(async move {
            let id = create_lead(&http, &base, &key, events + n).await;
            sent.lock().unwrap().insert(id, Instant::now());
        }));
    }
    for t in tasks {
        t.await.expect("create");
    }
    wait_for(&receiver, total, |log| log.iter().filter(|r| r.sub == subs).count()).await;
    Serve::stop(child).await;
    let mut lat: Vec<f64> = {
        let sent = sent.lock().unwrap();
        let log = receiver.log.lock().unwrap();
        let mut seen = HashSet::new();
        log.iter()
            .filter(|r| r.sub == subs)
            .filter_map(|r| {
                let o = r.object.as_deref()?;
                // Commit is before the 201, so a receipt may beat the client to it: negative.
                let s = sent.get(o)?;
                seen.insert(o).then(|| if r.at >= *s { (r.at - *s).as_secs_f64() * 1e3 } else { -((*s - r.at).as_secs_f64() * 1e3) })
            })
            .collect()
    };
    lat.sort_by(f64::total_cmp);
    println!(
        "{:.0} {} {:.2} {:.0} {:.0} {} {} {} {:.2} {:.2} {:.2} {:.2}",
        create_eps,
        got,
        drain,
        got as f64 / drain,
        got.saturating_sub(1) as f64 / steady,
        got - distinct,
        lat.len(),
        total - lat.len(),
        percentile(&lat, 0.5),
        percentile(&lat, 0.9),
        percentile(&lat, 0.99),
        lat.last().copied().unwrap_or(f64::NAN),
    );
}
