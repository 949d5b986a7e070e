//! The request log's table (`request_logs`, a collection read like any other through
//! `store::records`): rows written in batches by the request log's writer
//! (`ops::request_log`, `jobs::request_log`), the events each request caused looked up
//! by the request id they carry, and the purge of what is past its keeping.
//!
//! Every write here runs in a unit of work of the log's own (`Store::in_request_log`): on
//! SQLite the table is in a file of its own (`pool::request_log_file`), attached to the
//! read connections, so its reads are any collection's. The writer's batches span
//! tenants; every row carries its tenant and environment like any tenant row, and
//! PostgreSQL's `tenant_wall` holds reads of it to them.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_query::{Cond, Expr, Order, Query, SimpleExpr};
use serde_json::Value as Json;
use uuid::Uuid;

use super::sql::{a, col, values_in};
use super::Tx;
use crate::error::{Error, Result};

/// The log's table: the `request-logs` collection's, written only in units of work of the
/// log's own (`Store::in_request_log`; on SQLite a file apart from the collections').
pub const TABLE: &str = "request_logs";

/// One row, redacted and ready to write.
#[derive(Debug, Clone)]
pub struct NewRequestLog {
    pub tenant: Uuid,
    pub livemode: bool,
    /// The request's id (`Request-Id`).
    pub id: Uuid,
    pub at: DateTime<Utc>,
    pub method: &'static str,
    pub path: String,
    pub route: Option<String>,
    pub query: Option<String>,
    pub status: u16,
    pub status_class: &'static str,
    pub error_code: Option<String>,
    pub duration_ms: f64,
    pub credential_type: &'static str,
    pub credential_id: Uuid,
    pub key_prefix: Option<String>,
    pub oauth_client_id: Option<Uuid>,
    pub user_id: Option<Uuid>,
    pub idempotency_key: Option<String>,
    pub idempotent_replayed: bool,
    pub api_version: Option<String>,
    pub client_ip: Option<String>,
    pub user_agent: Option<String>,
    pub request_headers: Json,
    pub request_body: Option<String>,
    pub request_body_truncated: bool,
    pub response_body: Option<String>,
    pub response_body_truncated: bool,
    pub event_ids: Vec<Uuid>,
}

const COLUMNS: [&str; 29] = [
    "tenant_id",
    "livemode",
    "id",
    "created_at",
    "updated_at",
    "method",
    "path",
    "route",
    "query",
    "status",
    "status_class",
    "error_code",
    "duration_ms",
    "credential_type",
    "credential_id",
    "key_prefix",
    "oauth_client_id",
    "user_id",
    "idempotency_key",
    "idempotent_replayed",
    "api_version",
    "client_ip",
    "user_agent",
    "request_headers",
    "request_body",
    "request_body_truncated",
    "response_body",
    "response_body_truncated",
    "event_ids",
];

/// Rows per statement: 29 values each, well under SQLite's bound on a statement's values.
const ROWS_PER_STATEMENT: usize = 50;

/// Writes the rows in `tx`, several per statement. A row whose id is already there (a
/// batch written again after a failed commit) is skipped.
pub async fn insert(tx: &mut Tx, rows: Vec<NewRequestLog>) -> Result<()> {
    // Taken by value: each body moves into its statement, never copied (a batch's bodies
    // are megabytes).
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let mut ins = Query::insert();
        ins.into_table(a(TABLE)).columns(COLUMNS.iter().map(|c| a(c)));
        for r in rows.by_ref().take(ROWS_PER_STATEMENT) {
            let event_ids = Json::from(r.event_ids.iter().map(|id| Json::from(id.to_string())).collect::<Vec<_>>());
            let values: [SimpleExpr; 29] = [
                Expr::val(r.tenant).into(),
                r.livemode.into(),
                Expr::val(r.id).into(),
                Expr::val(r.at).into(),
                Expr::val(r.at).into(),
                r.method.into(),
                r.path.into(),
                r.route.into(),
                r.query.into(),
                i64::from(r.status).into(),
                r.status_class.into(),
                r.error_code.into(),
                r.duration_ms.into(),
                r.credential_type.into(),
                Expr::val(r.credential_id).into(),
                r.key_prefix.into(),
                Expr::val(r.oauth_client_id).into(),
                Expr::val(r.user_id).into(),
                r.idempotency_key.into(),
                r.idempotent_replayed.into(),
                r.api_version.into(),
                r.client_ip.into(),
                r.user_agent.into(),
                Expr::val(r.request_headers).into(),
                r.request_body.into(),
                r.request_body_truncated.into(),
                r.response_body.into(),
                r.response_body_truncated.into(),
                Expr::val(event_ids).into(),
            ];
            ins.values(values).map_err(Error::internal)?;
        }
        ins.on_conflict(sea_query::OnConflict::columns(["tenant_id", "livemode", "id"].map(a)).do_nothing().to_owned());
        tx.execute(&ins).await?;
    }
    Ok(())
}

/// The events each of `requests` (tenant, environment, request id) caused, in the order
/// they happened, at most `per_request` each.
pub async fn events_of(tx: &mut Tx, requests: &[(Uuid, bool, Uuid)], per_request: usize) -> Result<HashMap<Uuid, Vec<Uuid>>> {
    let mut found: HashMap<Uuid, Vec<Uuid>> = HashMap::new();
    if requests.is_empty() {
        return Ok(found);
    }
    // One equality group per tenant environment: each a walk of the `events_request_id`
    // index. Sorted here, not in SQL: with an ORDER BY, SQLite's planner (without
    // statistics for a table that was empty when they were gathered) walked the tenant's
    // `events_created` index instead, reading every event of the tenant for each batch of
    // the log; its cost grew with the events table and slowed a whole soak minute by
    // minute (docs/benchmarks.md, "The log on and off").
    let any = values_in("request_id", requests.iter().copied());
    let sel = Query::select().columns(["request_id", "id", "created_at"].map(a)).from(a("events")).cond_where(any).to_owned();
    let mut rows = vec![];
    for row in tx.fetch_all(&sel).await? {
        let (Some(request), Some(id), Some(at)) = (row.opt_uuid("request_id")?, row.opt_uuid("id")?, row.opt_datetime("created_at")?)
        else {
            continue;
        };
        rows.push((at, id, request));
    }
    rows.sort_unstable();
    for (_, id, request) in rows {
        let ids = found.entry(request).or_default();
        if ids.len() < per_request {
            ids.push(id);
        }
    }
    Ok(found)
}

/// Deletes every record of a tenant's environment (a sandbox reset); returns how many.
pub async fn delete_environment(tx: &mut Tx, tenant: Uuid, livemode: bool) -> Result<u64> {
    let del = Query::delete()
        .from_table(a(TABLE))
        .cond_where(Cond::all().add(col("tenant_id").eq(tenant)).add(col("livemode").eq(livemode)))
        .to_owned();
    tx.execute(&del).await
}

/// Deletes at most `limit` of the records created before `cutoff`; returns how many.
pub async fn delete_before(tx: &mut Tx, cutoff: DateTime<Utc>, limit: u64) -> Result<u64> {
    super::sql::delete_some(tx, TABLE, &["tenant_id", "livemode", "id"], col("created_at").lt(cutoff), limit).await
}

/// Errors of one code on one route (`errors`).
#[derive(Debug, Clone, PartialEq)]
pub struct ErrorCount {
    /// `None` for an error answer without an error body.
    pub code: Option<String>,
    pub route: Option<String>,
    /// The highest status of the group (a code is one status almost always).
    pub status: u16,
    pub count: u64,
    pub last_seen: DateTime<Utc>,
    /// The newest call of the group (ids are time-ordered).
    pub last_id: Uuid,
}

/// A tenant environment's error answers since `since`, grouped by code and route, the most
/// frequent first (at most `limit` groups); and how many calls and errors there were. Read
/// along the status index: errors are the few.
pub async fn errors(tx: &mut Tx, tenant: Uuid, livemode: bool, since: DateTime<Utc>, limit: u64) -> Result<(Vec<ErrorCount>, u64, u64)> {
    let scoped = || Cond::all().add(col("tenant_id").eq(tenant)).add(col("livemode").eq(livemode)).add(col("created_at").gte(since));
    let sel = Query::select()
        .columns(["error_code", "route"].map(a))
        .expr_as(Expr::cust("MAX(status)"), a("status"))
        .expr_as(Expr::cust("COUNT(*)"), a("n"))
        .expr_as(Expr::cust("MAX(created_at)"), a("last_seen"))
        .expr_as(Expr::cust("MAX(CAST(id AS TEXT))"), a("last_id"))
        .from(a(TABLE))
        .cond_where(scoped().add(col("status").gte(400)))
        .group_by_col(a("error_code"))
        .group_by_col(a("route"))
        .order_by_expr(Expr::cust("COUNT(*)"), Order::Desc)
        .order_by_expr(Expr::cust("MAX(created_at)"), Order::Desc)
        .limit(limit)
        .to_owned();
    let mut groups = vec![];
    for row in tx.fetch_all(&sel).await? {
        let last_id =
            row.opt_string("last_id")?.and_then(|s| Uuid::parse_str(&s).ok()).ok_or_else(|| super::sql::incomplete("an error group"))?;
        groups.push(ErrorCount {
            code: row.opt_string("error_code")?,
            route: row.opt_string("route")?,
            status: row.opt_i64("status")?.and_then(|s| u16::try_from(s).ok()).unwrap_or(500),
            count: row.opt_i64("n")?.map_or(0, |n| n.unsigned_abs()),
            last_seen: row.opt_datetime("last_seen")?.ok_or_else(|| super::sql::incomplete("an error group"))?,
            last_id,
        });
    }
    let totals = Query::select()
        .expr_as(Expr::cust("COUNT(*)"), a("calls"))
        .expr_as(Expr::cust("COALESCE(SUM(CASE WHEN status >= 400 THEN 1 ELSE 0 END), 0)"), a("errors"))
        .from(a(TABLE))
        .cond_where(scoped())
        .to_owned();
    let row = tx.fetch_optional(&totals).await?.ok_or_else(|| super::sql::incomplete("the calls' count"))?;
    let calls = row.opt_i64("calls")?.map_or(0, |n| n.unsigned_abs());
    let errors = row.opt_i64("errors")?.map_or(0, |n| n.unsigned_abs());
    Ok((groups, calls, errors))
}
