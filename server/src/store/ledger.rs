//! The ledger's lines (`ledger_lines`): written with each journal entry, one row per
//! line (`ops::postings`), and summed for the trial balance and the balance invariant.

use chrono::NaiveDate;
use sea_query::{Alias, Expr, Order, Query};
use uuid::Uuid;

use super::values::bind;
use super::{Intent, Store, Tx};
use crate::domain::ledger::Line;
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::registry::Ty;
use crate::domain::reports::AccountSum;
use crate::error::{Error, Result};

/// Writes a journal entry's lines, in its currency, on its day, for its property.
pub async fn insert_lines(tx: &mut Tx, scope: &Scope, entry: &Record, lines: &[Line]) -> Result<()> {
    let currency = entry.currency().unwrap_or_default().to_string();
    let cols = ["tenant_id", "livemode", "entry_id", "line_no", "account", "debit", "credit", "currency", "posted_on", "property_id"];
    let mut ins = Query::insert();
    ins.into_table(Alias::new("ledger_lines")).columns(cols.map(Alias::new));
    for (i, l) in lines.iter().enumerate() {
        ins.values([
            scope.tenant.into(),
            scope.livemode.into(),
            entry.id.into(),
            (i as i32).into(),
            l.account.into(),
            l.debit.into(),
            l.credit.into(),
            currency.clone().into(),
            bind(Ty::Date, entry.get("posted_on")).into(),
            bind(Ty::Uuid, entry.get("property_id")).into(),
        ])
        .map_err(Error::internal)?;
    }
    tx.execute(&ins).await?;
    Ok(())
}

impl Store {
    /// Debits and credits per currency and account of a tenant's environment, up to a
    /// day and for one property if given.
    pub async fn account_sums(&self, scope: &Scope, as_of: Option<NaiveDate>, property: Option<Uuid>) -> Result<Vec<AccountSum>> {
        self.in_tenant(scope.tenant, scope.livemode, Intent::Read, async |tx| {
            let col = |n: &str| Expr::col(Alias::new(n));
            let mut sel = Query::select();
            sel.columns([Alias::new("currency"), Alias::new("account")])
                // SUM of BIGINT is NUMERIC in PostgreSQL; sums of minor units fit a BIGINT.
                .expr_as(Expr::cust("CAST(COALESCE(SUM(debit), 0) AS BIGINT)"), Alias::new("debit"))
                .expr_as(Expr::cust("CAST(COALESCE(SUM(credit), 0) AS BIGINT)"), Alias::new("credit"))
                .from(Alias::new("ledger_lines"))
                .and_where(col("tenant_id").eq(scope.tenant))
                .and_where(col("livemode").eq(scope.livemode))
                .group_by_columns([Alias::new("currency"), Alias::new("account")])
                .order_by(Alias::new("currency"), Order::Asc)
                .order_by(Alias::new("account"), Order::Asc);
            if let Some(day) = as_of {
                sel.and_where(col("posted_on").lte(day));
            }
            if let Some(p) = property {
                sel.and_where(col("property_id").eq(p));
            }
            let rows = tx.fetch_all(&sel).await?;
            rows.iter()
                .map(|r| {
                    Ok(AccountSum {
                        currency: r.opt_string("currency")?.unwrap_or_default(),
                        account: r.opt_string("account")?.unwrap_or_default(),
                        debit: r.opt_i64("debit")?.unwrap_or(0),
                        credit: r.opt_i64("credit")?.unwrap_or(0),
                    })
                })
                .collect()
        })
        .await
    }
}
