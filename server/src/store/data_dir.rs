//! One serving process per SQLite data directory. The embedded database has one writer
//! and the background loops assume they are alone on it, so `gable serve` holds an
//! exclusive lock on `gable.lock` in the data directory for as long as it runs (the
//! operating system releases it when the process ends, however it ends); a second
//! `gable serve` on the same directory refuses to start and says which process holds it.
//!
//! Other commands (`gable key create`, `gable seed`, …) do not take the lock: SQLite
//! serialises their writes with the server's, so they work beside it. `gable restore`
//! takes it, since it replaces the database under whoever uses it.
//!
//! The data directory is its owner's alone: it holds password hashes, residents'
//! personal data, key hashes and the master key. Gable creates it (and the directory of
//! a database kept elsewhere, when missing) mode 0700, and the database file 0600 before
//! SQLite first opens it, so that its `-wal` and `-shm` are created 0600 too (SQLite
//! gives them the main file's mode). Both are chosen at creation, whatever the umask.
//! A data directory an older build made readable by others is tightened at the next
//! start that opens the database ([`secure`]), and one line logs what changed.

use std::fs::{File, TryLockError};
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use crate::private_files::{create_private_dir, create_private_file, private_options, PRIVATE_DIR, PRIVATE_FILE};

/// Prepares the embedded database's files before it is opened: creates the data
/// directory (and the database's directory, when it is elsewhere) 0700 if missing, and
/// the database file itself 0600 if missing (an empty file is an empty SQLite database;
/// SQLite then creates `-wal` and `-shm` with its mode). Files and the data directory
/// that an older build left readable by others are tightened (the data directory to
/// 0700, `master.key`, the lock and the database's files to 0600), and one warning names
/// them; a directory of the operator's own that holds a database kept outside the data
/// directory is not changed. Nothing is logged when nothing changed, so it is said once.
/// One that cannot be changed (a file of another owner) is warned about, not fatal: an
/// upgrade does not stop a deployment that was serving.
pub fn secure(data_dir: &Path, db: &Path) -> anyhow::Result<()> {
    create_private_dir(data_dir).map_err(|e| anyhow::anyhow!("cannot create the data directory {}: {e}", data_dir.display()))?;
    if let Some(parent) = db.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_private_dir(parent).map_err(|e| anyhow::anyhow!("cannot create the database's directory {}: {e}", parent.display()))?;
    }
    match create_private_file(db) {
        Ok(file) => {
            file.sync_all()?;
        }
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => anyhow::bail!("cannot create the database {}: {e}", db.display()),
    }
    let (tightened, failed) = tighten(data_dir, db);
    if !tightened.is_empty() {
        tracing::warn!(
            changed = %tightened.join(", "),
            "made the data directory's files private: other users of this machine could read them (an older Gable created them so)"
        );
    }
    if !failed.is_empty() {
        tracing::warn!(
            failed = %failed.join(", "),
            "could not make the data directory's files private: other users of this machine may read them; change their modes (0700, 0600)"
        );
    }
    Ok(())
}

/// Removes group and other permissions from the data directory, `master.key`, the lock,
/// the database's files and the request log's where they have any: what it changed, as `path: old -> new`,
/// and what it could not change, with why.
#[cfg(unix)]
fn tighten(data_dir: &Path, db: &Path) -> (Vec<String>, Vec<String>) {
    use std::os::unix::fs::PermissionsExt;
    let mut files = vec![data_dir.join(crate::crypto::KEY_FILE), directory_of(db).join(LOCK_FILE)];
    // The database's files and the request log's (what integrations sent).
    for file in [db.to_path_buf(), super::request_log_file(db)] {
        for suffix in ["", "-wal", "-shm"] {
            let mut name = file.as_os_str().to_owned();
            name.push(suffix);
            files.push(PathBuf::from(name));
        }
    }
    let (mut changed, mut failed) = (Vec::new(), Vec::new());
    // A symbolic link (a data directory mounted elsewhere, say) is followed: what matters
    // is who may read what it leads to.
    let mut set = |path: &Path, mode: u32| match std::fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => failed.push(format!("{}: {e}", path.display())),
        Ok(meta) => {
            let old = meta.permissions().mode() & 0o777;
            if old & 0o077 != 0 {
                match std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)) {
                    Ok(()) => changed.push(format!("{}: {old:o} -> {mode:o}", path.display())),
                    Err(e) => failed.push(format!("{} ({old:o}): {e}", path.display())),
                }
            }
        }
    };
    set(data_dir, PRIVATE_DIR);
    for file in &files {
        set(file, PRIVATE_FILE);
    }
    (changed, failed)
}

/// The directory a database file is in (`.` for a bare file name).
pub fn directory_of(file: &Path) -> PathBuf {
    match file.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

#[cfg(not(unix))]
fn tighten(_: &Path, _: &Path) -> (Vec<String>, Vec<String>) {
    (Vec::new(), Vec::new())
}

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
    create_private_dir(dir)?;
    let path = dir.join(LOCK_FILE);
    let mut file = private_options()
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

    #[cfg(unix)]
    fn mode(path: &Path) -> u32 {
        use std::os::unix::fs::PermissionsExt;
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[cfg(unix)]
    #[test]
    fn the_data_directory_and_database_are_created_private() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("a/data");
        secure(&dir, &dir.join("gable.db")).unwrap();
        assert_eq!((mode(&root.path().join("a")), mode(&dir)), (0o700, 0o700), "every directory made");
        assert_eq!(mode(&dir.join("gable.db")), 0o600);
        assert_eq!(std::fs::metadata(dir.join("gable.db")).unwrap().len(), 0, "an empty file: an empty database");
        // SQLite gives the log and its index the database's mode.
        let conn = rusqlite::Connection::open(dir.join("gable.db")).unwrap();
        conn.execute_batch("PRAGMA journal_mode = WAL; CREATE TABLE t (x); INSERT INTO t VALUES (1);").unwrap();
        assert_eq!((mode(&dir.join("gable.db-wal")), mode(&dir.join("gable.db-shm"))), (0o600, 0o600));
        drop(conn);
        let _lock = lock(&dir, "serve").unwrap();
        assert_eq!(mode(&dir.join(LOCK_FILE)), 0o600);
    }

    #[cfg(unix)]
    #[test]
    fn an_older_builds_readable_files_are_tightened_and_a_database_elsewhere_keeps_its_directory() {
        use std::os::unix::fs::PermissionsExt;
        let root = tempfile::tempdir().unwrap();
        let (dir, elsewhere) = (root.path().join("data"), root.path().join("elsewhere"));
        for d in [&dir, &elsewhere] {
            std::fs::create_dir(d).unwrap();
            std::fs::set_permissions(d, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
        let db = elsewhere.join("records.db");
        for file in [dir.join("master.key"), db.clone(), elsewhere.join("records.db-wal")] {
            std::fs::write(&file, "").unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let (changed, failed) = tighten(&dir, &db);
        assert_eq!((changed.len(), failed.len()), (4, 0), "{changed:?} {failed:?}");
        assert!(changed[0].ends_with("data: 755 -> 700"), "{changed:?}");
        assert_eq!(
            (mode(&dir), mode(&dir.join("master.key")), mode(&db), mode(&elsewhere.join("records.db-wal"))),
            (0o700, 0o600, 0o600, 0o600)
        );
        assert_eq!(mode(&elsewhere), 0o755, "the operator's own directory is left as it is");
        assert_eq!(tighten(&dir, &db), (vec![], vec![]), "nothing left to change");
    }
}
