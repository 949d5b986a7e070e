//! One serving process per SQLite data directory. The embedded database has one writer
//! and the background loops assume they are alone on it, so `gable serve` holds an
//! exclusive lock on `gable.lock` in the data directory for as long as it runs (the
//! operating system releases it when the process ends, however it ends); a second
//! `gable serve` on the same directory refuses to start and says which process holds it.
//!
//! Other commands (`gable key create`, `gable seed`, …) do not take the lock: SQLite
//! serialises their writes with the server's, so they work beside it. `gable restore`
//! takes it, since it replaces the database under whoever uses it.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The lock file's name in the data directory.
pub const LOCK_FILE: &str = "gable.lock";

/// The held lock; dropping it (or the process ending) releases it.
#[derive(Debug)]
pub struct DataDirLock {
    _file: File,
    pub path: PathBuf,
}

/// Takes the data directory's lock for `what` (a command, for the message), or says who
/// holds it.
pub fn lock(dir: &Path, what: &str) -> anyhow::Result<DataDirLock> {
    std::fs::create_dir_all(dir)?;
    let path = dir.join(LOCK_FILE);
    let mut file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(&path)
        .map_err(|e| anyhow::anyhow!("cannot open {}: {e}", path.display()))?;
    match file.try_lock() {
        Ok(()) => {
            // Who holds it, for the next one's message.
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            write!(file, "{}", std::process::id())?;
            file.sync_all()?;
            Ok(DataDirLock { _file: file, path })
        }
        Err(TryLockError::WouldBlock) => {
            let mut holder = String::new();
            let _ = file.read_to_string(&mut holder);
            let holder = holder.trim();
            let who = if holder.is_empty() { "another process".to_string() } else { format!("process {holder}") };
            anyhow::bail!(
                "the data directory {} is in use by {who} (another `gable serve`?): {what} needs it alone. \
                 Stop that process first; to run several processes, use PostgreSQL (docs/deployment.md)",
                dir.display()
            )
        }
        Err(TryLockError::Error(e)) => anyhow::bail!("cannot lock {}: {e}", path.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_lock_is_refused_naming_the_holder_until_the_first_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let first = lock(dir.path(), "serve").unwrap();
        // Another open file description of the same file: as another process would.
        let err = lock(dir.path(), "serve").unwrap_err().to_string();
        assert!(err.contains(&format!("process {}", std::process::id())), "{err}");
        assert!(err.contains("in use"), "{err}");
        drop(first);
        lock(dir.path(), "serve").expect("free again once the holder let go");
    }
}
