//! Cross-field rules JSON Schema can say, added to the description's JSON after it is
//! built (utoipa's object builder has no `anyOf` beside `properties`, and no
//! `dependentRequired`), and the rules that differ by environment.

use serde_json::{json, Map, Value as Json};

use super::{json_create, pascal};
use crate::domain::collections::COLLECTIONS;
use crate::domain::registry::{EnvRule, Rule, Ty};
use crate::domain::validate;

/// Adds to each `*Create` schema the rules of `validate::create` that JSON Schema can state,
/// so validators and generated clients know them, not only readers of the description:
///
/// - `Rule::OneOf`: `anyOf` of one `required` list per field, each also not `null` (the
///   server counts a `null` as absent);
/// - `Rule::Balanced`: `minItems: 2` on the lines (that debits equal credits is arithmetic
///   over the items, which JSON Schema cannot do);
/// - an amount given where `currency` is optional needs `currency` (`if`/`then`: a `null`
///   counts as not given, on either side).
///
/// `Rule::After` compares two values of the body, and `Rule::SameProperty` needs the stored
/// record a field names; JSON Schema can say neither, so they stay in words only. `*Update`
/// schemas get none of these: the server checks the rules on the record as it will be
/// after the change, which depends on stored values a schema cannot see.
pub(super) fn add_cross_field_rules(doc: &mut Json) {
    for c in COLLECTIONS.iter().filter(|c| json_create(c)) {
        let Some(schema) = doc.pointer_mut(&format!("/components/schemas/{}Create", pascal(c.object))).and_then(Json::as_object_mut) else {
            continue;
        };
        let mut any_of = vec![];
        for rule in c.rules {
            match rule {
                Rule::OneOf(names) => any_of.push(json!({
                    "anyOf": names
                        .iter()
                        .map(|n| json!({ "required": [n], "properties": { *n: { "not": { "type": "null" } } } }))
                        .collect::<Vec<_>>()
                })),
                Rule::Balanced(field) => {
                    if let Some(lines) = schema.get_mut("properties").and_then(|p| p.get_mut(*field)).and_then(Json::as_object_mut) {
                        lines.insert("minItems".into(), json!(2));
                    }
                }
                // Not expressible: see above.
                Rule::After { .. } | Rule::SameProperty(_) => {}
            }
        }
        // An amount given (not `null`) where `currency` is optional needs a currency (not `null`).
        let mut all_of = vec![];
        if c.field("currency").is_some_and(|f| !f.required) {
            for f in validate::create_fields(c).filter(|f| f.ty == Ty::Money) {
                all_of.push(json!({
                    "if": { "required": [f.name], "properties": { f.name: { "not": { "type": "null" } } } },
                    "then": { "required": ["currency"], "properties": { "currency": { "not": { "type": "null" } } } },
                }));
            }
        }
        // One `anyOf` rule is the schema's own `anyOf`; with more rules, each is one `allOf` item.
        if any_of.len() == 1 && all_of.is_empty() {
            schema.insert("anyOf".into(), any_of.remove(0)["anyOf"].take());
        } else {
            all_of.extend(any_of);
            if !all_of.is_empty() {
                schema.insert("allOf".into(), Json::Array(all_of));
            }
        }
    }
    add_domain_rules(doc);
}

/// What differs between the two listeners' documents: each states its own environment's
/// rules (`EnvRule`) in its write schemas, where one document for both could only say them
/// in words. Production: sandbox-only fields are gone, URLs and origins need `https`, and
/// fields with live values take only those. The sandbox: fields it requires are required.
pub(super) fn add_environment_rules(doc: &mut Json, livemode: bool) {
    for c in COLLECTIONS {
        for f in c.fields.iter().filter(|f| f.env != EnvRule::Same) {
            for body in ["Create", "Update"] {
                let pointer = format!("/components/schemas/{}{body}", pascal(c.object));
                let Some(schema) = doc.pointer_mut(&pointer).and_then(Json::as_object_mut) else { continue };
                let Some(properties) = schema.get_mut("properties").and_then(Json::as_object_mut) else { continue };
                if !properties.contains_key(f.name) {
                    continue;
                }
                match (f.env, livemode) {
                    (EnvRule::SandboxOnly | EnvRule::SandboxRequired, true) => {
                        properties.remove(f.name);
                        if let Some(required) = schema.get_mut("required").and_then(Json::as_array_mut) {
                            required.retain(|r| r != f.name);
                        }
                    }
                    (EnvRule::SandboxRequired, false) if body == "Create" => {
                        let required = schema.entry("required").or_insert_with(|| json!([]));
                        if let Some(list) = required.as_array_mut() {
                            list.push(json!(f.name));
                        }
                    }
                    (EnvRule::HttpsInLive, true) => {
                        let pattern = if f.ty == Ty::Origin {
                            r"^https://[A-Za-z0-9\-._~:\[\]@!$&'()*+,;=%]+/?$"
                        } else {
                            r"^https://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$"
                        };
                        if let Some(p) = properties.get_mut(f.name).and_then(Json::as_object_mut) {
                            p.insert("pattern".into(), json!(pattern));
                        }
                    }
                    (EnvRule::LiveValues(values), true) => {
                        let mut only: Vec<Json> = values.iter().map(|v| json!(v)).collect();
                        if f.nullable() {
                            only.push(Json::Null);
                        }
                        let mut live = json!({ "enum": only });
                        if let Some(d) = properties[f.name].get("description").cloned() {
                            live["description"] = d;
                        }
                        properties.insert(f.name.into(), live);
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Rules of particular collections' behaviours, stated from the domain's own lists so they
/// cannot drift from what the behaviours check:
/// - a webhook's `events`: event types (`domain::events::EVENT_TYPES`), at least one, or `*`
///   alone (`domain::webhooks::check_events`);
/// - a role's `permissions`: scopes (`domain::scopes::all`), at least one;
/// - a flow token names exactly one subject of its flow, and no other
///   (`domain::flows::Flow::subjects`, checked by `ops::behaviour::flow_tokens`).
fn add_domain_rules(doc: &mut Json) {
    let event_types: Vec<&str> = crate::domain::events::EVENT_TYPES.iter().map(|e| e.name).collect();
    let scopes = crate::domain::scopes::all();
    if let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Json::as_object_mut) {
        schemas.insert(
            "EventType".into(),
            json!({ "type": "string", "enum": event_types, "description": "An event type (the `webhooks` section)." }),
        );
        schemas.insert("Scope".into(), json!({ "type": "string", "enum": scopes, "description": "A scope: `{collection}:read`, `{collection}:write`, `*:read` or `*`." }));
        // A journal line has exactly one side above zero (`domain::ledger`).
        schemas.insert(
            "ZeroAmount".into(),
            json!({ "anyOf": [{ "type": "number", "const": 0 }, { "type": "string", "pattern": "^0+(\\.0*)?$" }] }),
        );
        if let Some(line) = schemas.get_mut("LedgerLine").and_then(Json::as_object_mut) {
            let side = |positive: &str, zero: &str| json!({ "properties": { positive: { "$ref": "#/components/schemas/PositiveAmountInput" }, zero: { "$ref": "#/components/schemas/ZeroAmount" } } });
            line.insert("oneOf".into(), json!([side("debit", "credit"), side("credit", "debit")]));
        }
    }
    let events = json!({
        "description": "Event types, or `[\"*\"]` alone for all.",
        "anyOf": [
            { "type": "array", "items": { "$ref": "#/components/schemas/EventType" }, "minItems": 1, "maxItems": 50 },
            { "type": "array", "items": { "const": "*" }, "minItems": 1, "maxItems": 1 },
        ],
    });
    let permissions = json!({ "type": "array", "items": { "$ref": "#/components/schemas/Scope" }, "minItems": 1, "maxItems": 100 });
    let positive = json!({ "$ref": "#/components/schemas/PositiveAmountInput" });
    let nonzero: Vec<(String, &str, &Json)> = crate::ops::NONZERO_AMOUNT
        .iter()
        .filter_map(|name| crate::domain::collections::collection(name))
        .map(|c| (format!("{}Create", pascal(c.object)), "amount", &positive))
        .collect();
    for (schema, field, value) in nonzero.iter().map(|(s, f, v)| (s.as_str(), *f, *v)).chain([
        ("WebhookCreate", "events", &events),
        ("WebhookUpdate", "events", &events),
        ("RoleCreate", "permissions", &permissions),
        ("RoleUpdate", "permissions", &permissions),
    ]) {
        if let Some(p) = doc.pointer_mut(&format!("/components/schemas/{schema}/properties/{field}")) {
            let description = p.get("description").cloned();
            *p = value.clone();
            if let (Some(d), Some(o)) = (description, p.as_object_mut()) {
                o.insert("description".into(), d);
            }
        }
    }
    // Each flow: one subject of its own, given (not `null`), and none of the others.
    use crate::domain::flows::{Flow, SUBJECT_FIELDS};
    let rules: Vec<Json> = Flow::ALL
        .iter()
        .map(|flow| {
            let others: Map<String, Json> = SUBJECT_FIELDS
                .iter()
                .filter(|f| !flow.subjects().contains(f))
                .map(|f| (f.to_string(), json!({ "type": "null" })))
                .collect();
            let one_of: Vec<Json> =
                flow.subjects().iter().map(|s| json!({ "required": [s], "properties": { *s: { "not": { "type": "null" } } } })).collect();
            json!({
                "if": { "properties": { "flow": { "const": flow.name() } }, "required": ["flow"] },
                "then": { "properties": others, "oneOf": one_of },
            })
        })
        .collect();
    if let Some(o) = doc.pointer_mut("/components/schemas/FlowTokenCreate").and_then(Json::as_object_mut) {
        match o.get_mut("allOf").and_then(Json::as_array_mut) {
            Some(existing) => existing.extend(rules),
            None => {
                o.insert("allOf".into(), Json::Array(rules));
            }
        }
    }
}
