//! A database's schema, read back from the database itself, the same way from any database
//! of one kind: SQLite's `sqlite_master` (and the request log's file's) and `pragma
//! table_info / index_list / foreign_key_list`; PostgreSQL's `information_schema.columns`, `pg_indexes`,
//! `pg_constraint`, `pg_policies` and the table privileges of `gable_app`. Two databases
//! made differently (the migrations; the registry's DDL, `gable schema`) compare table by
//! table, whatever order or statements made them.
//!
//! [`Database`]: a fresh one, migrated or empty, on either backend.

use std::collections::{BTreeMap, BTreeSet};

use gable::store::Store;
use sqlx::{Connection, PgConnection, Row, SqliteConnection};
use uuid::Uuid;

use crate::Backend;

/// One table as the database has it. Everything is text in the database's own words, so
/// two tables of one kind of database compare equal exactly when they are alike.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Table {
    /// Column name → its type, `NOT NULL` and default.
    pub columns: BTreeMap<String, Column>,
    /// Index name → `[UNIQUE ](columns)[ WHERE …]`; the primary key is `primary key` and a
    /// `UNIQUE` column constraint is `unique (columns)`.
    pub indexes: BTreeMap<String, String>,
    /// The referencing columns, `(a, b)` → the whole foreign key as the database says it.
    pub foreign_keys: BTreeMap<String, String>,
    /// PostgreSQL: row-level security, each policy, and what `gable_app` may do.
    pub walls: BTreeSet<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// The type as declared (SQLite) or as PostgreSQL names it, with its collation.
    pub ty: String,
    pub not_null: bool,
    pub default: Option<String>,
}

impl std::fmt::Display for Column {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.ty, if self.not_null { " NOT NULL" } else { "" })?;
        match &self.default {
            Some(d) => write!(f, " DEFAULT {d}"),
            None => Ok(()),
        }
    }
}

/// A fresh database of its own: SQLite in a temporary directory, or a new PostgreSQL
/// database (named `gable_test_…`, so an interrupted run's is dropped by a later one).
pub struct Database {
    pub backend: Backend,
    pub url: String,
    _dir: Option<tempfile::TempDir>,
}

/// A connection to a [`Database`].
pub enum Conn {
    Sqlite(SqliteConnection),
    Postgres(PgConnection),
}

impl Database {
    /// A fresh database with every migration applied, as each test server gets one; `None`
    /// when it is to be PostgreSQL and PostgreSQL is unreachable (and not required).
    pub async fn migrated(backend: Backend) -> Option<Database> {
        let (store, url, dir): (Store, String, _) = match backend {
            Backend::Sqlite => {
                let (store, url, dir) = crate::fresh_sqlite().await;
                (store, url, Some(dir))
            }
            Backend::Postgres => {
                let (store, url) = crate::fresh_postgres().await?;
                (store, url, None)
            }
        };
        store.close().await;
        Some(Database { backend, url, _dir: dir })
    }

    /// A fresh database with nothing in it (no migrations table either).
    pub async fn empty(backend: Backend) -> Option<Database> {
        match backend {
            Backend::Sqlite => {
                let dir = tempfile::tempdir().expect("temp dir");
                let url = format!("sqlite://{}?mode=rwc", dir.path().join("empty.db").display());
                Some(Database { backend, url, _dir: Some(dir) })
            }
            Backend::Postgres => {
                let (mut admin, admin_url) = crate::postgres_admin().await?;
                let secs = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
                let db = format!("gable_test_{secs}_{}", Uuid::new_v4().simple());
                sqlx::Executor::execute(&mut admin, format!("CREATE DATABASE {db}").as_str()).await.expect("create database");
                let _ = admin.close().await;
                Some(Database { backend, url: crate::with_database(&admin_url, &db), _dir: None })
            }
        }
    }

    pub async fn connect(&self) -> Conn {
        match self.backend {
            Backend::Sqlite => {
                let mut c = crate::sqlite_connection(&self.url).await;
                // Every schema's objects, the request log's file among them when attached.
                let attached: Vec<String> = sqlx::query_scalar("SELECT name FROM pragma_database_list WHERE name <> 'temp'")
                    .fetch_all(&mut c)
                    .await
                    .expect("databases");
                let every = attached.iter().map(|d| format!("SELECT type, name, sql FROM \"{d}\".sqlite_master")).collect::<Vec<_>>();
                sqlx::raw_sql(&format!("CREATE TEMP VIEW every_master AS {}", every.join(" UNION ALL ")))
                    .execute(&mut c)
                    .await
                    .expect("a view of every schema");
                Conn::Sqlite(c)
            }
            Backend::Postgres => Conn::Postgres(PgConnection::connect(&self.url).await.expect("open postgres")),
        }
    }
}

impl Conn {
    /// Runs a script of statements (a migration, `gable schema`'s DDL) as one.
    pub async fn run_script(&mut self, sql: &str) -> Result<(), sqlx::Error> {
        match self {
            Conn::Sqlite(c) => sqlx::raw_sql(sql).execute(c).await.map(drop),
            Conn::Postgres(c) => sqlx::raw_sql(sql).execute(c).await.map(drop),
        }
    }

    /// Every table but the migrations' own bookkeeping (`_sqlx_migrations`), by name.
    pub async fn tables(&mut self) -> BTreeMap<String, Table> {
        let names: Vec<String> = match self {
            Conn::Sqlite(c) => sqlx::query_scalar(
                "SELECT name FROM every_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name <> '_sqlx_migrations'",
            )
            .fetch_all(c)
            .await
            .expect("sqlite tables"),
            Conn::Postgres(c) => sqlx::query_scalar(
                "SELECT relname::text FROM pg_class WHERE relnamespace = 'public'::regnamespace AND relkind IN ('r', 'p') \
                 AND relname <> '_sqlx_migrations'",
            )
            .fetch_all(c)
            .await
            .expect("postgres tables"),
        };
        let mut tables = BTreeMap::new();
        for name in names {
            let table = self.table(&name).await.expect("a table just listed");
            tables.insert(name, table);
        }
        tables
    }

    /// One table, or `None` when there is no such table.
    pub async fn table(&mut self, name: &str) -> Option<Table> {
        let table = match self {
            Conn::Sqlite(c) => sqlite_table(c, name).await,
            Conn::Postgres(c) => postgres_table(c, name).await,
        };
        (!table.columns.is_empty()).then_some(table)
    }
}

/// Whitespace runs as one space, so statements written over several lines compare.
fn squeeze(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

async fn sqlite_table(c: &mut SqliteConnection, name: &str) -> Table {
    let quoted = name.replace('\'', "''");
    let mut t = Table::default();
    let mut key: Vec<(i64, String)> = Vec::new();
    for r in sqlx::query(&format!("PRAGMA table_info('{quoted}')")).fetch_all(&mut *c).await.expect("table_info") {
        let column: String = r.get("name");
        let pk: i64 = r.get("pk");
        if pk > 0 {
            key.push((pk, column.clone()));
        }
        let column_type: String = r.get("type");
        let default: Option<String> = r.get("dflt_value");
        t.columns.insert(column, Column { ty: column_type.to_uppercase(), not_null: r.get::<i64, _>("notnull") == 1, default });
    }
    if !key.is_empty() {
        key.sort();
        t.indexes.insert("primary key".into(), format!("({})", key.into_iter().map(|(_, c)| c).collect::<Vec<_>>().join(", ")));
    }
    for r in sqlx::query(&format!("PRAGMA index_list('{quoted}')")).fetch_all(&mut *c).await.expect("index_list") {
        let index: String = r.get("name");
        let origin: String = r.get("origin");
        let unique = r.get::<i64, _>("unique") == 1;
        let columns: Vec<String> = sqlx::query(&format!("PRAGMA index_info('{}')", index.replace('\'', "''")))
            .fetch_all(&mut *c)
            .await
            .expect("index_info")
            .iter()
            .map(|r| r.get::<Option<String>, _>("name").unwrap_or_else(|| "<expression>".into()))
            .collect();
        let columns = format!("({})", columns.join(", "));
        match origin.as_str() {
            "pk" => {}
            "u" => {
                t.indexes.insert(format!("unique {columns}"), format!("UNIQUE {columns}"));
            }
            _ => {
                let sql: Option<String> = sqlx::query_scalar("SELECT sql FROM every_master WHERE type = 'index' AND name = ?")
                    .bind(&index)
                    .fetch_one(&mut *c)
                    .await
                    .ok();
                let sql = squeeze(&sql.unwrap_or_default());
                let predicate = sql.find(" WHERE ").map(|at| sql[at..].trim_end_matches(';').to_string()).unwrap_or_default();
                t.indexes.insert(index, format!("{}{columns}{predicate}", if unique { "UNIQUE " } else { "" }));
            }
        }
    }
    // One row per column of a key: the key's columns in order, then its target and actions.
    let rows = sqlx::query(&format!(
        "SELECT id, group_concat(\"from\", ', ') AS columns, \"table\" AS target, group_concat(coalesce(\"to\", ''), ', ') AS target_columns, \
         on_delete, on_update FROM (SELECT * FROM pragma_foreign_key_list('{quoted}') ORDER BY id, seq) GROUP BY id"
    ))
    .fetch_all(&mut *c)
    .await
    .expect("foreign_key_list");
    for r in rows {
        let from = format!("({})", r.get::<String, _>("columns"));
        let mut fk = format!("FOREIGN KEY {from} REFERENCES {} ({})", r.get::<String, _>("target"), r.get::<String, _>("target_columns"));
        for (what, action) in [("DELETE", r.get::<String, _>("on_delete")), ("UPDATE", r.get::<String, _>("on_update"))] {
            if action != "NO ACTION" {
                fk.push_str(&format!(" ON {what} {action}"));
            }
        }
        t.foreign_keys.insert(from, fk);
    }
    t
}

async fn postgres_table(c: &mut PgConnection, name: &str) -> Table {
    let mut t = Table::default();
    let columns = sqlx::query(
        "SELECT column_name::text AS name, data_type::text AS ty, collation_name::text AS collation, is_nullable::text AS nullable, \
         column_default::text AS dflt FROM information_schema.columns WHERE table_schema = 'public' AND table_name = $1",
    )
    .bind(name)
    .fetch_all(&mut *c)
    .await
    .expect("columns");
    for r in columns {
        let collation: Option<String> = r.get("collation");
        let ty: String = r.get("ty");
        let ty = match collation {
            Some(collation) => format!("{ty} COLLATE \"{collation}\""),
            None => ty,
        };
        t.columns.insert(r.get("name"), Column { ty, not_null: r.get::<String, _>("nullable") == "NO", default: r.get("dflt") });
    }
    // Indexes that back a constraint are the constraint's (below), named as SQLite's are.
    let indexes = sqlx::query(
        "SELECT i.indexname::text AS name, i.indexdef AS def FROM pg_indexes i WHERE i.schemaname = 'public' AND i.tablename = $1 \
         AND NOT EXISTS (SELECT 1 FROM pg_constraint k WHERE k.conindid = (quote_ident(i.schemaname) || '.' || quote_ident(i.indexname))::regclass)",
    )
    .bind(name)
    .fetch_all(&mut *c)
    .await
    .expect("indexes");
    for r in indexes {
        let def: String = r.get("def");
        let unique = def.starts_with("CREATE UNIQUE INDEX");
        let shape = def.split_once(" USING btree ").map(|(_, s)| s.to_string()).unwrap_or(def.clone());
        t.indexes.insert(r.get("name"), format!("{}{shape}", if unique { "UNIQUE " } else { "" }));
    }
    let constraints = sqlx::query(
        "SELECT contype::text AS kind, pg_get_constraintdef(oid) AS def FROM pg_constraint \
         WHERE conrelid = (SELECT oid FROM pg_class WHERE relname = $1 AND relnamespace = 'public'::regnamespace) AND contype IN ('p', 'u', 'f')",
    )
    .bind(name)
    .fetch_all(&mut *c)
    .await
    .expect("constraints");
    for r in constraints {
        let (kind, def): (String, String) = (r.get("kind"), r.get("def"));
        let columns = |prefix: &str| def.strip_prefix(prefix).map(|rest| rest.split(')').next().unwrap_or_default().to_string() + ")");
        match kind.as_str() {
            "p" => {
                t.indexes.insert("primary key".into(), columns("PRIMARY KEY ").unwrap_or_default());
            }
            "u" => {
                let columns = columns("UNIQUE ").unwrap_or_default();
                t.indexes.insert(format!("unique {columns}"), format!("UNIQUE {columns}"));
            }
            _ => {
                t.foreign_keys.insert(columns("FOREIGN KEY ").unwrap_or_default(), def);
            }
        }
    }
    let rls: Option<(bool, bool)> = sqlx::query_as(
        "SELECT relrowsecurity, relforcerowsecurity FROM pg_class WHERE relname = $1 AND relnamespace = 'public'::regnamespace",
    )
    .bind(name)
    .fetch_optional(&mut *c)
    .await
    .expect("row-level security");
    if let Some((true, force)) = rls {
        t.walls.insert(format!("row-level security{}", if force { " (forced)" } else { "" }));
    }
    let policies = sqlx::query(
        "SELECT policyname::text AS name, permissive, roles::text AS roles, cmd, qual, with_check FROM pg_policies \
         WHERE schemaname = 'public' AND tablename = $1",
    )
    .bind(name)
    .fetch_all(&mut *c)
    .await
    .expect("policies");
    for r in policies {
        let (policy, permissive, roles, cmd): (String, String, String, String) =
            (r.get("name"), r.get("permissive"), r.get("roles"), r.get("cmd"));
        let (using, check): (Option<String>, Option<String>) = (r.get("qual"), r.get("with_check"));
        t.walls.insert(format!(
            "policy {policy} ({permissive} {cmd} TO {roles}) USING {} WITH CHECK {}",
            using.unwrap_or_default(),
            check.unwrap_or_default()
        ));
    }
    let granted: Option<String> = sqlx::query_scalar(
        "SELECT string_agg(privilege_type::text, ', ' ORDER BY privilege_type) FROM information_schema.role_table_grants \
         WHERE grantee = 'gable_app' AND table_schema = 'public' AND table_name = $1",
    )
    .bind(name)
    .fetch_one(&mut *c)
    .await
    .expect("grants");
    if let Some(granted) = granted {
        t.walls.insert(format!("gable_app may {granted}"));
    }
    t
}
