//! The event contracts (`docs/workflows.md`, "Events"): each type, the kind of record its
//! `data.object` is, and the one operation that emits it. `emitted_by_create` and
//! `emitted_by_action` are the only places that decide which operation emits what.
//!
//! `EVENT_TYPES` is the one list of event types: the API description, the webhooks' checks,
//! the console's picker and the tests read it, and `make generate` writes the docs' tables
//! and counts from it (`gable collections --format json`, `events`).

use serde_json::{Map, Value as Json};

use super::list::{lookup, Filter, ListQuery};
use super::registry::Collection;
use super::scopes::{self, Access};

/// The current dated API version: the `api_version` every event is written with, and the
/// version the API serves when a request pins none (`http::version`).
pub const API_VERSION: &str = "2026-11-22";

/// What causes an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Creating a record of the collection.
    Create,
    /// An action on a record of the collection.
    Action(&'static str),
    /// Every action on a record of the collection that leaves any state but this one
    /// (a submitted application's later status changes: `submit` leaves `draft`, and a
    /// draft withdrawn before submission was never seen by anyone).
    ActionNotFrom(&'static str),
    /// A coupling: another record's change caused this one.
    Coupling,
    /// The scheduler, at a point in time.
    Schedule,
    /// Gable's background work, on finishing what it was given (an import's last batch).
    Worker,
}

#[derive(Debug)]
pub struct EventType {
    pub name: &'static str,
    /// The collection whose record is `data.object`.
    pub collection: &'static str,
    /// When it is emitted, for the API description.
    pub doc: &'static str,
    pub cause: Cause,
    /// Extra keys of `data` besides `object` and `previous_attributes`.
    pub extra: &'static [(&'static str, &'static str)],
}

const fn ev(name: &'static str, collection: &'static str, cause: Cause, doc: &'static str) -> EventType {
    EventType { name, collection, doc, cause, extra: &[] }
}

pub static EVENT_TYPES: &[EventType] = &[
    ev("listing.published", "listings", Cause::Action("publish"), "A listing was published (`publish` action)."),
    ev("lead.created", "leads", Cause::Create, "A lead was created."),
    ev("viewing.booked", "viewings", Cause::Create, "A viewing was booked (created)."),
    ev("application.submitted", "applications", Cause::Action("submit"), "An application was submitted (`submit` action)."),
    ev(
        "application.status_changed",
        "applications",
        Cause::ActionNotFrom("draft"),
        "A submitted application changed status (screening, approved, denied, withdrawn, converted). \
         `previous_attributes.status` is the status it left.",
    ),
    ev("screening.completed", "screening", Cause::Action("complete"), "A screening was completed with its result (`complete` action)."),
    ev("lease.sent", "leases", Cause::Action("send"), "A lease was sent for signature (`send` action)."),
    ev("lease.signed", "leases", Cause::Coupling, "The last pending signature of a sent lease was signed; the lease is now `signed`."),
    ev(
        "tenancy.started",
        "tenancies",
        Cause::Action("start"),
        "A tenancy started: its `start` action, or activating its lease (which starts the lease's tenancy, creating it if needed).",
    ),
    EventType {
        name: "rent.due",
        collection: "charges",
        cause: Cause::Schedule,
        doc: "A rent charge fell due (scheduler, on its `due_date`; fired once per charge, up to 7 days late if Gable was stopped).",
        extra: &[],
    },
    ev("payment.succeeded", "payments", Cause::Action("succeed"), "A payment succeeded (`succeed` action); its invoice is settled by it."),
    ev("payment.failed", "payments", Cause::Action("fail"), "A payment failed (`fail` action)."),
    ev("payment.reversed", "payments", Cause::Action("reverse"), "A succeeded payment was reversed (`reverse` action)."),
    ev("booking.created", "bookings", Cause::Create, "A booking was created."),
    ev("booking.cancelled", "bookings", Cause::Action("cancel"), "A booking was cancelled (`cancel` action)."),
    ev(
        "guest.checked_in",
        "guests",
        Cause::Action("check_in"),
        "A guest checked in: the guest's `check_in` action, or checking in a booking of theirs.",
    ),
    ev(
        "guest.checked_out",
        "guests",
        Cause::Action("check_out"),
        "A guest checked out: the guest's `check_out` action, or checking out a booking of theirs.",
    ),
    ev("workorder.created", "workorders", Cause::Create, "A work order was created."),
    ev("workorder.completed", "workorders", Cause::Action("complete"), "A work order was completed (`complete` action)."),
    ev("inspection.completed", "inspections", Cause::Action("complete"), "An inspection was completed (`complete` action)."),
    EventType {
        name: "document.expiring",
        collection: "documents",
        cause: Cause::Schedule,
        doc: "A document expires within 30 days (scheduler; once per document and expiry time).",
        extra: &[("days_before", "Always 30: the notice period this event is for.")],
    },
    EventType {
        name: "lease.expiring",
        collection: "leases",
        cause: Cause::Schedule,
        doc: "An active lease ends within 60 days, then within 30 days (scheduler; once per lease, end date and notice).",
        extra: &[("days_before", "60 or 30: the notice period this event is for.")],
    },
    ev(
        "import.completed",
        "imports",
        Cause::Worker,
        "An import's commit wrote its last batch: `data.object` is the import with its counts (`created`, `updated`, `unchanged`, \
         `skipped`). The records it wrote cause no events of their own.",
    ),
    ev("tenant.moved_out", "tenancies", Cause::Action("move_out"), "A tenancy's residents moved out (`move_out` action)."),
];

pub fn event_type(name: &str) -> Option<&'static EventType> {
    EVENT_TYPES.iter().find(|e| e.name == name)
}

/// The event types a credential holding `grants` may see: an event carries a copy of its
/// record (`data.object`), so reading it is reading that record. `None` when it may
/// read every type's collection.
pub fn readable_types(grants: &[String]) -> Option<Vec<&'static str>> {
    let readable: Vec<&'static str> =
        EVENT_TYPES.iter().filter(|t| scopes::allows(grants, t.collection, Access::Read)).map(|t| t.name).collect();
    (readable.len() < EVENT_TYPES.len()).then_some(readable)
}

/// Narrows a list of `events` (the collection, `c`) to the types `grants` may read;
/// false when that is none.
pub fn narrow_list(c: &Collection, q: &mut ListQuery, grants: &[String]) -> bool {
    let Some(types) = readable_types(grants) else { return true };
    let Some(field) = lookup(c, "type") else { return false };
    q.filters.push(Filter::one_of(field, &types));
    !types.is_empty()
}

/// The event creating a record of a collection emits, if any.
pub fn emitted_by_create(collection: &str) -> Option<&'static str> {
    EVENT_TYPES.iter().find(|e| e.cause == Cause::Create && e.collection == collection).map(|e| e.name)
}

/// The events an action emits on its own record. `from` is the state it left.
pub fn emitted_by_action(collection: &str, action: &str, from: &str) -> Vec<&'static str> {
    EVENT_TYPES
        .iter()
        .filter(|e| e.collection == collection)
        .filter(|e| match e.cause {
            Cause::Action(a) => a == action,
            Cause::ActionNotFrom(state) => from != state,
            _ => false,
        })
        .map(|e| e.name)
        .collect()
}

/// An event's `data`: the record after the change, the attributes it changed with
/// their previous values, and any extra keys of the type.
pub fn data(object: Json, previous: Map<String, Json>, extra: &[(&str, Json)]) -> Json {
    let mut d = Map::new();
    d.insert("object".into(), object);
    d.insert("previous_attributes".into(), Json::Object(previous));
    for (k, v) in extra {
        d.insert((*k).into(), v.clone());
    }
    Json::Object(d)
}

/// The attributes that differ between two renderings of a record, with their old values.
pub fn previous_attributes(before: &Json, after: &Json) -> Map<String, Json> {
    let (Some(b), Some(a)) = (before.as_object(), after.as_object()) else { return Map::new() };
    b.iter().filter(|(k, v)| k.as_str() != "updated_at" && a.get(k.as_str()) != Some(v)).map(|(k, v)| (k.clone(), v.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::collections::collection;
    use crate::domain::workflow::machine;
    use serde_json::json;

    #[test]
    fn contracts_are_distinct_each_with_a_real_cause() {
        assert!(!EVENT_TYPES.is_empty());
        let mut names: Vec<_> = EVENT_TYPES.iter().map(|e| e.name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), EVENT_TYPES.len(), "duplicate event type");
        for e in EVENT_TYPES {
            let (object, verb) = e.name.split_once('.').unwrap_or_else(|| panic!("{}: not `<object>.<verb>`", e.name));
            assert!(!object.is_empty() && !verb.is_empty() && !verb.contains('.'), "{}: not `<object>.<verb>`", e.name);
            assert!(collection(e.collection).is_some(), "{}: no collection {}", e.name, e.collection);
            if let Cause::Action(a) = e.cause {
                let m = machine(e.collection).unwrap_or_else(|| panic!("{}: no state machine", e.name));
                assert!(m.action(a).is_some(), "{}: no action {a}", e.name);
            }
        }
    }

    #[test]
    fn application_status_changes_after_submission_only() {
        assert_eq!(emitted_by_action("applications", "submit", "draft"), vec!["application.submitted"]);
        assert_eq!(emitted_by_action("applications", "approve", "screening"), vec!["application.status_changed"]);
        assert!(emitted_by_action("applications", "withdraw", "draft").is_empty());
        assert_eq!(emitted_by_action("payments", "reverse", "succeeded"), vec!["payment.reversed"]);
        assert_eq!(emitted_by_create("leads"), Some("lead.created"));
        assert_eq!(emitted_by_create("leases"), None);
    }

    #[test]
    fn events_are_read_only_with_their_records() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(readable_types(&s(&["*:read"])), None);
        assert_eq!(readable_types(&s(&["events:read"])), Some(vec![]));
        let payments = readable_types(&s(&["events:read", "payments:read"])).unwrap();
        assert_eq!(payments, vec!["payment.succeeded", "payment.failed", "payment.reversed"]);
        let events = collection("events").unwrap();
        let mut q = ListQuery::parse(events, &[]).unwrap();
        assert!(!narrow_list(events, &mut q, &s(&["events:read"])), "nothing readable");
        let mut q = ListQuery::parse(events, &[]).unwrap();
        assert!(narrow_list(events, &mut q, &s(&["events:read", "payments:read"])));
        assert_eq!(q.filters.len(), 1);
    }

    #[test]
    fn previous_attributes_are_the_changed_fields() {
        let b = json!({"id": "x", "status": "draft", "updated_at": "1", "rent": 5});
        let a = json!({"id": "x", "status": "sent", "updated_at": "2", "rent": 5});
        assert_eq!(Json::Object(previous_attributes(&b, &a)), json!({"status": "draft"}));
    }
}
