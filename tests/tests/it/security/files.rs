//! The data directory's files (third review): who may read them, and what `gable
//! restore` accepts.
//!
//! From the side of another user of the machine: the data directory is 0700 and every
//! file in it (the database, its `-wal` and `-shm`, `master.key`, the lock) 0600, made so
//! at creation whatever the umask (these tests run the binary with umask 000); a data
//! directory an older build left readable is tightened at the next start; a backup and a
//! restored copy are as private. With PostgreSQL nothing is stored locally: no data
//! directory is created.
//!
//! From the side of a backup that cannot work: `gable restore` refuses a `master.key`
//! that is not a key, a key (file or `GABLE_MASTER_KEY`) that does not open the sealed
//! values the database holds, and a database whose migrations this build does not know
//! or knows differently; after each refusal the live data directory holds the same files
//! with the same bytes, and `gable serve` starts on it. And `gable backup` takes
//! `master.key` from where `gable serve` reads it (the data directory) when the database
//! is kept elsewhere.
//!
//! Backup and restore copy the embedded database (PostgreSQL deployments use pg_dump and
//! their own key): those tests, and the file modes of the embedded database, run on
//! SQLite only.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use gable_tests::process::Database;
use gable_tests::receiver::Receiver;
use gable_tests::Backend;
use serde_json::{json, Value};

/// Sets this test process's umask, which the `gable` processes it starts inherit.
/// nextest runs each test in a process of its own, so no other test sees it.
fn set_umask(mask: u32) {
    extern "C" {
        fn umask(mask: u32) -> u32;
    }
    // SAFETY: umask(2) only swaps the process's file-mode mask; it cannot fail.
    unsafe {
        umask(mask);
    }
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).unwrap_or_else(|e| panic!("{}: {e}", path.display())).permissions().mode() & 0o777
}

/// Every entry under `dir` (itself excluded) with its mode.
fn modes(dir: &Path) -> BTreeMap<PathBuf, u32> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        out.insert(path.clone(), mode(&path));
        if path.is_dir() {
            out.extend(modes(&path));
        }
    }
    out
}

/// Asserts `dir` is 0700 and everything in it 0700 (directories) or 0600 (files).
fn assert_private(dir: &Path) {
    assert_eq!(mode(dir), 0o700, "{} is its owner's alone", dir.display());
    for (path, m) in modes(dir) {
        let want = if path.is_dir() { 0o700 } else { 0o600 };
        assert_eq!(m, want, "{} is {m:o}, not {want:o}", path.display());
    }
}

/// Every file under `dir` with its bytes: what a refused restore must leave as it was.
fn contents(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(contents(&path));
        } else {
            out.insert(path.clone(), std::fs::read(&path).unwrap());
        }
    }
    out
}

fn stderr(out: &std::process::Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Creates a lead with an idempotency key (its answer is stored sealed): the answer.
async fn lead(base: &str, secret: &str, key: &str) -> Value {
    let (status, body) = crate::production::backups::lead(&reqwest::Client::new(), base, secret, key).await;
    assert_eq!(status, 201, "{body}");
    body
}

/// A deployment on SQLite that has sealed something, and a backup of it: the database
/// (the live data directory a restore goes into), the backup's directory, and the
/// sandbox key. With `webhook`, a subscription's signing secret is sealed besides the
/// stored idempotent answer.
struct Deployment {
    db: Database,
    backup: PathBuf,
    secret: String,
    _receiver: Receiver,
    dir: tempfile::TempDir,
}

async fn deployment(webhook: bool) -> Deployment {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let receiver = Receiver::start().await;
    let gable = db.server().arg("--webhook-allow-cidrs").arg("127.0.0.0/8").start().await;
    let (_, secret) = db.tenant_and_key("test").await;
    if webhook {
        let r = reqwest::Client::new()
            .post(format!("{}/v1/webhooks", gable.sandbox))
            .bearer_auth(&secret)
            .json(&json!({ "url": receiver.url("/ok"), "events": ["lead.created"] }))
            .send()
            .await
            .unwrap();
        assert_eq!(r.status(), 201);
    }
    lead(&gable.sandbox, &secret, "sealed-answer").await;
    let dir = tempfile::tempdir().unwrap();
    let backup = dir.path().join("backup");
    let out = db.command(&["backup", "--to", backup.to_str().unwrap()]).await;
    assert!(out.status.success(), "gable backup: {}", stderr(&out));
    gable.kill().await;
    Deployment { db, backup, secret, _receiver: receiver, dir }
}

/// Runs `gable restore` from `d.backup` over the live data directory (with
/// `GABLE_MASTER_KEY` = `env_key` when given), expects a refusal whose message holds
/// `says`, and that the live data directory was left exactly as it was and still serves.
async fn assert_refused(d: &mut Deployment, env_key: Option<&str>, says: &[&str]) {
    let before = contents(&d.db.data_dir);
    d.db.master_key = env_key.map(String::from);
    let out = d.db.command(&["restore", "--from", d.backup.to_str().unwrap()]).await;
    d.db.master_key = None;
    let err = stderr(&out);
    assert!(!out.status.success(), "gable restore accepted what cannot work: {}", String::from_utf8_lossy(&out.stdout));
    for s in says {
        assert!(err.contains(s), "the refusal says {s:?}: {err}");
    }
    assert!(err.contains("Nothing was restored"), "{err}");
    assert_eq!(contents(&d.db.data_dir), before, "a refused restore changes nothing in the data directory");
    let again = d.db.server().start().await;
    let r = reqwest::Client::new().get(format!("{}/v1/leads", again.sandbox)).bearer_auth(&d.secret).send().await.unwrap();
    assert_eq!(r.status(), 200, "the data directory still serves");
    again.kill().await;
}

/// Edits the backup's database (its migrations' register).
async fn edit_backup_database(backup: &Path, sql: &str) {
    use sqlx::Connection;
    let opts =
        sqlx::sqlite::SqliteConnectOptions::new().filename(backup.join("gable.db")).journal_mode(sqlx::sqlite::SqliteJournalMode::Delete);
    let mut conn = sqlx::SqliteConnection::connect_with(&opts).await.unwrap();
    sqlx::query(sql).execute(&mut conn).await.unwrap();
    conn.close().await.unwrap();
}

// Finding 6: the data directory and the database were readable by every local user.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_6_the_data_directory_and_its_database_are_private_whatever_the_umask() {
    set_umask(0o000);
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let gable = db.server().start().await;
    // A write through the server: the log (-wal) and its index (-shm) are in use.
    let (_, secret) = db.tenant_and_key("test").await;
    lead(&gable.sandbox, &secret, "a-write-through-the-server").await;
    let dir = &db.data_dir;
    assert_eq!(mode(dir), 0o700, "the data directory");
    // The request log's file holds what integrations sent: private like the database.
    for file in ["gable.db", "master.key", "gable.lock", "gable-request-log.db"] {
        assert_eq!(mode(&dir.join(file)), 0o600, "{file}");
    }
    for file in ["gable.db-wal", "gable.db-shm", "gable-request-log.db-wal", "gable-request-log.db-shm"] {
        if dir.join(file).exists() {
            assert_eq!(mode(&dir.join(file)), 0o600, "{file}, made by SQLite with the database's mode");
        }
    }
    assert!(dir.join("gable.db-wal").exists(), "the server writes through the log");
    assert_private(dir);
    gable.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_6_a_data_directory_an_older_build_left_readable_is_tightened_on_start() {
    use std::os::unix::fs::PermissionsExt;
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let gable = db.server().start().await;
    gable.kill().await;
    // As an older build left it: the directory 0755, the database 0644.
    let dir = &db.data_dir;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    for file in ["gable.db", "gable.db-wal", "gable.db-shm", "master.key", "gable-request-log.db"] {
        if dir.join(file).exists() {
            std::fs::set_permissions(dir.join(file), std::fs::Permissions::from_mode(0o644)).unwrap();
        }
    }
    let gable = db.server().start().await;
    assert_private(dir);
    let log = gable.log();
    let said: Vec<&str> = log.lines().filter(|l| l.contains("made the data directory's files private")).collect();
    assert_eq!(said.len(), 1, "one line says what changed: {log}");
    assert!(said[0].contains("gable.db: 644 -> 600") && said[0].contains("755 -> 700"), "{}", said[0]);
    assert!(said[0].contains("gable-request-log.db: 644 -> 600"), "the request log's file too: {}", said[0]);
    gable.kill().await;
    // Said once: nothing is left to change at the next start.
    let gable = db.server().start().await;
    assert!(!gable.log().contains("made the data directory's files private"), "{}", gable.log());
    gable.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_6_postgres_keeps_nothing_in_a_data_directory() {
    set_umask(0o000);
    let Some(db) = Database::fresh(Backend::Postgres).await else { return };
    let gable = db.server().start().await;
    let (_, secret) = db.tenant_and_key("test").await;
    lead(&gable.sandbox, &secret, "a-write-through-the-server").await;
    gable.kill().await;
    // The key comes from GABLE_MASTER_KEY and the records from PostgreSQL: no directory
    // (so no file readable by others) is made.
    assert!(!db.data_dir.exists(), "{} was created with PostgreSQL", db.data_dir.display());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_6_backups_and_restored_copies_are_private_whatever_the_umask() {
    set_umask(0o000);
    let d = deployment(true).await;
    assert_private(&d.backup);
    for file in ["gable.db", "master.key", "backup.json"] {
        assert_eq!(mode(&d.backup.join(file)), 0o600, "the backup's {file}");
    }
    // Restored over the live data directory (what was there is set aside, as private)…
    let out = d.db.command(&["restore", "--from", d.backup.to_str().unwrap()]).await;
    assert!(out.status.success(), "gable restore: {}", stderr(&out));
    assert_private(&d.db.data_dir);
    // …and into a directory that does not exist yet.
    let fresh = d.dir.path().join("fresh");
    let copy = Database::at_data_dir(&fresh);
    let out = copy.command(&["restore", "--from", d.backup.to_str().unwrap()]).await;
    assert!(out.status.success(), "gable restore: {}", stderr(&out));
    assert_private(&fresh);
    assert_eq!(mode(&fresh.join("gable.db")), 0o600);
    let gable = copy.server().start().await;
    lead(&gable.sandbox, &d.secret, "after-restore").await;
    assert_private(&fresh);
    gable.kill().await;
}

// Finding 5: `gable restore` restored what `gable serve` then refused.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_5_restore_refuses_a_master_key_that_is_not_a_key() {
    let mut d = deployment(false).await;
    std::fs::write(d.backup.join("master.key"), "this is not a key").unwrap();
    assert_refused(&mut d, None, &["master.key is not a master key"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_5_restore_refuses_a_key_that_does_not_open_the_sealed_values() {
    let other = "ab".repeat(32);
    // A subscription's signing secret is sealed.
    let mut d = deployment(true).await;
    std::fs::write(d.backup.join("master.key"), &other).unwrap();
    assert_refused(&mut d, None, &["is not the key", "the signing secret of webhook"]).await;
    // Only a stored idempotent answer is sealed.
    let mut d = deployment(false).await;
    std::fs::write(d.backup.join("master.key"), &other).unwrap();
    assert_refused(&mut d, None, &["is not the key", "a stored idempotent answer"]).await;
    // The backup's key opens them, but GABLE_MASTER_KEY, which `gable serve` would use, does not.
    let mut d = deployment(true).await;
    assert_refused(&mut d, Some(&other), &["GABLE_MASTER_KEY", "unset it"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_5_restore_checks_gable_master_key_when_the_backup_has_no_key_file() {
    let mut d = deployment(true).await;
    let key = std::fs::read_to_string(d.backup.join("master.key")).unwrap();
    std::fs::remove_file(d.backup.join("master.key")).unwrap();
    assert_refused(&mut d, None, &["no master.key and GABLE_MASTER_KEY is not set"]).await;
    assert_refused(&mut d, Some(&"cd".repeat(32)), &["GABLE_MASTER_KEY is not the key"]).await;
    assert_refused(&mut d, Some("not a key either"), &["GABLE_MASTER_KEY"]).await;
    // The right one restores, and the server it configures opens the sealed answer.
    d.db.master_key = Some(key.trim().to_string());
    let out = d.db.command(&["restore", "--from", d.backup.to_str().unwrap()]).await;
    assert!(out.status.success(), "gable restore: {}", stderr(&out));
    let gable = d.db.server().start().await;
    let r = reqwest::Client::new()
        .post(format!("{}/v1/leads", gable.sandbox))
        .bearer_auth(&d.secret)
        .header("Idempotency-Key", "sealed-answer")
        .json(&json!({ "name": "Lead sealed-answer", "email": "lead@example.com" }))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201);
    assert_eq!(r.headers().get("idempotent-replayed").and_then(|v| v.to_str().ok()), Some("true"), "replayed: the answer opened");
    gable.kill().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_5_restore_refuses_a_database_with_a_migration_unknown_to_this_build() {
    let mut d = deployment(false).await;
    edit_backup_database(
        &d.backup,
        "INSERT INTO _sqlx_migrations (version, description, installed_on, success, checksum, execution_time) \
         VALUES (29991231000001, 'from a newer build', CURRENT_TIMESTAMP, 1, X'00', 0)",
    )
    .await;
    assert_refused(&mut d, None, &["migration 29991231000001", "unknown to this build"]).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_5_restore_refuses_a_database_whose_migration_checksum_differs() {
    let mut d = deployment(false).await;
    edit_backup_database(
        &d.backup,
        "UPDATE _sqlx_migrations SET checksum = X'00' WHERE version = (SELECT MIN(version) FROM _sqlx_migrations)",
    )
    .await;
    assert_refused(&mut d, None, &["checksum differs"]).await;
}

// Finding 7c: `gable backup` left out master.key when the database was kept outside the
// data directory.

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn finding_7c_a_backup_of_a_database_outside_the_data_dir_holds_the_master_key() {
    let dir = tempfile::tempdir().unwrap();
    let at = |data: &str, elsewhere: &str| {
        let mut db = Database::at_data_dir(&dir.path().join(data));
        db.url = Some(format!("sqlite://{}", dir.path().join(elsewhere).join("records.db").display()));
        db
    };
    let db = at("data", "elsewhere");
    let gable = db.server().start().await;
    let (_, secret) = db.tenant_and_key("test").await;
    let first = lead(&gable.sandbox, &secret, "sealed-answer").await;
    assert!(dir.path().join("elsewhere/records.db").exists() && dir.path().join("data/master.key").exists());
    let backup = dir.path().join("backup");
    let out = db.command(&["backup", "--to", backup.to_str().unwrap()]).await;
    assert!(out.status.success(), "gable backup: {}", stderr(&out));
    let made: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(made["backup"]["master_key"], "master.key, copied", "{made}");
    assert_eq!(
        std::fs::read(backup.join("master.key")).unwrap(),
        std::fs::read(dir.path().join("data/master.key")).unwrap(),
        "the key `gable serve` reads, from the data directory"
    );
    gable.kill().await;

    // Restored into another such pair of directories, it serves and its sealed answer opens.
    let copy = at("data2", "elsewhere2");
    let out = copy.command(&["restore", "--from", backup.to_str().unwrap()]).await;
    assert!(out.status.success(), "gable restore: {}", stderr(&out));
    assert!(dir.path().join("elsewhere2/records.db").exists() && dir.path().join("data2/master.key").exists());
    let again = copy.server().start().await;
    let replayed = lead(&again.sandbox, &secret, "sealed-answer").await;
    assert_eq!(replayed["data"]["id"], first["data"]["id"], "replayed from the copy: the key opened its answer");
    again.kill().await;
}
