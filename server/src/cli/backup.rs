//! `gable backup` and `gable restore`: the embedded SQLite database and its master key,
//! copied while Gable serves, and brought back into a data directory (docs/backups.md).
//! PostgreSQL deployments back up with PostgreSQL's own tools instead.
//!
//! A backup is a directory: `gable.db` (a consistent copy, `store::backup::snapshot`),
//! `master.key` (unless the key comes from `GABLE_MASTER_KEY`, which the operator keeps
//! elsewhere), and `backup.json`, what it holds. `gable.db` appears only once it is whole.

use std::path::{Path, PathBuf};

use clap::Args;
use serde_json::{json, Value};

use crate::config::Config;
use crate::crypto::{sync_dir, write_private};
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
const KEY: &str = "master.key";

fn postgres_refusal(what: &str) -> anyhow::Error {
    anyhow::anyhow!(
        "`gable {what}` copies the embedded SQLite database; with PostgreSQL use its own tools \
         (pg_dump, or a base backup with WAL archiving for point-in-time recovery; docs/backups.md)"
    )
}

/// Writes a backup of the configured SQLite store into `args.to`.
pub fn backup(args: &BackupArgs, config: &Config, db: Option<PathBuf>) -> anyhow::Result<Value> {
    let db = db.ok_or_else(|| postgres_refusal("backup"))?;
    let to = &args.to;
    if to.exists() {
        anyhow::ensure!(to.is_dir() && std::fs::read_dir(to)?.next().is_none(), "{} exists and is not an empty directory", to.display());
    }
    create_private_dir(to)?;
    let partial = to.join(".gable.db.partial");
    let _ = std::fs::remove_file(&partial);
    backup::snapshot(&db, &partial)?;
    let migrations = backup::check(&partial)?;
    std::fs::rename(&partial, to.join(DB))?;
    let key_file = db.parent().map(|d| d.join(KEY)).filter(|k| k.exists());
    let master_key = match (&config.master_key, key_file) {
        (Some(_), _) => "from GABLE_MASTER_KEY: not in the backup; restore with the same key",
        (None, Some(file)) => {
            write_private(&to.join(KEY), &std::fs::read_to_string(&file)?)?;
            "master.key, copied"
        }
        (None, None) => "none yet (nothing was sealed)",
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
    std::fs::write(to.join("backup.json"), serde_json::to_string_pretty(&manifest)? + "\n")?;
    sync_dir(to);
    Ok(json!({ "path": to.display().to_string(), "backup": manifest }))
}

/// Brings a backup back as the configured data directory's database (and key), after
/// moving what is there aside. Refuses while a server uses the directory.
pub fn restore(args: &RestoreArgs, config: &Config, db: Option<PathBuf>) -> anyhow::Result<Value> {
    let db = db.ok_or_else(|| postgres_refusal("restore"))?;
    let dir = db.parent().map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."));
    let source = args.from.join(DB);
    anyhow::ensure!(source.exists(), "{} holds no {DB}: is it a directory `gable backup` wrote?", args.from.display());
    let migrations = backup::check(&source)?;
    let _lock = data_dir::lock(&dir, "`gable restore`")?;
    // What was there is kept, not deleted: a restore over the wrong directory can be undone.
    let mut replaced = None;
    let existing: Vec<PathBuf> =
        ["gable.db", "gable.db-wal", "gable.db-shm", KEY].iter().map(|f| dir.join(f)).filter(|p| p.exists()).collect();
    if !existing.is_empty() {
        let aside = dir.join(format!("replaced-{}", chrono::Utc::now().format("%Y%m%dT%H%M%SZ")));
        create_private_dir(&aside)?;
        for file in &existing {
            let name = file.file_name().ok_or_else(|| anyhow::anyhow!("a file without a name"))?;
            std::fs::rename(file, aside.join(name))?;
        }
        replaced = Some(aside.display().to_string());
    }
    let restoring = dir.join(".gable.db.restoring");
    std::fs::copy(&source, &restoring)?;
    std::fs::File::open(&restoring)?.sync_all()?;
    std::fs::rename(&restoring, &db)?;
    let key = args.from.join(KEY);
    let master_key = if key.exists() {
        // The old key, if any, was moved aside above.
        write_private(&dir.join(KEY), &std::fs::read_to_string(&key)?)?;
        "master.key, restored"
    } else if config.master_key.is_some() {
        "from GABLE_MASTER_KEY: it must be the key the backup was made under"
    } else {
        "the backup holds no master.key: set GABLE_MASTER_KEY to the key it was made under, or sealed secrets will not open"
    };
    sync_dir(&dir);
    Ok(json!({
        "object": "restore",
        "from": args.from.display().to_string(),
        "database": db.display().to_string(),
        "migrations_applied": migrations,
        "master_key": master_key,
        "replaced": replaced,
    }))
}

fn create_private_dir(dir: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}
