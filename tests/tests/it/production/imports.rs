//! An import's commit killed mid-way (SIGKILL, no shutdown) goes on from its last whole
//! batch when the process starts again: every row is written once, none is lost, and the
//! counts add up (docs/imports.md, "Safe to interrupt").

use std::time::{Duration, Instant};

use gable_tests::process::Database;
use gable_tests::Backend;
use serde_json::{json, Value};

/// Units in the file: 40 batches of 500, so that the kill lands between two of them.
const UNITS: usize = 20_000;

async fn import_of(client: &reqwest::Client, base: &str, key: &str, id: &str) -> Value {
    let r = client.get(format!("{base}/v1/imports/{id}")).bearer_auth(key).send().await.expect("read the import");
    assert_eq!(r.status(), 200);
    r.json::<Value>().await.expect("JSON")["data"].clone()
}

async fn a_killed_import_goes_on_from_its_last_batch(backend: Backend) {
    let Some(db) = Database::fresh(backend).await else { return };
    let gable = db.server().arg("--rate-limit-test").arg("0").start().await;
    let (_, key) = db.tenant_and_key("test").await;
    let client = reqwest::Client::new();
    let base = gable.sandbox.clone();
    let property = json!({ "name": "Kill Court", "kind": "residential", "external_id": "P-1",
        "address": { "line1": "1 Kill St", "city": "Leeds", "country": "GB" } });
    let r = client.post(format!("{base}/v1/properties")).bearer_auth(&key).json(&property).send().await.unwrap();
    assert_eq!(r.status(), 201);
    let mut csv = String::from("external_id,property_id.external_id,number,bedrooms\n");
    for i in 0..UNITS {
        csv.push_str(&format!("U-{i},P-1,{i},{}\n", i % 4));
    }
    let up = client
        .post(format!("{base}/v1/imports?collection=units"))
        .bearer_auth(&key)
        .header("Content-Type", "text/csv")
        .body(csv)
        .send()
        .await
        .unwrap();
    assert_eq!(up.status(), 201);
    let import: Value = up.json::<Value>().await.unwrap()["data"].clone();
    assert_eq!((import["total_rows"].as_u64(), import["invalid_rows"].as_u64()), (Some(UNITS as u64), Some(0)));
    let id = import["id"].as_str().unwrap().to_string();
    let r = client.post(format!("{base}/v1/imports/{id}/commit")).bearer_auth(&key).json(&json!({})).send().await.unwrap();
    assert_eq!(r.status(), 200);

    // Killed once some batches are in and before the last.
    let started = Instant::now();
    let at_kill = loop {
        let now = import_of(&client, &base, &key, &id).await;
        let done = now["processed_rows"].as_u64().unwrap_or(0);
        if done > 0 {
            break now;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "the commit did not start: {now}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    };
    gable.kill().await;
    assert_eq!(at_kill["status"], "importing", "killed mid-way (make the file larger if this machine is faster): {at_kill}");
    let seen = at_kill["processed_rows"].as_u64().unwrap();
    assert!(seen < UNITS as u64 && seen % 500 == 0, "whole batches only: {seen}");

    // Started again: it goes on by itself, from `next_line`.
    let again = db.server().arg("--rate-limit-test").arg("0").start().await;
    let base = again.sandbox.clone();
    let resumed = Instant::now();
    let done = loop {
        let now = import_of(&client, &base, &key, &id).await;
        if now["status"] != "importing" {
            break now;
        }
        assert!(resumed.elapsed() < Duration::from_secs(180), "the import did not go on: {now}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    assert_eq!(done["status"], "completed", "{done}");
    let counts = ["created", "updated", "unchanged", "skipped", "processed_rows"].map(|k| done[k].as_u64().unwrap());
    assert_eq!(counts, [UNITS as u64, 0, 0, 0, UNITS as u64], "each row written once: {done}");

    // Every unit once, by its external id.
    let mut numbers = std::collections::BTreeSet::new();
    let mut after: Option<String> = None;
    loop {
        let mut url = format!("{base}/v1/units?limit=100");
        if let Some(c) = &after {
            url.push_str(&format!("&cursor={c}"));
        }
        let page: Value = client.get(url).bearer_auth(&key).send().await.unwrap().json().await.unwrap();
        for u in page["data"].as_array().unwrap() {
            assert!(numbers.insert(u["external_id"].as_str().unwrap().to_string()), "a unit twice: {u}");
        }
        match page["meta"]["next_cursor"].as_str() {
            Some(c) if page["meta"]["has_more"] == true => after = Some(c.to_string()),
            _ => break,
        }
    }
    assert_eq!(numbers.len(), UNITS, "every row is a unit, none lost");
    again.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_import_goes_on_from_its_last_batch_sqlite() {
    a_killed_import_goes_on_from_its_last_batch(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_import_goes_on_from_its_last_batch_postgres() {
    a_killed_import_goes_on_from_its_last_batch(Backend::Postgres).await;
}
