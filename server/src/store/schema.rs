//! Table definitions derived from the registry, for both databases.
//!
//! `gable schema --dialect sqlite|postgres` prints them; the output was committed as the
//! first migration of each database (`migrations/*/20261122000001_init.sql`). Later schema
//! changes are new migration files; `gable migration <collection>` prints a new
//! collection's (`collection_migration`). `tests/tests/it/migrations.rs` migrates a fresh
//! database of each kind and compares it with one made from `init_ddl`: the migrations
//! must make the schema this module describes.

use std::fmt::Write;

use super::Dialect;
use crate::domain::collections::{collection, COLLECTIONS};
use crate::domain::registry::{Collection, Field, SecretStore, Ty};

/// The row-level-security condition of every tenant table on PostgreSQL: the tenant and
/// the environment a tenant transaction set (`Store::begin_tenant`).
pub const TENANT_WALL: &str = "tenant_id = NULLIF(current_setting('gable.tenant_id', true), '')::uuid \
     AND livemode = NULLIF(current_setting('gable.livemode', true), '')::boolean";

/// Extra, never-rendered columns of a collection: the hash of its secret, if it has one.
pub fn hidden_columns(c: &Collection) -> Vec<(&'static str, &'static str)> {
    c.secret.iter().map(|s| (s.column, "TEXT")).collect()
}

pub fn column_type(ty: Ty, d: Dialect) -> &'static str {
    use Dialect::*;
    match (ty, d) {
        (Ty::Int { .. } | Ty::Money, Sqlite) => "INTEGER",
        (Ty::Int { .. } | Ty::Money, Postgres) => "BIGINT",
        (Ty::Num { .. }, Sqlite) => "REAL",
        (Ty::Num { .. }, Postgres) => "DOUBLE PRECISION",
        (Ty::Bool, Sqlite) => "INTEGER",
        (Ty::Bool, Postgres) => "BOOLEAN",
        (Ty::Date, Postgres) => "DATE",
        (Ty::DateTime, Postgres) => "TIMESTAMPTZ",
        (Ty::Ref(_) | Ty::Uuid, Postgres) => "UUID",
        (Ty::StrList { .. } | Ty::RefList(_) | Ty::Json(_) | Ty::Metadata, Postgres) => "JSONB",
        // Text keeps byte order in PostgreSQL as in SQLite, so both sort alike.
        (_, Postgres) => "TEXT COLLATE \"C\"",
        (_, Sqlite) => "TEXT",
    }
}

fn col(out: &mut String, name: &str, ty: &str, not_null: bool) {
    let _ = writeln!(out, "    {name} {ty}{},", if not_null { " NOT NULL" } else { "" });
}

fn field_not_null(f: &Field) -> bool {
    !f.nullable()
}

/// The DDL of every collection table, with keys, foreign keys and indexes.
pub fn collections_ddl(d: Dialect) -> String {
    let mut out: String = COLLECTIONS.iter().map(|c| table_ddl(c, d)).collect();
    if d == Dialect::Postgres {
        // Tables reference each other in both directions, so keys come after all tables.
        for c in COLLECTIONS {
            out.push_str(&added_foreign_keys(c));
        }
        out.push_str("\n-- Row-level security: a second wall behind the application's own tenant scoping.\n");
        out.push_str("-- Tenant-scoped work runs as gable_app with gable.tenant_id and gable.livemode set.\n");
        for c in COLLECTIONS {
            out.push_str(&wall(c));
        }
    }
    out
}

/// One collection's table: its columns, its key (on SQLite its foreign keys too: SQLite
/// cannot add them later) and its indexes, after a comment naming it.
fn table_ddl(c: &Collection, d: Dialect) -> String {
    let mut out = String::new();
    let (uuid, ts, boolean) = match d {
        Dialect::Sqlite => ("TEXT", "TEXT", "INTEGER"),
        Dialect::Postgres => ("UUID", "TIMESTAMPTZ", "BOOLEAN"),
    };
    let json = if d == Dialect::Postgres { "JSONB" } else { "TEXT" };
    let _ = writeln!(out, "-- {}: {}", c.name, c.doc);
    let _ = writeln!(out, "CREATE TABLE {} (", c.table);
    col(&mut out, "tenant_id", &format!("{uuid} NOT NULL REFERENCES tenants (id)"), false);
    col(&mut out, "livemode", boolean, true);
    col(&mut out, "id", uuid, true);
    col(&mut out, "created_at", ts, true);
    col(&mut out, "updated_at", ts, true);
    if c.metadata {
        col(&mut out, "metadata", json, true);
    }
    for f in c.fields {
        col(&mut out, f.name, column_type(f.ty, d), field_not_null(f));
    }
    for (name, ty) in hidden_columns(c) {
        col(&mut out, name, ty, false);
    }
    let mut constraints = vec!["    PRIMARY KEY (tenant_id, livemode, id)".to_string()];
    if d == Dialect::Sqlite {
        constraints.extend(foreign_keys(c).into_iter().map(|fk| format!("    {fk}")));
    }
    let _ = writeln!(out, "{}\n);", constraints.join(",\n"));
    for stmt in indexes(c) {
        let _ = writeln!(out, "{stmt}");
    }
    out.push('\n');
    out
}

/// PostgreSQL: a collection's foreign keys, added once the tables they name exist.
fn added_foreign_keys(c: &Collection) -> String {
    foreign_keys(c).iter().map(|fk| format!("ALTER TABLE {} ADD {fk};\n", c.table)).collect()
}

/// PostgreSQL: a collection table's row-level security, the `tenant_wall` policy.
fn wall(c: &Collection) -> String {
    format!(
        "ALTER TABLE {t} ENABLE ROW LEVEL SECURITY;\nCREATE POLICY tenant_wall ON {t} USING ({TENANT_WALL}) WITH CHECK ({TENANT_WALL});\n",
        t = c.table
    )
}

/// PostgreSQL: what tenant transactions (the `gable_app` role) may do to a collection table.
fn grant(c: &Collection) -> String {
    format!("GRANT SELECT, INSERT, UPDATE, DELETE ON {} TO gable_app;\n", c.table)
}

/// The migration that adds one collection to a database that has every other: its table
/// and indexes and, on PostgreSQL, its foreign keys, its `tenant_wall` and its grant to
/// `gable_app` (what the first migration and `20261123000001_walls.sql` give every
/// collection). `gable migration <collection>` prints it for both databases.
///
/// Only the new table's own references are in it: a field of another collection that
/// refers to the new one is a change of that collection, in the same migration by hand.
pub fn collection_migration(c: &Collection, d: Dialect) -> String {
    let mut out = format!("-- The `{}` collection, as `gable migration {}` prints it from the collection registry.\n\n", c.name, c.name);
    out.push_str(&table_ddl(c, d));
    if d == Dialect::Postgres {
        out.push_str(&added_foreign_keys(c));
        out.push_str(&wall(c));
        out.push_str(&grant(c));
    }
    out.truncate(out.trim_end().len());
    out.push('\n');
    out
}

/// Foreign keys carry the tenant and environment, so a reference can never cross them.
fn foreign_keys(c: &Collection) -> Vec<String> {
    c.fields
        .iter()
        .filter_map(|f| match f.ty {
            Ty::Ref(target) => {
                let t = collection(target).expect("references name real collections");
                Some(format!(
                    "CONSTRAINT {}_{}_fk FOREIGN KEY (tenant_id, livemode, {}) REFERENCES {} (tenant_id, livemode, id)",
                    c.table, f.name, f.name, t.table
                ))
            }
            _ => None,
        })
        .collect()
}

/// Every index is led by the tenant and environment. Sortable fields get an index that
/// serves keyset paging; references get one for joins and deletes.
fn indexes(c: &Collection) -> Vec<String> {
    let mut v = vec![format!("CREATE INDEX {t}_created ON {t} (tenant_id, livemode, created_at, id);", t = c.table)];
    for f in c.fields {
        if f.sortable {
            v.push(format!("CREATE INDEX {t}_{n} ON {t} (tenant_id, livemode, {n}, id);", t = c.table, n = f.name));
        } else if matches!(f.ty, Ty::Ref(_)) || (f.filterable && matches!(f.ty, Ty::Uuid)) {
            v.push(format!("CREATE INDEX {t}_{n} ON {t} (tenant_id, livemode, {n});", t = c.table, n = f.name));
        }
    }
    // A unique field's values are unique per tenant and environment; nulls repeat.
    for f in c.fields.iter().filter(|f| f.unique) {
        v.push(format!("CREATE UNIQUE INDEX {t}_{n} ON {t} (tenant_id, livemode, {n}) WHERE {n} IS NOT NULL;", t = c.table, n = f.name));
    }
    for cols in c.indexes {
        v.push(format!(
            "CREATE INDEX {t}_{name} ON {t} (tenant_id, livemode, {cols});",
            t = c.table,
            name = cols.join("_"),
            cols = cols.join(", ")
        ));
    }
    // A hashed secret (a token) is how its record is found when it comes back; a sealed
    // one is only ever read from its own row, so it has no index.
    for s in c.secret.iter().filter(|s| s.stored == SecretStore::Hashed) {
        v.push(format!("CREATE UNIQUE INDEX {t}_{name} ON {t} ({name});", t = c.table, name = s.column));
    }
    v
}

/// Gable's own tables: instance secrets, tenants, service accounts and API keys.
pub fn core_ddl(d: Dialect) -> String {
    let (uuid, ts, boolean, json) = match d {
        Dialect::Sqlite => ("TEXT", "TEXT", "INTEGER", "TEXT"),
        Dialect::Postgres => ("UUID", "TIMESTAMPTZ", "BOOLEAN", "JSONB"),
    };
    let mut out = String::new();
    if d == Dialect::Postgres {
        out.push_str(
            "-- The role tenant-scoped transactions switch to, so row-level security applies to them.\n\
             DO $$ BEGIN\n    CREATE ROLE gable_app NOLOGIN;\nEXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;\nEND $$;\n\n",
        );
    }
    let _ = write!(
        out,
        "CREATE TABLE instance_secrets (\n    name TEXT PRIMARY KEY,\n    value TEXT NOT NULL\n);\n\n\
         CREATE TABLE tenants (\n    id {uuid} PRIMARY KEY,\n    name TEXT NOT NULL,\n    created_at {ts} NOT NULL\n);\n\n\
         CREATE TABLE service_accounts (\n    tenant_id {uuid} NOT NULL REFERENCES tenants (id),\n    id {uuid} NOT NULL,\n    \
         name TEXT NOT NULL,\n    status TEXT NOT NULL DEFAULT 'active',\n    created_at {ts} NOT NULL,\n    PRIMARY KEY (tenant_id, id)\n);\n\n\
         -- API keys: only the SHA-256 of the secret is kept.\n\
         CREATE TABLE api_keys (\n    id {uuid} PRIMARY KEY,\n    tenant_id {uuid} NOT NULL,\n    service_account_id {uuid} NOT NULL,\n    \
         livemode {boolean} NOT NULL,\n    prefix TEXT NOT NULL,\n    secret_hash TEXT NOT NULL UNIQUE,\n    scopes {json} NOT NULL,\n    \
         property_ids {json},\n    created_at {ts} NOT NULL,\n    last_used_at {ts},\n    revoked_at {ts},\n    \
         FOREIGN KEY (tenant_id, service_account_id) REFERENCES service_accounts (tenant_id, id)\n);\n\
         CREATE INDEX api_keys_tenant ON api_keys (tenant_id, livemode, created_at);\n\n"
    );
    out
}

/// The whole first migration of a database.
pub fn init_ddl(d: Dialect) -> String {
    let mut out = format!(
        "-- Generated by `gable schema --dialect {}` from the collection registry.\n\n",
        if d == Dialect::Sqlite { "sqlite" } else { "postgres" }
    );
    out.push_str(&core_ddl(d));
    out.push_str(&collections_ddl(d));
    if d == Dialect::Postgres {
        // Tenant data only: never Gable's own bookkeeping (keys, tenants, secrets).
        out.push_str("\nGRANT USAGE ON SCHEMA public TO gable_app;\n");
        for c in COLLECTIONS {
            out.push_str(&grant(c));
        }
    }
    out
}
