//! `links`: from each create's `201` to what can be done next with the record it made
//! (retrieve, update, delete, its actions and commands), so that readers, generated
//! clients and stateful tools (a fuzzer's stateful phase, say) can follow a record's life.
//! Each link passes the new record's id, `$response.body#/data/id`, as the target's `id`.
//!
//! utoipa 5's builders hold no links on a response, so they are added to the JSON, like
//! the other post-processing steps in `mod.rs`.

use serde_json::{json, Map, Value as Json};

use super::{commands, offers, pascal};
use crate::domain::collections::COLLECTIONS;
use crate::domain::registry::{Collection, WriteOp};
use crate::domain::workflow;

/// The operations a record of `c` can be the subject of: (link name, operationId). The
/// names say what each does (`GetUnit`, `ApproveApplication`); the operations' own
/// descriptions say the rest.
pub(super) fn next_steps(c: &Collection) -> Vec<(String, String)> {
    let name = pascal(c.object);
    let mut steps = vec![(format!("Get{name}"), format!("get_{}", c.object))];
    if offers(c, WriteOp::Update) {
        steps.push((format!("Update{name}"), format!("update_{}", c.object)));
    }
    if offers(c, WriteOp::Delete) {
        steps.push((format!("Delete{name}"), format!("delete_{}", c.object)));
    }
    if let Some(machine) = workflow::machine(c.name) {
        for a in machine.actions {
            steps.push((format!("{}{name}", pascal(a.name)), format!("{}_{}", a.name, c.object)));
        }
    }
    for cmd in commands::commands().into_iter().filter(|cmd| cmd.collection == c.name) {
        steps.push((pascal(cmd.operation_id), cmd.operation_id.to_string()));
    }
    if crate::domain::import::is_uploaded(c) {
        steps.push(("ListImportErrors".into(), "list_import_errors".into()));
    }
    steps
}

/// Adds the links to every create's `201` response.
pub(super) fn add_links(doc: &mut Json) {
    for c in COLLECTIONS.iter().filter(|c| offers(c, WriteOp::Create)) {
        let Some(created) = doc.pointer_mut(&format!("/paths/~1v1~1{}/post/responses/201", c.name)).and_then(Json::as_object_mut) else {
            continue;
        };
        let links: Map<String, Json> = next_steps(c)
            .into_iter()
            .map(|(name, operation_id)| (name, json!({ "operationId": operation_id, "parameters": { "id": "$response.body#/data/id" } })))
            .collect();
        created.insert("links".into(), Json::Object(links));
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use serde_json::Value as Json;

    use super::super::tests::doc;

    /// Every link names an operation the document has, whose path takes the `id` it passes,
    /// and every operation on one record of a creatable collection is reachable from its
    /// create.
    #[test]
    fn links_lead_from_each_create_to_every_operation_on_its_record() {
        let d = doc();
        let mut by_id = std::collections::HashMap::new();
        for (path, item) in d["paths"].as_object().unwrap() {
            for op in item.as_object().unwrap().values().filter(|v| v.get("responses").is_some()) {
                by_id.insert(op["operationId"].as_str().unwrap().to_string(), path.clone());
            }
        }
        let mut linked = HashSet::new();
        for (path, item) in d["paths"].as_object().unwrap() {
            let Some(links) = item["post"]["responses"]["201"]["links"].as_object() else { continue };
            assert!(!path.contains("{id}"), "{path}: only creates link");
            for (name, link) in links {
                let id = link["operationId"].as_str().unwrap();
                let target = by_id.get(id).unwrap_or_else(|| panic!("{path}: link {name} names no operation {id}"));
                assert!(target.starts_with(&format!("{path}/{{id}}")), "{path}: {name} leads to {target}");
                assert_eq!(link["parameters"]["id"], Json::from("$response.body#/data/id"));
                linked.insert(target.clone() + " " + id);
            }
        }
        // Every operation on a record of a collection that has a create is linked.
        for (path, item) in d["paths"].as_object().unwrap() {
            let Some(collection) = path.strip_prefix("/v1/").and_then(|p| p.split_once("/{id}")).map(|(c, _)| c) else { continue };
            if d["paths"][format!("/v1/{collection}")]["post"].is_null() {
                continue;
            }
            for op in item.as_object().unwrap().values().filter(|v| v.get("responses").is_some()) {
                let id = op["operationId"].as_str().unwrap();
                assert!(linked.contains(&format!("{path} {id}")), "{path} {id} is not linked from its create");
            }
        }
    }
}
