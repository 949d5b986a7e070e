//! The write-path benchmark: `C` clients for `S` seconds, each creating a test payment
//! and then reversing it. The create names the scenario `succeeded` (required in the
//! sandbox) and carries a fresh `Idempotency-Key` (required on `POST /v1/payments`): in
//! one transaction it stores the payment and succeeds it (the state change, the
//! `payment.succeeded` event, a journal entry and its ledger lines), so no separate
//! `succeed` is sent, nor could be (a test payment is never pending). `reverse` is then the
//! heaviest action the sandbox has left, the same work as `succeed` was: the state change,
//! the `payment.reversed` event and the reversing entry with its lines.
//! Prints `create_rps create_p50 create_p99 reverse_rps reverse_p50 reverse_p99`
//! (latencies in ms) for `bench/writes`. With `payments` as a fifth argument the clients
//! only create test payments (the test-payment benchmark of `docs/benchmarks.md`: idempotent `POST /payments`, a fresh
//! key each) and it prints `rps p50 p99`.
//!
//!     operations <sandbox base URL> <key> <seconds> <clients> [payments]

use std::time::{Duration, Instant};

use serde_json::json;
use uuid::Uuid;

fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let (base, key, seconds, clients, creates_only) = match &args[..] {
        [_, base, key, seconds, clients] => (base, key, seconds, clients, false),
        [_, base, key, seconds, clients, mode] if mode == "payments" => (base, key, seconds, clients, true),
        _ => {
            eprintln!("usage: operations <base URL> <key> <seconds> <clients> [payments]");
            std::process::exit(2);
        }
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
                let (mut create, mut reverse) = (vec![], vec![]);
                while Instant::now() < deadline {
                    let t = Instant::now();
                    let r = http
                        .post(format!("{base}/v1/payments"))
                        .bearer_auth(&key)
                        .header("Idempotency-Key", Uuid::new_v4().to_string())
                        .json(&json!({"amount": "12.50", "currency": "USD", "method": "cash", "scenario": "succeeded"}))
                        .send()
                        .await
                        .expect("request");
                    assert_eq!(r.status().as_u16(), 201, "create payment");
                    let body: serde_json::Value = r.json().await.expect("json");
                    create.push(t.elapsed().as_secs_f64() * 1000.0);
                    assert_eq!(body["data"]["status"], "succeeded", "the scenario settled the payment");
                    if creates_only {
                        continue;
                    }
                    let id = body["data"]["id"].as_str().expect("id").to_string();
                    let t = Instant::now();
                    let r = http.post(format!("{base}/v1/payments/{id}/reverse")).bearer_auth(&key).send().await.expect("request");
                    assert_eq!(r.status().as_u16(), 200, "reverse payment");
                    reverse.push(t.elapsed().as_secs_f64() * 1000.0);
                }
                (create, reverse)
            })
        })
        .collect();
    let (mut create, mut reverse) = (vec![], vec![]);
    for w in workers {
        let (c, r) = w.await.expect("worker");
        create.extend(c);
        reverse.extend(r);
    }
    let elapsed = started.elapsed().as_secs_f64();
    create.sort_by(f64::total_cmp);
    reverse.sort_by(f64::total_cmp);
    if creates_only {
        println!("{:.0} {:.2} {:.2}", create.len() as f64 / elapsed, percentile(&create, 0.5), percentile(&create, 0.99));
        return;
    }
    println!(
        "{:.0} {:.2} {:.2} {:.0} {:.2} {:.2}",
        create.len() as f64 / elapsed,
        percentile(&create, 0.5),
        percentile(&create, 0.99),
        reverse.len() as f64 / elapsed,
        percentile(&reverse, 0.5),
        percentile(&reverse, 0.99)
    );
}
