//! `gable collections`: the collection registry (`domain::collections`), printed for
//! people (a table) or for programs (`--format json`).
//!
//! The JSON is what `make generate` (`sdks/generate.py`) writes the starter kits'
//! collection accessors and the OpenAPI validator's list from, so those never copy the
//! registry by hand. It is read from the registry the server itself uses: a collection
//! added there is printed here with nothing else to change.

use clap::{Args, ValueEnum};
use serde_json::{json, Value};

use crate::domain::collections::COLLECTIONS;
use crate::domain::registry::{Collection, WriteOp};

#[derive(Args)]
pub(super) struct CollectionsArgs {
    /// `text`: one line per collection; `json`: an array of objects (name, object, table,
    /// doc, read_scope, write_scope, operations), for generators.
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

/// The registry as JSON: one object per collection, in the registry's order.
fn json() -> Value {
    Value::Array(COLLECTIONS.iter().map(describe).collect())
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
        let names: Vec<&str> = printed.as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
        assert_eq!(names, COLLECTIONS.iter().map(|c| c.name).collect::<Vec<_>>());
        assert_eq!(text().lines().count(), COLLECTIONS.len());
    }

    #[test]
    fn operations_follow_the_write_rules() {
        let ops = |name: &str| operations(crate::domain::collections::collection(name).unwrap());
        assert_eq!(ops("leases"), ["list", "get", "create", "update", "delete"]);
        assert_eq!(ops("payments"), ["list", "get", "create", "update"], "never deleted");
        assert_eq!(ops("accounting-entries"), ["list", "get", "create"], "never changed");
        assert_eq!(ops("events"), ["list", "get"], "written by Gable only");
        let leases = &json()[COLLECTIONS.iter().position(|c| c.name == "leases").unwrap()];
        assert_eq!((leases["object"].as_str(), leases["read_scope"].as_str()), (Some("lease"), Some("leases:read")));
    }
}
