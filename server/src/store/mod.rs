//! Storage: one `Store` over SQLite (embedded default) or PostgreSQL (scale-out).
//!
//! Statements whose shape depends on the request are built once with sea-query and
//! run on either database; only execution and row decoding differ per database, and
//! both live here. Each database has its own migrations (`migrations/sqlite`,
//! `migrations/postgres`).

pub mod background;
pub mod backup;
pub mod console;
pub mod data_dir;
pub mod deliveries;
pub mod events;
pub mod flow_tokens;
pub mod idempotency;
pub mod keys;
pub mod ledger;
pub mod oauth;
pub mod readers;
pub mod records;
pub mod sandbox;
pub mod schema;
mod sql;
pub mod values;

use std::str::FromStr;
use std::time::Duration;

use sea_query::{PostgresQueryBuilder, QueryStatementWriter, SqliteQueryBuilder};
use sea_query_binder::SqlxValues;
use sqlx::postgres::{PgPoolOptions, PgRow};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, Row as _, SqlitePool};
use uuid::Uuid;

use crate::error::{Error, Result};

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dialect {
    Sqlite,
    Postgres,
}

impl FromStr for Dialect {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, Self::Err> {
        match s {
            "sqlite" => Ok(Dialect::Sqlite),
            "postgres" => Ok(Dialect::Postgres),
            _ => Err(format!("unknown dialect `{s}`: use sqlite or postgres")),
        }
    }
}

/// SQLite has one writing connection and a pool of read-only ones, all rusqlite:
/// - reads run a whole statement at once on a pooled read-only connection (`readers`),
///   on the calling task unless it runs long (`readers::inline`); sqlx handed each row across
///   threads separately, which dominated list requests;
/// - writes run on the one writing connection, statement by statement, on the calling
///   task itself (see [`SqliteWrite`]);
/// - sqlx's connection is kept for the migrations only.
#[derive(Clone)]
enum Pool {
    Sqlite { migrations: SqlitePool, writer: Writer, read: readers::Pool },
    Postgres(PgPool),
}

/// SQLite's writing connection; `None` once the store is closed. Transactions queue on
/// the outer (async) lock; the inner one only makes the connection shareable by
/// reference across `await`s, and is never contended.
type Writer = std::sync::Arc<tokio::sync::Mutex<Option<std::sync::Mutex<rusqlite::Connection>>>>;

#[derive(Clone)]
pub struct Store {
    pool: Pool,
    keys: keys::KeyCache,
    /// PostgreSQL connections held by `LISTEN`ers: taken from the pool for as long as
    /// they listen, so they are not counted as in use by work (`connections`).
    listening: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

/// A unit of database work on either database: a transaction, or (for reads on SQLite)
/// a plain connection in autocommit mode, where one statement is consistent by itself.
pub enum Tx {
    Sqlite(SqliteWrite),
    SqliteRead(readers::Reader),
    /// A transaction on PostgreSQL; `READ ONLY` when its intent is to read.
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>, Intent),
}

/// A write transaction on SQLite's one writing connection, held from `BEGIN IMMEDIATE`
/// to `COMMIT` (or `ROLLBACK` when dropped uncommitted: an error, a panic, a cancelled
/// request). SQLite has one writer at a time anyway: writers queue on the connection's
/// lock in turn (rather than in SQLite's busy handler, which sleeps), and each statement
/// runs right here on the calling task, since a statement of a write transaction takes
/// microseconds and handing each to another thread cost more than running it.
pub struct SqliteWrite {
    conn: tokio::sync::OwnedMutexGuard<Option<std::sync::Mutex<rusqlite::Connection>>>,
    open: bool,
}

impl SqliteWrite {
    fn conn(&self) -> Result<std::sync::MutexGuard<'_, rusqlite::Connection>> {
        let c = self.conn.as_ref().ok_or_else(|| Error::internal(anyhow::anyhow!("the database is closed")))?;
        c.lock().map_err(|_| Error::internal(anyhow::anyhow!("the SQLite writing connection was poisoned")))
    }
}

impl Drop for SqliteWrite {
    fn drop(&mut self) {
        if self.open {
            if let Ok(c) = self.conn() {
                if let Err(e) = c.execute_batch("ROLLBACK") {
                    tracing::warn!(error = %e, "rolling back an unfinished SQLite write failed");
                }
            }
        }
    }
}

/// WAL pages after which the checkpointer makes writers wait for a full checkpoint
/// (64 MiB of 4 KiB pages), so that the log cannot grow without bound under steady writes.
const WAL_RESTART_PAGES: i64 = 16_384;

/// A pooled PostgreSQL connection idle this long is checked (a round trip) before it is
/// handed out; a busier one is not: sqlx already checks each connection as it comes back,
/// and one lost in between fails its first statement, answered `503` and then discarded.
const CHECK_IDLE_AFTER: Duration = Duration::from_secs(1);

/// How long a request waits for a PostgreSQL connection before it is answered `503
/// service_unavailable`: long enough for a busy pool, short enough that an outage is
/// reported at once rather than after a hang.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);
const LISTEN_FIRST_BACKOFF: Duration = Duration::from_millis(500);
const LISTEN_MAX_BACKOFF: Duration = Duration::from_secs(30);

/// SQLite's checkpoints, on a thread and connection of their own: by default SQLite runs
/// one inside the commit that crosses 1,000 pages of log, copying pages back and syncing
/// the database file while the one writer waits (a seventh of a write-heavy profile).
/// Here a passive checkpoint (which neither waits for nor blocks the writer) runs every
/// 100 ms. A passive checkpoint cannot reset the log while writes keep coming, so a log
/// past `WAL_RESTART_PAGES` gets a restarting checkpoint, run holding the writing
/// connection (a wait of one checkpoint's remainder for the writers) so that it cannot
/// be starved, after which the log starts afresh. The thread ends once the store is
/// closed or dropped.
fn checkpointer(
    path: &str,
    writer: std::sync::Weak<tokio::sync::Mutex<Option<std::sync::Mutex<rusqlite::Connection>>>>,
) -> anyhow::Result<()> {
    let conn = rusqlite::Connection::open(path)?;
    conn.busy_timeout(Duration::from_secs(10))?;
    std::thread::Builder::new().name("sqlite-checkpoint".into()).spawn(move || loop {
        std::thread::sleep(Duration::from_millis(100));
        let Some(w) = writer.upgrade() else { return };
        if w.try_lock().is_ok_and(|g| g.is_none()) {
            return;
        }
        let log = |c: &rusqlite::Connection, mode: &str| c.query_row(&format!("PRAGMA wal_checkpoint({mode})"), [], |r| r.get::<_, i64>(1));
        match log(&conn, "PASSIVE") {
            Ok(pages) if pages > WAL_RESTART_PAGES => {
                let held = w.blocking_lock();
                let restarted = match held.as_ref().map(|c| c.lock()) {
                    Some(Ok(c)) => log(&c, "RESTART").map(|_| ()),
                    _ => return,
                };
                if let Err(e) = restarted {
                    tracing::warn!(error = %e, "SQLite checkpoint (restart) failed; retrying");
                }
            }
            Ok(_) => {}
            Err(e) => tracing::warn!(error = %e, "SQLite checkpoint failed; retrying"),
        }
    })?;
    Ok(())
}

/// Runs a statement on a rusqlite connection and keeps its rows, names and values.
fn query_owned(c: &rusqlite::Connection, sql: &str, values: &sea_query_rusqlite::RusqliteValues) -> rusqlite::Result<Vec<Row>> {
    let mut st = c.prepare_cached(sql)?;
    let names: std::sync::Arc<[String]> = st.column_names().iter().map(|n| n.to_string()).collect();
    let mut rows = st.query(&*values.as_params())?;
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let vals = (0..names.len()).map(|i| r.get::<_, rusqlite::types::Value>(i)).collect::<rusqlite::Result<Vec<_>>>()?;
        out.push(Row::Owned(names.clone(), vals));
    }
    Ok(out)
}

/// Whether a unit of work writes. SQLite write transactions take the write lock at
/// BEGIN (IMMEDIATE): a deferred one that read first could not upgrade once another
/// connection had committed, and would fail at once instead of waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Read,
    Write,
}

/// A statement ready to run: its SQL in one dialect, and its values.
struct Built {
    sql: std::sync::Arc<str>,
    values: sea_query::Values,
}

/// What makes two statements the same SQL: which statement, of which table, in which
/// variant (how many values a list in it has, say).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Shape {
    pub statement: &'static str,
    pub table: &'static str,
    pub variant: usize,
}

/// The SQL of each shape run so far ([`Tx::fetch_optional_shaped`]); shapes are few (a
/// statement per table and variant), so it is never pruned.
fn shapes() -> &'static std::sync::RwLock<ShapedSql> {
    static SHAPES: std::sync::LazyLock<std::sync::RwLock<ShapedSql>> = std::sync::LazyLock::new(Default::default);
    &SHAPES
}

type ShapedSql = std::collections::HashMap<(Shape, Dialect), std::sync::Arc<str>>;

/// A result row on either database.
pub enum Row {
    Postgres(PgRow),
    /// A row of SQLite (read through rusqlite), owned: names and values.
    Owned(std::sync::Arc<[String]>, Vec<rusqlite::types::Value>),
}

impl Store {
    /// Opens the database named by `url` (`sqlite://…` or `postgres://…`).
    /// `GABLE_DB_MAX_CONNECTIONS` sizes the pool (defaults: PostgreSQL 16; on SQLite, 4
    /// reading connections beside its one writing connection).
    pub async fn connect(url: &str) -> anyhow::Result<Store> {
        let max = |default: u32| std::env::var("GABLE_DB_MAX_CONNECTIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
        let pool = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Pool::Postgres(
                PgPoolOptions::new()
                    .max_connections(max(16))
                    .acquire_timeout(ACQUIRE_TIMEOUT)
                    // sqlx checks every connection it hands out with a round trip by
                    // default; only one idle long enough to have been lost is checked.
                    .test_before_acquire(false)
                    .before_acquire(|conn, meta| {
                        Box::pin(async move {
                            if meta.idle_for >= CHECK_IDLE_AFTER {
                                sqlx::Connection::ping(conn).await?;
                            }
                            Ok(true)
                        })
                    })
                    .connect(url)
                    .await?,
            )
        } else {
            let opts = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(10));
            let migrations = SqlitePoolOptions::new().max_connections(1).connect_with(opts).await?;
            let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
            let path = path.split('?').next().unwrap_or(path);
            let writer = rusqlite::Connection::open(path)?;
            writer.busy_timeout(Duration::from_secs(10))?;
            // Checkpoints run beside the writer (`checkpointer`), not inside its commits.
            writer.execute_batch(
                "PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON; PRAGMA wal_autocheckpoint = 0;",
            )?;
            writer.set_prepared_statement_cache_capacity(256);
            let writer = std::sync::Arc::new(tokio::sync::Mutex::new(Some(std::sync::Mutex::new(writer))));
            checkpointer(path, std::sync::Arc::downgrade(&writer))?;
            let read = readers::Readers::pool(path, max(4) as usize)?;
            Pool::Sqlite { migrations, writer, read }
        };
        Ok(Store { pool, keys: keys::KeyCache::new(), listening: Default::default() })
    }

    pub fn dialect(&self) -> Dialect {
        match self.pool {
            Pool::Sqlite { .. } => Dialect::Sqlite,
            Pool::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Whether several processes may share this database (PostgreSQL): what they must
    /// agree on (the master key) cannot live in one process's data directory.
    pub fn is_shared(&self) -> bool {
        matches!(self.pool, Pool::Postgres(_))
    }

    /// How many write transactions a background job runs at once. SQLite has one writing
    /// connection, so more would only queue on it; PostgreSQL writes in parallel, and a
    /// job takes a quarter of the pool (at most 4), leaving the rest to requests.
    pub fn parallel_writes(&self) -> usize {
        match &self.pool {
            Pool::Sqlite { .. } => 1,
            Pool::Postgres(p) => (p.options().get_max_connections() as usize / 4).clamp(1, 4),
        }
    }

    /// Applies the database's migrations (idempotent; safe with several processes).
    pub async fn migrate(&self) -> anyhow::Result<()> {
        match &self.pool {
            Pool::Sqlite { migrations, .. } => SQLITE_MIGRATIONS.run(migrations).await?,
            Pool::Postgres(p) => POSTGRES_MIGRATIONS.run(p).await?,
        }
        Ok(())
    }

    /// Begins work acting for one tenant's environment. On PostgreSQL it is a
    /// transaction that runs as the `gable_app` role with `gable.tenant_id` and
    /// `gable.livemode` set, so row-level security lets it see that tenant's environment
    /// only, and no table of Gable's own bookkeeping (keys, tenants, sessions) at all.
    pub async fn begin_tenant(&self, tenant: Uuid, livemode: bool, intent: Intent) -> Result<Tx> {
        match &self.pool {
            Pool::Sqlite { writer, read, .. } => Self::begin_sqlite(writer, read, intent).await,
            // One round trip: `BEGIN` and the settings travel as one simple query. Its
            // values are a formatted UUID and a boolean, so nothing needs quoting.
            Pool::Postgres(p) => Ok(Tx::Postgres(
                begin_postgres(
                    p,
                    format!(
                        "{}; SELECT set_config('role', 'gable_app', true), set_config('gable.tenant_id', '{}', true), \
                         set_config('gable.livemode', '{livemode}', true)",
                        begin_statement(intent),
                        tenant.hyphenated()
                    ),
                )
                .await?,
                intent,
            )),
        }
    }

    /// Begins work for Gable's own bookkeeping (tenants, keys), outside any tenant.
    pub async fn begin_system(&self, intent: Intent) -> Result<Tx> {
        Ok(match &self.pool {
            Pool::Sqlite { writer, read, .. } => Self::begin_sqlite(writer, read, intent).await?,
            Pool::Postgres(p) => Tx::Postgres(begin_postgres(p, begin_statement(intent).to_string()).await?, intent),
        })
    }

    /// Runs `work` in a unit of work for Gable's own bookkeeping ([`Store::begin_system`]):
    /// committed when it succeeds, rolled back when it fails.
    pub async fn in_system<T>(&self, intent: Intent, work: impl AsyncFnOnce(&mut Tx) -> Result<T>) -> Result<T> {
        let mut tx = self.begin_system(intent).await?;
        let out = work(&mut tx).await?;
        tx.commit().await?;
        Ok(out)
    }

    /// Runs `work` acting for one tenant's environment ([`Store::begin_tenant`]):
    /// committed when it succeeds, rolled back when it fails.
    pub async fn in_tenant<T>(
        &self,
        tenant: Uuid,
        livemode: bool,
        intent: Intent,
        work: impl AsyncFnOnce(&mut Tx) -> Result<T>,
    ) -> Result<T> {
        let mut tx = self.begin_tenant(tenant, livemode, intent).await?;
        let out = work(&mut tx).await?;
        tx.commit().await?;
        Ok(out)
    }

    async fn begin_sqlite(writer: &Writer, read: &readers::Pool, intent: Intent) -> Result<Tx> {
        Ok(match intent {
            Intent::Read => Tx::SqliteRead(read.get().await.map_err(Error::internal)?),
            Intent::Write => {
                let mut w = SqliteWrite { conn: writer.clone().lock_owned().await, open: false };
                w.conn()?.execute_batch("BEGIN IMMEDIATE")?;
                w.open = true;
                Tx::Sqlite(w)
            }
        })
    }

    /// On PostgreSQL, wakes `notify` on each notification on `channel` (and after a lost
    /// connection, which may have lost some). Runs until the pool closes; a connection
    /// that fails, the first one included, is tried again with backoff.
    pub async fn listen(&self, channel: &str, notify: std::sync::Arc<tokio::sync::Notify>) -> anyhow::Result<()> {
        self.listening(channel, |_| notify.notify_one()).await
    }

    /// On PostgreSQL, listens for key revocations made by any process sharing the
    /// database and evicts them from this process's key cache. Runs until the pool closes.
    pub async fn listen_for_revocations(&self) -> anyhow::Result<()> {
        // After a lost connection, forget everything cached: a revocation may be lost.
        self.listening(keys::REVOCATION_CHANNEL, |payload| match payload {
            Some(key) => self.keys.evict(key),
            None => self.keys.clear(),
        })
        .await
    }

    /// Calls `on` with each notification's payload on `channel`, and with `None` when
    /// the connection was lost (notifications may have been missed). Connects again with
    /// backoff (half a second, doubling to 30 s) while PostgreSQL is unreachable, also
    /// for the first connection; returns when the pool closes.
    async fn listening(&self, channel: &str, mut on: impl FnMut(Option<&str>)) -> anyhow::Result<()> {
        let Pool::Postgres(pool) = &self.pool else { return Ok(()) };
        let mut backoff = LISTEN_FIRST_BACKOFF;
        loop {
            let connected = async {
                let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
                listener.listen(channel).await?;
                Ok::<_, sqlx::Error>(listener)
            };
            let mut listener = match connected.await {
                Ok(l) => l,
                Err(_) if pool.is_closed() => return Ok(()),
                Err(e) => {
                    tracing::warn!(error = %e, channel, retry_in_ms = backoff.as_millis() as u64, "cannot listen; retrying");
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(LISTEN_MAX_BACKOFF);
                    continue;
                }
            };
            backoff = LISTEN_FIRST_BACKOFF;
            let _counted = Listening::new(&self.listening);
            // `recv` reconnects by itself after an error; the error is reported once.
            loop {
                match listener.recv().await {
                    Ok(n) => {
                        backoff = LISTEN_FIRST_BACKOFF;
                        on(Some(n.payload()))
                    }
                    Err(e) => {
                        on(None);
                        if pool.is_closed() {
                            return Ok(());
                        }
                        tracing::warn!(error = %e, channel, retry_in_ms = backoff.as_millis() as u64, "listener reconnecting");
                        tokio::time::sleep(backoff).await;
                        backoff = (backoff * 2).min(LISTEN_MAX_BACKOFF);
                    }
                }
            }
        }
    }

    pub async fn close(&self) {
        match &self.pool {
            Pool::Sqlite { migrations, writer, read } => {
                read.close();
                writer.lock().await.take();
                migrations.close().await
            }
            Pool::Postgres(p) => p.close().await,
        }
    }

    /// Whether the database answers a query now (readiness).
    pub async fn ping(&self) -> Result<()> {
        self.in_system(Intent::Read, async |tx| tx.fetch_optional(sea_query::Query::select().expr(sea_query::Expr::val(1))).await.map(drop))
            .await
    }

    /// How many of this build's migrations the database has not applied (readiness: a
    /// process started before `gable migrate` ran elsewhere, say).
    pub async fn pending_migrations(&self) -> Result<usize> {
        let (migrator, applied): (&sqlx::migrate::Migrator, Vec<i64>) = match &self.pool {
            Pool::Sqlite { migrations, .. } => {
                (&SQLITE_MIGRATIONS, sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success").fetch_all(migrations).await?)
            }
            Pool::Postgres(p) => {
                (&POSTGRES_MIGRATIONS, sqlx::query_scalar("SELECT version FROM _sqlx_migrations WHERE success").fetch_all(p).await?)
            }
        };
        Ok(migrator.iter().filter(|m| !m.migration_type.is_down_migration() && !applied.contains(&m.version)).count())
    }

    /// This process's database connections: in use, idle, and the most it opens.
    pub fn connections(&self) -> Connections {
        match &self.pool {
            Pool::Postgres(p) => {
                let (size, idle) = (p.size() as usize, p.num_idle());
                let listening = self.listening.load(std::sync::atomic::Ordering::Relaxed).min(size.saturating_sub(idle));
                Connections {
                    in_use: size.saturating_sub(idle + listening),
                    idle,
                    listening,
                    max: p.options().get_max_connections() as usize,
                }
            }
            // The readers' pool, and the one writing connection.
            Pool::Sqlite { read, .. } => {
                let status = read.status();
                let idle = status.available;
                Connections { in_use: status.size.saturating_sub(idle) + 1, idle, listening: 0, max: status.max_size + 1 }
            }
        }
    }

    /// The instance's secret of the given name, created on first use. Shared through the
    /// database, so every process of a deployment signs cursors alike.
    pub async fn instance_secret(&self, name: &str) -> Result<Vec<u8>> {
        let fresh = hex::encode(rand::random::<[u8; 32]>());
        self.in_system(Intent::Write, async |tx| {
            let table = sea_query::Alias::new("instance_secrets");
            let (name_col, value_col) = (sea_query::Alias::new("name"), sea_query::Alias::new("value"));
            tx.execute(
                sea_query::Query::insert()
                    .into_table(table.clone())
                    .columns([name_col.clone(), value_col.clone()])
                    .values_panic([name.into(), fresh.into()])
                    .on_conflict(sea_query::OnConflict::column(name_col.clone()).do_nothing().to_owned()),
            )
            .await?;
            let row = tx
                .fetch_optional(sea_query::Query::select().column(value_col).from(table).and_where(sea_query::Expr::col(name_col).eq(name)))
                .await?;
            let value = row
                .map(|r| r.opt_string("value"))
                .transpose()?
                .flatten()
                .ok_or_else(|| Error::internal(anyhow::anyhow!("instance secret {name} missing")))?;
            hex::decode(value).map_err(Error::internal)
        })
        .await
    }
}

/// Begins a PostgreSQL transaction in a task of its own. sqlx 0.8.6's `begin` is not
/// cancel-safe: a caller dropped while `BEGIN` is on the wire (a client that disconnects,
/// the request timeout) returns its connection to the pool inside an open transaction,
/// and the next borrower's statements run in it (PostgreSQL warns "there is already a
/// transaction in progress"; sqlx issue #4393, unfixed in 0.8.6 and 0.9.0). In a task the
/// begin always completes, and a transaction nobody awaits any more is dropped there,
/// which rolls it back. `tests/it/production/cancellation.rs` shows the difference.
/// `begin`, when given, replaces the plain `BEGIN` (a simple query; it may set settings too).
/// How a PostgreSQL unit of work begins: a read is `READ ONLY`, so that a write slipped
/// into one fails loudly rather than being lost when the read ends without a commit
/// ([`Tx::commit`]).
fn begin_statement(intent: Intent) -> &'static str {
    match intent {
        Intent::Read => "BEGIN READ ONLY",
        Intent::Write => "BEGIN",
    }
}

async fn begin_postgres(pool: &sqlx::PgPool, begin: String) -> Result<sqlx::Transaction<'static, sqlx::Postgres>> {
    let pool = pool.clone();
    let begun = tokio::spawn(async move { pool.begin_with(begin).await });
    match begun.await {
        Ok(begun) => Ok(begun?),
        Err(e) => Err(Error::internal(anyhow::anyhow!("beginning a transaction: {e}"))),
    }
}

/// A process's database connections (`Store::connections`): checked out by work, idle
/// in the pool, and held by `LISTEN`ers (PostgreSQL).
#[derive(Debug, Clone, Copy)]
pub struct Connections {
    pub in_use: usize,
    pub idle: usize,
    pub listening: usize,
    pub max: usize,
}

/// Counts a listener's connection in `Store::listening` while it lives.
struct Listening<'a>(&'a std::sync::atomic::AtomicUsize);

impl<'a> Listening<'a> {
    fn new(count: &'a std::sync::atomic::AtomicUsize) -> Self {
        count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Listening(count)
    }
}

impl Drop for Listening<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl Tx {
    pub fn dialect(&self) -> Dialect {
        match self {
            Tx::Sqlite(_) | Tx::SqliteRead(_) => Dialect::Sqlite,
            Tx::Postgres(..) => Dialect::Postgres,
        }
    }

    /// A statement's SQL in this unit of work's dialect, and its values.
    fn build<S: QueryStatementWriter>(&self, stmt: &S) -> Built {
        let (sql, values) = match self.dialect() {
            Dialect::Sqlite => stmt.build(SqliteQueryBuilder),
            Dialect::Postgres => stmt.build(PostgresQueryBuilder),
        };
        Built { sql: sql.into(), values }
    }

    /// Runs a built statement, with its rows (on PostgreSQL only the first when `one`).
    async fn rows(&mut self, b: Built, one: bool) -> Result<Vec<Row>> {
        Ok(match self {
            Tx::Sqlite(w) => query_owned(&*w.conn()?, &b.sql, &values::for_sqlite(b.values))?,
            Tx::SqliteRead(c) => Self::read_owned(c, b.sql, values::for_sqlite(b.values)).await?,
            Tx::Postgres(t, _) if one => {
                sqlx::query_with(&b.sql, SqlxValues(b.values)).fetch_optional(&mut **t).await?.map(Row::Postgres).into_iter().collect()
            }
            Tx::Postgres(t, _) => {
                sqlx::query_with(&b.sql, SqlxValues(b.values)).fetch_all(&mut **t).await?.into_iter().map(Row::Postgres).collect()
            }
        })
    }

    /// Runs a read on a rusqlite connection, rows and all: first right here on the calling
    /// task, within [`readers::inline::BUDGET`]; a statement that runs longer is interrupted
    /// and run again, whole, on the blocking pool (`readers::inline`).
    async fn read_owned(conn: &readers::Reader, sql: std::sync::Arc<str>, values: sea_query_rusqlite::RusqliteValues) -> Result<Vec<Row>> {
        if let Ok(c) = conn.try_lock() {
            match readers::inline::run(|| query_owned(&c, &sql, &values)) {
                Some(done) => return done.map_err(Error::internal),
                None => crate::observe::metrics::sqlite_read_moved(),
            }
        }
        let rows = conn
            .interact(move |c| query_owned(c, &sql, &values))
            .await
            .map_err(|e| Error::internal(anyhow::anyhow!("sqlite read: {e}")))?
            .map_err(Error::internal)?;
        Ok(rows)
    }

    pub async fn execute<S: QueryStatementWriter>(&mut self, stmt: &S) -> Result<u64> {
        let b = self.build(stmt);
        Ok(match self {
            Tx::Sqlite(w) => w.conn()?.prepare_cached(&b.sql)?.execute(&*values::for_sqlite(b.values).as_params())? as u64,
            Tx::SqliteRead(_) => return Err(Error::internal(anyhow::anyhow!("a write in a read-only unit of work"))),
            Tx::Postgres(t, _) => sqlx::query_with(&b.sql, SqlxValues(b.values)).execute(&mut **t).await?.rows_affected(),
        })
    }

    pub async fn fetch_all<S: QueryStatementWriter>(&mut self, stmt: &S) -> Result<Vec<Row>> {
        let b = self.build(stmt);
        self.rows(b, false).await
    }

    pub async fn fetch_optional<S: QueryStatementWriter>(&mut self, stmt: &S) -> Result<Option<Row>> {
        let b = self.build(stmt);
        Ok(self.rows(b, true).await?.into_iter().next())
    }

    /// [`Tx::fetch_optional`] of a statement whose SQL depends only on its `shape`: built
    /// by `build` the first time the shape is run in this dialect and kept (building SQL
    /// was a tenth of a single-record read's time); each run binds `values`, which must
    /// be the values `build` binds, in its order (checked when the shape is first built).
    pub async fn fetch_optional_shaped<S: QueryStatementWriter>(
        &mut self,
        shape: Shape,
        values: Vec<sea_query::Value>,
        build: impl FnOnce() -> S,
    ) -> Result<Option<Row>> {
        let d = self.dialect();
        let sql = match shapes().read().ok().and_then(|m| m.get(&(shape, d)).cloned()) {
            Some(sql) => sql,
            None => {
                let b = self.build(&build());
                if b.values.0 != values {
                    return Err(Error::internal(anyhow::anyhow!("the statement {shape:?} binds its values in another order")));
                }
                if let Ok(mut m) = shapes().write() {
                    m.insert((shape, d), b.sql.clone());
                }
                b.sql
            }
        };
        Ok(self.rows(Built { sql, values: sea_query::Values(values) }, true).await?.into_iter().next())
    }

    pub async fn commit(self) -> Result<()> {
        match self {
            Tx::Sqlite(mut w) => {
                w.conn()?.execute_batch("COMMIT")?;
                w.open = false;
            }
            Tx::SqliteRead(_) => {}
            // A read-only transaction has nothing to commit. Dropped, it ends with a
            // `ROLLBACK` that sqlx queues on the connection and sends together with the
            // check the pool makes of every returned connection, in a task of its own:
            // the request does not wait a round trip for it.
            Tx::Postgres(t, Intent::Read) => drop(t),
            Tx::Postgres(t, Intent::Write) => t.commit().await?,
        }
        Ok(())
    }
}

/// A column of a result row: by name, or by position (what a caller that chose the
/// columns' order uses, saving a search of the names for every value).
pub trait Col: sqlx::ColumnIndex<PgRow> + Copy + std::fmt::Display {
    fn position(self, names: &[String]) -> Option<usize>;
}

impl Col for &str {
    fn position(self, names: &[String]) -> Option<usize> {
        names.iter().position(|n| n == self)
    }
}

impl Col for usize {
    fn position(self, names: &[String]) -> Option<usize> {
        (self < names.len()).then_some(self)
    }
}

impl Row {
    /// An owned row's value.
    fn owned<'a>(names: &[String], vals: &'a [rusqlite::types::Value], col: impl Col) -> Result<&'a rusqlite::types::Value> {
        col.position(names).map(|i| &vals[i]).ok_or_else(|| Error::internal(anyhow::anyhow!("no column {col}")))
    }

    fn owned_mismatch(col: impl Col) -> Error {
        Error::internal(anyhow::anyhow!("column {col} has an unexpected type"))
    }

    /// Text stored by SQLite, borrowed: for types it has no column type for (uuids,
    /// dates, JSON), parsed from it without a copy.
    fn owned_text<'a>(names: &[String], vals: &'a [rusqlite::types::Value], col: impl Col) -> Result<Option<&'a str>> {
        use rusqlite::types::Value as V;
        match Self::owned(names, vals, col)? {
            V::Null => Ok(None),
            V::Text(s) => Ok(Some(s)),
            _ => Err(Self::owned_mismatch(col)),
        }
    }

    pub fn opt_string(&self, col: impl Col) -> Result<Option<String>> {
        Ok(match self {
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(n, v) => Self::owned_text(n, v, col)?.map(str::to_owned),
        })
    }
    pub fn opt_i64(&self, col: impl Col) -> Result<Option<i64>> {
        use rusqlite::types::Value as V;
        Ok(match self {
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(n, v) => match Self::owned(n, v, col)? {
                V::Null => None,
                V::Integer(i) => Some(*i),
                _ => return Err(Self::owned_mismatch(col)),
            },
        })
    }
    pub fn opt_f64(&self, col: impl Col) -> Result<Option<f64>> {
        use rusqlite::types::Value as V;
        Ok(match self {
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(n, v) => match Self::owned(n, v, col)? {
                V::Null => None,
                V::Real(f) => Some(*f),
                V::Integer(i) => Some(*i as f64),
                _ => return Err(Self::owned_mismatch(col)),
            },
        })
    }
    pub fn opt_bool(&self, col: impl Col) -> Result<Option<bool>> {
        Ok(match self {
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(..) => self.opt_i64(col)?.map(|i| i != 0),
        })
    }
    pub fn opt_uuid(&self, col: impl Col) -> Result<Option<Uuid>> {
        Ok(match self {
            Row::Owned(n, v) => match Self::owned_text(n, v, col)? {
                Some(s) => Some(Uuid::parse_str(s).map_err(Error::internal)?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_date(&self, col: impl Col) -> Result<Option<chrono::NaiveDate>> {
        Ok(match self {
            Row::Owned(n, v) => match Self::owned_text(n, v, col)? {
                Some(s) => Some(crate::domain::value::parse_date(s).ok_or_else(|| Error::internal(anyhow::anyhow!("bad date in {col}")))?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_datetime(&self, col: impl Col) -> Result<Option<chrono::DateTime<chrono::Utc>>> {
        Ok(match self {
            Row::Owned(n, v) => match Self::owned_text(n, v, col)? {
                Some(s) => {
                    Some(crate::domain::value::parse_datetime(s).ok_or_else(|| Error::internal(anyhow::anyhow!("bad time in {col}")))?)
                }
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_json(&self, col: impl Col) -> Result<Option<serde_json::Value>> {
        Ok(match self {
            Row::Owned(n, v) => match Self::owned_text(n, v, col)? {
                Some(s) => Some(serde_json::from_str(s).map_err(Error::internal)?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }

    /// A JSON list of strings (scopes, permissions); empty when NULL.
    pub fn strings(&self, col: impl Col) -> Result<Vec<String>> {
        match self.opt_json(col)? {
            Some(v) if !v.is_null() => serde_json::from_value(v).map_err(Error::internal),
            _ => Ok(vec![]),
        }
    }
}
