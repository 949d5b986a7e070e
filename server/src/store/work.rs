//! Units of work ([`Tx`]) on either database: beginning one for a tenant's environment or
//! for Gable's own bookkeeping, running statements in it, and committing it.

use sea_query::{PostgresQueryBuilder, QueryStatementWriter, SqliteQueryBuilder};
use sea_query_binder::SqlxValues;
use uuid::Uuid;

use super::pool::Pool;
use super::rows::Row;
use super::writer::{SqliteWrite, Writer};
use super::{readers, values, Dialect, Store};
use crate::error::{Error, Result};

/// A unit of database work on either database: a transaction, or (for reads on SQLite)
/// a plain connection in autocommit mode, where one statement is consistent by itself.
pub enum Tx {
    Sqlite(SqliteWrite),
    /// A read-only connection; in a deferred transaction when `true` (a snapshot).
    SqliteRead(readers::Reader, bool),
    /// A transaction on PostgreSQL; `READ ONLY` when its intent is to read.
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>, Intent),
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
    /// One statement, or several that need not agree with each other.
    Read,
    /// Several reads that must see one state of the database (a page and the records it
    /// expands): `REPEATABLE READ` on PostgreSQL, a transaction on SQLite's read
    /// connection. A plain read costs less on both.
    Snapshot,
    Write,
}

/// A statement ready to run: its SQL in one dialect, and its values.
pub(super) struct Built {
    pub(super) sql: std::sync::Arc<str>,
    pub(super) values: sea_query::Values,
}

impl Store {
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

    /// Runs `work` writing the request log (`request_logs`), for every tenant: committed
    /// when it succeeds, rolled back when it fails. On SQLite the log is a file of its own
    /// with a writing connection of its own (`pool::request_log_file`), so this never
    /// waits for the database's writer nor makes it wait; the work may touch nothing else.
    /// On PostgreSQL it is Gable's own work like any ([`Store::in_system`]).
    pub async fn in_request_log<T>(&self, work: impl AsyncFnOnce(&mut Tx) -> Result<T>) -> Result<T> {
        let mut tx = match &self.pool {
            Pool::Sqlite { log, read, .. } => Self::begin_sqlite(log, read, Intent::Write).await?,
            Pool::Postgres(_) => self.begin_system(Intent::Write).await?,
        };
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
            Intent::Read => Tx::SqliteRead(read.get().await.map_err(Error::internal)?, false),
            Intent::Snapshot => {
                let conn = read.get().await.map_err(Error::internal)?;
                // Ended by `commit`; one dropped without it is rolled back when the pool
                // hands the connection out again (`readers`).
                sqlite_batch(&conn, "BEGIN").await?;
                Tx::SqliteRead(conn, true)
            }
            Intent::Write => {
                let mut w = SqliteWrite { conn: writer.clone().lock_owned().await, open: false };
                w.conn()?.execute_batch("BEGIN IMMEDIATE")?;
                w.open = true;
                Tx::Sqlite(w)
            }
        })
    }
}

/// How a PostgreSQL unit of work begins: a read is `READ ONLY`, so that a write slipped
/// into one fails loudly rather than being lost when the read ends without a commit
/// ([`Tx::commit`]).
fn begin_statement(intent: Intent) -> &'static str {
    match intent {
        Intent::Read => "BEGIN READ ONLY",
        Intent::Snapshot => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        Intent::Write => "BEGIN",
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
/// Runs a statement without rows (`BEGIN`, `COMMIT`) on a read connection.
async fn sqlite_batch(conn: &readers::Reader, sql: &'static str) -> Result<()> {
    if let Ok(c) = conn.try_lock() {
        return c.execute_batch(sql).map_err(Error::internal);
    }
    conn.interact(move |c| c.execute_batch(sql))
        .await
        .map_err(|e| Error::internal(anyhow::anyhow!("sqlite {sql}: {e}")))?
        .map_err(Error::internal)
}

async fn begin_postgres(pool: &sqlx::PgPool, begin: String) -> Result<sqlx::Transaction<'static, sqlx::Postgres>> {
    let pool = pool.clone();
    let begun = tokio::spawn(async move { pool.begin_with(begin).await });
    match begun.await {
        Ok(begun) => Ok(begun?),
        Err(e) => Err(Error::internal(anyhow::anyhow!("beginning a transaction: {e}"))),
    }
}

impl Tx {
    pub fn dialect(&self) -> Dialect {
        match self {
            Tx::Sqlite(_) | Tx::SqliteRead(..) => Dialect::Sqlite,
            Tx::Postgres(..) => Dialect::Postgres,
        }
    }

    /// A statement's SQL in this unit of work's dialect, and its values.
    pub(super) fn build<S: QueryStatementWriter>(&self, stmt: &S) -> Built {
        let (sql, values) = match self.dialect() {
            Dialect::Sqlite => stmt.build(SqliteQueryBuilder),
            Dialect::Postgres => stmt.build(PostgresQueryBuilder),
        };
        Built { sql: sql.into(), values }
    }

    /// Runs a built statement, with its rows (on PostgreSQL only the first when `one`).
    pub(super) async fn rows(&mut self, b: Built, one: bool) -> Result<Vec<Row>> {
        super::count::one();
        Ok(match self {
            Tx::Sqlite(w) => query_owned(&*w.conn()?, &b.sql, &values::for_sqlite(b.values))?,
            Tx::SqliteRead(c, _) => Self::read_owned(c, b.sql, values::for_sqlite(b.values)).await?,
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
        super::count::one();
        Ok(match self {
            Tx::Sqlite(w) => w.conn()?.prepare_cached(&b.sql)?.execute(&*values::for_sqlite(b.values).as_params())? as u64,
            Tx::SqliteRead(..) => return Err(Error::internal(anyhow::anyhow!("a write in a read-only unit of work"))),
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

    pub async fn commit(self) -> Result<()> {
        match self {
            Tx::Sqlite(mut w) => {
                w.conn()?.execute_batch("COMMIT")?;
                w.open = false;
            }
            Tx::SqliteRead(_, false) => {}
            Tx::SqliteRead(c, true) => {
                sqlite_batch(&c, "COMMIT").await?;
            }
            // A read-only transaction has nothing to commit. Dropped, it ends with a
            // `ROLLBACK` that sqlx queues on the connection and sends together with the
            // check the pool makes of every returned connection, in a task of its own:
            // the request does not wait a round trip for it.
            Tx::Postgres(t, Intent::Read | Intent::Snapshot) => drop(t),
            Tx::Postgres(t, Intent::Write) => t.commit().await?,
        }
        Ok(())
    }
}
