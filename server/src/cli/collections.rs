//! `gable collections`: the collection registry (`domain::collections`), printed for
//! people (a table) or for programs (`--format json`, with the event catalogue,
//! `domain::events`, beside it).
//!
//! The JSON is what `make generate` (`sdks/generate.py`) writes the starter kits'
//! collection accessors, the OpenAPI validator's list and the docs' lists of collections
//! and event types from, so those never copy the registry or the catalogue by hand. It is
//! read from the registry and catalogue the server itself uses: a collection or event type
//! added there is printed here with nothing else to change.

use clap::{Args, ValueEnum};
use serde_json::{json, Value};

use crate::domain::collections::COLLECTIONS;
use crate::domain::events::{Cause, EventType, EVENT_TYPES};
use crate::domain::registry::{Collection, WriteOp};

#[derive(Args)]
pub(super) struct CollectionsArgs {
    /// `text`: one line per collection; `json`, for generators: an object of two arrays,
    /// `collections` (name, object, table, doc, read_scope, write_scope, operations) and
    /// `events` (name, collection, doc, cause, extra), each in its list's order.
    #[arg(long, value_enum, default_value = "text")]
    format: Format,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Text,
    Json,
}

/// Prints every collection, in the registry's order.
pub(super) fn run(args: &CollectionsArgs) -> anyhow::Result<()> {
    match args.format {
        Format::Json => super::print_out(&format!("{}\n", serde_json::to_string_pretty(&json())?)),
        Format::Text => super::print_out(&text()),
    }
}

/// The registry and the event catalogue as JSON: one object per collection and one per
/// event type, each in its list's order.
fn json() -> Value {
    json!({
        "collections": COLLECTIONS.iter().map(describe).collect::<Vec<_>>(),
        "events": EVENT_TYPES.iter().map(describe_event).collect::<Vec<_>>(),
    })
}

fn describe(c: &'static Collection) -> Value {
    json!({
        "name": c.name,
        "object": c.object,
        "table": c.table,
        "doc": c.doc,
        "read_scope": c.read_scope(),
        "write_scope": c.write_scope(),
        "operations": operations(c),
    })
}

/// An event type as the catalogue has it: the collection of its record (`data.object`),
/// when it is emitted, what causes it, and the keys of `data` besides `object` and
/// `previous_attributes`.
fn describe_event(e: &'static EventType) -> Value {
    let cause = match e.cause {
        Cause::Create => json!({ "kind": "create" }),
        Cause::Action(action) => json!({ "kind": "action", "action": action }),
        Cause::ActionNotFrom(state) => json!({ "kind": "action_not_from", "state": state }),
        Cause::Coupling => json!({ "kind": "coupling" }),
        Cause::Schedule => json!({ "kind": "schedule" }),
        Cause::Worker => json!({ "kind": "worker" }),
    };
    json!({
        "name": e.name,
        "collection": e.collection,
        "doc": e.doc,
        "cause": cause,
        "extra": e.extra.iter().map(|(name, doc)| json!({ "name": name, "doc": doc })).collect::<Vec<_>>(),
    })
}

/// The operations the API offers on the collection (a write it refuses outright is left
/// out), as `GET`/`POST`/`PATCH`/`DELETE` on its paths: list, get, create, update, delete.
fn operations(c: &Collection) -> Vec<&'static str> {
    let writes = [(WriteOp::Create, "create"), (WriteOp::Update, "update"), (WriteOp::Delete, "delete")];
    ["list", "get"].into_iter().chain(writes.into_iter().filter(|(op, _)| c.refuse(*op).is_none()).map(|(_, name)| name)).collect()
}

fn text() -> String {
    let width = COLLECTIONS.iter().map(|c| c.name.len()).max().unwrap_or_default();
    let object_width = COLLECTIONS.iter().map(|c| c.object.len()).max().unwrap_or_default();
    let mut out = String::new();
    for c in COLLECTIONS {
        out.push_str(&format!("{:width$}  {:object_width$}  {}\n", c.name, c.object, operations(c).join(" ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_collection_is_printed_once_in_the_registry_order() {
        let printed = json();
        let names: Vec<&str> = printed["collections"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, COLLECTIONS.iter().map(|c| c.name).collect::<Vec<_>>());
        assert_eq!(text().lines().count(), COLLECTIONS.len());
    }

    #[test]
    fn every_event_type_is_printed_once_in_the_catalogue_order() {
        let printed = json();
        let events = printed["events"].as_array().unwrap();
        let names: Vec<&str> = events.iter().map(|e| e["name"].as_str().unwrap()).collect();
        assert_eq!(names, EVENT_TYPES.iter().map(|e| e.name).collect::<Vec<_>>());
        let collections: Vec<&str> = printed["collections"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        for e in events {
            assert!(collections.contains(&e["collection"].as_str().unwrap()), "{e}: its collection is printed too");
        }
        let by_name = |n: &str| events.iter().find(|e| e["name"] == n).unwrap();
        assert_eq!(by_name("listing.published")["cause"], json!({ "kind": "action", "action": "publish" }));
        assert_eq!(by_name("application.status_changed")["cause"], json!({ "kind": "action_not_from", "state": "draft" }));
        assert_eq!(by_name("lease.signed")["cause"], json!({ "kind": "coupling" }));
        assert_eq!(by_name("lease.expiring")["extra"][0]["name"], "days_before");
        assert_eq!(
            (by_name("lead.created")["collection"].as_str(), by_name("lead.created")["extra"].as_array().map(Vec::len)),
            (Some("leads"), Some(0))
        );
    }

    #[test]
    fn operations_follow_the_write_rules() {
        let ops = |name: &str| operations(crate::domain::collections::collection(name).unwrap());
        assert_eq!(ops("leases"), ["list", "get", "create", "update", "delete"]);
        assert_eq!(ops("payments"), ["list", "get", "create", "update"], "never deleted");
        assert_eq!(ops("accounting-entries"), ["list", "get", "create"], "never changed");
        assert_eq!(ops("events"), ["list", "get"], "written by Gable only");
        let leases = &json()["collections"][COLLECTIONS.iter().position(|c| c.name == "leases").unwrap()];
        assert_eq!((leases["object"].as_str(), leases["read_scope"].as_str()), (Some("lease"), Some("leases:read")));
    }
}
