//! Small helpers the store's statements share: names as sea-query takes them, and the
//! error of a row that lacks what its query selected.

use chrono::{DateTime, Utc};
use sea_query::{Alias, Expr, InsertStatement, Query, SimpleExpr};
use uuid::Uuid;

use crate::error::Error;

/// A table or column name.
pub(super) fn a(name: &str) -> Alias {
    Alias::new(name)
}

/// A column of the statement's one table.
pub(super) fn col(name: &str) -> Expr {
    Expr::col(a(name))
}

/// `table.column`.
pub(super) fn tc(table: &str, column: &str) -> Expr {
    Expr::col((a(table), a(column)))
}

/// Rows of a tenant table by their keys, grouped per tenant environment as
/// `tenant_id = ? AND livemode = ? AND id IN (…)`. Said as one OR of three-column
/// equalities instead, PostgreSQL factors the shared tenant out of the arms and reads every
/// row of the tenant, filtering for the ids (measured: 4,000 rows read to update 16); the
/// grouped form is one primary-key lookup per id on both databases.
pub(super) fn keys_in(keys: impl IntoIterator<Item = (Uuid, bool, Uuid)>) -> sea_query::Cond {
    values_in("id", keys)
}

/// As [`keys_in`], on another uuid column of the tenant's rows (`request_id` of events).
pub(super) fn values_in(column: &str, keys: impl IntoIterator<Item = (Uuid, bool, Uuid)>) -> sea_query::Cond {
    let mut groups: std::collections::BTreeMap<(Uuid, bool), Vec<Uuid>> = Default::default();
    for (tenant, livemode, id) in keys {
        groups.entry((tenant, livemode)).or_default().push(id);
    }
    let mut any = sea_query::Cond::any();
    for ((tenant, livemode), ids) in groups {
        any =
            any.add(sea_query::Cond::all().add(col("tenant_id").eq(tenant)).add(col("livemode").eq(livemode)).add(col(column).is_in(ids)));
    }
    any
}

/// Deletes at most `limit` rows of `table` that `cond` matches, chosen by the table's
/// `key` columns (PostgreSQL has no `DELETE … LIMIT`); returns how many. Purges go in
/// such bounded batches so that no one transaction holds SQLite's single writer long.
pub(super) async fn delete_some(tx: &mut super::Tx, table: &str, key: &[&str], cond: SimpleExpr, limit: u64) -> crate::error::Result<u64> {
    let pick = Query::select().columns(key.iter().map(|k| a(k))).from(a(table)).and_where(cond).limit(limit).to_owned();
    let del = Query::delete()
        .from_table(a(table))
        .and_where(Expr::tuple(key.iter().map(|k| SimpleExpr::from(col(k)))).in_subquery(pick))
        .to_owned();
    tx.execute(&del).await
}

/// A row without a column its query selected: a bug or a damaged row, never input.
pub(super) fn incomplete(what: &str) -> Error {
    Error::internal(anyhow::anyhow!("{what} row is incomplete"))
}

/// An insert of one row of a tenant's environment: its key and times (`tenant_id`,
/// `livemode`, `id`, `created_at` and `updated_at`, both `now`), then each further column
/// beside its value.
pub(super) fn insert_row(
    table: &str,
    (tenant, livemode, id): (Uuid, bool, Uuid),
    now: DateTime<Utc>,
    columns: Vec<(&str, SimpleExpr)>,
) -> InsertStatement {
    let key: [(&str, SimpleExpr); 5] = [
        ("tenant_id", tenant.into()),
        ("livemode", livemode.into()),
        ("id", id.into()),
        ("created_at", now.into()),
        ("updated_at", now.into()),
    ];
    let (names, values): (Vec<Alias>, Vec<SimpleExpr>) = key.into_iter().chain(columns).map(|(c, v)| (a(c), v)).unzip();
    let mut ins = Query::insert();
    ins.into_table(a(table)).columns(names);
    // As many values as columns, by construction.
    ins.values_panic(values);
    ins
}
