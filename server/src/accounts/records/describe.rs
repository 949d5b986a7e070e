//! The registry as the console's pages see it: the areas of the navigation, names for
//! people, and each collection's fields, columns and actions, with what the signed-in
//! role may do. Nothing here is declared twice: types, enums, references, write rules
//! and state machines are the registry's.

use gable_app::service::{ActionInfo, Area, CollectionInfo, CollectionLink, FieldAccess, FieldInfo, FieldKind};

use crate::domain::collections::collection;
use crate::domain::list;
use crate::domain::registry::{self, Access as FieldAccessRule, Collection, Default as FieldDefault, Field, Ty, Writes};
use crate::domain::scopes::{self, Access};
use crate::domain::workflow::{self, Action, Input};

/// The console's areas, in the navigation's order, and the collections of each. Staff
/// find a collection where a property manager looks for it (Buildium's and AppFolio's
/// menus); Developers holds what an integrator reads (the request log, events, webhook
/// deliveries); the collections that describe API access rather than the portfolio
/// (users, roles, webhooks, flow tokens) have pages of their own ([`ELSEWHERE`]).
pub const AREAS: &[(&str, &[&str])] = &[
    ("Portfolio", &["properties", "buildings", "units", "rooms", "beds", "owners", "companies", "organizations"]),
    ("Leasing", &["listings", "leads", "viewings", "applications", "screening", "leases", "signatures", "tenancies"]),
    ("Stays", &["bookings", "guests"]),
    ("Money", &["charges", "invoices", "payments", "refunds", "accounting-entries", "reports"]),
    ("Maintenance", &["workorders", "inspections", "assets", "vendors", "purchase-orders"]),
    ("Records", &["documents", "tasks", "messages"]),
    // What integrators look at: every API call, the events, their webhook deliveries.
    ("Developers", &["request-logs", "events", "webhook-deliveries"]),
];

/// Collections the console shows on their own pages (Team, Webhooks, the import page) or
/// not at all (flow tokens are minted by integrations for one visitor).
pub const ELSEWHERE: &[&str] = &["users", "roles", "webhooks", "flow-tokens", "imports"];

/// Fields that name a record for people, in the order they are preferred.
const NAME_FIELDS: &[&str] = &["name", "number", "label", "title", "subject", "signer_name", "type", "email", "path"];
/// Lists whose columns are chosen here rather than worked out from the fields: what an
/// integrator scans a request log for.
const CHOSEN_COLUMNS: &[(&str, &[&str])] = &[("request-logs", &["method", "status", "error_code", "duration_ms", "created_at"])];
/// Actions that undo or end something: the page asks before running them.
const DESTRUCTIVE: &[&str] =
    &["cancel", "void", "deny", "decline", "lose", "withdraw", "terminate", "end", "reverse", "fail", "no_show", "move_out", "unlist"];
/// How many columns a list shows when none are chosen (besides the record's name).
const DEFAULT_COLUMNS: usize = 5;

/// The area a collection is in, if it is in one.
pub fn area_of(name: &str) -> Option<&'static str> {
    AREAS.iter().find(|(_, cs)| cs.contains(&name)).map(|(a, _)| *a)
}

/// The portfolio's collections in the navigation's order.
pub fn in_areas() -> impl Iterator<Item = &'static Collection> {
    AREAS.iter().flat_map(|(_, cs)| cs.iter()).filter_map(|n| collection(n))
}

/// `purchase-orders` → `Purchase orders`.
pub fn plural_label(c: &Collection) -> String {
    match c.name {
        "workorders" => "Work orders".into(),
        "screening" => "Screenings".into(),
        name => capitalised(&name.replace('-', " ")),
    }
}

/// `purchase_order` → `purchase order`.
pub fn singular(c: &Collection) -> String {
    match c.object {
        "workorder" => "work order".into(),
        object => object.replace('_', " "),
    }
}

/// `rent_due_day` → `Rent due day`; `unit_id` → `Unit`; `charge_ids` → `Charges`.
pub fn field_label(name: &str) -> String {
    let base = match (name.strip_suffix("_ids"), name.strip_suffix("_id")) {
        (Some(stem), _) => format!("{stem}s"),
        (None, Some(stem)) if !stem.is_empty() => stem.to_string(),
        _ => name.to_string(),
    };
    let words = base.replace('_', " ");
    match words.as_str() {
        "sla due at" => "SLA due at".into(),
        "id" => "ID".into(),
        "url" => "URL".into(),
        "workorder" => "Work order".into(),
        "created at" => "Created".into(),
        "updated at" => "Updated".into(),
        _ => capitalised(&words),
    }
}

/// `start_screening` → `Start screening`.
pub fn action_label(name: &str) -> String {
    match name {
        "no_show" => "Mark no-show".into(),
        "move_out" => "Move out".into(),
        other => capitalised(&other.replace('_', " ")),
    }
}

pub fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(first) => first.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The field that names `c`'s records (its quick search looks in it), if it has one.
pub fn name_field(c: &Collection) -> Option<&'static Field> {
    NAME_FIELDS.iter().filter_map(|n| c.field(n)).find(|f| f.filterable && list::is_text(f))
}

/// The collections the role may read, by area: the navigation.
pub fn areas(grants: &[String]) -> Vec<Area> {
    AREAS
        .iter()
        .filter_map(|(area, names)| {
            let collections: Vec<CollectionLink> = names
                .iter()
                .filter_map(|n| collection(n))
                .filter(|c| scopes::allows(grants, c.name, Access::Read))
                .map(|c| CollectionLink { name: c.name.into(), label: plural_label(c) })
                .collect();
            (!collections.is_empty()).then(|| Area { name: (*area).into(), collections })
        })
        .collect()
}

fn kind(ty: Ty) -> FieldKind {
    match ty {
        Ty::Str { max } => FieldKind::Text { max },
        Ty::Text => FieldKind::LongText,
        Ty::Email => FieldKind::Email,
        Ty::Url | Ty::Origin => FieldKind::Url,
        Ty::Enum(_) => FieldKind::Choice,
        Ty::Int { min, max } => FieldKind::Integer { min, max },
        Ty::Num { min, max } => FieldKind::Number { min, max },
        Ty::Money => FieldKind::Money,
        Ty::Currency => FieldKind::Currency,
        Ty::Bool => FieldKind::YesNo,
        Ty::Date => FieldKind::Date,
        Ty::DateTime => FieldKind::DateTime,
        Ty::Ref(_) => FieldKind::Reference,
        Ty::Uuid => FieldKind::Id,
        Ty::StrList { .. } => FieldKind::List,
        Ty::RefList(_) => FieldKind::References,
        Ty::Json(crate::domain::registry::JsonShape::Address) => FieldKind::Address,
        Ty::Json(_) => FieldKind::Structured,
        Ty::Metadata => FieldKind::Metadata,
    }
}

pub fn field_info(f: &Field) -> FieldInfo {
    let options = match f.ty {
        Ty::Enum(values) => values.iter().map(|v| v.to_string()).collect(),
        Ty::Currency => crate::domain::value::currencies().into_iter().map(|(code, _)| code.to_string()).collect(),
        _ => vec![],
    };
    let target = match f.ty {
        Ty::Ref(t) | Ty::RefList(t) => Some(t.to_string()),
        _ => None,
    };
    let default = match f.default {
        FieldDefault::None => None,
        FieldDefault::Str(s) => Some(s.to_string()),
        FieldDefault::Int(i) => Some(i.to_string()),
        FieldDefault::Bool(b) => Some(if b { "yes" } else { "no" }.to_string()),
        FieldDefault::Zero => Some("0".into()),
    };
    let mut hint = f.doc.replace('`', "");
    if let Some(rule) = f.env.describe() {
        hint = format!("{hint} {}", rule.replace('`', "")).trim().to_string();
    }
    FieldInfo {
        name: f.name.into(),
        label: field_label(f.name),
        kind: kind(f.ty),
        required: f.required,
        access: match f.access {
            FieldAccessRule::Write => FieldAccess::Write,
            FieldAccessRule::CreateOnly => FieldAccess::CreateOnly,
            FieldAccessRule::ReadOnly => FieldAccess::ReadOnly,
        },
        options,
        target,
        filterable: f.filterable,
        sortable: f.sortable,
        hint,
        default,
    }
}

/// The action's inputs as fields: its own fields, or the create fields of the record it
/// makes (an application's conversion makes a lease).
fn action_inputs(c: &Collection, a: &Action) -> (Vec<FieldInfo>, Option<String>) {
    match a.input {
        Input::None => (vec![], None),
        Input::Fields { .. } => (
            a.input
                .fields()
                .filter_map(|(name, required)| c.field(name).map(|f| FieldInfo { required, access: FieldAccess::Write, ..field_info(f) }))
                .collect(),
            None,
        ),
        Input::NewRecord(target) => {
            let fields = collection(target).map(creatable).unwrap_or_default();
            (fields, Some(target.to_string()))
        }
    }
}

/// The fields a create form offers.
pub fn creatable(c: &Collection) -> Vec<FieldInfo> {
    c.fields.iter().filter(|f| f.access != FieldAccessRule::ReadOnly).map(field_info).collect()
}

pub fn action_info(c: &Collection, a: &Action) -> ActionInfo {
    let (inputs, makes) = action_inputs(c, a);
    ActionInfo { name: a.name.into(), label: action_label(a.name), destructive: DESTRUCTIVE.contains(&a.name), inputs, makes }
}

/// The actions a record in `status` may take, when the role may act.
pub fn actions_from(c: &Collection, status: &str) -> Vec<ActionInfo> {
    workflow::machine(c.name)
        .map(|m| m.actions.iter().filter(|a| a.from.contains(&status)).map(|a| action_info(c, a)).collect())
        .unwrap_or_default()
}

/// The columns a list shows when none are chosen: its status, its first references and
/// amount and date, then when it was made. The record's name is its own first column.
pub fn default_columns(c: &Collection) -> Vec<String> {
    if let Some((_, chosen)) = CHOSEN_COLUMNS.iter().find(|(n, _)| *n == c.name) {
        return chosen.iter().map(|f| f.to_string()).collect();
    }
    let name = name_field(c).map(|f| f.name);
    let mut out: Vec<&str> = vec![];
    let push = |n: &'static str, out: &mut Vec<&str>| {
        if Some(n) != name && !out.contains(&n) && out.len() < DEFAULT_COLUMNS {
            out.push(n);
        }
    };
    if c.field("status").is_some() {
        push("status", &mut out);
    }
    for f in c.fields.iter().filter(|f| matches!(f.ty, Ty::Ref(_)) && f.name != "property_id").take(2) {
        push(f.name, &mut out);
    }
    if let Some(f) = c.fields.iter().find(|f| matches!(f.ty, Ty::Enum(_)) && f.name != "status" && f.sortable) {
        push(f.name, &mut out);
    }
    if let Some(f) = c.fields.iter().find(|f| f.ty == Ty::Money) {
        push(f.name, &mut out);
    }
    if let Some(f) = c.fields.iter().find(|f| matches!(f.ty, Ty::Date | Ty::DateTime) && f.access != FieldAccessRule::ReadOnly) {
        push(f.name, &mut out);
    }
    if c.field("property_id").is_some() {
        push("property_id", &mut out);
    }
    push("created_at", &mut out);
    out.into_iter().map(String::from).collect()
}

/// Every field of `c` as the pages see them, the system fields first.
fn fields(c: &Collection) -> Vec<FieldInfo> {
    let mut out: Vec<FieldInfo> = vec![FieldInfo { label: "ID".into(), ..field_info(&registry::ID) }];
    out.extend(c.fields.iter().map(field_info));
    for f in [&registry::CREATED_AT, &registry::UPDATED_AT] {
        out.push(FieldInfo { access: FieldAccess::ReadOnly, ..field_info(f) });
    }
    out[0].access = FieldAccess::ReadOnly;
    out
}

/// `c` for a role holding `grants`.
pub fn collection_info(c: &Collection, grants: &[String]) -> CollectionInfo {
    let write = scopes::allows(grants, c.name, Access::Write);
    CollectionInfo {
        name: c.name.into(),
        label: plural_label(c),
        singular: singular(c),
        area: area_of(c.name).unwrap_or_default().into(),
        doc: c.doc.replace('`', ""),
        fields: fields(c),
        default_columns: default_columns(c),
        search: name_field(c).map(|f| f.name.to_string()),
        can_create: write && c.writes != Writes::None,
        can_edit: write
            && matches!(c.writes, Writes::Full | Writes::NoDelete)
            && c.fields.iter().any(|f| f.access == FieldAccessRule::Write),
        can_delete: write && c.writes == Writes::Full,
        can_act: write && workflow::machine(c.name).is_some(),
        can_import: write && crate::domain::import::importable(c) && scopes::allows(grants, "imports", Access::Write),
        once: uuid::Uuid::new_v4().to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::collections::COLLECTIONS;

    /// Every collection is in one area, or deliberately elsewhere: a new collection is
    /// never missing from the console.
    #[test]
    fn every_collection_has_one_place() {
        for c in COLLECTIONS {
            let areas = AREAS.iter().filter(|(_, cs)| cs.contains(&c.name)).count();
            let elsewhere = ELSEWHERE.contains(&c.name);
            assert_eq!(areas + usize::from(elsewhere), 1, "{} must be in exactly one area or ELSEWHERE", c.name);
        }
        for name in AREAS.iter().flat_map(|(_, cs)| cs.iter()).chain(ELSEWHERE) {
            assert!(collection(name).is_some(), "{name} is not a collection");
        }
    }

    #[test]
    fn names_for_people() {
        assert_eq!(field_label("rent_due_day"), "Rent due day");
        assert_eq!(field_label("unit_id"), "Unit");
        assert_eq!(field_label("charge_ids"), "Charges");
        assert_eq!(plural_label(collection("purchase-orders").unwrap()), "Purchase orders");
        assert_eq!(singular(collection("accounting-entries").unwrap()), "accounting entry");
        assert_eq!(name_field(collection("units").unwrap()).map(|f| f.name), Some("number"));
        assert_eq!(name_field(collection("leases").unwrap()).map(|f| f.name), None);
    }

    /// A viewer reads everything and may change nothing; a leasing role changes leases only.
    #[test]
    fn what_a_role_may_do_comes_from_its_permissions() {
        let leases = collection("leases").unwrap();
        let viewer = collection_info(leases, &["*:read".to_string()]);
        assert!(!viewer.can_create && !viewer.can_edit && !viewer.can_delete && !viewer.can_act);
        let agent = collection_info(leases, &["leases:write".to_string()]);
        assert!(agent.can_create && agent.can_edit && agent.can_delete && agent.can_act);
        let entries = collection_info(collection("accounting-entries").unwrap(), &["*".to_string()]);
        assert!(entries.can_create && !entries.can_edit && !entries.can_delete);
        assert_eq!(areas(&["leases:read".to_string()]).len(), 1);
    }
}
