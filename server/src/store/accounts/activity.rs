//! Who did what in the console (`console_activity`): one row for each write a console user
//! made to a record, written in that write's transaction (so it exists exactly when the
//! write committed), and read back for the record's page. A tenant table: row-level
//! security on PostgreSQL, and the tenant and environment in every statement.

use chrono::{DateTime, Utc};
use sea_query::{Expr, Order, Query};
use uuid::Uuid;

use crate::domain::reach::Scope;
use crate::error::{Error, Result};
use crate::store::sql::{a, col};
use crate::store::{Intent, Store, Tx};

/// One write of a console user.
#[derive(Debug, Clone, PartialEq)]
pub struct Activity {
    pub record_id: Uuid,
    pub collection: String,
    /// `create`, `update`, `delete`, or the workflow action's name.
    pub action: String,
    /// The fields an edit changed.
    pub fields: Vec<String>,
    pub user_id: Uuid,
    pub user_name: String,
    pub at: DateTime<Utc>,
}

/// Records `entry` in the write's transaction.
pub async fn record(tx: &mut Tx, scope: &Scope, entry: &Activity) -> Result<()> {
    let cols = ["tenant_id", "livemode", "id", "record_id", "collection", "action", "fields", "user_id", "user_name", "created_at"];
    let mut ins = Query::insert();
    ins.into_table(a("console_activity"))
        .columns(cols.map(a))
        .values([
            Expr::val(scope.tenant).into(),
            scope.livemode.into(),
            Expr::val(Uuid::now_v7()).into(),
            Expr::val(entry.record_id).into(),
            entry.collection.clone().into(),
            entry.action.clone().into(),
            entry.fields.join(",").into(),
            Expr::val(entry.user_id).into(),
            entry.user_name.clone().into(),
            Expr::val(entry.at).into(),
        ])
        .map_err(Error::internal)?;
    tx.execute(&ins).await?;
    Ok(())
}

impl Store {
    /// The console's writes to a record, newest first, at most `limit`.
    pub async fn activity_of(&self, scope: &Scope, record: Uuid, limit: u64) -> Result<Vec<Activity>> {
        self.in_tenant(scope.tenant, scope.livemode, Intent::Read, async |tx| {
            let sel = Query::select()
                .columns(["record_id", "collection", "action", "fields", "user_id", "user_name", "created_at"].map(a))
                .from(a("console_activity"))
                .and_where(col("tenant_id").eq(scope.tenant))
                .and_where(col("livemode").eq(scope.livemode))
                .and_where(col("record_id").eq(record))
                .order_by(a("created_at"), Order::Desc)
                .order_by(a("id"), Order::Desc)
                .limit(limit)
                .to_owned();
            tx.fetch_all(&sel)
                .await?
                .iter()
                .map(|r| {
                    let missing = || Error::internal(anyhow::anyhow!("a console activity row without its values"));
                    Ok(Activity {
                        record_id: r.opt_uuid("record_id")?.ok_or_else(missing)?,
                        collection: r.opt_string("collection")?.unwrap_or_default(),
                        action: r.opt_string("action")?.unwrap_or_default(),
                        fields: r
                            .opt_string("fields")?
                            .unwrap_or_default()
                            .split(',')
                            .filter(|f| !f.is_empty())
                            .map(String::from)
                            .collect(),
                        user_id: r.opt_uuid("user_id")?.ok_or_else(missing)?,
                        user_name: r.opt_string("user_name")?.unwrap_or_default(),
                        at: r.opt_datetime("created_at")?.ok_or_else(missing)?,
                    })
                })
                .collect()
        })
        .await
    }
}
