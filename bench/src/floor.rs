//! The floor under Gable's read path: the least a server can do to answer the quick
//! benchmark's two read requests from the same store, with nothing of Gable in it (no
//! credential, no rate limit, no registry, no row-level security). A lease by id, and the
//! first page of active leases by start date, each rendered as JSON. What Gable's read
//! costs beyond this is Gable's; what this costs is the database's and the HTTP stack's.
//!
//!   floor sqlite   <data-dir>/gable.db <tenant> <addr>
//!   floor postgres <url>               <tenant> <addr>
//!   floor postgres-tx <url>            <tenant> <addr>   (each read in a transaction that
//!        first sets the tenant, as row-level security needs: one more round trip each way)
//!
//! Routes: `GET /leases/{id}` and `GET /leases` (status active, newest start first, 25).
//! SQLite reads run on the calling task, as Gable's do; PostgreSQL through a pool of 16.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use axum::extract::{Path, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Map, Value};
use sqlx::{Column, Row, TypeInfo};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const READ: &str = "SELECT * FROM leases WHERE tenant_id = ?1 AND livemode = ?2 AND id = ?3";
const LIST: &str = "SELECT * FROM leases WHERE tenant_id = ?1 AND livemode = ?2 AND status = 'active' \
                    ORDER BY start_date DESC, id DESC LIMIT 26";

enum Db {
    Sqlite { conns: Vec<Mutex<rusqlite::Connection>>, next: AtomicUsize },
    Postgres { pool: sqlx::PgPool, tx: bool },
}

struct Floor {
    db: Db,
    tenant: String,
}

type Shared = State<Arc<Floor>>;

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().collect();
    let [_, kind, target, tenant, addr] = &args[..] else {
        eprintln!("usage: floor sqlite|postgres|postgres-tx <database> <tenant> <addr>");
        std::process::exit(2);
    };
    let db = match kind.as_str() {
        "sqlite" => {
            let open = || {
                let c = rusqlite::Connection::open_with_flags(target, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).expect("open");
                c.set_prepared_statement_cache_capacity(16);
                Mutex::new(c)
            };
            Db::Sqlite { conns: (0..4).map(|_| open()).collect(), next: AtomicUsize::new(0) }
        }
        "postgres" | "postgres-tx" => {
            let pool = sqlx::postgres::PgPoolOptions::new().max_connections(16).connect(target).await.expect("connect");
            Db::Postgres { pool, tx: kind == "postgres-tx" }
        }
        other => panic!("unknown kind {other}"),
    };
    let floor = Arc::new(Floor { db, tenant: tenant.clone() });
    let app = axum::Router::new().route("/leases", get(list)).route("/leases/{id}", get(read)).with_state(floor);
    let listener = tokio::net::TcpListener::bind(addr).await.expect("bind");
    axum::serve(listener, app).await.expect("serve");
}

async fn read(State(f): Shared, Path(id): Path<String>) -> Response {
    match f.rows(READ, Some(&id)).await {
        Ok(mut rows) if !rows.is_empty() => json(&rows.swap_remove(0)),
        Ok(_) => StatusCode::NOT_FOUND.into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

async fn list(State(f): Shared) -> Response {
    match f.rows(LIST, None).await {
        Ok(mut rows) => {
            let has_more = rows.len() > 25;
            rows.truncate(25);
            json(&serde_json::json!({ "object": "list", "data": rows, "has_more": has_more }))
        }
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e).into_response(),
    }
}

fn json<T: serde::Serialize>(v: &T) -> Response {
    match serde_json::to_vec(v) {
        Ok(body) => ([(header::CONTENT_TYPE, "application/json")], body).into_response(),
        Err(e) => (StatusCode::INTERNAL_SERVER_ERROR, e.to_string()).into_response(),
    }
}

impl Floor {
    async fn rows(&self, sql: &str, id: Option<&str>) -> Result<Vec<Map<String, Value>>, String> {
        match &self.db {
            Db::Sqlite { conns, next } => {
                let i = next.fetch_add(1, Ordering::Relaxed) % conns.len();
                let c = conns[i].lock().map_err(|e| e.to_string())?;
                sqlite_rows(&c, sql, &self.tenant, id).map_err(|e| e.to_string())
            }
            Db::Postgres { pool, tx } => {
                let sql = sql.replace("?1", "$1::uuid").replace("?2", "false").replace("?3", "$2::uuid");
                let q = sqlx::query(&sql).bind(&self.tenant);
                let q = match id {
                    Some(id) => q.bind(id),
                    None => q,
                };
                let rows = if *tx {
                    let begin = format!("BEGIN; SELECT set_config('gable.tenant_id', '{}', true)", self.tenant);
                    let mut t = pool.begin_with(begin).await.map_err(|e| e.to_string())?;
                    let rows = q.fetch_all(&mut *t).await.map_err(|e| e.to_string())?;
                    t.commit().await.map_err(|e| e.to_string())?;
                    rows
                } else {
                    q.fetch_all(pool).await.map_err(|e| e.to_string())?
                };
                Ok(rows.iter().map(pg_row).collect())
            }
        }
    }
}

fn sqlite_rows(c: &rusqlite::Connection, sql: &str, tenant: &str, id: Option<&str>) -> rusqlite::Result<Vec<Map<String, Value>>> {
    use rusqlite::types::ValueRef;
    let mut st = c.prepare_cached(sql)?;
    let names: Vec<String> = st.column_names().iter().map(|n| n.to_string()).collect();
    let mut rows = match id {
        Some(id) => st.query(rusqlite::params![tenant, 0, id])?,
        None => st.query(rusqlite::params![tenant, 0])?,
    };
    let mut out = Vec::new();
    while let Some(r) = rows.next()? {
        let mut m = Map::new();
        for (i, n) in names.iter().enumerate() {
            let v = match r.get_ref(i)? {
                ValueRef::Null => Value::Null,
                ValueRef::Integer(n) => n.into(),
                ValueRef::Real(f) => f.into(),
                ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned().into(),
                ValueRef::Blob(_) => Value::Null,
            };
            m.insert(n.clone(), v);
        }
        out.push(m);
    }
    Ok(out)
}

fn pg_row(r: &sqlx::postgres::PgRow) -> Map<String, Value> {
    let mut m = Map::new();
    for (i, c) in r.columns().iter().enumerate() {
        let v = match c.type_info().name() {
            "UUID" => r.try_get::<Option<uuid::Uuid>, _>(i).ok().flatten().map(|u| u.to_string().into()),
            "BOOL" => r.try_get::<Option<bool>, _>(i).ok().flatten().map(Value::from),
            "INT8" => r.try_get::<Option<i64>, _>(i).ok().flatten().map(Value::from),
            "DATE" => r.try_get::<Option<chrono::NaiveDate>, _>(i).ok().flatten().map(|d| d.to_string().into()),
            "TIMESTAMPTZ" => r.try_get::<Option<chrono::DateTime<chrono::Utc>>, _>(i).ok().flatten().map(|d| d.to_rfc3339().into()),
            "JSONB" => r.try_get::<Option<Value>, _>(i).ok().flatten(),
            _ => r.try_get::<Option<String>, _>(i).ok().flatten().map(Value::from),
        };
        m.insert(c.name().to_string(), v.unwrap_or(Value::Null));
    }
    m
}
