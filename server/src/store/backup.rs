//! Consistent copies of the embedded SQLite database, taken while Gable serves it
//! (`gable backup`, `gable restore`; docs/backups.md). PostgreSQL has its own tools.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};

/// Writes a consistent, compacted copy of the database at `db` to `into` (a new file)
/// with `VACUUM INTO`: one read transaction, so the copy is the database as of one
/// moment, and in WAL mode writers carry on beside it.
pub fn snapshot(db: &Path, into: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(db.exists(), "there is no database at {}", db.display());
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    conn.busy_timeout(Duration::from_secs(30))?;
    let target = into.to_str().ok_or_else(|| anyhow::anyhow!("the backup path {} is not UTF-8", into.display()))?;
    conn.execute("VACUUM INTO ?1", [target]).map_err(|e| anyhow::anyhow!("copying {}: {e}", db.display()))?;
    Ok(())
}

/// Checks that the database file at `db` is whole (`PRAGMA integrity_check`), and
/// returns how many migrations it has applied.
pub fn check(db: &Path) -> anyhow::Result<usize> {
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    let verdict: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    anyhow::ensure!(verdict == "ok", "{} is damaged: {verdict}", db.display());
    let migrations: i64 = conn
        .query_row("SELECT COUNT(*) FROM _sqlx_migrations WHERE success", [], |r| r.get(0))
        .map_err(|e| anyhow::anyhow!("{} is not a Gable database: {e}", db.display()))?;
    Ok(migrations as usize)
}
