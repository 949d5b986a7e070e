//! Consistent copies of the embedded SQLite database, taken while Gable serves it
//! (`gable backup`, `gable restore`; docs/backups.md), and what a restore checks before
//! it replaces anything: that the copy is whole, that this build can serve it (its
//! migrations), and which sealed values it holds (to try the master key on). Every
//! reading here is read-only. PostgreSQL has its own tools.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use uuid::Uuid;

use crate::crypto::MasterKey;

/// Writes a consistent, compacted copy of the database at `db` to `into` (a new file)
/// with `VACUUM INTO`: one read transaction, so the copy is the database as of one
/// moment, and in WAL mode writers carry on beside it.
/// `into` is created first, empty and 0600, so the copy is its owner's alone (SQLite
/// would create it 0644, and `VACUUM INTO` fills an empty file as it would a new one).
pub fn snapshot(db: &Path, into: &Path) -> anyhow::Result<()> {
    anyhow::ensure!(db.exists(), "there is no database at {}", db.display());
    crate::private_files::create_private_file(into).map_err(|e| anyhow::anyhow!("creating {}: {e}", into.display()))?;
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)?;
    conn.busy_timeout(Duration::from_secs(30))?;
    let target = into.to_str().ok_or_else(|| anyhow::anyhow!("the backup path {} is not UTF-8", into.display()))?;
    conn.execute("VACUUM INTO ?1", [target]).map_err(|e| anyhow::anyhow!("copying {}: {e}", db.display()))?;
    Ok(())
}

/// Checks that the database file at `db` is whole (`PRAGMA integrity_check`), and
/// returns how many migrations it has applied.
pub fn check(db: &Path) -> anyhow::Result<usize> {
    let conn = read_only(db)?;
    let verdict: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0))?;
    anyhow::ensure!(verdict == "ok", "{} is damaged: {verdict}", db.display());
    let migrations: i64 = conn
        .query_row("SELECT COUNT(*) FROM _sqlx_migrations WHERE success", [], |r| r.get(0))
        .map_err(|e| anyhow::anyhow!("{} is not a Gable database: {e}", db.display()))?;
    Ok(migrations as usize)
}

fn read_only(db: &Path) -> anyhow::Result<Connection> {
    Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| anyhow::anyhow!("opening {}: {e}", db.display()))
}

/// Checks that this build can serve the database at `db`, as `gable serve`'s migrations
/// would (sqlx's `_sqlx_migrations` against the migrations built in): none failed
/// half-way, none is unknown to this build (a newer build's database), and each one both
/// know was applied from the same SQL (its checksum). Each refusal names the migration.
pub fn compatible(db: &Path) -> anyhow::Result<()> {
    let conn = read_only(db)?;
    let mut st = conn
        .prepare("SELECT version, description, success, checksum FROM _sqlx_migrations ORDER BY version")
        .map_err(|e| anyhow::anyhow!("{} is not a Gable database: {e}", db.display()))?;
    let applied = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?, r.get::<_, bool>(2)?, r.get::<_, Vec<u8>>(3)?)))?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let migrator = &super::pool::SQLITE_MIGRATIONS;
    let ours = |version: i64| migrator.iter().find(|m| m.version == version && !m.migration_type.is_down_migration());
    for (version, description, success, checksum) in &applied {
        anyhow::ensure!(
            *success,
            "{}: migration {version} ({description}) failed part-way when it was applied; this database cannot be served as it is",
            db.display()
        );
        match ours(*version) {
            None if migrator.ignore_missing => {}
            None => anyhow::bail!(
                "{}: migration {version} ({description}) is unknown to this build (Gable {}): the database comes from a newer \
                 or different build; restore it with that build",
                db.display(),
                env!("CARGO_PKG_VERSION")
            ),
            Some(m) if m.checksum.as_ref() != checksum.as_slice() => anyhow::bail!(
                "{}: migration {version} ({description}) was applied from other SQL than this build's (its checksum differs); \
                 this build cannot serve it",
                db.display()
            ),
            Some(_) => {}
        }
    }
    Ok(())
}

/// A value sealed under the master key, with what it is sealed to.
#[derive(Debug)]
pub struct Sealed {
    /// What it is, for messages: "the signing secret of webhook …".
    pub what: String,
    pub value: String,
    pub context: String,
}

impl Sealed {
    /// Whether `key` opens it (so it is the key it was sealed under).
    pub fn opens_with(&self, key: &MasterKey) -> bool {
        key.open(&self.value, &self.context).is_some()
    }
}

/// How many of the newest sealed values of each kind a key is tried on.
const SEALED_SAMPLE: usize = 8;

/// The newest sealed values in the database at `db`: webhook signing secrets, then
/// stored idempotent answers (at most [`SEALED_SAMPLE`] of each). Empty when nothing was
/// ever sealed. The newest are the likeliest to be sealed under the key in use.
pub fn sealed_values(db: &Path) -> anyhow::Result<Vec<Sealed>> {
    let conn = read_only(db)?;
    let uuid = |text: String| Uuid::parse_str(&text).map_err(|e| anyhow::anyhow!("{}: a malformed id {text:?}: {e}", db.display()));
    let mut out = Vec::new();
    let mut st = conn.prepare(
        "SELECT tenant_id, livemode, id, secret_sealed FROM webhooks WHERE secret_sealed IS NOT NULL ORDER BY updated_at DESC LIMIT ?1",
    )?;
    let rows = st
        .query_map([SEALED_SAMPLE as i64], |r| Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?, r.get::<_, String>(2)?, r.get(3)?)))?
        .collect::<rusqlite::Result<Vec<(String, bool, String, String)>>>()?;
    for (tenant, livemode, id, value) in rows {
        let (tenant, webhook) = (uuid(tenant)?, uuid(id)?);
        out.push(Sealed {
            what: format!("the signing secret of webhook {webhook}"),
            value,
            context: crate::domain::webhooks::secret_context(tenant, livemode, webhook),
        });
    }
    let mut st = conn.prepare(
        "SELECT tenant_id, livemode, credential_id, key, response_sealed FROM idempotency_keys \
         WHERE response_sealed IS NOT NULL ORDER BY created_at DESC LIMIT ?1",
    )?;
    let rows = st
        .query_map([SEALED_SAMPLE as i64], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, bool>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?, r.get(4)?))
        })?
        .collect::<rusqlite::Result<Vec<(String, bool, String, String, String)>>>()?;
    for (tenant, livemode, credential, key, value) in rows {
        let owner = super::idempotency::Owner { tenant: uuid(tenant)?, livemode, credential: uuid(credential)? };
        out.push(Sealed {
            what: "a stored idempotent answer".to_string(),
            value,
            context: super::idempotency::sealing_context(&owner, &key),
        });
    }
    Ok(out)
}
