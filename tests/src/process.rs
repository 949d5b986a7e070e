//! The real `gable` binary, run as an operator runs it: a child process on free ports,
//! configured by flags and environment variables, stopped by signals. For what only a
//! process shows: timeouts on real sockets, a second process on one data directory,
//! outages, crashes and restarts, backups while serving.
//!
//! The binary is `GABLE_BIN` when set (CI sets it to the one it built), else the `gable`
//! cargo built beside this test binary (`target/debug/gable`). `cargo nextest run
//! --workspace` (as CI and `make test`) builds it; `-p gable-tests` alone does not, so
//! run `cargo build -p gable` first when running only these tests.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

use crate::Backend;

/// Where the `gable` binary is.
pub fn binary() -> PathBuf {
    if let Some(bin) = std::env::var_os("GABLE_BIN") {
        return PathBuf::from(bin);
    }
    // target/debug/deps/it-… → target/debug/gable
    let exe = std::env::current_exe().expect("test binary path");
    exe.parent().and_then(Path::parent).expect("target/debug").join("gable")
}

/// A database for processes to share: a fresh SQLite data directory, or a fresh
/// PostgreSQL database (cloned from the migrated template) with the deployment's key.
pub struct Database {
    pub backend: Backend,
    /// `--database-url` for PostgreSQL; `None` for SQLite (the data directory holds it).
    pub url: Option<String>,
    pub data_dir: PathBuf,
    /// `GABLE_MASTER_KEY` for PostgreSQL (every process of the deployment shares it);
    /// SQLite's is generated into the data directory.
    pub master_key: Option<String>,
    _dir: tempfile::TempDir,
}

impl Database {
    /// A fresh database of `backend`, or `None` when PostgreSQL is unreachable and not
    /// required (as `TestAppBuilder::try_spawn`).
    pub async fn fresh(backend: Backend) -> Option<Database> {
        let dir = tempfile::tempdir().expect("temp dir");
        let url = match backend {
            Backend::Sqlite => None,
            Backend::Postgres => Some(crate::fresh_postgres().await?.1),
        };
        let master_key = match backend {
            // SQLite: the key the data directory generates, as an operator gets it.
            Backend::Sqlite => None,
            Backend::Postgres => Some(format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple())),
        };
        Some(Database { backend, url, data_dir: dir.path().join("data"), master_key, _dir: dir })
    }

    /// The SQLite database of an existing data directory (a restored backup, say).
    pub fn at_data_dir(dir: &Path) -> Database {
        let holder = tempfile::tempdir().expect("temp dir");
        Database { backend: Backend::Sqlite, url: None, data_dir: dir.to_path_buf(), master_key: None, _dir: holder }
    }

    /// A PostgreSQL database at `url` (a cluster of the test's own, `pg_cluster`).
    pub fn postgres_at(url: &str) -> Database {
        let dir = tempfile::tempdir().expect("temp dir");
        let master_key = Some(format!("{}{}", uuid::Uuid::new_v4().simple(), uuid::Uuid::new_v4().simple()));
        Database { backend: Backend::Postgres, url: Some(url.to_string()), data_dir: dir.path().join("data"), master_key, _dir: dir }
    }

    /// A server on this database: `db.server().arg("--rate-limit-live").arg("0").start().await`.
    pub fn server(&self) -> ServerBuilder {
        let mut b = ServerBuilder { args: Vec::new(), env: Vec::new(), ready_within: Duration::from_secs(60) };
        b = b.arg("--data-dir").arg(self.data_dir.to_string_lossy());
        if let Some(url) = &self.url {
            b = b.arg("--database-url").arg(url);
        }
        match &self.master_key {
            Some(key) => b.env("GABLE_MASTER_KEY", key),
            None => b,
        }
    }

    /// A tenant and a `*` key of it in `env` (`live` or `test`), made with the CLI:
    /// `(tenant id, secret)`.
    pub async fn tenant_and_key(&self, env: &str) -> (String, String) {
        let out = self.command(&["tenant", "create", "--name", "Process Test"]).await;
        assert!(out.status.success(), "tenant create: {}", String::from_utf8_lossy(&out.stderr));
        let tenant: serde_json::Value = serde_json::from_slice(&out.stdout).expect("tenant JSON");
        let tenant = tenant["id"].as_str().expect("tenant id").to_string();
        let out = self.command(&["key", "create", "--tenant", &tenant, "--env", env, "--scopes", "*"]).await;
        assert!(out.status.success(), "key create: {}", String::from_utf8_lossy(&out.stderr));
        let key: serde_json::Value = serde_json::from_slice(&out.stdout).expect("key JSON");
        (tenant, key["secret"].as_str().expect("secret").to_string())
    }

    /// Runs `gable <args>` (a CLI command) on this database and returns its output.
    pub async fn command(&self, args: &[&str]) -> std::process::Output {
        let mut cmd = Command::new(binary());
        cmd.args(args).arg("--data-dir").arg(&self.data_dir).env_remove("DATABASE_URL").env_remove("GABLE_CONFIG");
        if let Some(key) = &self.master_key {
            cmd.env("GABLE_MASTER_KEY", key);
        }
        if let Some(url) = &self.url {
            cmd.arg("--database-url").arg(url);
        }
        cmd.stdin(Stdio::null()).output().await.expect("run gable")
    }
}

pub struct ServerBuilder {
    args: Vec<String>,
    env: Vec<(String, String)>,
    ready_within: Duration,
}

impl ServerBuilder {
    pub fn arg(mut self, a: impl AsRef<str>) -> Self {
        self.args.push(a.as_ref().to_string());
        self
    }

    pub fn env(mut self, k: &str, v: impl AsRef<str>) -> Self {
        self.env.push((k.to_string(), v.as_ref().to_string()));
        self
    }

    /// Starts `gable serve` and waits until it listens; panics with its log otherwise.
    pub async fn start(self) -> Server {
        match self.try_start().await {
            Ok(s) => s,
            Err((e, log)) => panic!("gable serve did not start: {e}\n--- its log ---\n{log}"),
        }
    }

    /// Starts `gable serve`; the error carries the process's log (a refusal to start is
    /// what some tests expect).
    pub async fn try_start(self) -> Result<Server, (String, String)> {
        let mut cmd = Command::new(binary());
        cmd.arg("serve")
            .arg("--addr")
            .arg("127.0.0.1:0")
            .arg("--sandbox-addr")
            .arg("127.0.0.1:0")
            .args(&self.args)
            .env("GABLE_LOG_FORMAT", "json")
            .env("GABLE_LOG", "info,sqlx=warn")
            .env_remove("DATABASE_URL")
            .env_remove("GABLE_CONFIG")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().map_err(|e| (format!("spawn {}: {e}", binary().display()), String::new()))?;
        let log = Arc::new(Mutex::new(String::new()));
        let (tx, rx) = tokio::sync::oneshot::channel();
        let stderr = child.stderr.take().expect("stderr piped");
        {
            let log = log.clone();
            tokio::spawn(async move {
                let mut lines = BufReader::new(stderr).lines();
                let mut tx = Some(tx);
                while let Ok(Some(line)) = lines.next_line().await {
                    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&line) {
                        let f = &v["fields"];
                        if f["message"] == "listening" {
                            if let (Some(live), Some(sandbox), Some(tx)) = (f["live"].as_str(), f["sandbox"].as_str(), tx.take()) {
                                let _ = tx.send((live.to_string(), sandbox.to_string(), f["metrics"].as_str().map(String::from)));
                            }
                        }
                    }
                    if let Ok(mut l) = log.lock() {
                        l.push_str(&line);
                        l.push('\n');
                    }
                }
            });
        }
        let text = |log: &Arc<Mutex<String>>| log.lock().map(|l| l.clone()).unwrap_or_default();
        match tokio::time::timeout(self.ready_within, rx).await {
            Ok(Ok((live, sandbox, metrics))) => Ok(Server {
                child,
                live: format!("http://{live}"),
                sandbox: format!("http://{sandbox}"),
                metrics: metrics.map(|m| format!("http://{m}")),
                log,
            }),
            Ok(Err(_)) => {
                // stderr closed without "listening": the process ended.
                let status = child.wait().await.map(|s| s.to_string()).unwrap_or_default();
                tokio::time::sleep(Duration::from_millis(50)).await;
                Err((format!("it exited ({status})"), text(&log)))
            }
            Err(_) => Err(("it did not listen within the time".into(), text(&log))),
        }
    }
}

/// A running `gable serve`; killed when dropped.
pub struct Server {
    child: Child,
    /// Production base address, e.g. `http://127.0.0.1:41234`.
    pub live: String,
    pub sandbox: String,
    /// The metrics listener's base address, when `--metrics-addr` was given.
    pub metrics: Option<String>,
    log: Arc<Mutex<String>>,
}

impl Server {
    /// What it has logged so far (JSON lines).
    pub fn log(&self) -> String {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    pub fn pid(&self) -> i32 {
        self.child.id().expect("running") as i32
    }

    /// Sends a signal (`"TERM"`, `"KILL"`, …) with `kill(1)`.
    pub fn signal(&self, name: &str) {
        let status = std::process::Command::new("kill").arg(format!("-{name}")).arg(self.pid().to_string()).status().expect("kill");
        assert!(status.success(), "kill -{name} failed");
    }

    /// Waits for the process to end (at most `within`), returning its exit code.
    pub async fn wait(mut self, within: Duration) -> Option<i32> {
        let status = tokio::time::timeout(within, self.child.wait()).await.expect("the process ended in time").expect("wait");
        status.code()
    }

    /// Waits for the process to end (at most `within`) and for the end of its stderr;
    /// returns its exit code and everything it logged.
    pub async fn wait_with_log(mut self, within: Duration) -> (Option<i32>, String) {
        let status = tokio::time::timeout(within, self.child.wait()).await.expect("the process ended in time").expect("wait");
        // The reader task appends until it sees the end of the pipe; the process is gone, so
        // that is a moment away.
        let mut log = self.log();
        for _ in 0..50 {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let now = self.log();
            if now.len() == log.len() {
                break;
            }
            log = now;
        }
        (status.code(), self.log())
    }

    /// SIGKILL, and wait.
    pub async fn kill(mut self) {
        let _ = self.child.kill().await;
    }
}
