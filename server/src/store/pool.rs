//! The connection pools: SQLite's one writing connection (`writer.rs`) and read-only ones
//! (`readers.rs`), or PostgreSQL's pool; opening them, which database they are, applying
//! the migrations and closing them.

use std::str::FromStr;
use std::time::Duration;

use sqlx::postgres::PgPoolOptions;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{PgPool, SqlitePool};

use super::writer::{checkpointer, Writer};
use super::{keys, readers, Dialect, Store};
use crate::error::{Error, Result};

pub(super) static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
pub(super) static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");
/// The request log's own file on SQLite ([`request_log_file`]).
pub(super) static REQUEST_LOG_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite-request-log");

/// The name the read connections know the request log's file by (`ATTACH … AS`); its
/// table is read unqualified, as on PostgreSQL, since the database itself has none.
pub(super) const REQUEST_LOG_SCHEMA: &str = "request_log";

/// Where SQLite keeps the request log: a file of its own beside the database
/// (`gable.db` → `gable-request-log.db`), written by a connection of its own
/// ([`Pool::Sqlite`]'s `log`), so that its batches never take the writer's turn from
/// requests and its pages never grow the database's write-ahead log. It holds only the
/// log, which is a week of operational history: backups leave it out.
pub fn request_log_file(db: &std::path::Path) -> std::path::PathBuf {
    let stem = db.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "gable".into());
    db.with_file_name(format!("{stem}-request-log.db"))
}

/// SQLite has one writing connection and a pool of read-only ones, all rusqlite:
/// - reads run a whole statement at once on a pooled read-only connection (`readers`),
///   on the calling task unless it runs long (`readers::inline`); sqlx handed each row across
///   threads separately, which dominated list requests;
/// - writes run on the one writing connection, statement by statement, on the calling
///   task itself (see [`SqliteWrite`](super::SqliteWrite));
/// - the request log is a file of its own ([`request_log_file`]) with a writing
///   connection of its own (`log`), attached to every read connection;
/// - sqlx's connections are kept for the migrations only.
#[derive(Clone)]
pub(super) enum Pool {
    Sqlite { migrations: SqlitePool, log_migrations: SqlitePool, writer: Writer, log: Writer, read: readers::Pool },
    Postgres(PgPool),
}

/// A pooled PostgreSQL connection idle this long is checked (a round trip) before it is
/// handed out; a busier one is not: sqlx already checks each connection as it comes back,
/// and one lost in between fails its first statement, answered `503` and then discarded.
const CHECK_IDLE_AFTER: Duration = Duration::from_secs(1);
/// How soon the scheduler brings SQLite's planner statistics up to date again: a minute
/// after the first time, then twice as long each time, up to hourly. A new database's
/// tables grow from nothing, and plans made from an empty table's statistics are the
/// worst (a query walking a tenant's every event, `docs/benchmarks.md`); an hour's wait
/// for the first correction was how one stayed wrong through a whole soak.
const STATISTICS_FIRST: Duration = Duration::from_secs(60);
const STATISTICS_EVERY: Duration = Duration::from_secs(3600);

/// How long a request waits for a PostgreSQL connection before it is answered `503
/// service_unavailable`: long enough for a busy pool, short enough that an outage is
/// reported at once rather than after a hang.
const ACQUIRE_TIMEOUT: Duration = Duration::from_secs(2);

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
            let migrations = SqlitePoolOptions::new().max_connections(1).connect_with(opts.clone()).await?;
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
            // The request log's file, made private before SQLite first opens it (its
            // `-wal` and `-shm` take its mode): it holds what integrations sent.
            let log_path = request_log_file(std::path::Path::new(path));
            match crate::private_files::create_private_file(&log_path) {
                Ok(_) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => anyhow::bail!("cannot create the request log's database {}: {e}", log_path.display()),
            }
            let log_migrations =
                SqlitePoolOptions::new().max_connections(1).connect_with(opts.filename(&log_path).foreign_keys(false)).await?;
            // The log's own checkpoints run in its writer's commits (off every request's path).
            let log = rusqlite::Connection::open(&log_path)?;
            log.busy_timeout(Duration::from_secs(10))?;
            log.execute_batch("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;")?;
            log.set_prepared_statement_cache_capacity(16);
            let log = std::sync::Arc::new(tokio::sync::Mutex::new(Some(std::sync::Mutex::new(log))));
            let log_path = log_path.to_str().ok_or_else(|| anyhow::anyhow!("the path {} is not UTF-8", log_path.display()))?;
            let read = readers::Readers::pool(path, Some((log_path, REQUEST_LOG_SCHEMA)), max(4) as usize)?;
            Pool::Sqlite { migrations, log_migrations, writer, log, read }
        };
        Ok(Store { pool, keys: keys::KeyCache::new(), listening: Default::default(), analyzed: Default::default() })
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

    /// Applies the database's migrations (idempotent; safe with several processes), then
    /// brings the planner's statistics up to date.
    pub async fn migrate(&self) -> anyhow::Result<()> {
        match &self.pool {
            Pool::Sqlite { migrations, log_migrations, .. } => {
                SQLITE_MIGRATIONS.run(migrations).await?;
                REQUEST_LOG_MIGRATIONS.run(log_migrations).await?;
            }
            Pool::Postgres(p) => POSTGRES_MIGRATIONS.run(p).await?,
        }
        self.refresh_statistics().await?;
        Ok(())
    }

    /// Brings SQLite's query planner statistics up to date: a bounded `ANALYZE` (about 400
    /// rows of each index), after which the read connections are replaced as they are next
    /// taken, since a connection keeps the statistics it opened with. Without them SQLite
    /// walks a table in `created_at` order to find a lease's few charges (67 ms among
    /// 50,000 charges) instead of looking them up by `lease_id` (0.2 ms). Run after the
    /// migrations and by the scheduler now and then (`refresh_statistics_if_due`).
    /// PostgreSQL keeps its own statistics (autovacuum): nothing to do.
    pub async fn refresh_statistics(&self) -> Result<()> {
        if let Pool::Sqlite { writer, log, read, .. } = &self.pool {
            for w in [writer, log] {
                let held = w.lock().await;
                let Some(conn) = held.as_ref() else { return Ok(()) };
                let conn = conn.lock().map_err(|_| Error::internal(anyhow::anyhow!("a SQLite writing connection was poisoned")))?;
                conn.execute_batch("PRAGMA analysis_limit = 400; ANALYZE;")?;
            }
            read.manager().statistics_changed();
            let mut last = self.analyzed.lock().map_err(|_| Error::internal(anyhow::anyhow!("a lock was poisoned")))?;
            let wait = last.map_or(STATISTICS_FIRST, |(_, wait)| (wait * 2).min(STATISTICS_EVERY));
            *last = Some((std::time::Instant::now(), wait));
        }
        Ok(())
    }

    /// [`Store::refresh_statistics`] when the last refresh is old enough: a minute at first,
    /// then longer each time, up to an hour ([`STATISTICS_FIRST`]): tables grow.
    pub async fn refresh_statistics_if_due(&self) -> Result<()> {
        let due = match self.analyzed.lock() {
            Ok(last) => last.is_none_or(|(at, wait)| at.elapsed() >= wait),
            Err(_) => true,
        };
        if due {
            self.refresh_statistics().await?;
        }
        Ok(())
    }

    pub async fn close(&self) {
        match &self.pool {
            Pool::Sqlite { migrations, log_migrations, writer, log, read } => {
                read.close();
                writer.lock().await.take();
                log.lock().await.take();
                migrations.close().await;
                log_migrations.close().await
            }
            Pool::Postgres(p) => p.close().await,
        }
    }
}
