//! Storage: one `Store` over SQLite (embedded default) or PostgreSQL (scale-out).
//!
//! Statements whose shape depends on the request are built once with sea-query and
//! run on either database; only execution and row decoding differ per database, and
//! both live here. Each database has its own migrations (`migrations/sqlite`,
//! `migrations/postgres`).

pub mod keys;
pub mod records;
pub mod schema;

use std::str::FromStr;
use std::time::Duration;

use sea_query::{PostgresQueryBuilder, QueryStatementWriter, SqliteQueryBuilder};
use sea_query_binder::{SqlxBinder, SqlxValues};
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

#[derive(Clone)]
enum Pool {
    Sqlite(SqlitePool),
    Postgres(PgPool),
}

#[derive(Clone)]
pub struct Store {
    pool: Pool,
}

/// A unit of database work on either database: a transaction, or (for reads on SQLite)
/// a plain connection in autocommit mode, where one statement is consistent by itself.
pub enum Tx {
    Sqlite(sqlx::Transaction<'static, sqlx::Sqlite>),
    SqliteRead(sqlx::pool::PoolConnection<sqlx::Sqlite>),
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
}

impl Store {
    /// Opens the database named by `url` (`sqlite://…` or `postgres://…`).
    pub async fn connect(url: &str) -> anyhow::Result<Store> {
        let pool = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
            Pool::Postgres(
                PgPoolOptions::new()
                    .max_connections(16)
                    .acquire_timeout(Duration::from_secs(10))
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
            Pool::Sqlite(SqlitePoolOptions::new().max_connections(8).connect_with(opts).await?)
        };
        Ok(Store { pool })
    }

    pub fn dialect(&self) -> Dialect {
        match self.pool {
            Pool::Sqlite(_) => Dialect::Sqlite,
            Pool::Postgres(_) => Dialect::Postgres,
        }
    }

    /// Applies the database's migrations (idempotent; safe with several processes).
    pub async fn migrate(&self) -> anyhow::Result<()> {
        match &self.pool {
            Pool::Sqlite(p) => SQLITE_MIGRATIONS.run(p).await?,
            Pool::Postgres(p) => POSTGRES_MIGRATIONS.run(p).await?,
        }
        Ok(())
    }

    /// Begins work acting for one tenant. On PostgreSQL it is a transaction that runs
    /// as the `gable_app` role with `gable.tenant_id` set, so row-level security applies.
    pub async fn begin_tenant(&self, tenant: Uuid, intent: Intent) -> Result<Tx> {
        match &self.pool {
            Pool::Sqlite(p) => Self::begin_sqlite(p, intent).await,
            Pool::Postgres(p) => {
                let mut tx = p.begin().await?;
                sqlx::query("SELECT set_config('role', 'gable_app', true), set_config('gable.tenant_id', $1, true)")
                    .bind(tenant.to_string())
                    .execute(&mut *tx)
                    .await?;
                Ok(Tx::Postgres(tx))
            }
        }
    }

    /// Begins work for Gable's own bookkeeping (tenants, keys), outside any tenant.
    pub async fn begin_system(&self, intent: Intent) -> Result<Tx> {
        Ok(match &self.pool {
            Pool::Sqlite(p) => Self::begin_sqlite(p, intent).await?,
            Pool::Postgres(p) => Tx::Postgres(p.begin().await?),
        })
    }

    async fn begin_sqlite(p: &SqlitePool, intent: Intent) -> Result<Tx> {
        Ok(match intent {
            Intent::Read => Tx::SqliteRead(p.acquire().await?),
            Intent::Write => Tx::Sqlite(p.begin_with("BEGIN IMMEDIATE").await?),
        })
    }

    pub async fn close(&self) {
        match &self.pool {
            Pool::Sqlite(p) => p.close().await,
            Pool::Postgres(p) => p.close().await,
        }
    }

    /// The instance's secret of the given name, created on first use. Shared through the
    /// database, so every process of a deployment signs cursors alike.
    pub async fn instance_secret(&self, name: &str) -> Result<Vec<u8>> {
        let fresh = hex::encode(rand::random::<[u8; 32]>());
        let mut tx = self.begin_system(Intent::Write).await?;
        let value: String = match &mut tx {
            Tx::SqliteRead(_) => unreachable!("a write intent opens a transaction"),
            Tx::Sqlite(t) => {
                sqlx::query("INSERT INTO instance_secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING")
                    .bind(name)
                    .bind(&fresh)
                    .execute(&mut **t)
                    .await?;
                sqlx::query("SELECT value FROM instance_secrets WHERE name = ?").bind(name).fetch_one(&mut **t).await?.try_get(0)?
            }
            Tx::Postgres(t) => {
                sqlx::query("INSERT INTO instance_secrets (name, value) VALUES ($1, $2) ON CONFLICT (name) DO NOTHING")
                    .bind(name)
                    .bind(&fresh)
                    .execute(&mut **t)
                    .await?;
                sqlx::query("SELECT value FROM instance_secrets WHERE name = $1").bind(name).fetch_one(&mut **t).await?.try_get(0)?
            }
        };
        tx.commit().await?;
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

    pub async fn execute<S: QueryStatementWriter + SqlxBinder>(&mut self, stmt: &S) -> Result<u64> {
        let (sql, values) = self.build(stmt);
        Ok(match self {
            Tx::Sqlite(t) => sqlx::query_with(&sql, values).execute(&mut **t).await?.rows_affected(),
            Tx::SqliteRead(c) => sqlx::query_with(&sql, values).execute(&mut **c).await?.rows_affected(),
            Tx::Postgres(t) => sqlx::query_with(&sql, values).execute(&mut **t).await?.rows_affected(),
        })
    }

    pub async fn fetch_all<S: QueryStatementWriter + SqlxBinder>(&mut self, stmt: &S) -> Result<Vec<Row>> {
        let (sql, values) = self.build(stmt);
        Ok(match self {
            Tx::Sqlite(t) => sqlx::query_with(&sql, values).fetch_all(&mut **t).await?.into_iter().map(Row::Sqlite).collect(),
            Tx::SqliteRead(c) => sqlx::query_with(&sql, values).fetch_all(&mut **c).await?.into_iter().map(Row::Sqlite).collect(),
            Tx::Postgres(t) => sqlx::query_with(&sql, values).fetch_all(&mut **t).await?.into_iter().map(Row::Postgres).collect(),
        })
    }

    pub async fn fetch_optional<S: QueryStatementWriter + SqlxBinder>(&mut self, stmt: &S) -> Result<Option<Row>> {
        let (sql, values) = self.build(stmt);
        Ok(match self {
            Tx::Sqlite(t) => sqlx::query_with(&sql, values).fetch_optional(&mut **t).await?.map(Row::Sqlite),
            Tx::SqliteRead(c) => sqlx::query_with(&sql, values).fetch_optional(&mut **c).await?.map(Row::Sqlite),
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
    pub fn opt_string(&self, col: &str) -> Result<Option<String>> {
        Ok(match self {
            Row::Sqlite(r) => r.try_get(col)?,
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_i64(&self, col: &str) -> Result<Option<i64>> {
        Ok(match self {
            Row::Sqlite(r) => r.try_get(col)?,
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_f64(&self, col: &str) -> Result<Option<f64>> {
        Ok(match self {
            Row::Sqlite(r) => r.try_get(col)?,
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_bool(&self, col: &str) -> Result<Option<bool>> {
        Ok(match self {
            Row::Sqlite(r) => r.try_get(col)?,
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_uuid(&self, col: &str) -> Result<Option<Uuid>> {
        Ok(match self {
            Row::Sqlite(r) => match r.try_get::<Option<String>, _>(col)? {
                Some(s) => Some(Uuid::parse_str(&s).map_err(Error::internal)?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_date(&self, col: &str) -> Result<Option<chrono::NaiveDate>> {
        Ok(match self {
            Row::Sqlite(r) => match r.try_get::<Option<String>, _>(col)? {
                Some(s) => Some(crate::domain::value::parse_date(&s).ok_or_else(|| Error::internal(anyhow::anyhow!("bad date in {col}")))?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_datetime(&self, col: &str) -> Result<Option<chrono::DateTime<chrono::Utc>>> {
        Ok(match self {
            Row::Sqlite(r) => match r.try_get::<Option<String>, _>(col)? {
                Some(s) => Some(crate::domain::value::parse_datetime(&s).ok_or_else(|| Error::internal(anyhow::anyhow!("bad time in {col}")))?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_json(&self, col: &str) -> Result<Option<serde_json::Value>> {
        Ok(match self {
            Row::Sqlite(r) => match r.try_get::<Option<String>, _>(col)? {
                Some(s) => Some(serde_json::from_str(&s).map_err(Error::internal)?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
}
