//! `gable migration <collection>`: a new collection's migration for each database, from the
//! registry (`store::schema::collection_migration`): its table and indexes and, on
//! PostgreSQL, its foreign keys, its `tenant_wall` policy and its grant to `gable_app`.
//!
//! It prints both (each after a `==> path <==` line naming the file it would be), one alone
//! with `--dialect` (the file's text, nothing else), or writes them with `--write` as
//! `migrations/{sqlite,postgres}/<version>_<name>.sql`, the version after every migration
//! there (today's date and a counter, as the existing files are named). docs/development.md,
//! "Adding a collection or an event type", says what else a new collection needs.

use std::path::{Path, PathBuf};

use anyhow::{bail, Context};
use clap::Args;

use crate::domain::collections::{collection, COLLECTIONS};
use crate::store::{schema, Dialect};

#[derive(Args)]
pub(super) struct MigrationArgs {
    /// The collection, by its name in the registry (`gable collections` lists them).
    collection: String,
    /// Only this database's migration, as the file's text (default: both, each after a
    /// line naming its file).
    #[arg(long)]
    dialect: Option<Dialect>,
    /// Write the files instead of printing them (refused if a migration there creates the
    /// table already).
    #[arg(long)]
    write: bool,
    /// The migrations directory, holding `sqlite/` and `postgres/`.
    #[arg(long, value_name = "DIR", default_value = "migrations")]
    migrations: PathBuf,
    /// The file name after the version (default: the collection's table).
    #[arg(long)]
    name: Option<String>,
}

const DIALECTS: [(Dialect, &str); 2] = [(Dialect::Sqlite, "sqlite"), (Dialect::Postgres, "postgres")];

pub(super) fn run(args: &MigrationArgs) -> anyhow::Result<()> {
    let Some(c) = collection(&args.collection) else {
        let names: Vec<&str> = COLLECTIONS.iter().map(|c| c.name).collect();
        bail!("no collection {:?} in the registry; it has: {}", args.collection, names.join(", "));
    };
    let name = args.name.as_deref().unwrap_or(c.table);
    if name.is_empty() || !name.chars().all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || ch == '_') {
        bail!("--name {name:?}: lowercase letters, digits and `_` only");
    }
    let version = next_version(&args.migrations, &today())?;
    let files: Vec<(PathBuf, String)> = DIALECTS
        .iter()
        .filter(|(d, _)| args.dialect.is_none_or(|only| only == *d))
        .map(|(d, dir)| (args.migrations.join(dir).join(format!("{version}_{name}.sql")), schema::collection_migration(c, *d)))
        .collect();
    if args.write {
        for (path, _) in &files {
            if let Some(existing) = creating(path.parent().expect("a migrations directory"), c.table)? {
                bail!("{} creates table {} already: a new migration for it would fail", existing.display(), c.table);
            }
        }
        for (path, text) in &files {
            std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(path)
                .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()))
                .with_context(|| format!("writing {}", path.display()))?;
            super::print_out(&format!("{}\n", path.display()))?;
        }
        return Ok(());
    }
    match files.as_slice() {
        [(_, text)] => super::print_out(text),
        _ => {
            super::print_out(&files.iter().map(|(path, text)| format!("==> {} <==\n{text}", path.display())).collect::<Vec<_>>().join("\n"))
        }
    }
}

/// Today (UTC) as the migrations' files spell a date: `20261129`.
fn today() -> String {
    chrono::Utc::now().format("%Y%m%d").to_string()
}

/// The version of a new migration: after every migration of both databases, and today's
/// first (`<today>000001`) when nothing of today's is there yet.
fn next_version(migrations: &Path, today: &str) -> anyhow::Result<u64> {
    let first_today: u64 = format!("{today}000001").parse().context("a date of digits")?;
    let mut last = 0;
    for (_, dir) in DIALECTS {
        let dir = migrations.join(dir);
        let entries = std::fs::read_dir(&dir).with_context(|| format!("reading {} (see --migrations)", dir.display()))?;
        for entry in entries {
            let file = entry?.file_name();
            let version = file.to_string_lossy().split('_').next().and_then(|v| v.parse::<u64>().ok());
            last = last.max(version.unwrap_or(0));
        }
    }
    Ok(first_today.max(last + 1))
}

/// The migration of `dir` that creates `table`, if one does.
fn creating(dir: &Path, table: &str) -> anyhow::Result<Option<PathBuf>> {
    let statement = format!("CREATE TABLE {table} (");
    for entry in std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "sql") && std::fs::read_to_string(&path)?.contains(&statement) {
            return Ok(Some(path));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dirs(files: &[&str]) -> tempfile::TempDir {
        let root = tempfile::tempdir().unwrap();
        for (_, d) in DIALECTS {
            std::fs::create_dir(root.path().join(d)).unwrap();
        }
        for f in files {
            std::fs::write(root.path().join(f), "CREATE TABLE vendors (\n);\n").unwrap();
        }
        root
    }

    #[test]
    fn a_new_migration_comes_after_every_other_of_either_database() {
        let root = dirs(&["sqlite/20261122000001_init.sql", "postgres/20261123000001_walls.sql"]);
        assert_eq!(next_version(root.path(), "20261129").unwrap(), 20261129000001, "today's first");
        assert_eq!(next_version(root.path(), "20261120").unwrap(), 20261123000002, "after the last, whatever the clock says");
        let root = dirs(&["sqlite/20261129000001_a.sql", "postgres/20261129000002_b.sql"]);
        assert_eq!(next_version(root.path(), "20261129").unwrap(), 20261129000003);
        assert!(next_version(&root.path().join("nowhere"), "20261129").is_err());
    }

    #[test]
    fn write_refuses_a_table_a_migration_creates_already() {
        let root = dirs(&["sqlite/20261122000001_init.sql"]);
        let args = |collection: &str| MigrationArgs {
            collection: collection.into(),
            dialect: None,
            write: true,
            migrations: root.path().to_path_buf(),
            name: None,
        };
        let refused = run(&args("vendors")).unwrap_err().to_string();
        assert!(refused.contains("creates table vendors already"), "{refused}");
        assert!(run(&args("vendor")).unwrap_err().to_string().contains("no collection \"vendor\""));
        run(&args("assets")).unwrap();
        let written: Vec<String> = DIALECTS
            .iter()
            .map(|(_, d)| {
                let files: Vec<_> = std::fs::read_dir(root.path().join(d)).unwrap().map(|e| e.unwrap().path()).collect();
                let new = files.iter().find(|p| p.to_string_lossy().ends_with("_assets.sql")).expect("the new file");
                std::fs::read_to_string(new).unwrap()
            })
            .collect();
        assert!(written[0].contains("CREATE TABLE assets (") && !written[0].contains("ROW LEVEL SECURITY"));
        assert!(written[1].contains("CREATE POLICY tenant_wall ON assets") && written[1].contains("TO gable_app;"));
        assert!(run(&args("assets")).is_err(), "written once");
    }
}
