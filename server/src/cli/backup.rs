//! `gable backup` and `gable restore`: the embedded SQLite database and its master key,
//! copied while Gable serves, and brought back into a data directory (docs/backups.md).
//! PostgreSQL deployments back up with PostgreSQL's own tools instead.
//!
//! A backup is a directory (0700): `gable.db` (a consistent copy,
//! `store::backup::snapshot`), `master.key` (unless the key comes from
//! `GABLE_MASTER_KEY`, which the operator keeps elsewhere), and `backup.json`, what it
//! holds; each file 0600. `gable.db` appears only once it is whole. The key is the one
//! `gable serve` reads: `master.key` in the data directory, wherever the database is.
//!
//! A restore checks everything before it changes anything: the copy is whole, this build
//! can serve it (its migrations), and the key `gable serve` will use opens what the copy
//! holds sealed. A refusal names what is wrong and leaves the data directory as it was.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{json, Value};

use crate::config::Config;
use crate::crypto::{MasterKey, KEY_FILE as KEY};
use crate::private_files::{create_private_dir, create_private_file, sync_dir, write_private, PRIVATE_DIR};
use crate::store::data_dir::directory_of;
use crate::store::{backup, data_dir};

#[derive(Debug, Args)]
pub struct BackupArgs {
    /// A new (or empty) directory to write the backup into.
    #[arg(long, value_name = "DIR")]
    pub to: PathBuf,
}

#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// A directory `gable backup` wrote.
    #[arg(long, value_name = "DIR")]
    pub from: PathBuf,
}

const DB: &str = "gable.db";

fn postgres_refusal(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "`gable {what}` copies the embedded SQLite database; with PostgreSQL use its own tools \
         (pg_dump, or a base backup with WAL archiving for point-in-time recovery; docs/backups.md)"
    )
}

/// `file` with `suffix` appended to its name (`gable.db` → `gable.db-wal`).
fn with_suffix(file: &Path, suffix: &str) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(suffix);
    PathBuf::from(name)
}

/// Writes a backup of the configured SQLite store into `args.to`.
pub fn backup(args: &BackupArgs, config: &Config, db: Option<PathBuf>) -> anyhow::Result<Value> {
    let db = db.ok_or_else(|| postgres_refusal("backup"))?;
    let to = &args.to;
    if to.exists() {
        anyhow::ensure!(to.is_dir() && std::fs::read_dir(to)?.next().is_none(), "{} exists and is not an empty directory", to.display());
    }
    create_private_dir(to)?;
    #[cfg(unix)]
    {
        // An empty directory that was there already.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(PRIVATE_DIR))?;
    }
    let partial = to.join(".gable.db.partial");
    let _ = std::fs::remove_file(&partial);
    backup::snapshot(&db, &partial)?;
    let migrations = backup::check(&partial)?;
    std::fs::rename(&partial, to.join(DB))?;
    // Where `gable serve` reads it: the data directory, even when the database is elsewhere.
    let key_file = config.data_dir.join(KEY);
    let master_key = match (&config.master_key, key_file.exists()) {
        (Some(_), _) => "from GABLE_MASTER_KEY: not in the backup; restore with the same key",
        (None, true) => {
            write_private(&to.join(KEY), &std::fs::read_to_string(&key_file)?)?;
            "master.key, copied"
        }
        (None, false) => "none yet (nothing was sealed)",
    };
    let size = std::fs::metadata(to.join(DB))?.len();
    let manifest = json!({
        "object": "backup",
        "created_at": chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
        "gable_version": env!("CARGO_PKG_VERSION"),
        "source": db.display().to_string(),
        "database_bytes": size,
        "migrations_applied": migrations,
        "master_key": master_key,
    });
    write_private(&to.join("backup.json"), &(serde_json::to_string_pretty(&manifest)? + "\n"))?;
    sync_dir(to);
    Ok(json!({ "path": to.display().to_string(), "backup": manifest }))
}

/// The master key of a backup: its `master.key`, read and parsed.
struct BackupKey {
    text: String,
    key: MasterKey,
}

/// Checks that the key `gable serve` will use with the restored database opens what it
/// holds sealed: `GABLE_MASTER_KEY` when set (it wins over the file), else the backup's
/// `master.key`. A database that never sealed anything restores with any key, or none.
fn check_key(source: &Path, key_file: &Path, backup_key: Option<&BackupKey>, config: &Config) -> anyhow::Result<()> {
    let configured =
        config.master_key.as_ref().map(|k| MasterKey::parse(&k.0).map_err(|e| anyhow::anyhow!("GABLE_MASTER_KEY: {e}"))).transpose()?;
    let sealed = backup::sealed_values(source)?;
    let Some(first) = sealed.first() else { return Ok(()) };
    let opens = |key: &MasterKey| sealed.iter().any(|s| s.opens_with(key));
    match (&configured, backup_key) {
        (Some(key), _) if opens(key) => Ok(()),
        (Some(_), Some(file)) if opens(&file.key) => anyhow::bail!(
            "GABLE_MASTER_KEY is set and is not the key {} was made under ({} does not open with it); the backup's {} is that \
             key, but `gable serve` would use GABLE_MASTER_KEY instead: unset it, or set it to that key",
            source.display(),
            first.what,
            key_file.display()
        ),
        (Some(_), _) => anyhow::bail!(
            "GABLE_MASTER_KEY is not the key {} was made under: {} does not open with it. Set it to the key the backup was made under",
            source.display(),
            first.what
        ),
        (None, Some(file)) if opens(&file.key) => Ok(()),
        (None, Some(_)) => {
            anyhow::bail!("{} is not the key {} was made under: {} does not open with it", key_file.display(), source.display(), first.what)
        }
        (None, None) => anyhow::bail!(
            "{} holds sealed values ({}), but the backup has no master.key and GABLE_MASTER_KEY is not set: set \
             GABLE_MASTER_KEY to the key the backup was made under",
            source.display(),
            first.what
        ),
    }
}

/// Brings a backup back as the configured data directory's database (and key), after
/// moving what is there aside. Refuses while a server uses the directory, and refuses
/// (changing nothing) a backup this build could not serve.
pub fn restore(args: &RestoreArgs, config: &Config, db: Option<PathBuf>) -> anyhow::Result<Value> {
    let db = db.ok_or_else(|| postgres_refusal("restore"))?;
    let dir = directory_of(&db);
    let source = args.from.join(DB);
    anyhow::ensure!(source.exists(), "{} holds no {DB}: is it a directory `gable backup` wrote?", args.from.display());
    let refused = |e: anyhow::Error| anyhow::anyhow!("{e:#}. Nothing was restored; the data directory is as it was");
    // Everything is checked before anything is moved.
    let migrations = backup::check(&source).map_err(refused)?;
    backup::compatible(&source).map_err(refused)?;
    let key_file = args.from.join(KEY);
    let backup_key = match std::fs::read_to_string(&key_file) {
        Ok(text) => {
            let key = MasterKey::parse(&text).map_err(|e| refused(anyhow::anyhow!("{} is not a master key: {e}", key_file.display())))?;
            Some(BackupKey { text, key })
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(refused(anyhow::anyhow!("reading {}: {e}", key_file.display()))),
    };
    check_key(&source, &key_file, backup_key.as_ref(), config).map_err(refused)?;

    let _lock = data_dir::lock(&dir, "`gable restore`")?;
    // What was there is kept, not deleted: a restore over the wrong directory can be undone.
    // The database's files are in its directory, the key in the data directory (the same
    // one unless the database is kept elsewhere).
    let live_key = config.data_dir.join(KEY);
    let existing: Vec<PathBuf> = [db.clone(), with_suffix(&db, "-wal"), with_suffix(&db, "-shm"), live_key.clone()]
        .into_iter()
        .filter(|p| std::fs::symlink_metadata(p).is_ok())
        .collect();
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ").to_string();
    let mut asides: Vec<(PathBuf, PathBuf)> = Vec::new();
    for file in &existing {
        let parent = directory_of(file);
        let aside = match asides.iter().find(|(p, _)| *p == parent) {
            Some((_, aside)) => aside.clone(),
            None => {
                let aside = new_aside(&parent, &stamp)?;
                asides.push((parent, aside.clone()));
                aside
            }
        };
        let name = file.file_name().ok_or_else(|| anyhow::anyhow!("a file without a name"))?;
        std::fs::rename(file, aside.join(name))?;
    }
    let restoring = dir.join(".gable.db.restoring");
    let _ = std::fs::remove_file(&restoring);
    {
        // Created 0600: `std::fs::copy` would give the copy the backup file's mode.
        let mut into = create_private_file(&restoring)?;
        std::io::copy(&mut std::fs::File::open(&source)?, &mut into)?;
        into.sync_all()?;
    }
    std::fs::rename(&restoring, &db)?;
    let master_key = match &backup_key {
        Some(file) => {
            // The old key, if any, was moved aside above.
            create_private_dir(&config.data_dir)?;
            write_private(&live_key, &file.text)?;
            if config.master_key.is_some() {
                "master.key, restored (GABLE_MASTER_KEY is set, and `gable serve` uses it instead)"
            } else {
                "master.key, restored"
            }
        }
        None if config.master_key.is_some() => "from GABLE_MASTER_KEY, which opens the backup's sealed values",
        None => "none: nothing in the backup was sealed",
    };
    // The data directory itself is private too, whoever made it.
    data_dir::secure(&config.data_dir, &db)?;
    sync_dir(&dir);
    sync_dir(&config.data_dir);
    let key_aside = asides.iter().find(|(p, _)| *p == directory_of(&live_key) && *p != dir).map(|(_, a)| a.display().to_string());
    Ok(json!({
        "object": "restore",
        "from": args.from.display().to_string(),
        "database": db.display().to_string(),
        "migrations_applied": migrations,
        "master_key": master_key,
        "replaced": asides.iter().find(|(p, _)| *p == dir).or(asides.first()).map(|(_, a)| a.display().to_string()),
        "replaced_key": key_aside,
    }))
}

/// A new directory `replaced-<stamp>` (0700) in `parent` for what a restore sets aside;
/// never one that exists, whose files a rename would overwrite.
fn new_aside(parent: &Path, stamp: &str) -> anyhow::Result<PathBuf> {
    for n in 1..100 {
        let name = if n == 1 { format!("replaced-{stamp}") } else { format!("replaced-{stamp}-{n}") };
        let aside = parent.join(name);
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        {
            use std::os::unix::fs::DirBuilderExt;
            builder.mode(PRIVATE_DIR);
        }
        match builder.create(&aside) {
            Ok(()) => return Ok(aside),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => anyhow::bail!("creating {}: {e}", aside.display()),
        }
    }
    anyhow::bail!("{} holds too many replaced-{stamp} directories", parent.display())
}
