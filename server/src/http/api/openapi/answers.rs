//! The answer's shape in the description: sparse fieldsets (`fields[<collection>]`) and
//! expansions (`expand[]`), as `domain::answer` parses them. Every operation that answers
//! with records takes them:
//! - `fields[<collection>]`, an array of the collection's `<Object>Field`;
//! - `expand[]`, an array of the paths `<Object>Expand` lists (every path
//!   `domain::expand::paths` gives), at most `MAX_EXPANSIONS`;
//! - `fields`, one object whose properties are the fieldsets of the collections an
//!   expansion can bring (`fields[units]=number,bedrooms`), each a comma-separated list
//!   whose pattern allows exactly the collection's field names.
//!
//! The parameters name components, so that each operation's entry stays small (the
//! document is served on every client's first call).

use utoipa::openapi::path::{Parameter, ParameterBuilder, ParameterIn, ParameterStyle};
use utoipa::openapi::schema::AdditionalProperties;
use utoipa::openapi::{ArrayBuilder, ComponentsBuilder, ObjectBuilder, Required, Type};

use super::{pascal, schema_ref};
use crate::domain::collections::COLLECTIONS;
use crate::domain::expand::{paths, reachable, MAX_DEPTH, MAX_EXPANSIONS};
use crate::domain::registry::{Collection, SYSTEM_FIELDS};

/// The query parameters that shape an answer about `c`.
pub(super) fn parameters(c: &'static Collection) -> Vec<Parameter> {
    let mut out = vec![fields_parameter(c)];
    if !paths(c).is_empty() {
        out.push(form("expand[]", &expand_schema_name(c)));
    }
    if reachable(c).len() > 1 {
        out.push(form("fields", &related_fields_schema_name(c)));
    }
    out
}

fn form(name: &str, schema: &str) -> Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .schema(Some(schema_ref(schema)))
        .style(Some(ParameterStyle::Form))
        .explode(Some(true))
        .build()
}

/// `fields[<collection>]`: an array sent `form`/`explode`
/// (`fields[units]=id&fields[units]=number`), as generators send arrays by default; the
/// server takes the comma-joined form too.
pub(super) fn fields_parameter(c: &Collection) -> Parameter {
    form(&format!("fields[{}]", c.name), &fieldset_schema_name(c))
}

/// Names a sparse fieldset may select, as `domain::answer` accepts them.
pub(super) fn selectable(c: &Collection) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = SYSTEM_FIELDS.to_vec();
    names.extend(c.fields.iter().map(|f| f.name));
    if c.metadata {
        names.push("metadata");
    }
    names
}

/// The name of the enum of a collection's field names (sparse fieldsets).
pub(super) fn field_name_schema_name(c: &Collection) -> String {
    format!("{}Field", pascal(c.object))
}

fn fieldset_schema_name(c: &Collection) -> String {
    format!("{}Fieldset", pascal(c.object))
}

fn expand_schema_name(c: &Collection) -> String {
    format!("{}Expand", pascal(c.object))
}

fn related_fields_schema_name(c: &Collection) -> String {
    format!("{}RelatedFields", pascal(c.object))
}

fn field_list_schema_name(c: &Collection) -> String {
    format!("{}FieldList", pascal(c.object))
}

/// `<Object>Field` and `<Object>Fieldset` for every collection; for each that has references, `<Object>Expand`
/// and `<Object>RelatedFields`; and `<Object>FieldList` for every collection an expansion
/// can bring.
pub(super) fn register(mut b: ComponentsBuilder) -> ComponentsBuilder {
    let mut brought = std::collections::BTreeSet::new();
    for c in COLLECTIONS {
        b = b.schema(
            field_name_schema_name(c),
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some(format!("A field of {} (sparse fieldsets).", c.name)))
                .enum_values(Some(selectable(c))),
        );
        b = b.schema(
            fieldset_schema_name(c),
            ArrayBuilder::new()
                .description(Some("Only these fields (`id` and `object` always come); repeated or comma-separated."))
                .items(schema_ref(&field_name_schema_name(c)))
                .min_items(Some(1)),
        );
        let expandable = paths(c);
        if expandable.is_empty() {
            continue;
        }
        b = b.schema(
            expand_schema_name(c),
            ArrayBuilder::new()
                .description(Some(format!(
                    "References to answer with their records instead of their ids: a reference's name without `_id` \
                     (`unit_id` → `unit`), dotted to go further (`unit.property`, at most {MAX_DEPTH} levels). Each path \
                     needs the read scope of the collection it brings (`403` naming it otherwise); a record outside the \
                     credential's reach stays an id. Repeated, at most {MAX_EXPANSIONS}."
                )))
                .items(ObjectBuilder::new().schema_type(Type::String).enum_values(Some(expandable)))
                .min_items(Some(1))
                .max_items(Some(MAX_EXPANSIONS)),
        );
        let others: Vec<&Collection> = reachable(c).into_iter().filter(|t| t.name != c.name).collect();
        if others.is_empty() {
            continue;
        }
        let mut related = ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some(
                "Sparse fieldsets of the collections expansions bring, one query parameter per property: they apply to \
                 that collection's records wherever they appear.",
            ))
            .additional_properties(Some(AdditionalProperties::FreeForm(false)));
        for t in others {
            related = related.property(format!("fields[{}]", t.name), schema_ref(&field_list_schema_name(t)));
            brought.insert(t.name);
        }
        b = b.schema(related_fields_schema_name(c), related);
    }
    for c in COLLECTIONS.iter().filter(|c| brought.contains(c.name)) {
        let one = format!("(?:{})", selectable(c).join("|"));
        b = b.schema(
            field_list_schema_name(c),
            ObjectBuilder::new()
                .schema_type(Type::String)
                .description(Some(format!("Fields of {}, comma-separated (`{}Field`).", c.name, pascal(c.object))))
                .pattern(Some(format!("^{one}(?:,{one})*$"))),
        );
    }
    b
}

#[cfg(test)]
mod tests {
    use serde_json::Value as Json;

    use super::super::tests::{doc, resolve};
    use crate::domain::answer::Answer;
    use crate::domain::collections::collection;

    /// Every operation that answers with records takes the answer's parameters, and every
    /// documented value of them is one the server takes.
    #[test]
    fn every_documented_expansion_and_fieldset_is_accepted() {
        let d = doc();
        let mut seen = 0;
        for (path, item) in d["paths"].as_object().unwrap() {
            let Some(name) = path.strip_prefix("/v1/").and_then(|p| p.split('/').next()) else { continue };
            let Some(c) = collection(name) else { continue };
            for (method, op) in item.as_object().unwrap().iter().filter(|(_, op)| op.get("responses").is_some()) {
                let params: Vec<Json> = op["parameters"].as_array().into_iter().flatten().map(|p| resolve(&d, p).clone()).collect();
                let named = |n: &str| params.iter().find(|p| p["name"] == n).cloned();
                if method == "delete"
                    || path.ends_with("/replay")
                    || path.ends_with("/rotate_secret")
                    || path.ends_with("/test")
                    || path.ends_with("/recover")
                    // Server-sent events: no record answered, no fieldset to shape.
                    || path == super::super::event_stream::PATH
                    || path == super::super::request_log_stream::PATH
                    // An upload answers its import whole, and its error report is not of
                    // records: neither takes a query but its own.
                    || (method == "post" && crate::domain::import::is_uploaded(c))
                    || path == super::super::imports::ERRORS_PATH
                {
                    continue;
                }
                assert!(named(&format!("fields[{}]", c.name)).is_some(), "{method} {path}: fields[{}]", c.name);
                let Some(expand) = named("expand[]") else {
                    assert!(crate::domain::expand::paths(c).is_empty(), "{method} {path} takes no expand[]");
                    continue;
                };
                seen += 1;
                let schema = resolve(&d, &expand["schema"]);
                let all: Vec<String> =
                    schema["items"]["enum"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect();
                for chunk in all.chunks(10) {
                    let pairs: Vec<(String, String)> = chunk.iter().map(|p| ("expand[]".to_string(), p.clone())).collect();
                    Answer::parse(c, &pairs).unwrap_or_else(|e| panic!("{method} {path}: {chunk:?}: {e}"));
                }
                let Some(fields) = named("fields") else {
                    assert_eq!(crate::domain::expand::reachable(c).len(), 1, "{method} {path}: fields");
                    continue;
                };
                let related = resolve(&d, &fields["schema"]);
                for (key, list) in related["properties"].as_object().unwrap() {
                    let list = resolve(&d, list);
                    let pattern = regex::Regex::new(list["pattern"].as_str().unwrap_or_else(|| panic!("{key}: {list}"))).unwrap();
                    let t = collection(key.trim_start_matches("fields[").trim_end_matches(']')).unwrap();
                    let every = super::selectable(t).join(",");
                    assert!(pattern.is_match(&every) && !pattern.is_match("nope") && !pattern.is_match("id,"), "{key}");
                    Answer::parse(c, &[(key.clone(), every.clone())]).unwrap_or_else(|e| panic!("{method} {path}: {key}: {e}"));
                }
            }
        }
        assert!(seen > 100, "expansions are described on the operations that answer with records ({seen})");
    }
}
