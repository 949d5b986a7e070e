//! Expansions read with the records that name them: a page (or one record) and the
//! records its single references expand to, down every path, in one statement of
//! `LEFT JOIN`s on the referenced records' keys. One statement is one snapshot on either
//! database, and a page's expansions cost no round trip of their own: on PostgreSQL a
//! page expanded two levels took four round trips read path by path, and takes one.
//!
//! A join brings at most one row per reference (it joins on the referenced record's key),
//! so the page keeps its rows, its order and its `has_more`. What a join cannot read is
//! left to the caller, which reads it path by path (`records::by_ids`): a list of ids
//! (`charge_ids`), and a collection the scope sees nothing of.

use std::collections::HashMap;

use sea_query::{Alias, Expr, JoinType, Order, Query, SelectStatement};
use uuid::Uuid;

use super::records::{columns, decode_from, page_select, property_cond_on, record_select, sees_any, tenant_cond_on, Page};
use super::Tx;
use crate::domain::expand::{Expand, Reference, Related, RelatedPath};
use crate::domain::list::{ListQuery, SortKey};
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::value::Val;
use crate::error::{Error, Result};

/// The alias of the answer's own records in the statement.
const BASE: &str = "t0";

/// Whether a path is read in the join: a single reference to a collection the scope sees.
pub fn joinable(r: &Reference, scope: &Scope) -> bool {
    !r.many && sees_any(r.target, scope)
}

/// Whether every path of `expand` is read in the join: the answer is then one statement,
/// a snapshot without a transaction's isolation.
pub fn all_joinable(expand: &Expand, scope: &Scope) -> bool {
    expand.walk().iter().all(|p| joinable(p.reference, scope))
}

/// A page as `records::list_page` reads it, with what its joinable paths expand to.
pub async fn list_page(
    tx: &mut Tx,
    scope: &Scope,
    c: &'static Collection,
    q: &ListQuery,
    after: Option<Vec<Val>>,
    expand: &Expand,
) -> Result<(Page, Related)> {
    let Some(mut page) = page_select(scope, c, q, after) else {
        return Ok((Page { records: vec![], has_more: false }, Related::default()));
    };
    // The page's size is written into the statement, not bound: PostgreSQL plans a
    // prepared statement once for every value, and for a bound `LIMIT` it guesses a
    // tenth of the table, which makes it join by scanning the referenced tables whole.
    page.reset_limit();
    let (mut records, related) = read(tx, scope, c, page, Some(q.limit as u64 + 1), &q.sort, expand).await?;
    let has_more = records.len() > q.limit as usize;
    records.truncate(q.limit as usize);
    Ok((Page { records, has_more }, related))
}

/// One record as `records::fetch` reads it, with what its joinable paths expand to.
pub async fn record(tx: &mut Tx, scope: &Scope, c: &'static Collection, id: Uuid, expand: &Expand) -> Result<(Record, Related)> {
    let not_found = || Error::not_found(&format!("{} {id}", c.object));
    let one = record_select(scope, c, id).ok_or_else(not_found)?;
    let (records, related) = read(tx, scope, c, one, None, &[], expand).await?;
    Ok((records.into_iter().next().ok_or_else(not_found)?, related))
}

/// One joined path: its alias, its parent's, and where its columns start in a row.
struct Step {
    reference: &'static Reference,
    alias: String,
    parent: String,
    first: usize,
}

/// The joinable paths of `expand`, parents first (the order [`assemble`] takes them in).
fn plan(expand: &Expand, scope: &Scope, parent: &str, first: &mut usize, steps: &mut Vec<Step>) {
    for p in &expand.paths {
        if !joinable(p.reference, scope) {
            continue;
        }
        let alias = format!("t{}", steps.len() + 1);
        steps.push(Step { reference: p.reference, alias: alias.clone(), parent: parent.to_string(), first: *first });
        *first += columns(p.reference.target).len();
        plan(&p.then, scope, &alias, first, steps);
    }
}

/// Reads the records of `base` (a statement of `c`'s columns) in `order`, each with the
/// records its joinable paths reach.
async fn read(
    tx: &mut Tx,
    scope: &Scope,
    c: &'static Collection,
    base: SelectStatement,
    limit: Option<u64>,
    order: &[SortKey],
    expand: &Expand,
) -> Result<(Vec<Record>, Related)> {
    let mut steps = vec![];
    let mut first = columns(c).len();
    plan(expand, scope, BASE, &mut first, &mut steps);

    let at = |table: &str, name: &str| Expr::col((Alias::new(table), Alias::new(name)));
    let mut sel = Query::select();
    sel.from_subquery(base, Alias::new(BASE));
    sel.columns(columns(c).into_iter().map(|name| (Alias::new(BASE), name)));
    for s in &steps {
        let target = s.reference.target;
        sel.columns(columns(target).into_iter().map(|name| (Alias::new(&s.alias), name)));
        let mut on = tenant_cond_on(scope, |name| at(&s.alias, name));
        if let Some(prop) = property_cond_on(target, scope, |name| at(&s.alias, name)) {
            on = on.add(prop);
        }
        on = on.add(at(&s.alias, "id").equals((Alias::new(&s.parent), Alias::new(s.reference.field.name))));
        sel.join_as(JoinType::LeftJoin, Alias::new(target.table), Alias::new(&s.alias), on);
    }
    // The subquery's order does not survive a join on its own.
    for k in order {
        sel.order_by((Alias::new(BASE), Alias::new(k.field.name)), if k.desc { Order::Desc } else { Order::Asc });
    }

    let mut built = tx.build(&sel);
    if let Some(n) = limit {
        // The subquery is the statement's first parenthesis closed by ` AS "t0"`: no
        // text of a request is in the SQL (its values are bound), only registry names.
        let end = format!(") AS \"{BASE}\"");
        if !built.sql.contains(&end) {
            return Err(Error::internal(anyhow::anyhow!("no page subquery to limit in {}", built.sql)));
        }
        built.sql = built.sql.replacen(&end, &format!(" LIMIT {n}{end}"), 1).into();
    }
    let rows = tx.rows(built, false).await?;
    let mut found: Vec<HashMap<Uuid, Record>> = steps.iter().map(|_| HashMap::new()).collect();
    let mut records = Vec::with_capacity(rows.len());
    for row in &rows {
        records.push(decode_from(c, row, 0)?);
        for (s, found) in steps.iter().zip(found.iter_mut()) {
            // No row joined: nothing there, or nothing the scope sees. A record met
            // again (the property of many units) is decoded once.
            match row.opt_uuid(s.first)? {
                Some(id) if !found.contains_key(&id) => {
                    found.insert(id, decode_from(s.reference.target, row, s.first)?);
                }
                _ => {}
            }
        }
    }
    Ok((records, assemble(expand, scope, &mut found.into_iter())))
}

/// The records each joined path found, as the tree [`Related`] is: the joinable paths
/// of `expand` in [`plan`]'s order take `found` in turn.
fn assemble(expand: &Expand, scope: &Scope, found: &mut impl Iterator<Item = HashMap<Uuid, Record>>) -> Related {
    let mut out = Related::default();
    for p in &expand.paths {
        if !joinable(p.reference, scope) {
            continue;
        }
        let records = found.next().unwrap_or_default();
        let then = assemble(&p.then, scope, found);
        out.paths.push(RelatedPath { reference: p.reference, records, then });
    }
    out
}
