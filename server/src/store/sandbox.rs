//! A tenant's sandbox as a whole: its clock (`sandbox_clocks`: how far it runs ahead of
//! real time) and its reset (every sandbox row of the tenant deleted, live rows and keys
//! untouched).

use chrono::{DateTime, Duration, Utc};
use sea_query::{Expr, OnConflict, Query, Value};
use uuid::Uuid;

use super::sql::a;
use super::Tx;
use crate::domain::collections::COLLECTIONS;
use crate::error::{Error, Result};

/// How far a tenant's sandbox runs ahead of real time (zero until it is advanced).
pub async fn offset(tx: &mut Tx, tenant: Uuid) -> Result<Duration> {
    let sel = Query::select().column(a("offset_ms")).from(a("sandbox_clocks")).and_where(Expr::col(a("tenant_id")).eq(tenant)).to_owned();
    Ok(match tx.fetch_optional(&sel).await? {
        Some(r) => Duration::milliseconds(r.opt_i64("offset_ms")?.unwrap_or(0)),
        None => Duration::zero(),
    })
}

/// Moves a tenant's sandbox clock forward to `offset` ahead of real time; never back (a
/// smaller offset, from a concurrent advance that started earlier, changes nothing).
pub async fn advance(tx: &mut Tx, tenant: Uuid, to: Duration, now: DateTime<Utc>) -> Result<()> {
    // Rounded up, so that what is written right after an advance to `at` is never dated
    // before `at` (a day-start round must not write on the day before).
    let ms = to.num_milliseconds() + i64::from(to - Duration::milliseconds(to.num_milliseconds()) > Duration::zero());
    let mut ins = Query::insert();
    ins.into_table(a("sandbox_clocks"))
        .columns(["tenant_id", "offset_ms", "updated_at"].map(a))
        .values([Expr::val(tenant).into(), ms.into(), Expr::val(now).into()])
        .map_err(Error::internal)?
        .on_conflict(
            OnConflict::column(a("tenant_id"))
                .values([(a("offset_ms"), Expr::val(ms).into()), (a("updated_at"), Expr::val(now).into())])
                .action_and_where(Expr::col((a("sandbox_clocks"), a("offset_ms"))).lt(ms))
                .to_owned(),
        );
    tx.execute(&ins).await?;
    Ok(())
}

/// The tenants whose sandbox runs on its own clock, with how far ahead.
pub async fn clocked(tx: &mut Tx) -> Result<Vec<(Uuid, Duration)>> {
    let sel = Query::select().columns(["tenant_id", "offset_ms"].map(a)).from(a("sandbox_clocks")).to_owned();
    tx.fetch_all(&sel)
        .await?
        .iter()
        .map(|r| {
            let tenant = r.opt_uuid("tenant_id")?.ok_or_else(|| Error::internal(anyhow::anyhow!("a sandbox clock without tenant")))?;
            Ok((tenant, Duration::milliseconds(r.opt_i64("offset_ms")?.unwrap_or(0))))
        })
        .collect()
}

/// Tables of a tenant's sandbox data beyond the collections' (each refers to them).
const BOOKKEEPING: &[&str] = &["webhook_deliveries", "ledger_lines", "idempotency_keys", "console_activity"];

/// One step of deleting a sandbox.
#[derive(Debug, PartialEq)]
enum Step {
    /// Clear this reference of this table (breaking a cycle: an application names its
    /// lease, the lease its application).
    Clear(&'static str, &'static str),
    Delete(&'static str),
}

/// The collections' tables in an order that deletes every referring row before the rows
/// it refers to (the registry's references are the foreign keys), clearing references
/// first where they form a cycle, so that no delete trips a foreign key. A reference of a
/// table to itself is deleted in one statement.
fn deletion_steps() -> Result<Vec<Step>> {
    use crate::domain::registry::{Collection, Ty};
    let refs = |from: &Collection| -> Vec<(&'static crate::domain::registry::Field, &'static str)> {
        from.fields
            .iter()
            .filter_map(|f| if let Ty::Ref(t) = f.ty { Some((f, t)) } else { None })
            .filter(|(_, t)| *t != from.name)
            .collect()
    };
    // The request log is deleted apart, in its own unit of work (`request_logs`).
    let mut left: Vec<&Collection> = COLLECTIONS.iter().filter(|c| c.table != super::request_logs::TABLE).collect();
    let mut cleared: Vec<(&str, &str)> = vec![];
    let mut steps = Vec::with_capacity(left.len() + 1);
    while !left.is_empty() {
        let refers = |from: &Collection, to: &str| refs(from).iter().any(|(f, t)| *t == to && !cleared.contains(&(from.name, f.name)));
        // A table no remaining table refers to goes next.
        if let Some(i) = left.iter().position(|c| !left.iter().any(|other| refers(other, c.name))) {
            steps.push(Step::Delete(left.remove(i).table));
            continue;
        }
        // A cycle: an optional reference of one table to another that refers back to it
        // is cleared first (an application names its lease, the lease its application).
        let edge = left.iter().find_map(|c| {
            refs(c)
                .into_iter()
                .find(|(f, t)| {
                    !f.required && !cleared.contains(&(c.name, f.name)) && left.iter().any(|o| o.name == *t && refers(o, c.name))
                })
                .map(|(f, _)| (*c, f.name))
        });
        let Some((c, field)) = edge else {
            return Err(Error::internal(anyhow::anyhow!("the collections' references form a cycle of required fields")));
        };
        cleared.push((c.name, field));
        steps.push(Step::Clear(c.table, field));
    }
    Ok(steps)
}

/// Deletes every sandbox row of a tenant (its collections' records, their ledger lines,
/// deliveries and idempotency keys) and its sandbox clock; not its request log, which
/// `request_logs::delete_environment` deletes in the log's own unit of work. Live rows,
/// keys, users and the tenant itself are untouched. Returns the rows deleted.
pub async fn reset(tx: &mut Tx, tenant: Uuid) -> Result<u64> {
    let mine = |cond: sea_query::Condition| cond.add(Expr::col(a("tenant_id")).eq(tenant)).add(Expr::col(a("livemode")).eq(false));
    let mut deleted = 0;
    let steps = BOOKKEEPING.iter().map(|t| Step::Delete(t)).chain(deletion_steps()?);
    for step in steps {
        match step {
            Step::Delete(table) => {
                deleted += tx.execute(&Query::delete().from_table(a(table)).cond_where(mine(sea_query::Cond::all())).to_owned()).await?;
            }
            Step::Clear(table, field) => {
                let mut up = Query::update();
                up.table(a(table)).cond_where(mine(sea_query::Cond::all())).value(a(field), Value::Uuid(None));
                tx.execute(&up).await?;
            }
        }
    }
    tx.execute(&Query::delete().from_table(a("sandbox_clocks")).and_where(Expr::col(a("tenant_id")).eq(tenant)).to_owned()).await?;
    Ok(deleted)
}

#[cfg(test)]
mod tests {
    use super::Step;

    #[test]
    fn every_collection_has_a_place_in_the_deletion_order() {
        let steps = super::deletion_steps().expect("an order");
        let order: Vec<&str> = steps.iter().filter_map(|s| if let Step::Delete(t) = s { Some(*t) } else { None }).collect();
        // All but the request log, which is deleted apart.
        assert_eq!(order.len(), super::COLLECTIONS.len() - 1);
        assert!(!order.contains(&super::super::request_logs::TABLE));
        let cleared: Vec<_> = steps.iter().filter(|s| matches!(s, Step::Clear(..))).collect();
        assert!(cleared.len() <= 1, "{cleared:?}");
        let pos = |t: &str| order.iter().position(|x| *x == t).unwrap();
        assert!(pos("leases") < pos("units") && pos("units") < pos("properties"));
        assert!(pos("payments") < pos("invoices"));
    }
}
