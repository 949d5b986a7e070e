//! `gable backup` while Gable serves and writes, and `gable restore` into a new data
//! directory: every record answered before the backup began is there, and the sealed
//! secrets (a webhook's signing secret, stored idempotent answers) still open.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use gable_tests::process::Database;
use gable_tests::receiver::Receiver;
use gable_tests::Backend;
use serde_json::{json, Value};

/// Creates a lead with an idempotency key (its answer is stored sealed): the status and answer.
pub(crate) async fn lead(client: &reqwest::Client, base: &str, secret: &str, key: &str) -> (u16, Value) {
    let r = client
        .post(format!("{base}/v1/leads"))
        .bearer_auth(secret)
        .header("Idempotency-Key", key)
        .json(&json!({ "name": format!("Lead {key}"), "email": "lead@example.com" }))
        .send()
        .await
        .unwrap();
    (r.status().as_u16(), r.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_backup_taken_during_writes_restores_with_every_record_and_secret() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let receiver = Receiver::start().await;
    let gable = db.server().arg("--webhook-allow-cidrs").arg("127.0.0.0/8").arg("--rate-limit-test").arg("0").start().await;
    let (_, secret) = db.tenant_and_key("test").await;
    let client = reqwest::Client::new();
    let base = gable.sandbox.clone();
    let hook: Value = client
        .post(format!("{base}/v1/webhooks"))
        .bearer_auth(&secret)
        .json(&json!({ "url": receiver.url("/ok"), "events": ["lead.created"] }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let signing = hook["data"]["secret"].as_str().expect("the signing secret, shown once").to_string();

    // Writes run before, during and after the backup.
    let answered = Arc::new(Mutex::new(Vec::<String>::new()));
    let stop = Arc::new(AtomicBool::new(false));
    let writer = {
        let (client, base, secret, answered, stop) = (client.clone(), base.clone(), secret.clone(), answered.clone(), stop.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                let (status, body) = lead(&client, &base, &secret, &format!("backup-{n:05}")).await;
                assert_eq!(status, 201, "{body}");
                answered.lock().unwrap().push(body["data"]["id"].as_str().unwrap().to_string());
            }
        })
    };
    tokio::time::sleep(Duration::from_millis(800)).await;
    let before: Vec<String> = answered.lock().unwrap().clone();
    let dir = tempfile::tempdir().unwrap();
    let to = dir.path().join("backup");
    let out = db.command(&["backup", "--to", to.to_str().unwrap()]).await;
    assert!(out.status.success(), "gable backup: {}", String::from_utf8_lossy(&out.stderr));
    let made: Value = serde_json::from_slice(&out.stdout).expect("backup JSON");
    assert_eq!(made["backup"]["master_key"], "master.key, copied", "{made}");
    tokio::time::sleep(Duration::from_millis(300)).await;
    stop.store(true, Ordering::Relaxed);
    writer.await.unwrap();
    let during = answered.lock().unwrap().len();
    assert!(during > before.len(), "writes went on during the backup");
    // A stored answer to replay from the restored copy: the first lead's key.
    let (status, first) = lead(&client, &base, &secret, "backup-00001").await;
    assert_eq!(status, 201);
    gable.kill().await;

    // A backup directory can only be restored while nothing serves the target.
    let restored_dir = dir.path().join("restored");
    let restore = |args: Vec<String>| {
        let bin = gable_tests::process::binary();
        async move {
            tokio::process::Command::new(bin).args(args).env_remove("DATABASE_URL").env_remove("GABLE_MASTER_KEY").output().await.unwrap()
        }
    };
    let out =
        restore(vec!["restore".into(), "--from".into(), to.display().to_string(), "--data-dir".into(), restored_dir.display().to_string()])
            .await;
    assert!(out.status.success(), "gable restore: {}", String::from_utf8_lossy(&out.stderr));
    let restored: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(restored["master_key"], "master.key, restored", "{restored}");

    let copy = Database::at_data_dir(&restored_dir);
    let again = copy.server().arg("--webhook-allow-cidrs").arg("127.0.0.0/8").arg("--rate-limit-test").arg("0").start().await;
    let base = again.sandbox.clone();
    for id in &before {
        let r = client.get(format!("{base}/v1/leads/{id}")).bearer_auth(&secret).send().await.unwrap();
        assert_eq!(r.status(), 200, "lead {id}, answered before the backup began, is in the copy");
    }
    // The stored answer opens under the restored key: the same key replays it.
    let (status, replayed) = lead(&client, &base, &secret, "backup-00001").await;
    assert_eq!(status, 201);
    assert_eq!(replayed["data"]["id"], first["data"]["id"], "replayed from the copy");
    // The webhook's sealed secret opens: a new lead's event arrives signed with it.
    let seen = receiver.received().len();
    let (status, new) = lead(&client, &base, &secret, "after-restore").await;
    assert_eq!(status, 201);
    let got = receiver.wait_for(seen + 1, 30).await;
    let delivery = got.iter().find(|g| g.json()["related_object_id"] == new["data"]["id"]).expect("the new lead's event was delivered");
    gable::domain::webhooks::verify(
        &delivery.body,
        delivery.header("gable-timestamp"),
        delivery.header("gable-signature"),
        &signing,
        chrono::Utc::now(),
    )
    .expect("signed with the subscription's secret, opened from the restored database");

    // Restoring over a directory a server is using is refused; nothing is changed.
    let out =
        restore(vec!["restore".into(), "--from".into(), to.display().to_string(), "--data-dir".into(), restored_dir.display().to_string()])
            .await;
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("in use"), "{}", String::from_utf8_lossy(&out.stderr));
    again.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_is_pointed_to_its_own_tools() {
    let Some(db) = Database::fresh(Backend::Postgres).await else { return };
    let dir = tempfile::tempdir().unwrap();
    let out = db.command(&["backup", "--to", dir.path().join("b").to_str().unwrap()]).await;
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("pg_dump") && err.contains("docs/backups.md"), "{err}");
}
