//! SQLite's one writing connection: write transactions on it ([`SqliteWrite`]), and the
//! thread that checkpoints its log beside it.

use std::time::Duration;

use crate::error::{Error, Result};

/// SQLite's writing connection; `None` once the store is closed. Transactions queue on
/// the outer (async) lock; the inner one only makes the connection shareable by
/// reference across `await`s, and is never contended.
pub(super) type Writer = std::sync::Arc<tokio::sync::Mutex<Option<std::sync::Mutex<rusqlite::Connection>>>>;

/// A write transaction on SQLite's one writing connection, held from `BEGIN IMMEDIATE`
/// to `COMMIT` (or `ROLLBACK` when dropped uncommitted: an error, a panic, a cancelled
/// request). SQLite has one writer at a time anyway: writers queue on the connection's
/// lock in turn (rather than in SQLite's busy handler, which sleeps), and each statement
/// runs right here on the calling task, since a statement of a write transaction takes
/// microseconds and handing each to another thread cost more than running it.
pub struct SqliteWrite {
    pub(super) conn: tokio::sync::OwnedMutexGuard<Option<std::sync::Mutex<rusqlite::Connection>>>,
    pub(super) open: bool,
}

impl SqliteWrite {
    pub(super) fn conn(&self) -> Result<std::sync::MutexGuard<'_, rusqlite::Connection>> {
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

/// SQLite's checkpoints, on a thread and connection of their own: by default SQLite runs
/// one inside the commit that crosses 1,000 pages of log, copying pages back and syncing
/// the database file while the one writer waits (a seventh of a write-heavy profile).
/// Here a passive checkpoint (which neither waits for nor blocks the writer) runs every
/// 100 ms. A passive checkpoint cannot reset the log while writes keep coming, so a log
/// past `WAL_RESTART_PAGES` gets a restarting checkpoint, run holding the writing
/// connection (a wait of one checkpoint's remainder for the writers) so that it cannot
/// be starved, after which the log starts afresh. The thread ends once the store is
/// closed or dropped.
pub(super) fn checkpointer(
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
