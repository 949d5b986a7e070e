//! SQLite's read-only connections, pooled (deadpool). Each runs its reads on the calling
//! task first and on the blocking pool when one runs long (`inline`), so a connection is held behind a lock that a blocking thread can take too
//! (`SyncWrapper`).
//!
//! A generic deadpool manager rather than deadpool-sqlite's: that one checks every
//! connection on every checkout with a query on the blocking pool (`SELECT $1`, parsed
//! each time), which cost a thread hand-off per request, more than the read itself. A
//! read-only connection does not go bad between two reads; one whose lock was poisoned by
//! a panic is dropped.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use deadpool::managed::{self, Metrics, RecycleError, RecycleResult};
use deadpool::Runtime;
use deadpool_sync::SyncWrapper;

pub type Pool = managed::Pool<Readers>;
pub type Reader = managed::Object<Readers>;

/// Opens read-only connections to one database file, with another attached to each.
pub struct Readers {
    path: String,
    /// A file attached to every connection, and its schema name (the request log's).
    attached: Option<(String, String)>,
    /// When this manager began: what `stale_before` counts from.
    began: Instant,
    /// Connections opened before this many nanoseconds after `began` are closed at their
    /// next checkout (`statistics_changed`).
    stale_before: AtomicU64,
}

impl Readers {
    pub fn pool(path: &str, attached: Option<(&str, &str)>, max: usize) -> anyhow::Result<Pool> {
        let attached = attached.map(|(file, schema)| (file.to_string(), schema.to_string()));
        let manager = Readers { path: path.to_string(), attached, began: Instant::now(), stale_before: AtomicU64::new(0) };
        Ok(Pool::builder(manager).max_size(max).runtime(Runtime::Tokio1).build()?)
    }

    /// The planner's statistics were brought up to date (`ANALYZE` on the writer): a
    /// connection loads them when it opens and keeps them, so the ones open now are
    /// replaced as they are next taken.
    pub fn statistics_changed(&self) {
        self.stale_before.store(self.began.elapsed().as_nanos() as u64, Ordering::Relaxed);
    }
}

impl managed::Manager for Readers {
    type Type = SyncWrapper<rusqlite::Connection>;
    type Error = rusqlite::Error;

    async fn create(&self) -> Result<Self::Type, Self::Error> {
        let (path, attached) = (self.path.clone(), self.attached.clone());
        SyncWrapper::new(Runtime::Tokio1, move || {
            let c = rusqlite::Connection::open(path)?;
            c.busy_timeout(Duration::from_secs(10))?;
            if let Some((file, schema)) = attached {
                c.execute("ATTACH DATABASE ?1 AS ?2", [file, schema])?;
            }
            c.set_prepared_statement_cache_capacity(64);
            c.progress_handler(inline::CHECK_EVERY, Some(inline::over_budget));
            // These connections only read; SQLite itself refuses anything else.
            c.pragma_update(None, "query_only", true)?;
            // Plans never depend on bound values. Otherwise a statement comparing a column
            // with a parameter where a partial index is conditioned on that column (a
            // list filtered on `status`, beside `leases_rent_next_due … WHERE status =
            // 'active'`) is prepared again every time it is run: a fifth of a list page.
            // Queries meant for a partial index say its condition as a literal.
            c.set_db_config(rusqlite::config::DbConfig::SQLITE_DBCONFIG_ENABLE_QPSG, true)?;
            Ok(c)
        })
        .await
    }

    async fn recycle(&self, conn: &mut Self::Type, metrics: &Metrics) -> RecycleResult<Self::Error> {
        if conn.is_mutex_poisoned() {
            return Err(RecycleError::message("a read panicked holding the connection"));
        }
        let opened = metrics.created.saturating_duration_since(self.began).as_nanos() as u64;
        if opened < self.stale_before.load(Ordering::Relaxed) {
            return Err(RecycleError::message("opened before the planner's statistics changed"));
        }
        // A snapshot (`Intent::Snapshot`) whose unit of work was dropped before its end
        // (an error, a cancelled request) is still open: end it, or drop a connection
        // that is still running its statement.
        match conn.try_lock() {
            Ok(c) if c.is_autocommit() => Ok(()),
            Ok(c) => c.execute_batch("ROLLBACK").map_err(RecycleError::Backend),
            Err(_) => Err(RecycleError::message("a read is still running on the connection")),
        }
    }
}

/// SQLite reads run on the calling task: a read of a few rows takes microseconds, and
/// handing it to a blocking thread and back (two context switches) cost several times the
/// read itself, a quarter of a single-record read's CPU. A statement that runs past
/// `BUDGET` (a scan through a filter no index serves, a report) must not hold a runtime
/// thread: the read connections' progress handler interrupts it, and it is run again,
/// whole, on the blocking pool, with no budget. A read-only statement in autocommit mode
/// changes nothing, so running it again is safe; what the interrupted try cost is at most
/// `BUDGET`.
pub(super) mod inline {
    use std::cell::Cell;
    use std::time::{Duration, Instant};

    /// How long a read may hold the calling task.
    pub const BUDGET: Duration = Duration::from_millis(3);
    /// Virtual-machine steps between two looks at the clock (a few microseconds).
    pub const CHECK_EVERY: std::ffi::c_int = 1_000;

    thread_local! {
        /// The deadline of the inline read running on this thread, if one is.
        static DEADLINE: Cell<Option<Instant>> = const { Cell::new(None) };
    }

    /// The read connections' progress handler: interrupts an inline read past its
    /// deadline; never one running on the blocking pool (no deadline on that thread).
    pub fn over_budget() -> bool {
        DEADLINE.with(|d| d.get().is_some_and(|at| Instant::now() > at))
    }

    /// Runs `read` within the budget: `None` when it was interrupted for running past it.
    pub fn run<T>(read: impl FnOnce() -> rusqlite::Result<T>) -> Option<rusqlite::Result<T>> {
        DEADLINE.with(|d| d.set(Some(Instant::now() + BUDGET)));
        let out = read();
        DEADLINE.with(|d| d.set(None));
        match out {
            Err(rusqlite::Error::SqliteFailure(e, _)) if e.code == rusqlite::ErrorCode::OperationInterrupted => None,
            done => Some(done),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counts to `n` in SQL: a read whose length is set by its argument.
    const COUNT: &str = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ?1) SELECT count(*) FROM c";

    #[tokio::test]
    async fn a_long_read_leaves_the_calling_task_and_still_answers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        rusqlite::Connection::open(&path).unwrap().execute_batch("CREATE TABLE t (x INTEGER)").unwrap();
        let pool = Readers::pool(path.to_str().unwrap(), None, 1).unwrap();
        let conn = pool.get().await.unwrap();

        let short = {
            let c = conn.try_lock().unwrap();
            inline::run(|| c.query_row(COUNT, [10], |r| r.get::<_, i64>(0)))
        };
        assert_eq!(short.map(|r| r.unwrap()), Some(10), "a short read runs inline");

        let long = {
            let c = conn.try_lock().unwrap();
            inline::run(|| c.query_row(COUNT, [50_000_000], |r| r.get::<_, i64>(0)))
        };
        assert!(long.is_none(), "a read past the budget is interrupted, not finished inline");

        // On the blocking pool there is no budget: the same read runs to its end.
        let n = conn.interact(|c| c.query_row(COUNT, [2_000_000], |r| r.get::<_, i64>(0))).await.unwrap().unwrap();
        assert_eq!(n, 2_000_000);

        // The connection still serves, and refuses writes.
        let c = conn.try_lock().unwrap();
        assert!(c.execute("INSERT INTO t VALUES (1)", []).is_err());
    }

    /// A connection keeps the planner statistics it opened with: once the writer analysed
    /// the tables, the next read takes a connection that sees them, and uses the index
    /// the statistics point to instead of walking the table in `created_at` order.
    #[tokio::test]
    async fn connections_opened_before_new_statistics_are_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let writer = rusqlite::Connection::open(&path).unwrap();
        writer
            .execute_batch(
                "PRAGMA journal_mode = WAL; CREATE TABLE c (tenant TEXT, live INTEGER, lease TEXT, created TEXT, id INTEGER);
                 CREATE INDEX c_created ON c (tenant, live, created, id); CREATE INDEX c_lease ON c (tenant, live, lease);
                 WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM n WHERE x < 20000)
                 INSERT INTO c SELECT 't', 0, 'l' || (x % 10000), printf('%08d', x), x FROM n;",
            )
            .unwrap();
        let pool = Readers::pool(path.to_str().unwrap(), None, 1).unwrap();
        const PLAN: &str =
            "EXPLAIN QUERY PLAN SELECT * FROM c WHERE tenant = 't' AND live = 0 AND lease = 'l7' ORDER BY created DESC, id DESC LIMIT 5";
        let plan = |c: &rusqlite::Connection| c.query_row(PLAN, [], |r| r.get::<_, String>(3)).unwrap();
        let first = pool.get().await.unwrap();
        let opened = managed::Object::metrics(&first).created;
        assert!(plan(&first.try_lock().unwrap()).contains("c_created"), "without statistics, the order's index");
        drop(first);

        writer.execute_batch("PRAGMA analysis_limit = 400; ANALYZE;").unwrap();
        pool.manager().statistics_changed();
        let next = pool.get().await.unwrap();
        assert!(managed::Object::metrics(&next).created > opened, "a connection opened after the statistics");
        assert!(plan(&next.try_lock().unwrap()).contains("c_lease"), "with them, the lookup by lease");
    }

    /// A snapshot's unit of work dropped before its end (an error, a cancelled request)
    /// must not hand its open transaction, and its old view of the database, to the next
    /// read on the connection.
    #[tokio::test]
    async fn a_snapshot_left_open_is_rolled_back_before_the_next_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("r.db");
        let writer = rusqlite::Connection::open(&path).unwrap();
        writer.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x INTEGER); INSERT INTO t VALUES (1)").unwrap();
        let pool = Readers::pool(path.to_str().unwrap(), None, 1).unwrap();
        let count = |c: &rusqlite::Connection| c.query_row("SELECT count(*) FROM t", [], |r| r.get::<_, i64>(0)).unwrap();
        {
            let conn = pool.get().await.unwrap();
            let c = conn.try_lock().unwrap();
            c.execute_batch("BEGIN").unwrap();
            assert_eq!(count(&c), 1);
        }
        writer.execute("INSERT INTO t VALUES (2)", []).unwrap();
        let conn = pool.get().await.unwrap();
        let c = conn.try_lock().unwrap();
        assert!(c.is_autocommit(), "the connection came back in a transaction");
        assert_eq!(count(&c), 2, "the next read sees the database as it is now");
    }
}
