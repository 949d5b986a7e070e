//! What the store tells of its health (readiness, metrics): whether the database answers,
//! which migrations it lacks, and how its connections are used.

use super::pool::{Pool, POSTGRES_MIGRATIONS, REQUEST_LOG_MIGRATIONS, SQLITE_MIGRATIONS};
use super::work::Intent;
use super::Store;
use crate::error::Result;

/// A process's database connections (`Store::connections`): checked out by work, idle
/// in the pool, and held by `LISTEN`ers (PostgreSQL).
#[derive(Debug, Clone, Copy)]
pub struct Connections {
    pub in_use: usize,
    pub idle: usize,
    pub listening: usize,
    pub max: usize,
}

impl Store {
    /// Whether the database answers a query now (readiness).
    pub async fn ping(&self) -> Result<()> {
        self.in_system(Intent::Read, async |tx| tx.fetch_optional(sea_query::Query::select().expr(sea_query::Expr::val(1))).await.map(drop))
            .await
    }

    /// How many of this build's migrations the database has not applied (readiness: a
    /// process started before `gable migrate` ran elsewhere, say).
    pub async fn pending_migrations(&self) -> Result<usize> {
        let applied = "SELECT version FROM _sqlx_migrations WHERE success";
        let pending = |migrator: &sqlx::migrate::Migrator, applied: Vec<i64>| {
            migrator.iter().filter(|m| !m.migration_type.is_down_migration() && !applied.contains(&m.version)).count()
        };
        Ok(match &self.pool {
            Pool::Sqlite { migrations, log_migrations, .. } => {
                pending(&SQLITE_MIGRATIONS, sqlx::query_scalar(applied).fetch_all(migrations).await?)
                    + pending(&REQUEST_LOG_MIGRATIONS, sqlx::query_scalar(applied).fetch_all(log_migrations).await?)
            }
            Pool::Postgres(p) => pending(&POSTGRES_MIGRATIONS, sqlx::query_scalar(applied).fetch_all(p).await?),
        })
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
            // The readers' pool, and the one writing connection requests wait for (the
            // request log's own, which no request waits for, is not counted).
            Pool::Sqlite { read, .. } => {
                let status = read.status();
                let idle = status.available;
                Connections { in_use: status.size.saturating_sub(idle) + 1, idle, listening: 0, max: status.max_size + 1 }
            }
        }
    }
}
