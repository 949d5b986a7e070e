//! The portfolio in the console (`Records`): every collection of the areas listed in
//! `describe::AREAS`, listed, read with its related records, history and ledger,
//! created, edited, moved through its state machine and deleted, by the signed-in user.
//!
//! Nothing here decides who may do what: every read goes through `ops::reads` and every
//! write through `Operations` as the signed-in user's `Actor` (their tenant, the console's
//! environment, their role's permissions), the same gate, validation, events and webhooks
//! as the API's. A role without `leases:write` is refused a forged call exactly as a key
//! without that scope is. What the pages are told a role may do (`CollectionInfo::can_*`)
//! only decides which controls they draw.
//!
//! Writes are idempotent against a double submit: each form carries a key drawn with it
//! (`RecordForm::once`), reserved like an `Idempotency-Key` of the API for the signed-in
//! user (`store::idempotency`), and the write and its stored answer commit together.

pub(in crate::accounts) mod describe;
pub(in crate::accounts) mod forms;
pub(in crate::accounts) mod show;

use gable_app::service::{
    ActivityItem, Area, Chip, Choice, CollectionInfo, ConsoleError, FieldValue, HistoryItem, LedgerLine, ListView, Me, RecordForm,
    RecordView, Records, RelatedList, Row, Shown,
};
use serde_json::{Map, Value as Json};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::{actor_of, store_error, AccountService};
use crate::domain::collections::collection;
use crate::domain::expand::{references, Expand, Related};
use crate::domain::list::ListQuery;
use crate::domain::record::Record;
use crate::domain::registry::{Access as FieldAccess, Collection, Field, JsonShape, Ty};
use crate::domain::scopes::Access;
use crate::domain::value::Val;
use crate::domain::workflow;
use crate::error::Error;
use crate::ops::Actor;
use crate::store::accounts::activity::{self, Activity};
use crate::store::idempotency::{self, Owner, Reservation, KEEP};
use crate::store::Intent;

pub use describe::{AREAS, ELSEWHERE};

/// Console writes a record's page lists (newest first).
const ACTIVITY_ROWS: u64 = 20;
/// Records a related list shows on a record's page (the rest are a link away).
const RELATED_ROWS: u32 = 5;
/// Events a record's history shows, newest first.
const HISTORY_ROWS: &str = "20";
/// Records a picker offers.
const CHOICES: &str = "20";
/// How long a submitted form holds its key while it runs.
const ONCE_LEASE: chrono::Duration = chrono::Duration::seconds(60);
/// Console-only parameters of a list's address, beside the API's own.
const COLUMNS: &str = "columns";
const SEARCH: &str = "q";
/// The add-a-filter form's fields, turned into `filter[field][op]=value`.
const ADD: [&str; 3] = ["add_field", "add_op", "add_value"];

/// A collection of the console's areas (the others have pages of their own).
fn portfolio(name: &str) -> Result<&'static Collection, ConsoleError> {
    collection(name).filter(|c| describe::area_of(c.name).is_some()).ok_or_else(|| ConsoleError::NotFound("That list".into()))
}

fn parse_id(id: &str, c: &Collection) -> Result<Uuid, ConsoleError> {
    Uuid::parse_str(id.trim()).map_err(|_| not_found(c))
}

fn not_found(c: &Collection) -> ConsoleError {
    ConsoleError::NotFound(format!("The {}", describe::singular(c)))
}

/// A refused read, in words (the permission it needs), or a missing record.
fn read_refusal<'a>(c: &'a Collection, doing: &'static str) -> impl FnOnce(Error) -> ConsoleError + 'a {
    move |e| match e {
        Error::InsufficientScope { scope, .. } => ConsoleError::Forbidden(format!(
            "Your role does not allow seeing {} (it needs the permission `{scope}`).",
            describe::plural_label(c).to_lowercase()
        )),
        Error::NotFound { .. } => not_found(c),
        Error::InvalidParameter { message, .. } | Error::InvalidRequest { message, .. } => {
            ConsoleError::Invalid { field: String::new(), message: forms::sentence(&message) }
        }
        Error::InvalidCursor => {
            ConsoleError::Invalid { field: "cursor".into(), message: "This page's link has expired; start from the first page.".into() }
        }
        other => store_error(doing)(other),
    }
}

/// The single references among `fields` whose records the actor may read: what a page
/// expands to name them.
fn expandable(actor: &Actor, c: &'static Collection, fields: &[&str]) -> Expand {
    let names: Vec<&str> = references(c)
        .iter()
        .filter(|r| !r.many && fields.contains(&r.field.name) && actor.require(r.target, Access::Read).is_ok())
        .map(|r| r.name.as_str())
        .collect();
    Expand::parse(c, &names).unwrap_or_default()
}

/// A list's address with these query pairs.
fn list_href(c: &str, pairs: &[(String, String)]) -> String {
    if pairs.is_empty() {
        return format!("/console/{c}");
    }
    let q: String = url::form_urlencoded::Serializer::new(String::new()).extend_pairs(pairs).finish();
    format!("/console/{c}?{q}")
}

/// A filter key's field and operator: `filter[rent][gte]` → (`rent`, `gte`).
fn filter_parts(key: &str) -> Option<(&str, &str)> {
    let inner = key.strip_prefix("filter[")?.strip_suffix(']')?;
    Some(match inner.split_once("][") {
        Some((f, op)) => (f, op),
        None => (inner, "eq"),
    })
}

/// A filter in words: `Status is one of active, ended`.
fn chip_text(c: &Collection, key: &str, value: &str) -> String {
    let Some((field, op)) = filter_parts(key) else { return format!("{key} = {value}") };
    let label = describe::field_label(field);
    let shown = match c.field(field).map(|f| f.ty) {
        Some(Ty::Ref(t)) => Uuid::parse_str(value)
            .map(|id| format!("{} {}", collection(t).map(describe::singular).unwrap_or_default(), show::short_id(id)))
            .unwrap_or_else(|_| value.to_string()),
        _ => value.replace(',', ", "),
    };
    match op {
        "ne" => format!("{label} is not {shown}"),
        "gt" => format!("{label} > {shown}"),
        "gte" => format!("{label} ≥ {shown}"),
        "lt" => format!("{label} < {shown}"),
        "lte" => format!("{label} ≤ {shown}"),
        "in" => format!("{label} is one of {shown}"),
        "nin" => format!("{label} is none of {shown}"),
        "exists" if value == "true" => format!("{label} is set"),
        "exists" => format!("{label} is empty"),
        "contains" => format!("{label} contains “{value}”"),
        _ => format!("{label} is {shown}"),
    }
}

/// The page's query in canonical form: the add-a-filter form's fields and the quick
/// search become the API's `filter[…]` parameters; `cursor` is kept apart.
struct ListAddress {
    /// The API's parameters and `columns`, without `cursor`.
    pairs: Vec<(String, String)>,
    cursor: Option<String>,
    columns: Option<Vec<String>>,
}

fn address(c: &Collection, query: Vec<(String, String)>) -> ListAddress {
    let get = |k: &str| query.iter().find(|(q, _)| q == k).map(|(_, v)| v.trim().to_string()).filter(|v| !v.is_empty());
    let mut pairs: Vec<(String, String)> = vec![];
    let mut cursor = None;
    let mut chosen: Vec<String> = vec![];
    for (k, v) in &query {
        match k.as_str() {
            "cursor" => cursor = Some(v.clone()).filter(|v| !v.is_empty()),
            // A comma-separated list, or the key repeated (the columns form's checkboxes).
            COLUMNS => chosen.extend(
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty() && !chosen.iter().any(|c| c == s))
                    .map(String::from)
                    .collect::<Vec<_>>(),
            ),
            SEARCH => {}
            k if ADD.contains(&k) => {}
            // An empty value (a cleared filter input) means no filter.
            _ if v.is_empty() && k != "sort" => {}
            _ => pairs.push((k.clone(), v.clone())),
        }
    }
    let columns = (!chosen.is_empty()).then(|| {
        pairs.insert(0, (COLUMNS.to_string(), chosen.join(",")));
        chosen
    });
    if let (Some(field), Some(value)) = (get(ADD[0]), get(ADD[2])) {
        let op = get(ADD[1]).unwrap_or_else(|| "eq".into());
        let key = if op == "eq" { format!("filter[{field}]") } else { format!("filter[{field}][{op}]") };
        pairs.retain(|(k, _)| *k != key);
        pairs.push((key, value));
    }
    if let (Some(text), Some(field)) = (get(SEARCH), describe::name_field(c)) {
        let key = format!("filter[{}][contains]", field.name);
        pairs.retain(|(k, _)| *k != key);
        pairs.push((key, text));
    }
    ListAddress { pairs, cursor, columns }
}

/// The columns a list shows: those chosen that the collection has, or its defaults.
fn columns_of(c: &Collection, chosen: Option<Vec<String>>) -> Vec<String> {
    let known = |n: &str| c.field(n).is_some() || matches!(n, "id" | "created_at" | "updated_at");
    match chosen.map(|cs| cs.into_iter().filter(|n| known(n)).collect::<Vec<_>>()) {
        Some(cs) if !cs.is_empty() => cs,
        _ => describe::default_columns(c),
    }
}

fn row(c: &Collection, r: &Record, columns: &[String], related: &Related) -> Row {
    Row {
        id: r.id.to_string(),
        href: show::href(c.name, r.id),
        title: show::title(c, r),
        cells: columns.iter().map(|col| show::column(c, col, r, related)).collect(),
    }
}

/// What makes two submits of a form the same: the operation, its record and its values.
fn fingerprint(op: &str, c: &str, id: &str, form: &RecordForm) -> String {
    let mut h = Sha256::new();
    for part in [op, c, id] {
        h.update(part.as_bytes());
        h.update([0]);
    }
    let mut values = form.values.clone();
    values.sort();
    for (k, v) in values {
        h.update(k.as_bytes());
        h.update([1]);
        h.update(v.as_bytes());
        h.update([0]);
    }
    hex::encode(h.finalize())
}

/// Records, in the write's transaction, that `me` did `action` to `record` of `c`.
pub(in crate::accounts) async fn acted(
    w: &mut crate::ops::Work,
    me: &Me,
    c: &Collection,
    record: Uuid,
    action: &str,
    fields: Vec<String>,
) -> Result<(), ConsoleError> {
    let user_id = Uuid::parse_str(&me.user_id).map_err(|_| ConsoleError::NotSignedIn)?;
    let entry = Activity {
        record_id: record,
        collection: c.name.into(),
        action: action.into(),
        fields,
        user_id,
        user_name: me.name.clone(),
        at: w.now(),
    };
    let scope = crate::domain::reach::Scope { tenant: actor_of(me)?.scope.tenant, livemode: me.livemode, properties: None };
    activity::record(w.tx(), &scope, &entry).await.map_err(store_error("recording who acted"))
}

/// A console write in words: `created this lease`, `changed rent, rent due day`, `ran send`.
fn activity_item(c: &Collection, a: &Activity) -> ActivityItem {
    let what = match a.action.as_str() {
        "create" => format!("created this {}", describe::singular(c)),
        "update" => format!("changed {}", a.fields.iter().map(|f| describe::field_label(f).to_lowercase()).collect::<Vec<_>>().join(", ")),
        "delete" => format!("deleted this {}", describe::singular(c)),
        action => format!("ran “{}”", describe::action_label(action).to_lowercase()),
    };
    ActivityItem { at: show::datetime(&a.at), who: a.user_name.clone(), what }
}

impl AccountService {
    /// Runs a write once per form: `write` runs in a unit of work whose commit also stores
    /// its answer (an id) under the form's key; a second submit of the same form answers
    /// that id without writing again. A refused write gives the key up, so the corrected
    /// form can be sent again.
    pub(in crate::accounts) async fn once(
        &self,
        me: &Me,
        actor: &Actor,
        key: &str,
        fingerprint: String,
        write: impl AsyncFnOnce(&mut crate::ops::Work) -> Result<String, ConsoleError>,
    ) -> Result<String, ConsoleError> {
        let key = key.trim();
        if !(8..=200).contains(&key.len()) || !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(ConsoleError::Invalid {
                field: "once".into(),
                message: "This form is missing its key. Reload the page and try again.".into(),
            });
        }
        let credential = Uuid::parse_str(&me.user_id).map_err(|_| ConsoleError::NotSignedIn)?;
        let owner = Owner { tenant: actor.scope.tenant, livemode: actor.scope.livemode, credential };
        let request = idempotency::Request { key: key.into(), fingerprint, method: "CONSOLE".into(), path: "/console".into() };
        let now = self.now();
        let reserved = self
            .store
            .in_tenant(owner.tenant, owner.livemode, Intent::Write, async |tx| {
                idempotency::reserve(tx, &owner, &request, now, ONCE_LEASE, KEEP).await
            })
            .await
            .map_err(store_error("reserving a form's key"))?;
        let context = idempotency::sealing_context(&owner, key);
        let token = match reserved {
            Reservation::Reserved { token } => token,
            Reservation::Answered { sealed, .. } => {
                return self.ops.master_key().open(&sealed, &context).ok_or(ConsoleError::Internal);
            }
            Reservation::InUse { .. } => {
                return Err(ConsoleError::Conflict("This form is being sent already. Wait a moment, then reload the page.".into()))
            }
            Reservation::Reused { .. } => {
                return Err(ConsoleError::Conflict("This form was sent before with other values. Reload the page to start again.".into()))
            }
        };
        let result: Result<String, ConsoleError> = async {
            let mut w = self.ops.begin(actor).await.map_err(store_error("starting a write"))?;
            let answer = write(&mut w).await?;
            let sealed = self.ops.master_key().seal(&answer, &context);
            idempotency::answer(w.tx(), &owner, key, token, 200, sealed).await.map_err(forms::refusal("storing a form's answer", ""))?;
            w.commit().await.map_err(store_error("committing a write"))?;
            Ok(answer)
        }
        .await;
        if result.is_err() {
            let released = self
                .store
                .in_tenant(owner.tenant, owner.livemode, Intent::Write, async |tx| idempotency::release(tx, &owner, key, token).await)
                .await;
            if let Err(e) = released {
                tracing::warn!(error = %super::describe(&e), "console: giving a form's key up failed; it lapses by itself");
            }
        }
        result
    }

    /// The records of `c` that refer to `target` through `field`, the first few.
    async fn referring(&self, actor: &Actor, c: &'static Collection, field: &'static Field, target: &Record) -> Option<RelatedList> {
        actor.require(c, Access::Read).ok()?;
        let columns: Vec<String> = describe::default_columns(c).into_iter().filter(|n| n != field.name).take(4).collect();
        let key = format!("filter[{}]", field.name);
        let pairs = vec![(key.clone(), target.id.to_string()), ("limit".to_string(), RELATED_ROWS.to_string())];
        let mut q = ListQuery::parse(c, &pairs).ok()?;
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        q.answer.expand = expandable(actor, c, &names);
        let page = match self.ops.list(actor, c, q).await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %super::describe(&e), collection = c.name, "console: reading related records failed");
                return None;
            }
        };
        let several = c.fields.iter().filter(|f| f.ty == field.ty).count() > 1;
        let label = match several {
            true => format!("{} (as {})", describe::plural_label(c), describe::field_label(field.name).to_lowercase()),
            false => describe::plural_label(c),
        };
        let creates = describe::collection_info(c, &actor.grants).can_create && field.access != FieldAccess::ReadOnly;
        Some(RelatedList {
            collection: c.name.into(),
            label,
            rows: page.records.iter().map(|r| row(c, r, &columns, &page.related)).collect(),
            headers: columns.iter().map(|n| describe::field_label(n)).collect(),
            columns,
            has_more: page.has_more,
            href: list_href(c.name, &[(key, target.id.to_string())]),
            new_href: creates.then(|| format!("/console/{}/new?{}={}", c.name, field.name, target.id)),
        })
    }

    /// Every list of records referring to `r` (directly: a unit's leases, not its
    /// leases' charges), in the areas' order.
    async fn related_lists(&self, actor: &Actor, c: &'static Collection, r: &Record) -> Vec<RelatedList> {
        let mut out = vec![];
        for other in describe::in_areas().filter(|o| o.name != "events") {
            for f in other.fields.iter().filter(|f| f.ty == Ty::Ref(c.name) && !(f.name == "property_id" && other.property.is_derived())) {
                if let Some(list) = self.referring(actor, other, f, r).await {
                    out.push(list);
                }
            }
        }
        out
    }

    /// The events about `r`, each with its delivery attempts, when the role may read them.
    async fn history(&self, actor: &Actor, r: &Record) -> (Vec<HistoryItem>, Option<String>) {
        self.events_where(actor, "related_object_id", r.id, "-created_at").await
    }

    /// The events whose `field` is `value` (at most `HISTORY_ROWS`, in `sort`'s order),
    /// each with its delivery attempts, when the role may read them; or why they are not
    /// shown. A record's history, and the events an API call caused (`developers`).
    pub(in crate::accounts) async fn events_where(
        &self,
        actor: &Actor,
        field: &str,
        value: Uuid,
        sort: &str,
    ) -> (Vec<HistoryItem>, Option<String>) {
        let Some(events) = collection("events") else { return (vec![], None) };
        if actor.require(events, Access::Read).is_err() {
            return (vec![], Some("Your role does not allow seeing events (it needs the permission `events:read`).".into()));
        }
        let pairs = vec![
            (format!("filter[{field}]"), value.to_string()),
            ("limit".to_string(), HISTORY_ROWS.to_string()),
            ("sort".to_string(), sort.to_string()),
        ];
        let Ok(q) = ListQuery::parse(events, &pairs) else { return (vec![], None) };
        let page = match self.ops.list(actor, events, q).await {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(error = %super::describe(&e), "console: reading a record's history failed");
                return (vec![], Some("The history could not be read just now.".into()));
            }
        };
        let mut items: Vec<HistoryItem> = page
            .records
            .iter()
            .map(|e| HistoryItem {
                event_id: e.id.to_string(),
                event_type: e.get("type").as_str().unwrap_or_default().to_string(),
                at: show::datetime(&e.created_at),
                deliveries: vec![],
            })
            .collect();
        let deliveries = collection("webhook-deliveries");
        if let (Some(d), false) = (deliveries, items.is_empty()) {
            if actor.require(d, Access::Read).is_ok() {
                let ids: Vec<String> = items.iter().map(|i| i.event_id.clone()).collect();
                let pairs = vec![("filter[event_id][in]".to_string(), ids.join(",")), ("limit".to_string(), "100".to_string())];
                if let Ok(q) = ListQuery::parse(d, &pairs) {
                    if let Ok(page) = self.ops.list(actor, d, q).await {
                        for a in &page.records {
                            let event = a.get("event_id").as_uuid().map(|u| u.to_string()).unwrap_or_default();
                            let webhook = a.get("webhook_id").as_uuid().map(|u| u.to_string()).unwrap_or_default();
                            if let Some(item) = items.iter_mut().find(|i| i.event_id == event) {
                                item.deliveries.push((
                                    a.status().to_string(),
                                    a.get("url").as_str().unwrap_or_default().to_string(),
                                    format!("/console/webhooks/{webhook}/deliveries/{}", a.id),
                                ));
                            }
                        }
                    }
                }
            }
        }
        (items, None)
    }

    /// The ledger lines a money record posted (an invoice's: its charges' and payments').
    async fn ledger(&self, actor: &Actor, c: &Collection, r: &Record) -> Vec<LedgerLine> {
        let Some(entries) = collection("accounting-entries") else { return vec![] };
        if !matches!(c.name, "charges" | "payments" | "refunds" | "invoices") || actor.require(entries, Access::Read).is_err() {
            return vec![];
        }
        let mut sources: Vec<String> = vec![r.id.to_string()];
        if c.name == "invoices" {
            if let Val::Json(Json::Array(ids)) = r.get("charge_ids") {
                sources.extend(ids.iter().filter_map(|i| i.as_str().map(String::from)));
            }
            if let Some(payments) = collection("payments").filter(|p| actor.require(p, Access::Read).is_ok()) {
                let pairs = vec![("filter[invoice_id]".to_string(), r.id.to_string()), ("limit".to_string(), "100".to_string())];
                if let Ok(q) = ListQuery::parse(payments, &pairs) {
                    if let Ok(page) = self.ops.list(actor, payments, q).await {
                        sources.extend(page.records.iter().map(|p| p.id.to_string()));
                    }
                }
            }
        }
        let pairs = vec![
            ("filter[source_id][in]".to_string(), sources.join(",")),
            ("limit".to_string(), "100".to_string()),
            ("sort".to_string(), "created_at".to_string()),
        ];
        let Ok(q) = ListQuery::parse(entries, &pairs) else { return vec![] };
        let Ok(page) = self.ops.list(actor, entries, q).await else { return vec![] };
        let mut out = vec![];
        for e in &page.records {
            let currency = e.currency();
            let Val::Json(Json::Array(lines)) = e.get("lines") else { continue };
            for l in lines {
                // Lines carry amounts in major units; shown as every amount is (`1,450.00 USD`).
                let amount = |k: &str| {
                    let cur = currency.unwrap_or("USD");
                    match l.get(k).map(|raw| crate::domain::value::parse_money(k, raw, cur)) {
                        Some(Ok(minor)) if minor != 0 => show::money(minor, currency),
                        _ => String::new(),
                    }
                };
                out.push(LedgerLine {
                    entry_id: e.id.to_string(),
                    posted_on: e.get("posted_on").as_date().map(|d| show::date(&d)).unwrap_or_default(),
                    memo: e.get("memo").as_str().unwrap_or_default().to_string(),
                    account: l.get("account").and_then(Json::as_str).unwrap_or_default().to_string(),
                    debit: amount("debit"),
                    credit: amount("credit"),
                });
            }
        }
        out
    }
}

/// The fields of `c` a create form may fill.
fn create_fields(c: &'static Collection) -> Vec<&'static Field> {
    c.fields.iter().filter(|f| f.access != FieldAccess::ReadOnly).collect()
}

#[async_trait::async_trait]
impl Records for AccountService {
    fn areas(&self, me: &Me) -> Vec<Area> {
        describe::areas(&me.permissions)
    }

    fn collection_info(&self, me: &Me, name: &str) -> Result<CollectionInfo, ConsoleError> {
        let c = portfolio(name)?;
        let actor = actor_of(me)?;
        actor.require(c, Access::Read).map_err(read_refusal(c, "checking a permission"))?;
        Ok(describe::collection_info(c, &me.permissions))
    }

    async fn list_records(&self, me: &Me, name: &str, query: &str) -> Result<ListView, ConsoleError> {
        let c = portfolio(name)?;
        let query: Vec<(String, String)> = url::form_urlencoded::parse(query.trim_start_matches('?').as_bytes()).into_owned().collect();
        let actor = actor_of(me)?;
        actor.require(c, Access::Read).map_err(read_refusal(c, "checking a permission"))?;
        let info = describe::collection_info(c, &me.permissions);
        let ListAddress { pairs, cursor, columns } = address(c, query);
        let columns = columns_of(c, columns);
        let api: Vec<(String, String)> = pairs.iter().filter(|(k, _)| k != COLUMNS).cloned().collect();
        let chips: Vec<Chip> = api
            .iter()
            .filter(|(k, _)| k.starts_with("filter["))
            .map(|(k, v)| Chip {
                text: chip_text(c, k, v),
                param: k.clone(),
                value: v.clone(),
                remove_href: list_href(c.name, &pairs.iter().filter(|(pk, _)| pk != k).cloned().collect::<Vec<_>>()),
            })
            .collect();
        let mut view = ListView {
            info,
            columns: columns.clone(),
            rows: vec![],
            chips,
            sort: api.iter().find(|(k, _)| k == "sort").map(|(_, v)| v.clone()).unwrap_or_else(|| "-created_at".into()),
            query: pairs.clone(),
            next_href: None,
            first_href: cursor.is_some().then(|| list_href(c.name, &pairs)),
            problem: None,
        };
        let mut full = api;
        if let Some(cur) = &cursor {
            full.push(("cursor".into(), cur.clone()));
        }
        let mut q = match ListQuery::parse(c, &full) {
            Ok(q) => q,
            Err(e) => {
                view.problem = Some(match read_refusal(c, "reading a list")(e) {
                    ConsoleError::Invalid { message, .. } => message,
                    other => other.to_string(),
                });
                return Ok(view);
            }
        };
        let names: Vec<&str> = columns.iter().map(String::as_str).collect();
        q.answer.expand = expandable(&actor, c, &names);
        let page = match self.ops.list(&actor, c, q).await {
            Ok(p) => p,
            Err(e @ (Error::InvalidCursor | Error::InvalidParameter { .. })) => {
                view.problem = Some(read_refusal(c, "reading a list")(e).to_string());
                return Ok(view);
            }
            Err(e) => return Err(read_refusal(c, "reading a list")(e)),
        };
        view.rows = page.records.iter().map(|r| row(c, r, &columns, &page.related)).collect();
        view.next_href = page.next.map(|cur| {
            let mut next = pairs.clone();
            next.push(("cursor".into(), cur));
            list_href(c.name, &next)
        });
        Ok(view)
    }

    async fn record(&self, me: &Me, name: &str, id: &str) -> Result<RecordView, ConsoleError> {
        let c = portfolio(name)?;
        let actor = actor_of(me)?;
        actor.require(c, Access::Read).map_err(read_refusal(c, "checking a permission"))?;
        let id = parse_id(id, c)?;
        let all: Vec<&str> = c.fields.iter().map(|f| f.name).collect();
        let expand = expandable(&actor, c, &all);
        let one = self.ops.read(&actor, c, id, &expand).await.map_err(read_refusal(c, "reading a record"))?;
        let r = &one.record;
        let info = describe::collection_info(c, &me.permissions);
        let mut fields: Vec<FieldValue> = vec![];
        for f in c.fields {
            fields.push(FieldValue { name: f.name.into(), label: describe::field_label(f.name), shown: show::shown(f, r, &one.related) });
        }
        if let Some(m) = r.metadata.as_ref().filter(|m| m.as_object().is_some_and(|o| !o.is_empty())) {
            fields.push(FieldValue {
                name: "metadata".into(),
                label: "Metadata".into(),
                shown: Shown::Code(serde_json::to_string_pretty(m).unwrap_or_default()),
            });
        }
        for sys in ["id", "created_at", "updated_at"] {
            fields.push(FieldValue { name: sys.into(), label: describe::field_label(sys), shown: show::system(sys, r) });
        }
        let form = c.fields.iter().filter(|f| f.access != FieldAccess::ReadOnly).flat_map(|f| show::form_texts(f, r)).collect();
        let status = c.field("status").and_then(|_| r.get("status").as_str().map(String::from));
        let actions = match (&status, info.can_act) {
            (Some(s), true) => describe::actions_from(c, s),
            _ => vec![],
        };
        let (history, history_note) = self.history(&actor, r).await;
        let ledger = self.ledger(&actor, c, r).await;
        let related = self.related_lists(&actor, c, r).await;
        let activity =
            self.store.activity_of(&actor.scope, r.id, ACTIVITY_ROWS).await.map_err(store_error("reading a record's activity"))?;
        Ok(RecordView {
            title: show::title(c, r),
            id: r.id.to_string(),
            status,
            fields,
            form,
            actions,
            related,
            history,
            history_note,
            activity: activity.iter().map(|a| activity_item(c, a)).collect(),
            ledger,
            info,
            once: Uuid::new_v4().to_string(),
        })
    }

    async fn choices(&self, me: &Me, name: &str, search: &str) -> Result<Vec<Choice>, ConsoleError> {
        let c = collection(name).ok_or_else(|| ConsoleError::NotFound("That list".into()))?;
        let actor = actor_of(me)?;
        actor.require(c, Access::Read).map_err(read_refusal(c, "checking a permission"))?;
        let mut pairs = vec![("limit".to_string(), CHOICES.to_string())];
        let search = search.trim();
        match (describe::name_field(c), Uuid::parse_str(search)) {
            (_, Ok(id)) => pairs.push(("filter[id]".into(), id.to_string())),
            (Some(f), Err(_)) if !search.is_empty() => {
                pairs.push((format!("filter[{}][contains]", f.name), search.chars().take(crate::domain::list::MAX_CONTAINS).collect()));
                if f.sortable {
                    pairs.push(("sort".into(), f.name.into()));
                }
            }
            _ => {}
        }
        let q = ListQuery::parse(c, &pairs).map_err(read_refusal(c, "offering choices"))?;
        let page = self.ops.list(&actor, c, q).await.map_err(read_refusal(c, "offering choices"))?;
        Ok(page.records.iter().map(|r| Choice { id: r.id.to_string(), title: show::title(c, r) }).collect())
    }

    async fn create_record(&self, me: &Me, name: &str, form: RecordForm) -> Result<String, ConsoleError> {
        let c = portfolio(name)?;
        let actor = actor_of(me)?;
        let what = describe::plural_label(c).to_lowercase();
        let body = forms::body(&create_fields(c), &form.values)?;
        let print = fingerprint("create", c.name, "", &form);
        let id = self
            .once(me, &actor, &form.once, print, async |w| {
                let created = w.create(c, &Json::Object(body)).await.map_err(forms::refusal("creating a record", &what))?;
                acted(w, me, c, created.record.id, "create", vec![]).await?;
                Ok(created.record.id.to_string())
            })
            .await?;
        tracing::info!(tenant = %actor.scope.tenant, collection = c.name, record = %id, by = %me.user_id, "console: record created");
        Ok(id)
    }

    async fn update_record(&self, me: &Me, name: &str, id: &str, form: RecordForm) -> Result<(), ConsoleError> {
        let c = portfolio(name)?;
        let actor = actor_of(me)?;
        let what = describe::plural_label(c).to_lowercase();
        let record_id = parse_id(id, c)?;
        actor.require(c, Access::Write).map_err(forms::refusal("checking a permission", &what))?;
        if let Some(e) = c.refuse(crate::domain::registry::WriteOp::Update) {
            return Err(forms::refusal("editing a record", &what)(e));
        }
        // Only what the person changed is sent: an unchanged amount of a posted invoice is
        // not an attempt to change it.
        let current = self.ops.read(&actor, c, record_id, &Expand::default()).await.map_err(read_refusal(c, "reading a record"))?.record;
        let editable: Vec<&'static Field> = c.fields.iter().filter(|f| f.access == FieldAccess::Write).collect();
        let mut body = Map::new();
        for (f, new) in forms::values(&editable, &form.values)? {
            let now = match (f.ty, current.get(f.name)) {
                (Ty::Json(JsonShape::Address), Val::Json(j)) => Some(j.clone()),
                _ => forms::value(f, &show::form_text(f, &current))?,
            };
            if new != now {
                body.insert(f.name.into(), new.unwrap_or(Json::Null));
            }
        }
        let print = fingerprint("update", c.name, id, &form);
        self.once(me, &actor, &form.once, print, async |w| {
            if !body.is_empty() {
                let fields = body.keys().cloned().collect();
                w.update(c, record_id, &Json::Object(body)).await.map_err(forms::refusal("editing a record", &what))?;
                acted(w, me, c, record_id, "update", fields).await?;
            }
            Ok(record_id.to_string())
        })
        .await?;
        tracing::info!(tenant = %actor.scope.tenant, collection = c.name, record = %record_id, by = %me.user_id, "console: record edited");
        Ok(())
    }

    async fn act_on_record(&self, me: &Me, name: &str, id: &str, action: &str, form: RecordForm) -> Result<(), ConsoleError> {
        let c = portfolio(name)?;
        let actor = actor_of(me)?;
        let what = describe::plural_label(c).to_lowercase();
        let record_id = parse_id(id, c)?;
        let machine = workflow::machine(c.name).ok_or_else(|| ConsoleError::NotFound("That action".into()))?;
        let a = machine.action(action).ok_or_else(|| ConsoleError::NotFound("That action".into()))?;
        let fields: Vec<&'static Field> = match a.input {
            workflow::Input::NewRecord(target) => collection(target).map(create_fields).unwrap_or_default(),
            _ => a.input.fields().filter_map(|(n, _)| c.field(n)).collect(),
        };
        let body = forms::body(&fields, &form.values)?;
        let print = fingerprint(action, c.name, id, &form);
        self.once(me, &actor, &form.once, print, async |w| {
            w.act(c, machine, a, record_id, &body).await.map_err(forms::refusal("running an action", &what))?;
            acted(w, me, c, record_id, a.name, vec![]).await?;
            Ok(record_id.to_string())
        })
        .await?;
        tracing::info!(tenant = %actor.scope.tenant, collection = c.name, record = %record_id, action, by = %me.user_id, "console: action run");
        Ok(())
    }

    async fn delete_record(&self, me: &Me, name: &str, id: &str) -> Result<(), ConsoleError> {
        let c = portfolio(name)?;
        let actor = actor_of(me)?;
        let what = describe::plural_label(c).to_lowercase();
        let record_id = parse_id(id, c)?;
        let mut w = self.ops.begin(&actor).await.map_err(store_error("starting a write"))?;
        w.delete(c, record_id).await.map_err(forms::refusal("deleting a record", &what))?;
        acted(&mut w, me, c, record_id, "delete", vec![]).await?;
        w.commit().await.map_err(store_error("committing a write"))?;
        tracing::info!(tenant = %actor.scope.tenant, collection = c.name, record = %record_id, by = %me.user_id, "console: record deleted");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
        list.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    /// The add-a-filter form and the quick search become the API's own filters, and the
    /// cursor is kept apart: the list's address is the API's query.
    #[test]
    fn a_page_address_is_the_apis_query() {
        let units = collection("units").unwrap();
        let a = address(
            units,
            pairs(&[
                ("sort", "-number"),
                ("add_field", "bedrooms"),
                ("add_op", "gte"),
                ("add_value", "2"),
                ("q", "4B"),
                ("cursor", "abc"),
                ("columns", "number,floor"),
                ("filter[floor]", ""),
            ]),
        );
        assert_eq!(
            a.pairs,
            pairs(&[("columns", "number,floor"), ("sort", "-number"), ("filter[bedrooms][gte]", "2"), ("filter[number][contains]", "4B")])
        );
        assert_eq!(a.cursor.as_deref(), Some("abc"));
        assert_eq!(a.columns, Some(vec!["number".to_string(), "floor".to_string()]));
        assert_eq!(chip_text(units, "filter[bedrooms][gte]", "2"), "Bedrooms ≥ 2");
        assert_eq!(chip_text(units, "filter[number][contains]", "4B"), "Number contains “4B”");
        assert_eq!(list_href("units", &pairs(&[("filter[status][in]", "a,b")])), "/console/units?filter%5Bstatus%5D%5Bin%5D=a%2Cb");
    }

    #[test]
    fn filter_keys_name_their_field_and_operator() {
        assert_eq!(filter_parts("filter[rent][gte]"), Some(("rent", "gte")));
        assert_eq!(filter_parts("filter[status]"), Some(("status", "eq")));
        assert_eq!(filter_parts("sort"), None);
    }
}
