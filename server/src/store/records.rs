//! Generic storage of collection records, driven by the registry: list with keyset
//! paging, get, create, update and delete, each scoped to one tenant and environment
//! (and, for constrained credentials, to a set of properties).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use sea_query::{Alias, Cond, Expr, Func, LikeExpr, Order, Query, SelectStatement, SimpleExpr, Value};
use uuid::Uuid;

use super::sql::insert_row;
use super::values::bind;
use super::{Dialect, Intent, Row, Shape, Store, Tx};
use crate::domain::collections::collection;
use crate::domain::list::{ListQuery, Op};
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::registry::{stored_system_fields, Collection, PropertyPath, Rule, Ty};
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::error::{Error, Result};

fn col(name: &str) -> Expr {
    Expr::col(Alias::new(name))
}

/// The tenant and environment condition every statement on a collection carries.
fn tenant_cond(scope: &Scope) -> Cond {
    tenant_cond_on(scope, col)
}

/// [`tenant_cond`] on columns named by `col` (qualified by a table, in a join).
pub(super) fn tenant_cond_on(scope: &Scope, col: impl Fn(&str) -> Expr) -> Cond {
    Cond::all().add(col("tenant_id").eq(scope.tenant)).add(col("livemode").eq(scope.livemode))
}

/// What a property-constrained credential may see of a collection, or `None` when it
/// may see nothing (tenant-wide records).
fn property_cond(c: &Collection, scope: &Scope) -> Option<Cond> {
    property_cond_on(c, scope, col)
}

/// [`property_cond`] on columns named by `col` (qualified by a table, in a join).
pub(super) fn property_cond_on(c: &Collection, scope: &Scope, col: impl Fn(&str) -> Expr) -> Option<Cond> {
    let Some(props) = &scope.properties else { return Some(Cond::all()) };
    let values: Vec<Value> = props.iter().map(|p| Value::from(*p)).collect();
    match c.property {
        // What `sees_any` says.
        PropertyPath::None => None,
        PropertyPath::SelfId => Some(Cond::all().add(col("id").is_in(values))),
        PropertyPath::Direct | PropertyPath::Via(_) => Some(Cond::all().add(col("property_id").is_in(values))),
    }
}

/// Whether the scope may see any record of `c`: [`property_cond`] is `None` exactly when
/// it may not (a property-constrained credential and a tenant-wide collection).
pub(super) fn sees_any(c: &Collection, scope: &Scope) -> bool {
    scope.properties.is_none() || !matches!(c.property, PropertyPath::None)
}

/// The records of `c` the scope sees, every column of them, or `None` when it sees none:
/// what a read of whole records starts from.
pub(super) fn scoped_select(c: &Collection, scope: &Scope) -> Option<SelectStatement> {
    let prop = property_cond(c, scope)?;
    let mut sel = Query::select();
    sel.columns(columns(c)).from(Alias::new(c.table)).cond_where(tenant_cond(scope)).cond_where(prop);
    Some(sel)
}

/// The columns a record is read from, in the order [`decode_from`] reads them by.
pub(super) fn columns(c: &Collection) -> Vec<Alias> {
    let mut v: Vec<Alias> = stored_system_fields().map(Alias::new).collect();
    if c.metadata {
        v.push(Alias::new("metadata"));
    }
    v.extend(c.fields.iter().map(|f| Alias::new(f.name)));
    v
}

/// A record from a row whose columns are [`columns`], in that order.
fn decode(c: &Collection, row: &Row) -> Result<Record> {
    decode_from(c, row, 0)
}

/// A record from a row whose columns are [`columns`] from position `first` on: read by
/// position, not by name (a list page reads hundreds of values).
pub(super) fn decode_from(c: &Collection, row: &Row, first: usize) -> Result<Record> {
    let missing = || Error::internal(anyhow::anyhow!("row of {} lacks a system column", c.name));
    // `columns`: id, livemode, created_at, updated_at, then metadata where kept, then the fields.
    let fields = first + 4 + usize::from(c.metadata);
    let mut values = HashMap::with_capacity(c.fields.len());
    for (i, f) in c.fields.iter().enumerate() {
        let n = fields + i;
        let v = match f.ty {
            Ty::Int { .. } => row.opt_i64(n)?.map(Val::Int),
            Ty::Money => row.opt_i64(n)?.map(Val::Money),
            Ty::Num { .. } => row.opt_f64(n)?.map(Val::Num),
            Ty::Bool => row.opt_bool(n)?.map(Val::Bool),
            Ty::Date => row.opt_date(n)?.map(Val::Date),
            Ty::DateTime => row.opt_datetime(n)?.map(Val::DateTime),
            Ty::Ref(_) | Ty::Uuid => row.opt_uuid(n)?.map(Val::Uuid),
            Ty::StrList { .. } | Ty::RefList(_) | Ty::Json(_) | Ty::Metadata => row.opt_json(n)?.map(Val::Json),
            Ty::Str { .. } | Ty::Text | Ty::Email | Ty::Url | Ty::Origin | Ty::Enum(_) | Ty::Currency => row.opt_string(n)?.map(Val::Str),
        };
        values.insert(f.name, v.unwrap_or(Val::Null));
    }
    Ok(Record {
        id: row.opt_uuid(first)?.ok_or_else(missing)?,
        livemode: row.opt_bool(first + 1)?.ok_or_else(missing)?,
        created_at: row.opt_datetime(first + 2)?.ok_or_else(missing)?,
        updated_at: row.opt_datetime(first + 3)?.ok_or_else(missing)?,
        metadata: if c.metadata { row.opt_json(first + 4)? } else { None },
        values,
    })
}

/// The keyset condition "after the cursor row". When every key has the same direction
/// it is one row-value comparison, `(k1, k2, …) > (v1, v2, …)`, which both databases
/// turn into a single index range: a page 10,000 deep costs what the first does.
fn keyset(keys: &[crate::domain::list::SortKey], vals: &[Val]) -> SimpleExpr {
    if keys.iter().all(|k| k.desc == keys[0].desc) {
        let cols = Expr::tuple(keys.iter().map(|k| SimpleExpr::from(col(k.field.name))));
        let values = Expr::tuple(keys.iter().zip(vals).map(|(k, v)| SimpleExpr::from(Expr::val(bind(k.field.ty, v)))));
        return if keys[0].desc { cols.lt(values) } else { cols.gt(values) };
    }
    mixed_keyset(keys, vals)
}

/// Mixed directions: `k1 ≥ v1 AND (k1 > v1 OR (k2 ≤ v2 AND (k2 < v2 OR …)))`, each
/// comparison in its key's direction. Its leading `k1 ≥ v1` is still an index range.
fn mixed_keyset(keys: &[crate::domain::list::SortKey], vals: &[Val]) -> SimpleExpr {
    let k = &keys[0];
    let v = Expr::val(bind(k.field.ty, &vals[0]));
    let c = col(k.field.name);
    let strict: SimpleExpr = if k.desc { c.clone().lt(v.clone()) } else { c.clone().gt(v.clone()) };
    if keys.len() == 1 {
        return strict;
    }
    let loose: SimpleExpr = if k.desc { c.lte(v) } else { c.gte(v) };
    loose.and(strict.or(mixed_keyset(&keys[1..], &vals[1..])))
}

fn filter_expr(f: &crate::domain::list::Filter) -> SimpleExpr {
    let c = || col(f.field.name);
    let one = || Expr::val(bind(f.field.ty, &f.values[0]));
    let many = || f.values.iter().map(|v| bind(f.field.ty, v)).collect::<Vec<_>>();
    match f.op {
        Op::Eq => c().eq(one()),
        // A missing value is "not equal" too.
        Op::Ne => c().ne(one()).or(c().is_null()),
        Op::Gt => c().gt(one()),
        Op::Gte => c().gte(one()),
        Op::Lt => c().lt(one()),
        Op::Lte => c().lte(one()),
        Op::In => c().is_in(many()),
        Op::Nin => c().is_not_in(many()).or(c().is_null()),
        Op::Exists => {
            if f.values[0] == Val::Bool(true) {
                c().is_not_null()
            } else {
                c().is_null()
            }
        }
        // Both sides lowered (SQLite's `lower` folds ASCII letters only), the text's own
        // `%`, `_` and `\` escaped: a search for `50%` finds "50%", not every "50".
        Op::Contains => {
            let text = f.values[0].as_str().unwrap_or_default().to_lowercase();
            let escaped: String =
                text.chars().flat_map(|ch| if matches!(ch, '%' | '_' | '\\') { vec!['\\', ch] } else { vec![ch] }).collect();
            Expr::expr(Func::lower(c())).like(LikeExpr::new(format!("%{escaped}%")).escape('\\'))
        }
    }
}

/// One page of a list.
pub struct Page {
    pub records: Vec<Record>,
    pub has_more: bool,
}

impl Store {
    pub async fn list(&self, scope: &Scope, c: &'static Collection, q: &ListQuery, after: Option<Vec<Val>>) -> Result<Page> {
        self.in_tenant(scope.tenant, scope.livemode, Intent::Read, async |tx| list_page(tx, scope, c, q, after).await).await
    }

    pub async fn get(&self, scope: &Scope, c: &'static Collection, id: Uuid) -> Result<Record> {
        self.in_tenant(scope.tenant, scope.livemode, Intent::Read, async |tx| {
            let r = fetch_one(tx, scope, c, id, false).await?;
            Ok(r)
        })
        .await
    }
}

/// One page of a list, as `q` asks, after the row whose sort values are `after`.
pub async fn list_page(tx: &mut Tx, scope: &Scope, c: &'static Collection, q: &ListQuery, after: Option<Vec<Val>>) -> Result<Page> {
    let Some(sel) = page_select(scope, c, q, after) else {
        return Ok(Page { records: vec![], has_more: false });
    };
    let rows = tx.fetch_all(&sel).await?;
    let has_more = rows.len() > q.limit as usize;
    let records = rows.iter().take(q.limit as usize).map(|r| decode(c, r)).collect::<Result<Vec<_>>>()?;
    Ok(Page { records, has_more })
}

/// The statement of a page: its records and one more (which says whether there are
/// more), or `None` when the scope sees nothing of `c`.
pub(super) fn page_select(scope: &Scope, c: &'static Collection, q: &ListQuery, after: Option<Vec<Val>>) -> Option<SelectStatement> {
    let mut sel = scoped_select(c, scope)?;
    for f in &q.filters {
        sel.and_where(filter_expr(f));
    }
    if let Some(vals) = after {
        sel.and_where(keyset(&q.sort, &vals));
    }
    for k in &q.sort {
        sel.order_by(Alias::new(k.field.name), if k.desc { Order::Desc } else { Order::Asc });
    }
    sel.limit(q.limit as u64 + 1);
    Some(sel)
}

/// The statement of one record by id, or `None` when the scope sees nothing of `c`.
pub(super) fn record_select(scope: &Scope, c: &'static Collection, id: Uuid) -> Option<SelectStatement> {
    let mut sel = scoped_select(c, scope)?;
    sel.and_where(col("id").eq(id));
    Some(sel)
}

/// The records of `c` with these ids that the scope reaches, in no particular order, in
/// one statement (an expansion's: every reference of a page at once). Ids it does not
/// reach, or that name nothing, are left out.
pub async fn by_ids(tx: &mut Tx, scope: &Scope, c: &'static Collection, ids: &[Uuid]) -> Result<Vec<Record>> {
    let Some(mut sel) = scoped_select(c, scope) else { return Ok(vec![]) };
    if ids.is_empty() {
        return Ok(vec![]);
    }
    sel.and_where(col("id").is_in(ids.iter().copied()));
    tx.fetch_all(&sel).await?.iter().map(|r| decode(c, r)).collect()
}

/// Creates a record from validated changes inside a write transaction, checking its
/// references there. `extra` are hidden columns (hashes) set by the caller.
pub async fn insert(
    tx: &mut Tx,
    scope: &Scope,
    c: &'static Collection,
    ch: Changes,
    extra: Vec<(&'static str, String)>,
    now: DateTime<Utc>,
) -> Result<Record> {
    insert_as(tx, scope, c, Uuid::now_v7(), ch, extra, now).await
}

/// As [`insert`], with the id chosen by the caller (a secret sealed to its record).
pub async fn insert_as(
    tx: &mut Tx,
    scope: &Scope,
    c: &'static Collection,
    id: Uuid,
    mut ch: Changes,
    extra: Vec<(&'static str, String)>,
    now: DateTime<Utc>,
) -> Result<Record> {
    resolve_references(tx, scope, c, &mut ch, None, id).await?;
    let mut values: Vec<(&str, SimpleExpr)> = vec![];
    if c.metadata {
        values.push(("metadata", ch.metadata.clone().unwrap_or_else(|| serde_json::json!({})).into()));
    }
    for f in c.fields {
        if let Some(v) = ch.values.get(f.name) {
            values.push((f.name, bind(f.ty, v).into()));
        }
    }
    for (name, v) in extra {
        values.push((name, v.into()));
    }
    let mut ins = insert_row(c.table, (scope.tenant, scope.livemode, id), now, values);
    // The record as stored (defaults, the derived property), in the same round trip.
    ins.returning(Query::returning().columns(columns(c)));
    let row =
        tx.fetch_optional(&ins).await?.ok_or_else(|| Error::internal(anyhow::anyhow!("an insert into {} returned no row", c.table)))?;
    decode(c, &row)
}

/// Updates a record inside a write transaction. `validate` turns the current record
/// into the changes to apply, so validation sees the record as locked by this
/// transaction. Returns the record before and after.
pub async fn modify(
    tx: &mut Tx,
    scope: &Scope,
    c: &'static Collection,
    id: Uuid,
    now: DateTime<Utc>,
    validate: impl FnOnce(&Record) -> Result<Changes>,
) -> Result<(Record, Record)> {
    let current = fetch_one(tx, scope, c, id, true).await?;
    let ch = validate(&current)?;
    write_changes(tx, scope, c, current, ch, now).await
}

/// Deletes a record the transaction has already read and locked (see [`fetch`]), if
/// the credential may write at its property.
pub async fn remove(tx: &mut Tx, scope: &Scope, c: &'static Collection, current: &Record) -> Result<()> {
    check_writable_property(scope, current.property_id(c))?;
    let mut del = Query::delete();
    del.from_table(Alias::new(c.table)).cond_where(tenant_cond(scope)).and_where(col("id").eq(current.id));
    tx.execute(&del).await?;
    Ok(())
}

/// Writes changes to a record the transaction has already read and locked (see
/// [`fetch`]). Returns the record before and after.
pub async fn write_changes(
    tx: &mut Tx,
    scope: &Scope,
    c: &'static Collection,
    current: Record,
    mut ch: Changes,
    now: DateTime<Utc>,
) -> Result<(Record, Record)> {
    let id = current.id;
    resolve_references(tx, scope, c, &mut ch, Some(&current), id).await?;
    let mut up = Query::update();
    up.table(Alias::new(c.table)).value(Alias::new("updated_at"), now);
    if let Some(m) = &ch.metadata {
        up.value(Alias::new("metadata"), Value::from(merge_metadata(current.metadata.as_ref(), m)));
    }
    for f in c.fields {
        if let Some(v) = ch.values.get(f.name) {
            up.value(Alias::new(f.name), bind(f.ty, v));
        }
    }
    up.cond_where(tenant_cond(scope)).and_where(col("id").eq(id));
    // The record as stored, in the same round trip (it is locked: nothing else changed it).
    up.returning(Query::returning().columns(columns(c)));
    let row = tx.fetch_optional(&up).await?.ok_or_else(|| Error::not_found(&format!("{} {id}", c.object)))?;
    Ok((current, decode(c, &row)?))
}

/// One record inside a unit of work; `lock` takes it for update (PostgreSQL; SQLite's
/// write transactions already hold the database's write lock).
pub async fn fetch(tx: &mut Tx, scope: &Scope, c: &'static Collection, id: Uuid, lock: bool) -> Result<Record> {
    fetch_one(tx, scope, c, id, lock).await
}

/// The records whose fields equal the given values, oldest first (for couplings: "the
/// signatures of this lease"). Not locked: callers lock the parent record first, which
/// orders concurrent writers without deadlocks. Callers keep the sets small.
pub async fn find(tx: &mut Tx, scope: &Scope, c: &'static Collection, equal: &[(&str, Val)]) -> Result<Vec<Record>> {
    let Some(mut sel) = scoped_select(c, scope) else { return Ok(vec![]) };
    for (name, v) in equal {
        let ty = crate::domain::list::lookup(c, name).map(|f| f.ty).unwrap_or(Ty::Text);
        sel.and_where(col(name).eq(Expr::val(bind(ty, v))));
    }
    // Sorted here, not in SQL: with an ORDER BY, SQLite's planner (without statistics)
    // walks the tenant's `created_at` index instead of the equality's index, reading every
    // record of the collection (the reversal of a payment slowed with the ledger's size).
    let mut found = tx.fetch_all(&sel).await?.iter().map(|r| decode(c, r)).collect::<Result<Vec<_>>>()?;
    found.sort_by_key(|r| (r.created_at, r.id));
    Ok(found)
}

/// The records of `c` whose `external_id` is one of `ids` (an import's references and
/// matches), by the unique index; unordered.
pub async fn by_external_ids(tx: &mut Tx, scope: &Scope, c: &'static Collection, ids: Vec<String>) -> Result<Vec<Record>> {
    let Some(mut sel) = scoped_select(c, scope) else { return Ok(vec![]) };
    if ids.is_empty() {
        return Ok(vec![]);
    }
    sel.and_where(col("external_id").is_in(ids));
    tx.fetch_all(&sel).await?.iter().map(|r| decode(c, r)).collect()
}

/// Metadata updates merge key by key; an empty string removes a key (as Stripe does),
/// and `metadata: null` clears it all.
fn merge_metadata(current: Option<&serde_json::Value>, patch: &serde_json::Value) -> serde_json::Value {
    let patch = patch.as_object().cloned().unwrap_or_default();
    if patch.is_empty() {
        return serde_json::json!({});
    }
    let mut out = current.and_then(|c| c.as_object().cloned()).unwrap_or_default();
    for (k, v) in patch {
        if v.as_str() == Some("") {
            out.remove(&k);
        } else {
            out.insert(k, v);
        }
    }
    serde_json::Value::Object(out)
}

/// Credentials constrained to more properties than this read records with statements
/// built afresh each time, rather than keeping one shape for every count.
const MAX_SHAPED_PROPERTIES: usize = 16;

async fn fetch_one(tx: &mut Tx, scope: &Scope, c: &'static Collection, id: Uuid, lock: bool) -> Result<Record> {
    let d = tx.dialect();
    let not_found = || Error::not_found(&format!("{} {id}", c.object));
    let prop = property_cond(c, scope).ok_or_else(not_found)?;
    let lock = lock && d == Dialect::Postgres;
    let build = || {
        let mut sel = Query::select();
        sel.columns(columns(c)).from(Alias::new(c.table)).cond_where(tenant_cond(scope)).cond_where(prop).and_where(col("id").eq(id));
        if lock {
            sel.lock(sea_query::LockType::Update);
        }
        sel
    };
    // The values in the order `build` binds them: tenant, environment, properties, id.
    let props = scope.properties.as_deref().unwrap_or_default();
    let row = if props.len() <= MAX_SHAPED_PROPERTIES {
        let mut values = vec![Value::from(scope.tenant), Value::from(scope.livemode)];
        values.extend(props.iter().map(|p| Value::from(*p)));
        values.push(Value::from(id));
        let variant = scope.properties.as_ref().map_or(0, |p| 1 + p.len());
        let shape = Shape { statement: if lock { "record for update" } else { "record" }, table: c.table, variant };
        tx.fetch_optional_shaped(shape, values, build).await?
    } else {
        tx.fetch_optional(&build()).await?
    };
    decode(c, &row.ok_or_else(not_found)?)
}

/// The visible record a reference points to: its property, if any.
async fn referenced_property(tx: &mut Tx, scope: &Scope, target: &'static Collection, id: Uuid, param: &str) -> Result<Option<Uuid>> {
    let not_found = || Error::missing_reference(param, target.object, id);
    let prop = property_cond(target, scope).ok_or_else(not_found)?;
    let mut sel: SelectStatement = Query::select();
    sel.column(Alias::new("id")).from(Alias::new(target.table)).cond_where(tenant_cond(scope)).cond_where(prop).and_where(col("id").eq(id));
    if target.has_property_column() {
        sel.column(Alias::new("property_id"));
    }
    let row = tx.fetch_optional(&sel).await?.ok_or_else(not_found)?;
    Ok(match target.property {
        PropertyPath::SelfId => Some(id),
        PropertyPath::None => None,
        _ => row.opt_uuid("property_id")?,
    })
}

fn check_writable_property(scope: &Scope, property: Option<Uuid>) -> Result<()> {
    match (&scope.properties, property) {
        (None, _) => Ok(()),
        (Some(allowed), Some(p)) if allowed.contains(&p) => Ok(()),
        (Some(_), _) => {
            Err(Error::PropertyForbidden("this credential is limited to certain properties, and this record is outside them".into()))
        }
    }
}

/// Checks every reference in the changes (it must name a visible record of the same
/// tenant and environment), derives `property_id` for records that inherit it, and
/// enforces same-property rules and the credential's property constraint.
async fn resolve_references(
    tx: &mut Tx,
    scope: &Scope,
    c: &'static Collection,
    ch: &mut Changes,
    current: Option<&Record>,
    id: Uuid,
) -> Result<()> {
    let mut props: HashMap<&'static str, Option<Uuid>> = HashMap::new();
    for f in c.fields {
        let Some(v) = ch.values.get(f.name) else { continue };
        match (f.ty, v) {
            (Ty::Ref(target), Val::Uuid(r)) => {
                let target = collection(target).expect("references name real collections");
                if target.name == c.name && *r == id {
                    return Err(Error::validation(f.name, "cannot refer to the record itself"));
                }
                if f.name == "property_id" && c.property.is_derived() {
                    continue;
                }
                let p = referenced_property(tx, scope, target, *r, f.name).await?;
                props.insert(f.name, p);
            }
            (Ty::RefList(target), Val::Json(ids)) => {
                let target = collection(target).expect("references name real collections");
                for r in ids.as_array().into_iter().flatten().filter_map(|s| s.as_str()).filter_map(|s| Uuid::parse_str(s).ok()) {
                    referenced_property(tx, scope, target, r, f.name).await?;
                }
            }
            _ => {}
        }
    }
    // The record's property after the change.
    let property = match c.property {
        PropertyPath::None => None,
        PropertyPath::SelfId => Some(id),
        PropertyPath::Direct => match ch.values.get("property_id") {
            Some(v) => v.as_uuid(),
            None => current.and_then(|r| r.get("property_id").as_uuid()),
        },
        PropertyPath::Via(paths) => {
            let mut derived = None;
            for p in paths {
                if let Some(found) = props.get(p) {
                    derived = *found;
                    break;
                }
                if let Some(r) = current.filter(|r| !r.get(p).is_null()) {
                    derived = r.get("property_id").as_uuid();
                    break;
                }
            }
            ch.values.insert("property_id", derived.map(Val::Uuid).unwrap_or(Val::Null));
            derived
        }
    };
    for rule in c.rules {
        if let Rule::SameProperty(field) = rule {
            if let Some(Some(p)) = props.get(field) {
                if Some(*p) != property {
                    return Err(Error::validation(*field, "must belong to the same property as this record"));
                }
            }
        }
    }
    check_writable_property(scope, property)
}

impl Store {
    /// Every record of a collection in a scope, in `sort` order, read page by page (for
    /// Gable's own screens, such as the console's team list; the API pages instead).
    pub async fn list_all(&self, scope: &Scope, c: &'static Collection, sort: &str) -> Result<Vec<Record>> {
        let q = ListQuery::parse(c, &[("sort".into(), sort.into()), ("limit".into(), "100".into())])?;
        let mut out = Vec::new();
        let mut after = None;
        loop {
            let page = self.list(scope, c, &q, after).await?;
            after = page.records.last().map(|r| q.sort.iter().map(|k| r.sort_value(k.field)).collect());
            out.extend(page.records);
            if !page.has_more {
                return Ok(out);
            }
        }
    }
}

/// A record written by Gable itself in bulk (seeding): trusted, not validated.
pub struct NewRow {
    pub id: Uuid,
    pub created_at: DateTime<Utc>,
    pub values: HashMap<&'static str, Val>,
}

impl Store {
    /// Inserts many rows in one transaction, in multi-row statements.
    pub async fn insert_many(&self, tenant: Uuid, livemode: bool, c: &'static Collection, rows: &[NewRow]) -> Result<()> {
        let mut cols =
            vec![Alias::new("tenant_id"), Alias::new("livemode"), Alias::new("id"), Alias::new("created_at"), Alias::new("updated_at")];
        if c.metadata {
            cols.push(Alias::new("metadata"));
        }
        cols.extend(c.fields.iter().map(|f| Alias::new(f.name)));
        // Stay under both databases' limits on bound parameters per statement.
        let per_stmt = (30_000 / cols.len()).max(1);
        let mut statements = Vec::new();
        for chunk in rows.chunks(per_stmt) {
            let mut ins = Query::insert();
            ins.into_table(Alias::new(c.table)).columns(cols.clone());
            for r in chunk {
                let mut vals: Vec<SimpleExpr> = vec![
                    Expr::val(tenant).into(),
                    livemode.into(),
                    Expr::val(r.id).into(),
                    Expr::val(r.created_at).into(),
                    Expr::val(r.created_at).into(),
                ];
                if c.metadata {
                    vals.push(Expr::val(serde_json::json!({})).into());
                }
                for f in c.fields {
                    let v = r.values.get(f.name).cloned().or_else(|| crate::domain::validate::default_value(f)).unwrap_or(Val::Null);
                    vals.push(Expr::val(bind(f.ty, &v)).into());
                }
                ins.values(vals).map_err(Error::internal)?;
            }
            statements.push(ins);
        }
        let write = async |tx: &mut Tx| {
            for ins in &statements {
                tx.execute(ins).await?;
            }
            Ok(())
        };
        match c.table == super::request_logs::TABLE {
            // The request log is written in units of work of its own (its own file on SQLite).
            true => self.in_request_log(write).await,
            false => self.in_tenant(tenant, livemode, Intent::Write, write).await,
        }
    }
}

/// How a background job's scan locks the rows it reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ScanLock {
    None,
    /// PostgreSQL: take the rows for update, skipping rows another process holds (a
    /// queue consumer). SQLite's write transaction already excludes other writers.
    SkipLocked,
}

/// Records of every tenant matching the conditions, in `created_at, id` order, each
/// with its tenant: for Gable's background jobs, which work outside any one tenant.
/// The table is aliased `r` for conditions that correlate with it.
pub async fn scan(tx: &mut Tx, c: &'static Collection, conds: Vec<SimpleExpr>, limit: u64, lock: ScanLock) -> Result<Vec<(Uuid, Record)>> {
    let mut sel = Query::select();
    sel.column(Alias::new("tenant_id")).columns(columns(c)).from_as(Alias::new(c.table), Alias::new("r"));
    for cond in conds {
        sel.and_where(cond);
    }
    sel.order_by(Alias::new("created_at"), Order::Asc).order_by(Alias::new("id"), Order::Asc).limit(limit);
    if lock == ScanLock::SkipLocked && tx.dialect() == Dialect::Postgres {
        sel.lock_with_behavior(sea_query::LockType::Update, sea_query::LockBehavior::SkipLocked);
    }
    let rows = tx.fetch_all(&sel).await?;
    with_tenants(c, &rows)
}

/// Records of any tenants by their keys, in no particular order: for a background job's
/// batch (a claim's events). Unordered, so the primary key is the plan: ordered by
/// `created_at` like [`scan`], PostgreSQL walked the tenant's `created_at` index and
/// filtered for the ids.
pub async fn by_keys(tx: &mut Tx, c: &'static Collection, keys: Vec<(Uuid, bool, Uuid)>) -> Result<Vec<(Uuid, Record)>> {
    if keys.is_empty() {
        return Ok(Vec::new());
    }
    let mut sel = Query::select();
    sel.column(Alias::new("tenant_id")).columns(columns(c)).from(Alias::new(c.table)).cond_where(super::sql::keys_in(keys));
    let rows = tx.fetch_all(&sel).await?;
    with_tenants(c, &rows)
}

/// Rows selected as `tenant_id` and then the collection's columns, as records with their tenant.
fn with_tenants(c: &'static Collection, rows: &[Row]) -> Result<Vec<(Uuid, Record)>> {
    rows.iter()
        .map(|r| {
            let tenant = r.opt_uuid(0)?.ok_or_else(|| Error::internal(anyhow::anyhow!("row without tenant")))?;
            Ok((tenant, decode_from(c, r, 1)?))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `decode_from` reads by position: the columns must come in the order it assumes.
    #[test]
    fn columns_come_in_the_order_records_are_decoded_in() {
        for c in crate::domain::collections::COLLECTIONS {
            let names: Vec<String> = columns(c).iter().map(sea_query::Iden::to_string).collect();
            assert_eq!(names[..4], ["id", "livemode", "created_at", "updated_at"], "{}", c.name);
            let fields = 4 + usize::from(c.metadata);
            if c.metadata {
                assert_eq!(names[4], "metadata", "{}", c.name);
            }
            let expected: Vec<&str> = c.fields.iter().map(|f| f.name).collect();
            assert_eq!(names[fields..], expected[..], "{}", c.name);
        }
    }
}
