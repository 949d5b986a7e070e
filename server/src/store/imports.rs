//! An import's rows (`import_rows`): each row of an uploaded file as it was read and
//! checked, kept beside its import (the `imports` collection, read like any other through
//! `store::records`) until the import expires. The commit reads them back in line order,
//! a batch at a time; a row's errors are what the dry run (or the commit) found wrong.
//!
//! Rows are deleted with their import (a foreign key, `ON DELETE CASCADE`).

use chrono::{DateTime, Utc};
use sea_query::{Cond, Expr, Order, Query, SimpleExpr};
use serde_json::Value as Json;
use uuid::Uuid;

use super::sql::{a, col};
use super::Tx;
use crate::domain::reach::Scope;
use crate::error::{Error, Result};

pub const TABLE: &str = "import_rows";

/// A row as the upload read and checked it.
#[derive(Debug, Clone)]
pub struct NewRow {
    pub line: u64,
    pub collection: &'static str,
    pub external_id: Option<String>,
    /// The create body as the file gave it (references by external id as written).
    pub body: Json,
    /// `[{field, code, message}]`, or `None` for a valid row.
    pub errors: Option<Json>,
}

/// A stored row.
#[derive(Debug, Clone)]
pub struct StoredRow {
    pub line: u64,
    pub collection: String,
    pub external_id: Option<String>,
    pub body: Json,
    pub errors: Option<Json>,
}

const COLUMNS: [&str; 8] = ["tenant_id", "livemode", "import_id", "line", "collection", "external_id", "body", "errors"];
/// Rows per statement: 8 values each, well under SQLite's bound on a statement's values.
const ROWS_PER_STATEMENT: usize = 100;

fn of_import(scope: &Scope, import: Uuid) -> Cond {
    Cond::all().add(col("tenant_id").eq(scope.tenant)).add(col("livemode").eq(scope.livemode)).add(col("import_id").eq(import))
}

/// Writes rows of an import, several per statement.
pub async fn insert(tx: &mut Tx, scope: &Scope, import: Uuid, rows: Vec<NewRow>) -> Result<()> {
    let mut rows = rows.into_iter().peekable();
    while rows.peek().is_some() {
        let mut ins = Query::insert();
        ins.into_table(a(TABLE)).columns(COLUMNS.iter().map(|c| a(c)));
        for r in rows.by_ref().take(ROWS_PER_STATEMENT) {
            let values: [SimpleExpr; 8] = [
                Expr::val(scope.tenant).into(),
                scope.livemode.into(),
                Expr::val(import).into(),
                line_value(r.line)?.into(),
                r.collection.into(),
                r.external_id.into(),
                r.body.to_string().into(),
                r.errors.map(|e| e.to_string()).into(),
            ];
            ins.values(values).map_err(Error::internal)?;
        }
        tx.execute(&ins).await?;
    }
    Ok(())
}

fn line_value(line: u64) -> Result<i64> {
    i64::try_from(line).map_err(|_| Error::internal(anyhow::anyhow!("a line number past i64")))
}

fn decode(row: &super::rows::Row) -> Result<StoredRow> {
    let text = |name: &str| row.opt_string(name);
    let json = |name: &str| -> Result<Option<Json>> {
        text(name)?.map(|t| serde_json::from_str(&t).map_err(|e| Error::internal(anyhow::anyhow!("a stored import row: {e}")))).transpose()
    };
    Ok(StoredRow {
        line: row.opt_i64("line")?.map_or(0, i64::unsigned_abs),
        collection: text("collection")?.unwrap_or_default(),
        external_id: text("external_id")?,
        body: json("body")?.unwrap_or(Json::Null),
        errors: json("errors")?,
    })
}

/// At most `limit` rows from line `from` on, in line order; `errors_only` for the rows
/// with errors (the error report).
pub async fn rows_from(tx: &mut Tx, scope: &Scope, import: Uuid, from: u64, limit: u64, errors_only: bool) -> Result<Vec<StoredRow>> {
    let mut cond = of_import(scope, import).add(col("line").gte(line_value(from)?));
    if errors_only {
        cond = cond.add(col("errors").is_not_null());
    }
    let sel = Query::select()
        .columns(["line", "collection", "external_id", "body", "errors"].map(a))
        .from(a(TABLE))
        .cond_where(cond)
        .order_by(a("line"), Order::Asc)
        .limit(limit)
        .to_owned();
    tx.fetch_all(&sel).await?.iter().map(decode).collect()
}

/// Records what the commit found wrong with a row (it was valid when uploaded).
pub async fn set_errors(tx: &mut Tx, scope: &Scope, import: Uuid, line: u64, errors: &Json) -> Result<()> {
    let upd = Query::update()
        .table(a(TABLE))
        .value(a("errors"), errors.to_string())
        .cond_where(of_import(scope, import).add(col("line").eq(line_value(line)?)))
        .to_owned();
    tx.execute(&upd).await?;
    Ok(())
}

/// The imports being committed, of every tenant, oldest first: (tenant, environment, id).
pub async fn importing(tx: &mut Tx, limit: u64) -> Result<Vec<(Uuid, bool, Uuid)>> {
    let c = crate::domain::collections::named("imports")?;
    let found = super::records::scan(tx, c, vec![col("status").eq("importing")], limit, super::records::ScanLock::None).await?;
    Ok(found.into_iter().map(|(tenant, rec)| (tenant, rec.livemode, rec.id)).collect())
}

/// Deletes at most `limit` rows of imports past their keeping; returns how many. The
/// rows go first, in batches, so that deleting an import of 100,000 rows never holds
/// SQLite's writer long.
pub async fn delete_expired_rows(tx: &mut Tx, now: DateTime<Utc>, limit: u64) -> Result<u64> {
    let expired =
        Query::select().columns(["tenant_id", "livemode", "id"].map(a)).from(a("imports")).and_where(col("expires_at").lt(now)).to_owned();
    let of_expired = Expr::tuple(["tenant_id", "livemode", "import_id"].map(|c| SimpleExpr::from(col(c)))).in_subquery(expired);
    super::sql::delete_some(tx, TABLE, &["tenant_id", "livemode", "import_id", "line"], of_expired, limit).await
}

/// Deletes at most `limit` imports past their keeping (their rows deleted before).
pub async fn delete_expired(tx: &mut Tx, now: DateTime<Utc>, limit: u64) -> Result<u64> {
    super::sql::delete_some(tx, "imports", &["tenant_id", "livemode", "id"], col("expires_at").lt(now), limit).await
}

/// Ends, as `failed`, the uploads that stopped being read before `before` (their process
/// stopped mid-file): an upload touches its import with every chunk it reads.
pub async fn abandon_stale_uploads(tx: &mut Tx, now: DateTime<Utc>, before: DateTime<Utc>) -> Result<u64> {
    let failure = serde_json::json!({
        "line": null, "field": null, "code": "upload_interrupted",
        "message": "the upload stopped before the whole file was read (its connection or the server went away); upload the file again",
    });
    let upd = Query::update()
        .table(a("imports"))
        .value(a("status"), "failed")
        .value(a("failure"), Expr::val(failure))
        .value(a("completed_at"), Expr::val(now))
        .value(a("updated_at"), Expr::val(now))
        .cond_where(Cond::all().add(col("status").eq("validating")).add(col("updated_at").lt(before)))
        .to_owned();
    tx.execute(&upd).await
}
