//! Files and directories only their owner may read: the data directory, the database,
//! the master key, backups. Each is created with its mode (never readable by others in
//! between, whatever the umask).

use std::fs::{File, OpenOptions};
use std::path::Path;

/// The mode of the data directory, a backup directory and what `gable restore` sets aside.
pub const PRIVATE_DIR: u32 = 0o700;
/// The mode of the database, its `-wal` and `-shm`, `master.key` and a backup's files.
pub const PRIVATE_FILE: u32 = 0o600;

/// Creates `dir` and its missing parents, each mode 0700 as it is made. An existing
/// directory is left as it is (`store::data_dir::secure` tightens the data directory).
pub fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(PRIVATE_DIR);
    }
    builder.create(dir)
}

/// Opens a new file at `path` for writing, mode 0600 as it is created; fails if it exists.
pub fn create_private_file(path: &Path) -> std::io::Result<File> {
    private_options().write(true).create_new(true).open(path)
}

/// Options that create a file mode 0600 (for a file opened otherwise than new).
pub fn private_options() -> OpenOptions {
    let mut opts = OpenOptions::new();
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(PRIVATE_FILE);
    }
    opts
}

/// Writes a new private file, synced to disk. Fails if the file exists.
pub fn write_private(path: &Path, content: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut f = create_private_file(path)?;
    f.write_all(content.as_bytes())?;
    f.sync_all()?;
    Ok(())
}

/// Makes a directory's entries durable (a new file's name survives a power cut).
pub fn sync_dir(dir: &Path) {
    if let Ok(d) = File::open(dir) {
        let _ = d.sync_all();
    }
}
