//! `paths`: every operation the `/v1` router serves, with its parameters, request body,
//! success response and credentials. Which error statuses each one documents is decided in
//! `errors`; the schemas named here are in `schemas`.

use serde_json::json;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{
    HttpMethod, Operation, OperationBuilder, Parameter, ParameterBuilder, ParameterIn, ParameterStyle, PathItemBuilder,
};
use utoipa::openapi::request_body::{RequestBody, RequestBodyBuilder};
use utoipa::openapi::schema::AdditionalProperties;
use utoipa::openapi::{
    ArrayBuilder, ComponentsBuilder, ObjectBuilder, PathItem, Paths, PathsBuilder, RefOr, Required, ResponseBuilder, Schema, Type,
};

use super::answers;
use super::commands;
use super::errors::{self, with_errors};
use super::parts::{
    filter_parameter, filter_schema_name, id_parameter, idempotency_parameter, operation, query, success, version_parameter,
};
use super::schemas::{enum_schema_name, field_schema, field_schema_as, secret_on_create, ty_schema, unique_schema_name, Side, NO_NUL};
use utoipa::openapi::security::SecurityRequirement;

use super::{a_record, offers, pascal, schema_ref, with_standard_headers};
use crate::domain::collections::COLLECTIONS;
use crate::domain::import::is_uploaded;
use crate::domain::list::{self, DEFAULT_LIMIT, MAX_LIMIT, MAX_SORT_KEYS};
use crate::domain::registry::{Collection, Field, Ty, WriteOp, CREATED_AT, ID, SYSTEM_FIELDS, UPDATED_AT};
use crate::domain::workflow::{self, Action, Input};

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
    paths = paths.path(super::event_stream::PATH, super::event_stream::path_item());
    if let Some(imports) = COLLECTIONS.iter().find(|c| is_uploaded(c)) {
        paths = paths.path(super::imports::ERRORS_PATH, super::imports::errors_path_item(imports));
    }
    if let Some(calls) = COLLECTIONS.iter().find(|c| c.name == "request-logs") {
        paths = paths.path(super::request_log_stream::PATH, super::request_log_stream::path_item(calls));
    }
    paths.build()
}

/// The operation serving this document: gzipped when asked (`Accept-Encoding`, HTTP's own
/// negotiation, so not a parameter) and revalidated by entity tag (`http::asset`).
fn describe_itself() -> PathItem {
    let etag = || {
        HeaderBuilder::new()
            .schema(ObjectBuilder::new().schema_type(Type::String))
            .description(Some("This version of the document; send it back in `If-None-Match` to revalidate."))
            .build()
    };
    let op = OperationBuilder::new()
        .tag("meta")
        .operation_id(Some("get_openapi_description"))
        .summary(Some("Retrieve this API description"))
        .description(Some(
            "The OpenAPI 3.1 description of this listener's API. Needs no credentials. Gzipped when the \
                 request accepts it; `If-None-Match` with the `ETag` of a copy held answers `304` while it is current.",
        ))
        .parameter(version_parameter())
        .parameter(
            ParameterBuilder::new()
                .name("If-None-Match")
                .parameter_in(ParameterIn::Header)
                .required(Required::False)
                .description(Some("The `ETag` of a copy held (or `*`): `304` without a body while it is current."))
                .schema(Some(ObjectBuilder::new().schema_type(Type::String))),
        )
        // An empty list: no credentials needed.
        .securities(Some(Vec::<SecurityRequirement>::new()))
        .response(
            "200",
            with_standard_headers(
                ResponseBuilder::new().description("The OpenAPI 3.1 document.").header("ETag", etag()).content(
                    "application/json",
                    ContentBuilder::new().schema(Some(ObjectBuilder::new().schema_type(Type::Object))).build(),
                ),
            )
            .build(),
        )
        .response(
            "304",
            with_standard_headers(ResponseBuilder::new().description("The copy held is current; no body.").header("ETag", etag())).build(),
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
    if is_uploaded(c) {
        collection = collection.operation(HttpMethod::Post, super::imports::upload_operation(c));
    } else if offers(c, WriteOp::Create) {
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
        .parameters(Some(answers::parameters(c)))
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
    if errors::create_can_conflict(c) {
        description.push_str(" One that conflicts with an existing record is `409 conflict`.");
    }
    operation(c, format!("create_{}", c.object), format!("Create {}", a_record(c)), &errors::create(c), &c.write_scope())
        .description(Some(description))
        .parameter(idempotency_parameter(c.name == "payments"))
        .parameters(Some(answers::parameters(c)))
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
        .parameters(Some(answers::parameters(c)))
        .request_body(Some(json_body(&format!("{name}Update"))))
        .response("200", success(&format!("The {}.", c.object.replace('_', " ")), &format!("{name}Envelope")))
        .build()
}

fn delete_operation(c: &'static Collection) -> Operation {
    let mut description = format!("Needs the scope `{}`.", c.write_scope());
    if errors::delete_can_conflict(c) {
        description.push_str(" A record still referenced by others is `409 conflict`.");
    }
    operation(c, format!("delete_{}", c.object), format!("Delete {}", a_record(c)), &errors::delete(c), &c.write_scope())
        .description(Some(description))
        .response("200", success("The record was deleted.", "DeletedEnvelope"))
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
    .parameters(Some(answers::parameters(c)))
    .response("200", success(&format!("The {}.", c.object.replace('_', " ")), &format!("{}Envelope", pascal(c.object))));
    // The body is optional and carries only the action's parameters.
    let mut body = ObjectBuilder::new().schema_type(Type::Object).additional_properties(Some(AdditionalProperties::FreeForm(false)));
    let mut required = Required::False;
    for (p, needed) in a.input.fields() {
        if let Some(f) = c.field(p) {
            body = body.property(p, field_schema_as(c, f, Side::Request, f.nullable() && !needed));
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
        body = body.property(f.name, field_schema(c, f, Side::Request));
    }
    body.required("start_date")
}

fn json_body(schema: &str) -> RequestBody {
    RequestBodyBuilder::new()
        .required(Some(Required::True))
        .content("application/json", ContentBuilder::new().schema(Some(schema_ref(schema))).build())
        .build()
}

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

/// The fields lists may filter and sort on: the system fields first, as `domain::list::lookup`
/// resolves them, then the collection's own.
fn list_fields(c: &'static Collection) -> impl Iterator<Item = &'static Field> {
    [&ID, &CREATED_AT, &UPDATED_AT].into_iter().chain(c.fields.iter())
}

/// Every list query parameter: paging, sort, the filters (one object), and the answer's
/// fieldsets and expansions.
fn list_parameters(c: &'static Collection) -> Vec<Parameter> {
    let mut params = vec![
        query(
            "limit",
            format!("Page size, 1 to {MAX_LIMIT}. Out of range is `400`, never clamped."),
            ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(1)).maximum(Some(MAX_LIMIT)).default(Some(json!(DEFAULT_LIMIT))),
        )
        .build(),
        query(
            "cursor",
            "`meta.next_cursor` of the previous page, as it was given: an opaque token signed by Gable and bound to \
             the list's sort and filters. One Gable did not issue, or for another list, is `400 invalid_cursor`.",
            // `domain::cursor`: base64url payload, a dot, base64url of a 16-byte tag.
            ObjectBuilder::new().schema_type(Type::String).pattern(Some(r"^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$")),
        )
        .build(),
        sort_parameter(c),
        filter_parameter(c),
    ];
    params.extend(answers::parameters(c));
    params
}

/// The fields a list can be sorted on, as `domain::list::parse_sort` accepts them.
fn sortable(c: &'static Collection) -> impl Iterator<Item = &'static Field> {
    list_fields(c).filter(|f| f.sortable)
}

/// The name of a collection's sort key enum in `components.schemas`.
fn sort_key_schema_name(c: &Collection) -> String {
    format!("{}SortKey", pascal(c.object))
}

/// `sort` as what it is: a comma-separated list (`form`, not exploded) of 1 to 4 keys,
/// each a sortable field, ascending or with `-` descending. The keys are one enum per
/// collection (`<Object>SortKey`).
fn sort_parameter(c: &'static Collection) -> Parameter {
    query(
        "sort",
        format!("Up to {MAX_SORT_KEYS} keys, comma-separated; `-` descends. Default `-created_at`; `id` breaks ties."),
        ArrayBuilder::new().items(schema_ref(&sort_key_schema_name(c))).min_items(Some(1)).max_items(Some(MAX_SORT_KEYS)),
    )
    .style(Some(ParameterStyle::Form))
    .explode(Some(false))
    .build()
}

/// `components.schemas.<Object>Filter` and `<Object>SortKey` for every collection.
pub(super) fn register_filters(mut b: ComponentsBuilder) -> ComponentsBuilder {
    for c in COLLECTIONS {
        let keys: Vec<String> = sortable(c).flat_map(|f| [f.name.to_string(), format!("-{}", f.name)]).collect();
        let sort_keys = ObjectBuilder::new()
            .schema_type(Type::String)
            .description(Some(format!("A key to sort {} by: a field, ascending, or with `-` descending.", c.name)))
            .enum_values(Some(keys));
        b = b.schema(filter_schema_name(c), filter_schema(c)).schema(sort_key_schema_name(c), sort_keys);
    }
    let mut lists = std::collections::BTreeMap::new();
    for c in COLLECTIONS {
        for f in list_fields(c).filter(|f| f.filterable && filter_value_schema(c, f).is_some()) {
            let (name, schema) = list_schema(c, f);
            lists.entry(name).or_insert(schema);
        }
    }
    for (name, schema) in lists {
        b = b.schema(name, schema);
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
        for (key, schema) in filter_properties(c, f) {
            o = o.property(key, schema);
        }
    }
    o.build().into()
}

/// The filters on amounts, which need `filter[currency]` beside them: the rule
/// `add_filter_rules` states as `dependentRequired`.
pub(super) fn money_filter_keys(c: &'static Collection) -> Vec<String> {
    list_fields(c)
        .filter(|f| f.filterable && f.ty == Ty::Money)
        .flat_map(|f| {
            std::iter::once(format!("filter[{}]", f.name))
                .chain(filter_ops(f).into_iter().map(move |op| format!("filter[{}][{op}]", f.name)))
        })
        .collect()
}

/// Adds to each `<Object>Filter` the rule utoipa's builder cannot hold: an amount filter
/// needs `filter[currency]` (`dependentRequired`), since amounts compare in its minor units.
pub(super) fn add_filter_rules(doc: &mut serde_json::Value) {
    for c in COLLECTIONS {
        let keys = money_filter_keys(c);
        if keys.is_empty() {
            continue;
        }
        let Some(schema) = doc.pointer_mut(&format!("/components/schemas/{}", filter_schema_name(c))).and_then(|s| s.as_object_mut())
        else {
            continue;
        };
        let rule: serde_json::Map<String, serde_json::Value> = keys.into_iter().map(|k| (k, json!(["filter[currency]"]))).collect();
        schema.insert("dependentRequired".into(), serde_json::Value::Object(rule));
    }
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
    if list::is_text(f) {
        ops.push("contains");
    }
    ops
}

/// Whether a record may lack a value for the field (system fields never do).
fn can_be_missing(f: &Field) -> bool {
    f.nullable() && !SYSTEM_FIELDS.contains(&f.name)
}

/// `filter[f]` (equality) and one `filter[f][op]` per operator the field takes, with the
/// schema of each. What the operators mean is said once, in `info.description`, and the
/// lists that `in` and `nin` take are shared components (`<Type>List`): the description
/// holds thousands of these keys.
fn filter_properties(c: &Collection, f: &Field) -> Vec<(String, RefOr<Schema>)> {
    let Some(value) = filter_value_schema(c, f) else { return vec![] };
    let base = format!("filter[{}]", f.name);
    let mut props = vec![(base.clone(), value.clone())];
    for op in filter_ops(f) {
        let schema = match op {
            // A comma-separated string rather than an array: an array inside the `filter`
            // object is a nested structure that openapi-fetch refuses to serialise.
            "in" | "nin" => schema_ref(&list_schema(c, f).0),
            "exists" => ObjectBuilder::new().schema_type(Type::Boolean).build().into(),
            "contains" => {
                // No U+0000, as no query value may hold it (`domain::answer`).
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some(list::MAX_CONTAINS))
                    .pattern(Some(NO_NUL))
                    .build()
                    .into()
            }
            _ => value.clone(),
        };
        props.push((format!("{base}[{op}]"), schema));
    }
    props
}

/// The shared component of a comma-separated list of a field's values, for `in` and `nin`:
/// its name and schema. One per type (`UuidList`, `DateList`, …), one per enum
/// (`LeaseStatusList`).
fn list_schema(c: &Collection, f: &Field) -> (String, ObjectBuilder) {
    let name = match f.ty {
        Ty::Enum(_) => format!("{}List", enum_schema_name(c, f)),
        Ty::Ref(_) | Ty::Uuid => "UuidList".into(),
        Ty::Int { .. } => "IntegerList".into(),
        Ty::Num { .. } => "NumberList".into(),
        Ty::Money => "AmountList".into(),
        Ty::Bool => "BooleanList".into(),
        Ty::Date => "DateList".into(),
        Ty::DateTime => "DateTimeList".into(),
        Ty::Currency => "CurrencyList".into(),
        _ => "TextList".into(),
    };
    let one = query_value_pattern(f.ty);
    let schema = ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .pattern(Some(format!("^(?:{one})(?:,(?:{one})){{0,{}}}$", MAX_LIST_VALUES - 1)))
        .description(Some(format!("Values separated by commas, up to {MAX_LIST_VALUES}.")));
    (name, schema)
}

/// Values an `in`/`nin` filter may list (`domain::list`).
const MAX_LIST_VALUES: usize = 100;

/// A regular expression for one value of a type in a query, as `domain::list::parse_one`
/// parses it: what an `in`/`nin` list holds between its commas.
fn query_value_pattern(ty: Ty) -> String {
    const UUID: &str = "[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}";
    // Any day of any month but 29 February (a day of leap years only, which a pattern
    // cannot tell): a list of dates the pattern allows is always parsed.
    const DATE: &str =
        "[0-9]{4}-(?:(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])|(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)|02-(?:0[1-9]|1[0-9]|2[0-8]))";
    match ty {
        Ty::Enum(values) => values.join("|"),
        Ty::Ref(_) | Ty::Uuid => UUID.into(),
        Ty::Int { .. } => "-?[0-9]{1,18}".into(),
        Ty::Num { .. } => "-?[0-9]{1,15}(?:\\.[0-9]{1,15})?".into(),
        Ty::Money => "[0-9]{1,12}(?:\\.[0-9]{1,4})?".into(),
        Ty::Bool => "true|false".into(),
        // The codes an amount accepts, as the `Currency` component lists them.
        Ty::Currency => crate::domain::value::currencies().into_iter().map(|(code, _)| code).collect::<Vec<_>>().join("|"),
        Ty::Date => DATE.into(),
        Ty::DateTime => {
            format!("{DATE}T(?:[01][0-9]|2[0-3]):[0-5][0-9]:[0-5][0-9](?:\\.[0-9]{{1,9}})?(?:Z|[+-](?:[01][0-9]|2[0-3]):[0-5][0-9])")
        }
        // Text of any kind: anything but the separator (and U+0000, which nothing holds).
        _ => "[^,\\u0000]*".into(),
    }
}

/// The schema of one filter value, or `None` for the types that cannot be filtered on
/// (lists and structured values).
fn filter_value_schema(c: &Collection, f: &Field) -> Option<RefOr<Schema>> {
    match f.ty {
        // Query values are text: a decimal amount in the major unit (its decimals as the
        // currency has, `add_filter_rules`).
        Ty::Money => Some(
            ObjectBuilder::new().schema_type(Type::String).pattern(Some(format!("^{}$", query_value_pattern(Ty::Money)))).build().into(),
        ),
        Ty::StrList { .. } | Ty::RefList(_) | Ty::Json(_) | Ty::Metadata => None,
        Ty::Enum(_) => Some(schema_ref(&enum_schema_name(c, f))),
        // A unique field's values follow its rule, as the parser checks them.
        Ty::Str { .. } if f.unique => Some(schema_ref(&unique_schema_name(f))),
        ty => Some(ty_schema(ty, Side::Request)),
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
    fn query_sample(d: &Json, s: &Json) -> String {
        let s = resolve(d, s);
        if let Some(items) = s.get("items") {
            return query_sample(d, items);
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
            (_, Some("email")) => "lee@example.com".into(),
            (_, Some("uri")) => "https://example.com/a".into(),
            _ if s["pattern"] == "^[A-Z]{3}$" => "USD".into(),
            _ if s["pattern"].as_str().is_some_and(|p| p.starts_with("^[0-9]")) => "12.50".into(),
            _ => "text".into(),
        }
    }

    /// The query pairs a documented list parameter stands for: itself, or for `filter`,
    /// one pair per property of its object schema.
    fn documented_pairs(d: &Json, p: &Json) -> Vec<(String, Json)> {
        let name = p["name"].as_str().unwrap().to_string();
        if name == "fields" {
            // The fieldsets of expanded collections: each a comma-separated list of fields.
            let schema = resolve(d, &p["schema"]);
            return schema["properties"]
                .as_object()
                .unwrap()
                .keys()
                .map(|k| (k.clone(), json!({ "schema": { "enum": ["id"] } })))
                .collect();
        }
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
                let needs = schema["dependentRequired"].get(k).is_some();
                (k.clone(), json!({ "schema": sample, "needs_currency": needs }))
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
                    // Every key of the collection's sort key enum, then all of them at once (as
                    // many as a sort may have).
                    let keys: Vec<String> = resolve(&d, &p["schema"]["items"])["enum"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|k| k.as_str().unwrap().to_string())
                        .collect();
                    let mut all = keys.clone();
                    all.push(keys.iter().take(crate::domain::list::MAX_SORT_KEYS).cloned().collect::<Vec<_>>().join(","));
                    all
                } else {
                    vec![query_sample(&d, &p["schema"])]
                };
                for value in values {
                    let mut pairs = vec![(name.clone(), value.clone())];
                    if p["needs_currency"] == true {
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
