//! Storage: one `Store` over SQLite (embedded default) or PostgreSQL (scale-out).
//!
//! Statements whose shape depends on the request are built once with sea-query and
//! run on either database; only execution and row decoding differ per database, and
//! both live here. Each database has its own migrations (`migrations/sqlite`,
//! `migrations/postgres`).

pub mod console;
pub mod deliveries;
pub mod idempotency;
pub mod keys;
pub mod ledger;
pub mod records;
pub mod sandbox;
pub mod schema;

use std::str::FromStr;
use std::time::Duration;

use sea_query::{PostgresQueryBuilder, QueryStatementWriter, SqliteQueryBuilder};
use sea_query_binder::{SqlxBinder, SqlxValues};
use sea_query_rusqlite::RusqliteBinder;
use sqlx::postgres::{PgPoolOptions, PgRow};
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteRow, SqliteSynchronous};
use sqlx::{PgPool, Row as _, SqlitePool};
use uuid::Uuid;

use crate::error::{Error, Result};

static SQLITE_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/sqlite");
static POSTGRES_MIGRATIONS: sqlx::migrate::Migrator = sqlx::migrate!("../migrations/postgres");

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
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

/// SQLite has two pools: sqlx connections for write transactions, and read-only
/// rusqlite connections for reads, where a whole statement runs in one blocking call
/// (sqlx hands each row across threads separately, which dominated list requests).
#[derive(Clone)]
enum Pool {
    Sqlite { write: SqlitePool, read: deadpool_sqlite::Pool },
    Postgres(PgPool),
}

#[derive(Clone)]
pub struct Store {
    pool: Pool,
    keys: keys::KeyCache,
}

/// A unit of database work on either database: a transaction, or (for reads on SQLite)
/// a plain connection in autocommit mode, where one statement is consistent by itself.
pub enum Tx {
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    SqliteRead(deadpool_sqlite::Object),
    Postgres(sqlx::Transaction<'static, sqlx::Postgres>),
}

/// Whether a unit of work writes. SQLite write transactions take the write lock at
/// BEGIN (IMMEDIATE): a deferred one that read first could not upgrade once another
/// connection had committed, and would fail at once instead of waiting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Read,
    Write,
}

/// A result row on either database.
pub enum Row {
    Sqlite(SqliteRow),
    Postgres(PgRow),
    /// A row read through rusqlite, owned: names and values.
    Owned(std::sync::Arc<[String]>, Vec<rusqlite::types::Value>),
}

impl Store {
    /// Opens the database named by `url` (`sqlite://…` or `postgres://…`).
    /// `GABLE_DB_MAX_CONNECTIONS` sizes the pool (defaults: SQLite 4, PostgreSQL 16).
    pub async fn connect(url: &str) -> anyhow::Result<Store> {
        let max = |default: u32| std::env::var("GABLE_DB_MAX_CONNECTIONS").ok().and_then(|v| v.parse().ok()).unwrap_or(default);
        let pool = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Pool::Postgres(PgPoolOptions::new().max_connections(max(16)).acquire_timeout(Duration::from_secs(10)).connect(url).await?)
        } else {
            let opts = SqliteConnectOptions::from_str(url)?
                .create_if_missing(true)
                .journal_mode(SqliteJournalMode::Wal)
                .synchronous(SqliteSynchronous::Normal)
                .foreign_keys(true)
                .busy_timeout(Duration::from_secs(10));
            let write = SqlitePoolOptions::new().max_connections(max(4)).connect_with(opts).await?;
            let path = url.trim_start_matches("sqlite://").trim_start_matches("sqlite:");
            let path = path.split('?').next().unwrap_or(path);
            let read = deadpool_sqlite::Config::new(path)
                .builder(deadpool_sqlite::Runtime::Tokio1)?
                .max_size(max(4) as usize)
                .post_create(deadpool_sqlite::Hook::async_fn(|conn, _| {
                    Box::pin(async move {
                        conn.interact(|c| {
                            c.busy_timeout(Duration::from_secs(10))?;
                            // These connections only read; SQLite itself refuses anything else.
                            c.pragma_update(None, "query_only", true)
                        })
                        .await
                        .map_err(|e| deadpool_sqlite::HookError::Message(e.to_string().into()))?
                        .map_err(deadpool_sqlite::HookError::Backend)
                    })
                }))
                .build()?;
            Pool::Sqlite { write, read }
        };
        Ok(Store { pool, keys: keys::KeyCache::new() })
    }

    pub fn dialect(&self) -> Dialect {
        match self.pool {
            Pool::Sqlite { .. } => Dialect::Sqlite,
            Pool::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Applies the database's migrations (idempotent; safe with several processes).
    pub async fn migrate(&self) -> anyhow::Result<()> {
        match &self.pool {
            Pool::Sqlite { write, .. } => SQLITE_MIGRATIONS.run(write).await?,
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
            Pool::Sqlite { write, read } => Self::begin_sqlite(write, read, intent).await,
            Pool::Postgres(p) => {
                let mut tx = p.begin().await?;
                sqlx::query(
                    "SELECT set_config('role', 'gable_app', true), set_config('gable.tenant_id', $1, true), \
                     set_config('gable.livemode', $2, true)",
                )
                .bind(tenant.to_string())
                .bind(livemode.to_string())
                .execute(&mut *tx)
                .await?;
                Ok(Tx::Postgres(tx))
            }
        }
    }

    /// Begins work for Gable's own bookkeeping (tenants, keys), outside any tenant.
    pub async fn begin_system(&self, intent: Intent) -> Result<Tx> {
        Ok(match &self.pool {
            Pool::Sqlite { write, read } => Self::begin_sqlite(write, read, intent).await?,
            Pool::Postgres(p) => Tx::Postgres(p.begin().await?),
        })
    }

    async fn begin_sqlite(write: &SqlitePool, read: &deadpool_sqlite::Pool, intent: Intent) -> Result<Tx> {
        Ok(match intent {
            Intent::Read => Tx::SqliteRead(read.get().await.map_err(Error::internal)?),
            Intent::Write => Tx::Sqlite(write.begin_with("BEGIN IMMEDIATE").await?),
        })
    }

    /// On PostgreSQL, rings `notify` whenever any process sharing the database notifies
    /// `channel` (after a lost connection too, since notifications may have been missed).
    /// Runs until the pool closes; on SQLite (one process) it returns at once.
    pub async fn listen(&self, channel: &str, notify: std::sync::Arc<tokio::sync::Notify>) -> anyhow::Result<()> {
        let Pool::Postgres(pool) = &self.pool else { return Ok(()) };
        let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
        listener.listen(channel).await?;
        loop {
            match listener.recv().await {
                Ok(_) => notify.notify_one(),
                Err(e) => {
                    notify.notify_one();
                    if pool.is_closed() {
                        return Ok(());
                    }
                    tracing::warn!(error = %e, channel, "listener reconnecting");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    }

    /// On PostgreSQL, listens for key revocations made by any process sharing the
    /// database and evicts them from this process's key cache. Runs until the pool closes.
    pub async fn listen_for_revocations(&self) -> anyhow::Result<()> {
        let Pool::Postgres(pool) = &self.pool else { return Ok(()) };
        let mut listener = sqlx::postgres::PgListener::connect_with(pool).await?;
        listener.listen(keys::REVOCATION_CHANNEL).await?;
        loop {
            match listener.recv().await {
                Ok(n) => self.keys.evict(n.payload()),
                // A lost connection may have lost notifications: forget everything cached.
                Err(e) => {
                    self.keys.clear();
                    if pool.is_closed() {
                        return Ok(());
                    }
                    tracing::warn!(error = %e, "revocation listener reconnecting");
                    tokio::time::sleep(Duration::from_millis(500)).await;
                }
            }
        }
    }

    pub async fn close(&self) {
        match &self.pool {
            Pool::Sqlite { write, read } => {
                read.close();
                write.close().await
            }
            Pool::Postgres(p) => p.close().await,
        }
    }

    /// The instance's secret of the given name, created on first use. Shared through the
    /// database, so every process of a deployment signs cursors alike.
    pub async fn instance_secret(&self, name: &str) -> Result<Vec<u8>> {
        let fresh = hex::encode(rand::random::<[u8; 32]>());
        let mut tx = self.begin_system(Intent::Write).await?;
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
        tx.commit().await?;
        let value = row
            .map(|r| r.opt_string("value"))
            .transpose()?
            .flatten()
            .ok_or_else(|| Error::internal(anyhow::anyhow!("instance secret {name} missing")))?;
        hex::decode(value).map_err(Error::internal)
    }
}

impl Tx {
    pub fn dialect(&self) -> Dialect {
        match self {
            Tx::Sqlite(_) | Tx::SqliteRead(_) => Dialect::Sqlite,
            Tx::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Builds a sea-query statement for this transaction's database.
    pub fn build<S: QueryStatementWriter + SqlxBinder>(&self, stmt: &S) -> (String, SqlxValues) {
        match self {
            Tx::Sqlite(_) | Tx::SqliteRead(_) => stmt.build_sqlx(SqliteQueryBuilder),
            Tx::Postgres(_) => stmt.build_sqlx(PostgresQueryBuilder),
        }
    }

    /// Runs a read on a rusqlite connection in one blocking call, rows and all.
    async fn read_owned<S: RusqliteBinder>(conn: &deadpool_sqlite::Object, stmt: &S) -> Result<Vec<Row>> {
        let (sql, values) = stmt.build_rusqlite(SqliteQueryBuilder);
        let rows = conn
            .interact(move |c| -> rusqlite::Result<Vec<Row>> {
                let mut st = c.prepare_cached(&sql)?;
                let names: std::sync::Arc<[String]> = st.column_names().iter().map(|n| n.to_string()).collect();
                let mut rows = st.query(&*values.as_params())?;
                let mut out = Vec::new();
                while let Some(r) = rows.next()? {
                    let vals = (0..names.len()).map(|i| r.get::<_, rusqlite::types::Value>(i)).collect::<rusqlite::Result<Vec<_>>>()?;
                    out.push(Row::Owned(names.clone(), vals));
                }
                Ok(out)
            })
            .await
            .map_err(|e| Error::internal(anyhow::anyhow!("sqlite read: {e}")))?
            .map_err(Error::internal)?;
        Ok(rows)
    }

    pub async fn execute<S: QueryStatementWriter + SqlxBinder>(&mut self, stmt: &S) -> Result<u64> {
        let (sql, values) = self.build(stmt);
        Ok(match self {
            Tx::Sqlite(t) => sqlx::query_with(&sql, values).execute(&mut **t).await?.rows_affected(),
            Tx::SqliteRead(_) => return Err(Error::internal(anyhow::anyhow!("a write in a read-only unit of work"))),
            Tx::Postgres(t) => sqlx::query_with(&sql, values).execute(&mut **t).await?.rows_affected(),
        })
    }

    pub async fn fetch_all<S: QueryStatementWriter + SqlxBinder + RusqliteBinder>(&mut self, stmt: &S) -> Result<Vec<Row>> {
        if let Tx::SqliteRead(c) = self {
            return Self::read_owned(c, stmt).await;
        }
        let (sql, values) = self.build(stmt);
        Ok(match self {
            Tx::Sqlite(t) => sqlx::query_with(&sql, values).fetch_all(&mut **t).await?.into_iter().map(Row::Sqlite).collect(),
            Tx::SqliteRead(_) => unreachable!("handled above"),
            Tx::Postgres(t) => sqlx::query_with(&sql, values).fetch_all(&mut **t).await?.into_iter().map(Row::Postgres).collect(),
        })
    }

    pub async fn fetch_optional<S: QueryStatementWriter + SqlxBinder + RusqliteBinder>(&mut self, stmt: &S) -> Result<Option<Row>> {
        if let Tx::SqliteRead(c) = self {
            return Ok(Self::read_owned(c, stmt).await?.into_iter().next());
        }
        let (sql, values) = self.build(stmt);
        Ok(match self {
            Tx::Sqlite(t) => sqlx::query_with(&sql, values).fetch_optional(&mut **t).await?.map(Row::Sqlite),
            Tx::SqliteRead(_) => unreachable!("handled above"),
            Tx::Postgres(t) => sqlx::query_with(&sql, values).fetch_optional(&mut **t).await?.map(Row::Postgres),
        })
    }

    pub async fn commit(self) -> Result<()> {
        match self {
            Tx::Sqlite(t) => t.commit().await?,
            Tx::SqliteRead(_) => {}
            Tx::Postgres(t) => t.commit().await?,
        }
        Ok(())
    }
}

impl Row {
    /// An owned row's value by column name.
    fn owned<'a>(names: &[String], vals: &'a [rusqlite::types::Value], col: &str) -> Result<&'a rusqlite::types::Value> {
        names.iter().position(|n| n == col).map(|i| &vals[i]).ok_or_else(|| Error::internal(anyhow::anyhow!("no column {col}")))
    }

    fn owned_mismatch(col: &str) -> Error {
        Error::internal(anyhow::anyhow!("column {col} has an unexpected type"))
    }

    pub fn opt_string(&self, col: &str) -> Result<Option<String>> {
        use rusqlite::types::Value as V;
        Ok(match self {
            Row::Sqlite(r) => r.try_get(col)?,
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(n, v) => match Self::owned(n, v, col)? {
                V::Null => None,
                V::Text(s) => Some(s.clone()),
                _ => return Err(Self::owned_mismatch(col)),
            },
        })
    }
    pub fn opt_i64(&self, col: &str) -> Result<Option<i64>> {
        use rusqlite::types::Value as V;
        Ok(match self {
            Row::Sqlite(r) => r.try_get(col)?,
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(n, v) => match Self::owned(n, v, col)? {
                V::Null => None,
                V::Integer(i) => Some(*i),
                _ => return Err(Self::owned_mismatch(col)),
            },
        })
    }
    pub fn opt_f64(&self, col: &str) -> Result<Option<f64>> {
        use rusqlite::types::Value as V;
        Ok(match self {
            Row::Sqlite(r) => r.try_get(col)?,
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(n, v) => match Self::owned(n, v, col)? {
                V::Null => None,
                V::Real(f) => Some(*f),
                V::Integer(i) => Some(*i as f64),
                _ => return Err(Self::owned_mismatch(col)),
            },
        })
    }
    pub fn opt_bool(&self, col: &str) -> Result<Option<bool>> {
        Ok(match self {
            Row::Sqlite(r) => r.try_get(col)?,
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(..) => self.opt_i64(col)?.map(|i| i != 0),
        })
    }
    pub fn opt_uuid(&self, col: &str) -> Result<Option<Uuid>> {
        Ok(match self {
            Row::Sqlite(_) | Row::Owned(..) => match self.sqlite_text(col)? {
                Some(s) => Some(Uuid::parse_str(&s).map_err(Error::internal)?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_date(&self, col: &str) -> Result<Option<chrono::NaiveDate>> {
        Ok(match self {
            Row::Sqlite(_) | Row::Owned(..) => match self.sqlite_text(col)? {
                Some(s) => Some(crate::domain::value::parse_date(&s).ok_or_else(|| Error::internal(anyhow::anyhow!("bad date in {col}")))?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_datetime(&self, col: &str) -> Result<Option<chrono::DateTime<chrono::Utc>>> {
        Ok(match self {
            Row::Sqlite(_) | Row::Owned(..) => match self.sqlite_text(col)? {
                Some(s) => {
                    Some(crate::domain::value::parse_datetime(&s).ok_or_else(|| Error::internal(anyhow::anyhow!("bad time in {col}")))?)
                }
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_json(&self, col: &str) -> Result<Option<serde_json::Value>> {
        Ok(match self {
            Row::Sqlite(_) | Row::Owned(..) => match self.sqlite_text(col)? {
                Some(s) => Some(serde_json::from_str(&s).map_err(Error::internal)?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }

    /// Text stored by SQLite for types it has no column type for (uuids, dates, JSON).
    fn sqlite_text(&self, col: &str) -> Result<Option<String>> {
        match self {
            Row::Sqlite(r) => Ok(r.try_get(col)?),
            _ => self.opt_string(col),
        }
    }
}
