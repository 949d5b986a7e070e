//! `paths`: every operation the `/v1` router serves, with its parameters, request body,
//! success response and credentials. Which error statuses each one documents is decided in
//! `errors`; the schemas named here are in `schemas`.

use serde_json::json;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::{
    HttpMethod, Operation, OperationBuilder, Parameter, ParameterBuilder, ParameterIn, ParameterStyle, PathItemBuilder,
};
use utoipa::openapi::request_body::{RequestBody, RequestBodyBuilder};
use utoipa::openapi::schema::{AdditionalProperties, Object};
use utoipa::openapi::{
    ArrayBuilder, ComponentsBuilder, KnownFormat, ObjectBuilder, PathItem, Paths, PathsBuilder, RefOr, Required, ResponseBuilder, Schema,
    SchemaFormat, Type,
};

use super::commands;
use super::errors::{self, with_errors};
use super::schemas::{field_schema, secret_on_create, ty_schema, uuid, Side};
use utoipa::openapi::security::SecurityRequirement;

use super::{a_record, offers, pascal, schema_ref, with_standard_headers};
use crate::domain::collections::COLLECTIONS;
use crate::domain::list::{DEFAULT_LIMIT, MAX_LIMIT};
use crate::domain::registry::{Collection, Field, Ty, WriteOp, CREATED_AT, ID, SYSTEM_FIELDS, UPDATED_AT};
use crate::domain::workflow::{self, Action, Input};
use crate::http::version;

pub(super) fn paths() -> Paths {
    let mut paths = PathsBuilder::new().path("/v1/openapi.json", describe_itself());
    for c in COLLECTIONS {
        let (collection_item, record_item) = collection_paths(c);
        paths = paths.path(format!("/v1/{}", c.name), collection_item).path(format!("/v1/{}/{{id}}", c.name), record_item);
        if let Some(machine) = workflow::machine(c.name) {
            for a in machine.actions {
                paths = paths.path(format!("/v1/{}/{{id}}/{}", c.name, a.name), action_path(c, a));
            }
        }
    }
    for cmd in commands::commands() {
        paths = paths.path(cmd.path(), commands::path_item(&cmd));
    }
    for (path, item) in super::sandbox::paths() {
        paths = paths.path(path, item);
    }
    paths.build()
}

/// The operation serving this document.
fn describe_itself() -> PathItem {
    let op =
        OperationBuilder::new()
            .tag("meta")
            .operation_id(Some("get_openapi_description"))
            .summary(Some("Retrieve this API description"))
            .description(Some("The OpenAPI 3.1 description of this listener's API. Needs no credentials."))
            .parameter(version_parameter())
            // An empty list: no credentials needed.
            .securities(Some(Vec::<SecurityRequirement>::new()))
            .response(
                "200",
                with_standard_headers(ResponseBuilder::new().description("The OpenAPI 3.1 document.").content(
                    "application/json",
                    ContentBuilder::new().schema(Some(ObjectBuilder::new().schema_type(Type::Object))).build(),
                ))
                .build(),
            );
    PathItemBuilder::new().operation(HttpMethod::Get, with_errors(op, &errors::describe_itself()).build()).build()
}

/// `/v1/{name}` (list, create) and `/v1/{name}/{id}` (get, update, delete): only the
/// operations the collection offers.
fn collection_paths(c: &'static Collection) -> (PathItem, PathItem) {
    let mut collection = PathItemBuilder::new()
        .summary(Some(c.name))
        .description(Some(path_description(c, &[WriteOp::Create])))
        .operation(HttpMethod::Get, list_operation(c));
    if offers(c, WriteOp::Create) {
        collection = collection.operation(HttpMethod::Post, create_operation(c));
    }
    let mut record = PathItemBuilder::new()
        .summary(Some(format!("One {}", c.object.replace('_', " "))))
        .description(Some(path_description(c, &[WriteOp::Update, WriteOp::Delete])))
        .parameters(Some([id_parameter(c)]))
        .operation(HttpMethod::Get, get_operation(c));
    if offers(c, WriteOp::Update) {
        record = record.operation(HttpMethod::Patch, update_operation(c));
    }
    if offers(c, WriteOp::Delete) {
        record = record.operation(HttpMethod::Delete, delete_operation(c));
    }
    (collection.build(), record.build())
}

/// The HTTP method of a write operation, for descriptions.
fn method_of(w: WriteOp) -> &'static str {
    match w {
        WriteOp::Create => "POST",
        WriteOp::Update => "PATCH",
        WriteOp::Delete => "DELETE",
    }
}

/// The collection's doc, plus why the writes it lacks are refused (and with which status),
/// so a reader knows what `POST`/`PATCH`/`DELETE` would answer.
fn path_description(c: &Collection, writes: &[WriteOp]) -> String {
    let mut text = c.doc.to_string();
    for &w in writes {
        if let Some(e) = c.refuse(w) {
            let (status, code) = e.status_and_code();
            text.push_str(&format!("\n\n`{}` is refused with `{} {code}`: {e}.", method_of(w), status.as_u16()));
        }
    }
    text
}

/// What every operation on a collection shares: tag, id, summary, credentials, version
/// header, and the shared responses of the error statuses it can answer with.
pub(super) fn operation(c: &Collection, id: String, summary: String, errors: &[u16], scope: &str) -> OperationBuilder {
    let op = OperationBuilder::new()
        .tag(c.name)
        .operation_id(Some(id))
        .summary(Some(summary))
        .securities(Some(super::securities(Some(scope))))
        .parameter(version_parameter());
    with_errors(op, errors)
}

fn snake_name(c: &Collection) -> String {
    c.name.replace('-', "_")
}

fn list_operation(c: &'static Collection) -> Operation {
    operation(c, format!("list_{}", snake_name(c)), format!("List {}", c.name.replace('-', " ")), &errors::list(c), &c.read_scope())
        .description(Some(format!(
            "A page of {}, newest first unless `sort` says otherwise. While `meta.has_more` is true, \
             ask again with `cursor` set to `meta.next_cursor` (and the same `sort` and filters). \
             Needs the scope `{}`.",
            c.name,
            c.read_scope()
        )))
        .parameters(Some(list_parameters(c)))
        .response("200", success(&format!("A page of {}.", c.name), &format!("{}List", pascal(c.object))))
        .build()
}

fn get_operation(c: &'static Collection) -> Operation {
    operation(c, format!("get_{}", c.object), format!("Retrieve {}", a_record(c)), &errors::get(c), &c.read_scope())
        .description(Some(format!("Needs the scope `{}`. A record of another tenant or environment is `404`.", c.read_scope())))
        .parameter(fields_parameter(c))
        .response("200", success(&format!("The {}.", c.object.replace('_', " ")), &format!("{}Envelope", pascal(c.object))))
        .build()
}

fn create_operation(c: &'static Collection) -> Operation {
    let name = pascal(c.object);
    let returned = if secret_on_create(c).is_some() { format!("{name}CreatedEnvelope") } else { format!("{name}Envelope") };
    let mut description = format!("Needs the scope `{}`.", c.write_scope());
    if errors::create_finds_records(c) {
        description.push_str(" Referenced records must exist in the same tenant and environment (`404` naming the field otherwise).");
    }
    operation(c, format!("create_{}", c.object), format!("Create {}", a_record(c)), &errors::create(c), &c.write_scope())
        .description(Some(description))
        .parameter(idempotency_parameter(c.name == "payments"))
        .request_body(Some(json_body(&format!("{name}Create"))))
        .response("201", success(&format!("The created {}.", c.object.replace('_', " ")), &returned))
        .build()
}

fn update_operation(c: &'static Collection) -> Operation {
    let name = pascal(c.object);
    operation(c, format!("update_{}", c.object), format!("Update {}", a_record(c)), &errors::update(c), &c.write_scope())
        .description(Some(format!(
            "Changes only the fields given; `null` removes an optional value. Needs the scope `{}`.",
            c.write_scope()
        )))
        .request_body(Some(json_body(&format!("{name}Update"))))
        .response("200", success(&format!("The updated {}.", c.object.replace('_', " ")), &format!("{name}Envelope")))
        .build()
}

fn delete_operation(c: &'static Collection) -> Operation {
    let mut description = format!("Needs the scope `{}`.", c.write_scope());
    if errors::delete_can_conflict(c) {
        description.push_str(" A record still referenced by others is `409 conflict`.");
    }
    operation(c, format!("delete_{}", c.object), format!("Delete {}", a_record(c)), &errors::delete(c), &c.write_scope())
        .description(Some(description))
        .response("200", success(&format!("The {} was deleted.", c.object.replace('_', " ")), "DeletedEnvelope"))
        .build()
}

/// `POST /v1/{name}/{id}/{action}`: a state-machine action, from the workflow declaration.
fn action_path(c: &'static Collection, a: &'static Action) -> PathItem {
    let from = a.from.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ");
    let mut description = format!(
        "Moves {} from {from} to `{}`. From any other state it is `409 invalid_state_transition`, \
         with the current state and the allowed actions in `details`. Needs the scope `{}`.",
        a_record(c),
        a.to,
        c.write_scope()
    );
    if let Some(stamp) = a.stamp {
        description.push_str(&format!(" Sets `{stamp}` to the time of the action."));
    }
    let mut op = operation(
        c,
        format!("{}_{}", a.name, c.object),
        format!("{} {}", a.name.replace('_', " "), a_record(c)),
        &errors::action(c),
        &c.write_scope(),
    )
    .description(Some(description))
    .parameter(idempotency_parameter(false))
    .response("200", success(&format!("The {} after the action.", c.object.replace('_', " ")), &format!("{}Envelope", pascal(c.object))));
    // The body is optional and carries only the action's parameters.
    let mut body = ObjectBuilder::new().schema_type(Type::Object).additional_properties(Some(AdditionalProperties::FreeForm(false)));
    let mut required = Required::False;
    for (p, needed) in a.input.fields() {
        if let Some(f) = c.field(p) {
            body = body.property(p, field_schema(f, Side::Request));
            if needed {
                body = body.required(p);
                required = Required::True;
            }
        }
    }
    if let Input::NewRecord(target) = a.input {
        body = convert_body(target);
        required = Required::True;
    }
    op = op.request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(required))
            .content("application/json", ContentBuilder::new().schema(Some(body)).build())
            .build(),
    ));
    PathItemBuilder::new().parameters(Some([id_parameter(c)])).operation(HttpMethod::Post, op.build()).build()
}

/// The body of an action that makes a record of another collection (an application's
/// `convert` makes a lease): that collection's create fields, less those Gable sets
/// from the record acted on; only `start_date` is required, the rest default from it.
fn convert_body(target: &str) -> ObjectBuilder {
    let c = crate::domain::collections::collection(target).expect("actions make records of real collections");
    let mut body = ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        .description(Some("The draft lease to make. `rent`, `deposit` and `currency` default to the listing's."));
    for f in crate::domain::validate::create_fields(c).filter(|f| !crate::ops::SET_BY_CONVERT.contains(&f.name)) {
        body = body.property(f.name, field_schema(f, Side::Request));
    }
    body.required("start_date")
}

fn json_body(schema: &str) -> RequestBody {
    RequestBodyBuilder::new()
        .required(Some(Required::True))
        .content("application/json", ContentBuilder::new().schema(Some(schema_ref(schema))).build())
        .build()
}

pub(super) fn success(description: &str, schema: &str) -> RefOr<utoipa::openapi::Response> {
    with_standard_headers(
        ResponseBuilder::new()
            .description(description)
            .content("application/json", ContentBuilder::new().schema(Some(schema_ref(schema))).build()),
    )
    .build()
    .into()
}

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

pub(super) fn version_parameter() -> Parameter {
    ParameterBuilder::new()
        .name("Gable-Version")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(format!(
            "Pins a dated API version; without it the current one (`{}`) serves. An unknown version is \
             `400 unsupported_version`.",
            version::CURRENT
        )))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
                .enum_values(Some(version::SUPPORTED.iter().copied())),
        ))
        .build()
}

/// `Idempotency-Key` on every `POST` (`http::idempotency`): required on `POST /v1/payments`.
pub(super) fn idempotency_parameter(required: bool) -> Parameter {
    ParameterBuilder::new()
        .name("Idempotency-Key")
        .parameter_in(ParameterIn::Header)
        .required(if required { Required::True } else { Required::False })
        .description(Some(
            "Makes a retry safe (IETF Idempotency-Key draft): the same key with the same request replays the first answer \
             with `Idempotent-Replayed: true`; while the first request runs it is `409 idempotency_key_in_use`; with another \
             method, path or body `422 idempotency_key_reused`. 8 to 200 visible ASCII characters (a UUID is a good key), \
             kept 24 hours per credential. Required on `POST /v1/payments` (`400 missing_idempotency_key`).",
        ))
        .schema(Some(ObjectBuilder::new().schema_type(Type::String).min_length(Some(8)).max_length(Some(200))))
        .build()
}

pub(super) fn id_parameter(c: &Collection) -> Parameter {
    ParameterBuilder::new()
        .name("id")
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .description(Some(format!("The id of the {}.", c.object.replace('_', " "))))
        .schema(Some(uuid()))
        .build()
}

fn query(name: impl Into<String>, description: impl Into<String>, schema: impl Into<RefOr<Schema>>) -> ParameterBuilder {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description.into()))
        .schema(Some(schema))
}

/// The fields lists may filter and sort on: the system fields first, as `domain::list::lookup`
/// resolves them, then the collection's own.
fn list_fields(c: &'static Collection) -> impl Iterator<Item = &'static Field> {
    [&ID, &CREATED_AT, &UPDATED_AT].into_iter().chain(c.fields.iter())
}

/// Every list query parameter: paging, sort, sparse fieldset, and the filters (one object).
fn list_parameters(c: &'static Collection) -> Vec<Parameter> {
    vec![
        query(
            "limit",
            format!("Page size, 1 to {MAX_LIMIT}. Out of range is `400`, never clamped."),
            ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(1)).maximum(Some(MAX_LIMIT)).default(Some(json!(DEFAULT_LIMIT))),
        )
        .build(),
        query(
            "cursor",
            "`meta.next_cursor` of the previous page. Bound to the list's sort and filters; a cursor that \
             does not fit is `400 invalid_cursor`.",
            ObjectBuilder::new().schema_type(Type::String).min_length(Some(1)),
        )
        .build(),
        sort_parameter(c),
        fields_parameter(c),
        filter_parameter(c),
    ]
}

fn sort_parameter(c: &'static Collection) -> Parameter {
    let keys: Vec<String> = list_fields(c).filter(|f| f.sortable).map(|f| format!("`{}`", f.name)).collect();
    query(
        "sort",
        format!(
            "Comma-separated sort keys (at most 4), each optionally prefixed with `-` for descending, e.g. \
             `-created_at`. Default `-created_at`; `id` is appended to break ties. Sortable: {}.",
            keys.join(", ")
        ),
        ObjectBuilder::new().schema_type(Type::String).pattern(Some(r"^-?[a-z_]+(,-?[a-z_]+){0,3}$")),
    )
    .build()
}

/// Names a sparse fieldset may select, as `domain::list` accepts them.
fn selectable(c: &Collection) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = SYSTEM_FIELDS.to_vec();
    names.extend(c.fields.iter().map(|f| f.name));
    if c.metadata {
        names.push("metadata");
    }
    names
}

/// An array sent `form`/`explode` (`fields[units]=id&fields[units]=number`), as generators
/// send arrays by default; the server takes the comma-joined form too.
fn fields_parameter(c: &Collection) -> Parameter {
    query(
        format!("fields[{}]", c.name),
        "Sparse fieldset: only these fields are returned (`id` and `object` always are). Repeat the parameter \
         or separate the names with commas.",
        ArrayBuilder::new().items(ObjectBuilder::new().schema_type(Type::String).enum_values(Some(selectable(c)))).min_items(Some(1)),
    )
    .style(Some(ParameterStyle::Form))
    .explode(Some(true))
    .build()
}

/// The name of a collection's filter schema in `components.schemas`.
fn filter_schema_name(c: &Collection) -> String {
    format!("{}Filter", pascal(c.object))
}

/// All of a list's filters as one parameter: an object whose property names are the query
/// keys themselves (`filter[status]`, `filter[rent][gte]`). `form` style with `explode` sends
/// each property as its own `key=value` pair, so a generator that follows the specification
/// produces exactly the wire form, and a generated list function takes one `filter` argument
/// instead of one per field and operator (leases had 76). A `deepObject` would need nested
/// objects for the operators, which neither the specification nor common generators define.
fn filter_parameter(c: &Collection) -> Parameter {
    query(
        "filter",
        "The filters, each property its own query parameter: `filter[<field>]=<value>` (equality) and \
         `filter[<field>][<op>]=<value>` (`ne`, `gt`, `gte`, `lt`, `lte`, `in`, `nin`, `exists`). All given must \
         hold. `in`/`nin` take a comma-separated list or the key repeated. An unknown field or operator is `400` \
         naming it.",
        schema_ref(&filter_schema_name(c)),
    )
    .style(Some(ParameterStyle::Form))
    .explode(Some(true))
    .build()
}

/// `components.schemas.<Object>Filter` for every collection.
pub(super) fn register_filters(mut b: ComponentsBuilder) -> ComponentsBuilder {
    for c in COLLECTIONS {
        b = b.schema(filter_schema_name(c), filter_schema(c));
    }
    b
}

/// The object behind `filter`: one property per field that can be filtered on and per
/// operator it takes, named as the query key.
fn filter_schema(c: &'static Collection) -> Schema {
    let mut o = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(format!("Filters on {}: each property is one query parameter, named as sent.", c.name)))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    for f in list_fields(c).filter(|f| f.filterable) {
        for (key, schema) in filter_properties(f) {
            o = o.property(key, schema);
        }
    }
    o.build().into()
}

/// The operators a field's filter takes besides equality, mirroring `ListQuery::parse`:
/// ordered comparisons only for types with an order (and `id`), `exists` only where the
/// field can be missing (the parser takes it everywhere, but it means nothing elsewhere).
fn filter_ops(f: &Field) -> Vec<&'static str> {
    let mut ops = vec!["ne", "in", "nin"];
    let unordered = matches!(f.ty, Ty::Enum(_) | Ty::Bool | Ty::Ref(_) | Ty::Uuid | Ty::Email | Ty::Currency);
    if !unordered || f.name == "id" {
        ops.extend(["gt", "gte", "lt", "lte"]);
    }
    if can_be_missing(f) {
        ops.push("exists");
    }
    ops
}

/// Whether a record may lack a value for the field (system fields never do).
fn can_be_missing(f: &Field) -> bool {
    f.nullable() && !SYSTEM_FIELDS.contains(&f.name)
}

/// `filter[f]` (equality) and one `filter[f][op]` per operator the field takes, with the
/// schema of each.
fn filter_properties(f: &Field) -> Vec<(String, RefOr<Schema>)> {
    let Some(value) = filter_value_schema(f) else { return vec![] };
    let money_note = if f.ty == Ty::Money { " Needs `filter[currency]` too: amounts are compared in that currency." } else { "" };
    let described = |mut schema: Object, what: String| -> RefOr<Schema> {
        schema.description = Some(format!("Only records whose `{}` {what}.{money_note}", f.name));
        schema.into()
    };
    let base = format!("filter[{}]", f.name);
    let mut props = vec![(base.clone(), described(value.clone(), "equals this".into()))];
    for op in filter_ops(f) {
        let schema = match op {
            // A comma-separated string rather than an array: an array inside the `filter`
            // object is a nested structure that openapi-fetch refuses to serialise.
            "in" | "nin" => {
                let what = if op == "in" { "is one of these" } else { "is none of these" };
                let mut list = ObjectBuilder::new().schema_type(Type::String).min_length(Some(1));
                if let Ty::Enum(values) = f.ty {
                    let one = values.join("|");
                    list = list.pattern(Some(format!("^({one})(,({one}))*$")));
                }
                described(list.build(), format!("{what} (comma-separated, up to 100)"))
            }
            "exists" => described(ObjectBuilder::new().schema_type(Type::Boolean).build(), "is set (`true`) or is not (`false`)".into()),
            _ => {
                let what = match op {
                    "ne" => "does not equal this",
                    "gt" => "is greater than this",
                    "gte" => "is greater than or equal to this",
                    "lt" => "is less than this",
                    _ => "is less than or equal to this",
                };
                described(value.clone(), what.into())
            }
        };
        props.push((format!("{base}[{op}]"), schema));
    }
    props
}

/// The schema of one filter value (always an inline schema: the types whose schema is a
/// reference or an array cannot be filtered on), or `None` for those types.
fn filter_value_schema(f: &Field) -> Option<Object> {
    match f.ty {
        // Query values are text: a decimal amount in the major unit.
        Ty::Money => Some(ObjectBuilder::new().schema_type(Type::String).pattern(Some(r"^[0-9]+(\.[0-9]+)?$")).build()),
        Ty::StrList { .. } | Ty::RefList(_) | Ty::Json(_) | Ty::Metadata => None,
        ty => match ty_schema(ty, Side::Request) {
            RefOr::T(Schema::Object(o)) => Some(o),
            _ => None,
        },
    }
}

#[cfg(test)]
mod tests {
    //! Every documented list parameter must be accepted by the parser the handlers use.

    use serde_json::{json, Value as Json};

    use super::super::tests::{doc, resolve};
    use crate::domain::collections::COLLECTIONS;
    use crate::domain::list::ListQuery;

    /// A query value the parameter's schema allows.
    fn query_sample(s: &Json) -> String {
        if let Some(items) = s.get("items") {
            return query_sample(items);
        }
        if let Some(first) = s.get("enum").and_then(|e| e.get(0)) {
            return first.as_str().map(str::to_string).unwrap_or_else(|| first.to_string());
        }
        match (s["type"].as_str(), s["format"].as_str()) {
            (_, Some("uuid")) => "0192f5e0-7c1a-7cc3-9d2b-6a1f3e4d5c6b".into(),
            (_, Some("date")) => "2026-01-31".into(),
            (_, Some("date-time")) => "2026-01-31T10:00:00Z".into(),
            (Some("integer"), _) => s.get("minimum").map(|m| m.to_string()).unwrap_or("1".into()),
            (Some("number"), _) => "1.5".into(),
            (Some("boolean"), _) => "true".into(),
            _ if s["pattern"] == "^[A-Z]{3}$" => "USD".into(),
            _ if s["pattern"].as_str().is_some_and(|p| p.starts_with("^[0-9]+")) => "12.50".into(),
            _ => "text".into(),
        }
    }

    /// The query pairs a documented list parameter stands for: itself, or for `filter`,
    /// one pair per property of its object schema.
    fn documented_pairs(d: &Json, p: &Json) -> Vec<(String, Json)> {
        let name = p["name"].as_str().unwrap().to_string();
        if name != "filter" {
            return vec![(name, p.clone())];
        }
        assert_eq!((p["style"].as_str(), p["explode"].as_bool()), (Some("form"), Some(true)), "filter is form/explode");
        let schema = resolve(d, &p["schema"]);
        assert_eq!(schema["additionalProperties"], false, "unknown filters are refused, so the schema says so");
        let props = schema["properties"].as_object().unwrap();
        props
            .iter()
            .map(|(k, s)| {
                // A comma-separated list is sampled by one value of the field's equality filter.
                let sample = match k.strip_suffix("[in]").or_else(|| k.strip_suffix("[nin]")) {
                    Some(base) => &props[base],
                    None => s,
                };
                (k.clone(), json!({ "schema": sample, "description": s["description"] }))
            })
            .collect()
    }

    #[test]
    fn every_documented_list_parameter_is_accepted() {
        let d = doc();
        for c in COLLECTIONS {
            let params = d["paths"][format!("/v1/{}", c.name)]["get"]["parameters"].as_array().unwrap();
            let pairs: Vec<(String, Json)> =
                params.iter().map(|p| resolve(&d, p)).filter(|p| p["in"] == "query").flat_map(|p| documented_pairs(&d, p)).collect();
            assert!(pairs.iter().any(|(k, _)| k == "filter[id]"), "{}: every list filters on id", c.name);
            for (name, p) in pairs {
                let values: Vec<String> = if name == "sort" {
                    // Every key the description calls sortable, ascending and descending.
                    let listed = p["description"].as_str().unwrap().split("Sortable:").nth(1).unwrap();
                    listed.split('`').skip(1).step_by(2).flat_map(|k| [k.to_string(), format!("-{k}")]).collect()
                } else {
                    vec![query_sample(resolve(&d, &p["schema"]))]
                };
                for value in values {
                    let mut pairs = vec![(name.clone(), value.clone())];
                    if p["description"].as_str().is_some_and(|t| t.contains("Needs `filter[currency]`")) {
                        pairs.push(("filter[currency]".into(), "USD".into()));
                    }
                    if let Err(e) = ListQuery::parse(c, &pairs) {
                        panic!("{} refuses documented {name}={value}: {e}", c.name);
                    }
                }
            }
        }
    }
}
