//! The write-path benchmark: `C` clients for `S` seconds, each creating a payment and
//! then succeeding it — the action that takes the most work in one transaction (the
//! state change, the `payment.succeeded` event, a journal entry and its ledger lines).
//! Prints `create_rps create_p50 create_p99 succeed_rps succeed_p50 succeed_p99`
//! (latencies in ms) for `bench/writes`.
//!
//!     operations <sandbox base URL> <key> <seconds> <clients>

use std::time::{Duration, Instant};

use serde_json::json;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, base, key, seconds, clients] = &args[..] else {
        eprintln!("usage: operations <base URL> <key> <seconds> <clients>");
        std::process::exit(2);
    };
    let seconds: u64 = seconds.parse().expect("seconds");
    let clients: usize = clients.parse().expect("clients");
    let http = reqwest::Client::new();
    let deadline = Instant::now() + Duration::from_secs(seconds);
    let started = Instant::now();
    let workers: Vec<_> = (0..clients)
        .map(|_| {
            let (http, base, key) = (http.clone(), base.clone(), key.clone());
            tokio::spawn(async move {
                let (mut create, mut succeed) = (vec![], vec![]);
                while Instant::now() < deadline {
                    let t = Instant::now();
                    let r = http
                        .post(format!("{base}/v1/payments"))
                        .bearer_auth(&key)
                        .json(&json!({"amount": "12.50", "currency": "USD", "method": "cash"}))
                        .send()
                        .await
                        .expect("request");
                    assert_eq!(r.status().as_u16(), 201, "create payment");
                    let body: serde_json::Value = r.json().await.expect("json");
                    create.push(t.elapsed().as_secs_f64() * 1000.0);
                    let id = body["data"]["id"].as_str().expect("id").to_string();
                    let t = Instant::now();
                    let r = http.post(format!("{base}/v1/payments/{id}/succeed")).bearer_auth(&key).send().await.expect("request");
                    assert_eq!(r.status().as_u16(), 200, "succeed payment");
                    succeed.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                (create, succeed)
            })
        })
        .collect();
    let (mut create, mut succeed) = (vec![], vec![]);
    for w in workers {
        let (c, s) = w.await.expect("worker");
        create.extend(c);
        succeed.extend(s);
    }
    let elapsed = started.elapsed().as_secs_f64();
    create.sort_by(f64::total_cmp);
    succeed.sort_by(f64::total_cmp);
    println!(
        "{:.0} {:.2} {:.2} {:.0} {:.2} {:.2}",
        create.len() as f64 / elapsed,
        percentile(&create, 0.5),
        percentile(&create, 0.99),
        succeed.len() as f64 / elapsed,
        percentile(&succeed, 0.5),
        percentile(&succeed, 0.99)
    );
}
