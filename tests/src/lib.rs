//! The test harness: boots the real Gable server on free ports against a fresh
//! database, SQLite or PostgreSQL, and talks to it over HTTP.
//!
//! PostgreSQL: `GABLE_TEST_DATABASE_URL` (default `postgres://postgres@127.0.0.1:5432/postgres`)
//! is an admin connection. Migrations run once into a template database named after
//! the migrations' hash; each test clones it (`CREATE DATABASE … TEMPLATE`), so every
//! test has its own fresh database in a fraction of a second. With
//! `GABLE_REQUIRE_POSTGRES=1` (as in CI) an unreachable PostgreSQL fails the tests
//! instead of skipping them.
//!
//! A server: `TestApp::builder(Backend::Sqlite)…spawn()` ([`TestAppBuilder`]); a story
//! on both databases: [`both!`]. The tests themselves are one binary, `tests/it/`, one
//! module per capability.

use std::net::SocketAddr;

use std::sync::Arc;

use gable::clock::Clock;
use gable::config::ServeArgs;
use gable::crypto::MasterKey;
use gable::startup::Application;
use gable::state::AppState;
use gable::store::Store;
use serde_json::{json, Value};
use sqlx::{Connection, Executor, PgConnection};
use uuid::Uuid;

pub mod cli;
pub mod pg_cluster;
pub mod process;
pub mod proxy;
pub mod receiver;
pub mod schema;
pub mod sse;
pub mod world;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// Runs a test story on SQLite and on PostgreSQL, as two tests: `both!(story)` makes
/// `mod story { fn sqlite(), fn postgres() }`, each calling `story(&app)` on a fresh server.
///
/// An optional second argument configures both servers' [`TestAppBuilder`]:
/// `both!(story, |b| b.local_webhooks())`. The closure is written inside the generated
/// module, which sees everything the story's module does (`use super::*`).
///
/// The PostgreSQL test skips with a loud note when PostgreSQL is unreachable, and fails
/// instead when `GABLE_REQUIRE_POSTGRES=1` ([`TestAppBuilder::try_spawn`]).
#[macro_export]
macro_rules! both {
    ($story:ident $(, $configure:expr)? $(,)?) => {
        mod $story {
            #[allow(unused_imports)]
            use super::*;
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn sqlite() {
                let app = $crate::TestApp::builder($crate::Backend::Sqlite)$(.configure($configure))?.spawn().await;
                super::$story(&app).await;
                app.stop().await;
            }
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn postgres() {
                let Some(app) = $crate::TestApp::builder($crate::Backend::Postgres)$(.configure($configure))?.try_spawn().await else {
                    return;
                };
                super::$story(&app).await;
                app.stop().await;
            }
        }
    };
}

pub struct TestApp {
    pub backend: Backend,
    /// Production base address, e.g. `http://127.0.0.1:41234`.
    pub live: String,
    /// Sandbox base address.
    pub sandbox: String,
    pub store: Store,
    /// The database URL (for direct SQL in tests).
    pub database_url: String,
    pub client: reqwest::Client,
    /// The server's clock: manual, starting at the real time; tests move it.
    pub clock: Clock,
    /// The server's state, for running background work on demand.
    pub state: Arc<AppState>,
    /// What the background work of this server runs with (`jobs::deliver_due`).
    pub background: gable::jobs::Background,
    shutdown: Option<tokio::sync::oneshot::Sender<()>>,
    server: Option<tokio::task::JoinHandle<()>>,
    _dir: Option<tempfile::TempDir>,
}

/// A tenant with keys for both environments (scope `*`).
pub struct Tenant {
    pub id: Uuid,
    pub test_key: String,
    pub live_key: String,
}

fn admin_url() -> String {
    std::env::var("GABLE_TEST_DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into())
}

fn with_database(url: &str, db: &str) -> String {
    let mut u = url::Url::parse(url).expect("GABLE_TEST_DATABASE_URL is a URL");
    u.set_path(&format!("/{db}"));
    u.to_string()
}

fn migrations_hash() -> String {
    use std::hash::{Hash, Hasher};
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../migrations/postgres");
    let mut files: Vec<_> = std::fs::read_dir(dir).expect("migrations dir").flatten().map(|e| e.path()).collect();
    files.sort();
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for f in files {
        std::fs::read(&f).expect("migration readable").hash(&mut h);
    }
    format!("{:016x}", h.finish())
}

/// Makes the migrated template database once per migration set; returns its name.
async fn postgres_template(admin: &mut PgConnection, url: &str) -> anyhow::Result<String> {
    let template = format!("gable_tpl_{}", migrations_hash());
    // One process builds the template; the others wait for it.
    admin.execute("SELECT pg_advisory_lock(72120261122)").await?;
    let result = async {
        let exists: Option<(i32,)> =
            sqlx::query_as("SELECT 1 FROM pg_database WHERE datname = $1").bind(&template).fetch_optional(&mut *admin).await?;
        if exists.is_none() {
            let building = format!("{template}_build");
            admin.execute(format!("DROP DATABASE IF EXISTS {building}").as_str()).await?;
            admin.execute(format!("CREATE DATABASE {building}").as_str()).await?;
            let store = Store::connect(&with_database(url, &building)).await?;
            store.migrate().await?;
            store.close().await;
            // A closed pool's connections may linger for a moment; renaming needs none.
            let mut renamed = Err(anyhow::anyhow!("not tried"));
            for _ in 0..50 {
                let _ =
                    sqlx::query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()")
                        .bind(&building)
                        .execute(&mut *admin)
                        .await;
                match admin.execute(format!("ALTER DATABASE {building} RENAME TO {template}").as_str()).await {
                    Ok(_) => {
                        renamed = Ok(());
                        break;
                    }
                    Err(e) => renamed = Err(e.into()),
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            renamed?;
        }
        anyhow::Ok(())
    }
    .await;
    admin.execute("SELECT pg_advisory_unlock(72120261122)").await?;
    result?;
    Ok(template)
}

/// Drops test databases left by earlier runs (older than an hour).
async fn drop_stale(admin: &mut PgConnection) {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let names: Vec<(String,)> = sqlx::query_as("SELECT datname FROM pg_database WHERE datname LIKE 'gable_test_%'")
        .fetch_all(&mut *admin)
        .await
        .unwrap_or_default();
    for (name,) in names {
        let born = name.split('_').nth(2).and_then(|s| s.parse::<u64>().ok()).unwrap_or(now);
        if now.saturating_sub(born) > 3600 {
            let _ = admin.execute(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)").as_str()).await;
        }
    }
}

/// A runtime like the one `#[tokio::test]` gives a story, for synchronous tests (property
/// tests drive async cases with `rt.block_on`).
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().expect("runtime")
}

/// How a test server is made, from [`TestApp::builder`] (a fresh database) or
/// [`TestApp::second_node`] (another node on a running server's database). By default:
/// free ports, no scheduler loop (tests run rounds with [`TestApp::run_jobs`] after moving
/// the clock), no rate limits, webhooks refused on private networks, a manual clock at
/// the real time and a fresh master key.
#[must_use = "a builder does nothing until spawned"]
pub struct TestAppBuilder {
    backend: Backend,
    args: ServeArgs,
    clock: Option<Clock>,
    master_key: Option<MasterKey>,
    /// Another node of a deployment: the database it shares (none: a fresh database).
    database_url: Option<String>,
}

impl TestAppBuilder {
    /// The production listener's public address (e.g. `https://…`, for Secure cookies and HSTS).
    pub fn public_url(mut self, url: &str) -> Self {
        self.args.public_url = Some(url.to_string());
        self
    }

    /// Changes any listener setting: `.args(|a| a.delivery_concurrency = 0)`.
    pub fn args(mut self, change: impl FnOnce(&mut ServeArgs)) -> Self {
        change(&mut self.args);
        self
    }

    /// Webhook deliveries may reach receivers on this machine (127.0.0.0/8, which the
    /// SSRF guard refuses otherwise).
    pub fn local_webhooks(self) -> Self {
        self.args(|a| a.webhook_allow_cidrs = vec!["127.0.0.0/8".parse().expect("a CIDR")])
    }

    /// Forwarding headers are believed from these peers only (addresses or networks).
    pub fn trusted_proxies(self, trusted: &[&str]) -> Self {
        self.args(|a| a.trusted_proxies = trusted.iter().map(|p| gable::config::parse_proxy(p).expect("proxy")).collect())
    }

    /// Requests per minute per credential, live and test (0: unlimited, the default here).
    pub fn rate_limits(self, live: u32, test: u32) -> Self {
        self.args(|a| {
            a.rate_limit_live = live;
            a.rate_limit_test = test;
        })
    }

    /// The server's clock (default: manual, at the real time).
    pub fn clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The deployment's master key (default: a fresh one).
    pub fn master_key(mut self, key: MasterKey) -> Self {
        self.master_key = Some(key);
        self
    }

    /// Applies a configuration given as a closure (what `both!(story, |b| …)` passes).
    pub fn configure(self, configure: impl FnOnce(Self) -> Self) -> Self {
        configure(self)
    }

    /// Starts the server. On PostgreSQL, an unreachable database panics: tests that should
    /// skip then use [`TestAppBuilder::try_spawn`].
    pub async fn spawn(self) -> TestApp {
        self.try_spawn().await.expect("PostgreSQL is unreachable (try_spawn skips instead)")
    }

    /// Starts the server, or `None` (after a loud note) when it is to run on PostgreSQL
    /// and PostgreSQL is unreachable; with `GABLE_REQUIRE_POSTGRES=1` that panics instead.
    pub async fn try_spawn(self) -> Option<TestApp> {
        let (store, database_url, dir) = match (&self.database_url, self.backend) {
            (Some(url), _) => (Store::connect(url).await.expect("the node's store"), url.clone(), None),
            (None, Backend::Sqlite) => {
                let (store, url, dir) = fresh_sqlite().await;
                (store, url, Some(dir))
            }
            (None, Backend::Postgres) => {
                let (store, url) = fresh_postgres().await?;
                (store, url, None)
            }
        };
        let clock = self.clock.unwrap_or_else(|| Clock::manual(chrono::Utc::now()));
        let key = self.master_key.unwrap_or_else(MasterKey::generate);
        Some(TestApp::start(self.backend, store, database_url, dir, self.args, clock, key).await)
    }
}

/// The listener settings of a test server: free ports, no scheduler loop, unlimited
/// (stories send requests as fast as they can; the rate-limit tests set limits of their own).
fn serve_args() -> ServeArgs {
    ServeArgs {
        addr: "127.0.0.1:0".parse().expect("addr"),
        sandbox_addr: "127.0.0.1:0".parse().expect("addr"),
        scheduler_interval_secs: 0,
        delivery_concurrency: gable::jobs::deliveries::CONCURRENCY,
        rate_limit_live: 0,
        rate_limit_test: 0,
        // Stories send all their requests from one address, hundreds at once in places;
        // `security::listeners` tests the limit per client.
        max_connections_per_client: 0,
        ..gable::config::Config::default().serve()
    }
}

/// A migrated SQLite database in a fresh temporary directory.
async fn fresh_sqlite() -> (Store, String, tempfile::TempDir) {
    let dir = tempfile::tempdir().expect("temp dir");
    let url = format!("sqlite://{}", dir.path().join("gable.db").display());
    let store = Store::connect(&url).await.expect("open sqlite");
    store.migrate().await.expect("migrate sqlite");
    (store, url, dir)
}

/// A connection to the SQLite database at `url`, with the request log's file attached
/// when there is one (Gable keeps the log in a file of its own, read unqualified as
/// `request_logs`, `gable::store::request_log_file`), so tests read it as Gable does.
pub async fn sqlite_connection(url: &str) -> sqlx::SqliteConnection {
    let mut c = sqlx::SqliteConnection::connect(url).await.expect("open sqlite");
    let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
    let log = gable::store::request_log_file(std::path::Path::new(path.split('?').next().unwrap_or(path)));
    if log.exists() {
        sqlx::query("ATTACH DATABASE ? AS request_log")
            .bind(log.to_string_lossy().into_owned())
            .execute(&mut c)
            .await
            .expect("attach the log");
    }
    c
}

/// A fresh migrated PostgreSQL database and its URL, or `None` (with a loud note) when
/// PostgreSQL is unreachable and not required.
async fn fresh_postgres() -> Option<(Store, String)> {
    let (mut admin, url) = postgres_admin().await?;
    let template = postgres_template(&mut admin, &url).await.expect("template database");
    drop_stale(&mut admin).await;
    let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
    let db = format!("gable_test_{secs}_{}", Uuid::new_v4().simple());
    admin.execute(format!("CREATE DATABASE {db} TEMPLATE {template}").as_str()).await.expect("clone template");
    let _ = admin.close().await;
    let db_url = with_database(&url, &db);
    let store = Store::connect(&db_url).await.expect("open postgres");
    store.migrate().await.expect("migrate postgres");
    Some((store, db_url))
}

/// The admin connection and its URL, or `None` (with a loud note) when PostgreSQL is
/// unreachable and not required.
async fn postgres_admin() -> Option<(PgConnection, String)> {
    let url = admin_url();
    let required = std::env::var("GABLE_REQUIRE_POSTGRES").is_ok_and(|v| v == "1");
    match PgConnection::connect(&url).await {
        Ok(c) => Some((c, url)),
        Err(e) if !required => {
            eprintln!("SKIPPED (PostgreSQL unreachable at {url}: {e}); set GABLE_REQUIRE_POSTGRES=1 to fail instead");
            None
        }
        Err(e) => panic!("PostgreSQL is required (GABLE_REQUIRE_POSTGRES=1) but unreachable at {url}: {e}"),
    }
}

impl TestApp {
    /// A server on a fresh database of this backend, configured by the builder:
    /// `TestApp::builder(Backend::Sqlite).public_url("https://…").spawn().await`.
    pub fn builder(backend: Backend) -> TestAppBuilder {
        TestAppBuilder { backend, args: serve_args(), clock: None, master_key: None, database_url: None }
    }

    /// A second server process-equivalent (its own pools and caches) on this one's
    /// database, as a second node of a deployment would be: its own clock at this one's
    /// time, the deployment's one master key, default listener settings (change them on
    /// the builder). `app.second_node().spawn().await`.
    pub fn second_node(&self) -> TestAppBuilder {
        TestAppBuilder {
            backend: self.backend,
            args: serve_args(),
            clock: Some(Clock::manual(self.clock.now())),
            master_key: Some(self.state.ops.master_key().clone()),
            database_url: Some(self.database_url.clone()),
        }
    }

    async fn start(
        backend: Backend,
        store: Store,
        database_url: String,
        dir: Option<tempfile::TempDir>,
        args: ServeArgs,
        clock: Clock,
        key: MasterKey,
    ) -> TestApp {
        let app = Application::build_with_clock(store.clone(), &args, clock.clone(), key).await.expect("build application");
        let state = app.state.clone();
        let background = app.background();
        let (live, sandbox): (SocketAddr, SocketAddr) = (app.live_addr, app.test_addr);
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let server = tokio::spawn(async move {
            app.run(async {
                let _ = rx.await;
            })
            .await
            .expect("server runs");
        });
        TestApp {
            backend,
            live: format!("http://{live}"),
            sandbox: format!("http://{sandbox}"),
            store,
            database_url,
            client: reqwest::Client::new(),
            clock,
            state,
            background,
            shutdown: Some(tx),
            server: Some(server),
            _dir: dir,
        }
    }

    pub async fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(s) = self.server.take() {
            let _ = s.await;
        }
    }

    /// The base address of an environment.
    pub fn base(&self, livemode: bool) -> &str {
        if livemode {
            &self.live
        } else {
            &self.sandbox
        }
    }

    pub async fn tenant(&self, name: &str) -> Tenant {
        let id = self.store.create_tenant(name).await.expect("tenant");
        let test_key = self.key(id, false, &["*"], None).await;
        let live_key = self.key(id, true, &["*"], None).await;
        Tenant { id, test_key, live_key }
    }

    pub async fn key(&self, tenant: Uuid, livemode: bool, scopes: &[&str], properties: Option<Vec<Uuid>>) -> String {
        let sa = self.store.service_account(tenant, "tests").await.expect("service account");
        self.store.create_key(tenant, sa, livemode, scopes.iter().map(|s| s.to_string()).collect(), properties).await.expect("key").secret
    }

    /// Sends a request to the sandbox with a key; returns status and JSON body.
    pub async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> Res {
        self.call_on(false, key, method, path, body).await
    }

    /// As a client library does, every POST carries a fresh `Idempotency-Key` (required
    /// on `POST /v1/payments`); tests of the header itself use [`TestApp::raw`].
    pub async fn call_on(&self, livemode: bool, key: &str, method: &str, path: &str, body: Option<Value>) -> Res {
        let url = format!("{}{path}", self.base(livemode));
        let mut req = self.client.request(method.parse().expect("method"), url).bearer_auth(key);
        if method == "POST" {
            req = req.header("Idempotency-Key", Uuid::new_v4().to_string());
        }
        if let Some(b) = body {
            req = req.json(&b);
        }
        Res::from(req.send().await.expect("request sent")).await
    }

    /// Sends a raw request (any headers and body bytes) to the sandbox.
    pub async fn raw(&self, req: reqwest::RequestBuilder) -> Res {
        Res::from(req.send().await.expect("request sent")).await
    }

    /// Follows `next_cursor` to the end, returning every page's records, on the key's own
    /// listener (production for a `gbl_live_…` key, the sandbox otherwise).
    pub async fn all_pages(&self, key: &str, path: &str) -> Vec<Value> {
        let livemode = key.starts_with("gbl_live_");
        let mut out = vec![];
        let mut cursor: Option<String> = None;
        let sep = if path.contains('?') { '&' } else { '?' };
        for _ in 0..1000 {
            let url = match &cursor {
                Some(c) => format!("{path}{sep}cursor={}", url::form_urlencoded::byte_serialize(c.as_bytes()).collect::<String>()),
                None => path.to_string(),
            };
            let r = self.call_on(livemode, key, "GET", &url, None).await;
            assert_eq!(r.status, 200, "{url}: {}", r.text);
            out.extend(r.body["data"].as_array().unwrap().iter().cloned());
            if r.body["meta"]["has_more"] != json!(true) {
                assert!(r.body["meta"]["next_cursor"].is_null());
                return out;
            }
            cursor = Some(r.body["meta"]["next_cursor"].as_str().expect("cursor when has_more").to_string());
        }
        panic!("paging did not end");
    }

    /// Creates a record in the sandbox and returns its id; panics with the body otherwise.
    pub async fn create(&self, key: &str, resource: &str, body: Value) -> Value {
        let r = self.call(key, "POST", &format!("/v1/{resource}"), Some(body.clone())).await;
        assert_eq!(r.status, 201, "creating {resource} with {body}: {}", r.body);
        r.body["data"].clone()
    }

    /// Creates a residential property, "P", in the sandbox and returns it: for stories that
    /// need one and care about nothing else of it.
    pub async fn property(&self, key: &str) -> Value {
        let address = json!({ "line1": "1 A St", "city": "X", "country": "US" });
        self.create(key, "properties", json!({ "name": "P", "kind": "residential", "address": address })).await
    }

    /// Runs one round of background work (scheduled events, retention, queued
    /// reports) at the server clock's time.
    pub async fn run_jobs(&self) -> gable::jobs::Round {
        gable::jobs::run_once(&self.state.ops).await.expect("background round")
    }

    /// Counts the rows of a table, straight from the database.
    pub async fn count_rows(&self, table: &str) -> i64 {
        self.count_where(table, "TRUE").await
    }

    /// Runs one statement straight on the database (to stage what a test cannot reach
    /// through the API, such as a request left in flight); returns the rows it changed.
    pub async fn exec(&self, sql: &str) -> u64 {
        match self.backend {
            Backend::Sqlite => {
                let mut c = sqlite_connection(&self.database_url).await;
                sqlx::query(sql).execute(&mut c).await.expect("statement").rows_affected()
            }
            Backend::Postgres => {
                let mut c = PgConnection::connect(&self.database_url).await.expect("pg");
                sqlx::query(sql).execute(&mut c).await.expect("statement").rows_affected()
            }
        }
    }

    /// Counts the rows of a table matching a condition, straight from the database.
    pub async fn count_where(&self, table: &str, cond: &str) -> i64 {
        let sql = format!("SELECT COUNT(*) FROM {table} WHERE {cond}");
        match self.backend {
            Backend::Sqlite => {
                let mut c = sqlite_connection(&self.database_url).await;
                let (n,): (i64,) = sqlx::query_as(&sql).fetch_one(&mut c).await.expect("count");
                n
            }
            Backend::Postgres => {
                let mut c = PgConnection::connect(&self.database_url).await.expect("pg");
                let (n,): (i64,) = sqlx::query_as(&sql).fetch_one(&mut c).await.expect("count");
                n
            }
        }
    }
}

/// A response: status, headers and JSON body (`Value::Null` when not JSON).
pub struct Res {
    pub status: u16,
    pub headers: reqwest::header::HeaderMap,
    pub body: Value,
    pub text: String,
}

impl Res {
    async fn from(r: reqwest::Response) -> Res {
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let text = r.text().await.unwrap_or_default();
        let body = serde_json::from_str(&text).unwrap_or(Value::Null);
        Res { status, headers, body, text }
    }

    /// Asserts an error response: status, code, and the documented body shape.
    pub fn assert_error(&self, status: u16, code: &str) -> &Self {
        assert_eq!(self.status, status, "expected {status} {code}, got: {}", self.text);
        assert_eq!(self.body["error"]["code"], json!(code), "body: {}", self.text);
        assert!(self.body["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "message: {}", self.text);
        let rid = self.headers.get("request-id").and_then(|v| v.to_str().ok()).expect("Request-Id header");
        assert_eq!(self.body["error"]["request_id"], json!(rid));
        self
    }

    pub fn param(&self) -> &str {
        self.body["error"]["param"].as_str().unwrap_or("")
    }
}
