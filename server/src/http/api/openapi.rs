//! The OpenAPI 3.1 description of the `/v1` API, generated from the collection registry
//! (DESIGN.md §3–§5, §9) and served, without credentials, at `GET /v1/openapi.json` on both
//! listeners.
//!
//! Nothing here is written per collection: every path, parameter and schema comes from
//! `domain::collections::COLLECTIONS` and the same helpers the handlers use, so the
//! description cannot drift from what the server accepts:
//!
//! - which operations exist: `Collection::refuse`, as the handlers ask it;
//! - what a create/update body may carry: `domain::validate::{create_fields, update_fields}`;
//! - what a response record holds: the order of `domain::record::Record::to_json`;
//! - which list parameters exist: `domain::list` (sortable/filterable fields, limits);
//! - scopes: `domain::scopes::all()`; statuses and codes: `Error::status_and_code`.
//!
//! The document is built with utoipa's builders. utoipa 5 cannot express a few things, which
//! are added to the serialised JSON afterwards (`hoist_shared`, `add_dependent_required`):
//! `components.parameters` and `components.headers` (utoipa has neither map, and its
//! operations cannot hold a `$ref` parameter or header) and JSON Schema's `dependentRequired`.

use std::sync::{Mutex, OnceLock};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value as Json};
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, ParameterStyle, PathItemBuilder};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{AnyOfBuilder, SchemaType};
use utoipa::openapi::security::{
    AuthorizationCode, Flow, HttpAuthScheme, HttpBuilder, OAuth2, Scopes, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{
    ArrayBuilder, Components, ComponentsBuilder, InfoBuilder, KnownFormat, ObjectBuilder, OpenApiBuilder, PathItem, Paths, PathsBuilder,
    Ref, RefOr, Required, ResponseBuilder, Schema, SchemaFormat, ServerBuilder, Tag, Type,
};

use crate::domain::collections::COLLECTIONS;
use crate::domain::events::EVENT_TYPES;
use crate::domain::ledger::ACCOUNTS;
use crate::domain::list::{DEFAULT_LIMIT, MAX_LIMIT};
use crate::domain::record::{CREATED_AT, ID, UPDATED_AT};
use crate::domain::registry::{Access, Collection, Default as D, Field, JsonShape, Rule, Ty, WriteOp, SYSTEM_FIELDS};
use crate::domain::workflow::Input;
use crate::domain::{scopes, validate};
use crate::error::Error;
use crate::http::version;
use crate::state::ApiState;

/// `GET /v1/openapi.json`: the description for the listener it is asked on (its `servers`
/// entry is that listener's public address). Public, like any API reference.
pub async fn serve(State(st): State<ApiState>) -> Response {
    match rendered(st.public_url()) {
        Ok(body) => (
            [
                (header::CONTENT_TYPE, "application/json"),
                // Readable by API explorers hosted elsewhere; it holds nothing secret.
                (header::ACCESS_CONTROL_ALLOW_ORIGIN, "*"),
            ],
            body,
        )
            .into_response(),
        Err(e) => e.into_response(),
    }
}

/// The document, serialised once per public address. A process has two listeners, but a test
/// process may start many servers, so only the few most recent are kept.
fn rendered(public_url: &str) -> Result<Bytes, Error> {
    const KEEP: usize = 4;
    static CACHE: OnceLock<Mutex<Vec<(String, Bytes)>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let hit = cache.lock().ok().and_then(|c| c.iter().find(|(url, _)| url == public_url).map(|(_, b)| b.clone()));
    if let Some(body) = hit {
        return Ok(body);
    }
    let body = Bytes::from(serde_json::to_vec(&document(public_url)).map_err(Error::internal)?);
    if let Ok(mut c) = cache.lock() {
        if c.len() >= KEEP {
            c.remove(0);
        }
        c.push((public_url.to_string(), body.clone()));
    }
    Ok(body)
}

/// The whole OpenAPI 3.1 document for a listener whose base address is `public_url`
/// (without `/v1`; the paths carry it).
pub fn document(public_url: &str) -> Json {
    let api = OpenApiBuilder::new()
        .info(InfoBuilder::new().title("Gable API").version(version::CURRENT).description(Some(api_description())).build())
        .servers(Some([ServerBuilder::new()
            .url(public_url)
            .description(Some("This listener's base address: production (live keys) or sandbox (test keys)."))
            .build()]))
        .paths(paths())
        .components(Some(components(public_url)))
        .tags(Some(tags()))
        .build();
    let mut doc = serde_json::to_value(&api).expect("an OpenAPI document serialises to JSON");
    hoist_shared(&mut doc);
    add_dependent_required(&mut doc);
    add_webhooks(&mut doc);
    doc
}

// ---------------------------------------------------------------------------------------------
// Events (the `webhooks` section; utoipa has no builder for it, so it is plain JSON)
// ---------------------------------------------------------------------------------------------

/// `lease.signed` → `LeaseSignedEvent`.
fn event_schema_name(kind: &str) -> String {
    let words: String = kind.split(['.', '_']).map(pascal).collect();
    format!("{words}Event")
}

/// One `webhooks` entry and one component schema per event type: the payload Gable
/// POSTs to subscribed endpoints, which is also what `GET /v1/events/{id}` returns.
fn add_webhooks(doc: &mut Json) {
    let mut hooks = Map::new();
    for e in EVENT_TYPES {
        let c = crate::domain::collections::collection(e.collection).expect("events name real collections");
        let name = event_schema_name(e.name);
        let mut data_props = Map::new();
        data_props.insert("object".into(), json!({"$ref": format!("#/components/schemas/{}", pascal(c.object)), "description": format!("The {} after the change.", c.object.replace('_', " "))}));
        data_props.insert(
            "previous_attributes".into(),
            json!({"type": "object", "description": "The attributes the change altered, with their values before it; empty for creations and scheduled events."}),
        );
        let mut data_required = vec![json!("object"), json!("previous_attributes")];
        for (key, doc) in e.extra {
            data_props.insert((*key).into(), json!({"type": "integer", "description": doc}));
            data_required.push(json!(key));
        }
        let schema = json!({
            "type": "object",
            "description": format!("`{}`: {}", e.name, e.doc),
            "required": ["id", "object", "type", "created_at", "livemode", "api_version", "data", "related_object_id"],
            "properties": {
                "id": {"type": "string", "format": "uuid"},
                "object": {"const": "event"},
                "type": {"const": e.name},
                "created_at": {"type": "string", "format": "date-time", "description": "When it happened (RFC 3339, UTC)."},
                "livemode": {"type": "boolean"},
                "api_version": {"type": "string", "description": "The API version `data.object` is rendered in."},
                "related_object_id": {"type": "string", "format": "uuid", "description": "The id of `data.object`."},
                "property_id": {"type": ["string", "null"], "format": "uuid", "description": "The property the event concerns, if any."},
                "data": {"type": "object", "required": data_required, "properties": data_props},
            },
        });
        if let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Json::as_object_mut) {
            schemas.insert(name.clone(), schema);
        }
        hooks.insert(
            e.name.into(),
            json!({"post": {
                "operationId": format!("event_{}", e.name.replace('.', "_")),
                "summary": e.name,
                "description": format!("{} Delivered to webhook endpoints subscribed to `{}` (or `*`); listed at `GET /v1/events`.", e.doc, e.name),
                "tags": ["events"],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}}},
                "responses": {"2XX": {"description": "Any 2xx status acknowledges the delivery; anything else is retried."}},
            }}),
        );
    }
    doc["webhooks"] = Json::Object(hooks);
}

fn api_description() -> String {
    format!(
        "The JSON API of Gable, a tenant-scoped property operations platform: {n} collections, each \
         with the same list, retrieve, create, update and delete operations where they apply.\n\n\
         **Environments.** Production and the sandbox have their own base addresses; a `gbl_live_…` \
         key works only on production, a `gbl_test_…` key only on the sandbox \
         (`401 key_environment_mismatch` otherwise). Every record carries `livemode`.\n\n\
         **Responses.** Every success is an envelope `{{object, data, meta: {{request_id, next_cursor, \
         has_more}}}}`; every error is `{{error: {{code, message, request_id, param?, details?}}}}`. \
         Every response has a `Request-Id` header and echoes `Gable-Version`.\n\n\
         **Lists.** `limit` (1–{max}, default {default}), opaque `cursor` from `meta.next_cursor`, \
         `sort` (comma-separated keys, `-` for descending, `id` breaks ties), `fields[<collection>]` \
         (sparse fieldset; `id` and `object` are always returned) and `filter[<field>]` / \
         `filter[<field>][<op>]` with `eq ne gt gte lt lte in nin exists`. Unknown or unsupported \
         parameters are `400`, never ignored.\n\n\
         **Writes.** Unknown fields are refused (`400 validation_failed` naming the field). Money is a \
         decimal amount in the major unit of the record's ISO 4217 `currency`, never with more \
         decimals than the currency has. Statuses governed by a state machine are read-only.\n\n\
         **Versions.** `/v1` in the path; `Gable-Version: YYYY-MM-DD` pins a dated version (current: \
         `{version}`).",
        n = COLLECTIONS.len(),
        max = MAX_LIMIT,
        default = DEFAULT_LIMIT,
        version = version::CURRENT,
    )
}

// ---------------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------------

/// `purchase_order` → `PurchaseOrder`: the component name of a collection's record.
fn pascal(object: &str) -> String {
    object
        .split('_')
        .map(|w| {
            let mut cs = w.chars();
            cs.next().map(|c| c.to_ascii_uppercase().to_string() + cs.as_str()).unwrap_or_default()
        })
        .collect()
}

/// `purchase_order` → `a purchase order`, for summaries.
fn a_record(c: &Collection) -> String {
    let words = c.object.replace('_', " ");
    let article = if words.starts_with(['a', 'e', 'i', 'o']) { "an" } else { "a" };
    format!("{article} {words}")
}

fn schema_ref(name: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(name))
}

// ---------------------------------------------------------------------------------------------
// Paths and operations
// ---------------------------------------------------------------------------------------------

/// The HTTP method of a write operation, for descriptions.
fn method_of(w: WriteOp) -> &'static str {
    match w {
        WriteOp::Create => "POST",
        WriteOp::Update => "PATCH",
        WriteOp::Delete => "DELETE",
    }
}

/// Whether the API offers a write on a collection: exactly when the handler does not refuse it.
fn offers(c: &Collection, w: WriteOp) -> bool {
    c.refuse(w).is_none()
}

fn paths() -> Paths {
    let mut paths = PathsBuilder::new().path("/v1/openapi.json", describe_itself());
    for c in COLLECTIONS {
        let (collection_item, record_item) = collection_paths(c);
        paths = paths.path(format!("/v1/{}", c.name), collection_item).path(format!("/v1/{}/{{id}}", c.name), record_item);
        if let Some(machine) = crate::domain::workflow::machine(c.name) {
            for a in machine.actions {
                paths = paths.path(format!("/v1/{}/{{id}}/{}", c.name, a.name), action_path(c, a));
            }
        }
    }
    paths.build()
}

/// `POST /v1/{name}/{id}/{action}`: a state-machine action, from the workflow declaration.
fn action_path(c: &'static Collection, a: &'static crate::domain::workflow::Action) -> PathItem {
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
        c.write_scope(),
        &[400, 401, 403, 404, 409, 413, 415, 429, 500],
    )
    .description(Some(description))
    .response("200", success(&format!("The {} after the action.", c.object.replace('_', " ")), &format!("{}Envelope", pascal(c.object))));
    // The body is optional and carries only the action's parameters.
    let mut body = ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)));
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
        .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)))
        .description(Some("The draft lease to make. `rent`, `deposit` and `currency` default to the listing's."));
    for f in crate::domain::validate::create_fields(c).filter(|f| !crate::ops::SET_BY_CONVERT.contains(&f.name)) {
        body = body.property(f.name, field_schema(f, Side::Request));
    }
    body.required("start_date")
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
            )
            .response("400", error_ref(400))
            .response("500", error_ref(500));
    PathItemBuilder::new().operation(HttpMethod::Get, op.build()).build()
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
fn operation(c: &Collection, id: String, summary: String, scope: String, errors: &[u16]) -> OperationBuilder {
    let op = OperationBuilder::new()
        .tag(c.name)
        .operation_id(Some(id))
        .summary(Some(summary))
        .securities(Some(security(&scope)))
        .parameter(version_parameter());
    with_errors(op, errors)
}

/// Either credential works: an API key (scopes checked server-side) or an OAuth token
/// granted `scope`.
fn security(scope: &str) -> Vec<SecurityRequirement> {
    vec![SecurityRequirement::new("api_key", Vec::<String>::new()), SecurityRequirement::new("oauth2", [scope])]
}

fn snake_name(c: &Collection) -> String {
    c.name.replace('-', "_")
}

fn list_operation(c: &'static Collection) -> utoipa::openapi::path::Operation {
    let needs = format!("Needs the scope `{}`.", c.read_scope());
    operation(
        c,
        format!("list_{}", snake_name(c)),
        format!("List {}", c.name.replace('-', " ")),
        c.read_scope(),
        &[400, 401, 403, 429, 500],
    )
    .description(Some(format!(
        "A page of {}, newest first unless `sort` says otherwise. While `meta.has_more` is true, \
             ask again with `cursor` set to `meta.next_cursor` (and the same `sort` and filters). {needs}",
        c.name
    )))
    .parameters(Some(list_parameters(c)))
    .response("200", success(&format!("A page of {}.", c.name), &format!("{}List", pascal(c.object))))
    .build()
}

fn get_operation(c: &'static Collection) -> utoipa::openapi::path::Operation {
    operation(c, format!("get_{}", c.object), format!("Retrieve {}", a_record(c)), c.read_scope(), &[400, 401, 403, 404, 429, 500])
        .description(Some(format!("Needs the scope `{}`. A record of another tenant or environment is `404`.", c.read_scope())))
        .parameter(fields_parameter(c))
        .response("200", success(&format!("The {}.", c.object.replace('_', " ")), &format!("{}Envelope", pascal(c.object))))
        .build()
}

fn create_operation(c: &'static Collection) -> utoipa::openapi::path::Operation {
    let name = pascal(c.object);
    let returned = if secret_on_create(c).is_some() { format!("{name}CreatedEnvelope") } else { format!("{name}Envelope") };
    operation(
        c,
        format!("create_{}", c.object),
        format!("Create {}", a_record(c)),
        c.write_scope(),
        &[400, 401, 403, 404, 409, 413, 415, 429, 500],
    )
    .description(Some(format!(
        "Needs the scope `{}`. Referenced records must exist in the same tenant and environment \
             (`404` naming the field otherwise).",
        c.write_scope()
    )))
    .request_body(Some(json_body(&format!("{name}Create"))))
    .response("201", success(&format!("The created {}.", c.object.replace('_', " ")), &returned))
    .build()
}

fn update_operation(c: &'static Collection) -> utoipa::openapi::path::Operation {
    let name = pascal(c.object);
    operation(
        c,
        format!("update_{}", c.object),
        format!("Update {}", a_record(c)),
        c.write_scope(),
        &[400, 401, 403, 404, 409, 413, 415, 429, 500],
    )
    .description(Some(format!("Changes only the fields given; `null` removes an optional value. Needs the scope `{}`.", c.write_scope())))
    .request_body(Some(json_body(&format!("{name}Update"))))
    .response("200", success(&format!("The updated {}.", c.object.replace('_', " ")), &format!("{name}Envelope")))
    .build()
}

fn delete_operation(c: &'static Collection) -> utoipa::openapi::path::Operation {
    operation(c, format!("delete_{}", c.object), format!("Delete {}", a_record(c)), c.write_scope(), &[400, 401, 403, 404, 409, 429, 500])
        .description(Some(format!("Needs the scope `{}`. A record still referenced by others is `409 conflict`.", c.write_scope())))
        .response("200", success(&format!("The {} was deleted.", c.object.replace('_', " ")), "DeletedEnvelope"))
        .build()
}

/// Collections whose create response carries a secret that is never shown again.
fn secret_on_create(c: &Collection) -> Option<(&'static str, &'static str)> {
    // Mirrors `resources::create`, which adds the issued flow token to the create response.
    (c.name == "flow-tokens").then_some(("token", "The flow token (`gft_…`). Returned by this response only; Gable keeps only its hash."))
}

fn json_body(schema: &str) -> utoipa::openapi::request_body::RequestBody {
    RequestBodyBuilder::new()
        .required(Some(Required::True))
        .content("application/json", ContentBuilder::new().schema(Some(schema_ref(schema))).build())
        .build()
}

fn success(description: &str, schema: &str) -> RefOr<utoipa::openapi::Response> {
    with_standard_headers(
        ResponseBuilder::new()
            .description(description)
            .content("application/json", ContentBuilder::new().schema(Some(schema_ref(schema))).build()),
    )
    .build()
    .into()
}

/// `Request-Id` and `Gable-Version` are on every response (`request_id` and `version` layers);
/// `hoist_shared` turns these into references to `components.headers`.
fn with_standard_headers(r: ResponseBuilder) -> ResponseBuilder {
    r.header(
        "Request-Id",
        HeaderBuilder::new()
            .schema(ObjectBuilder::new().schema_type(Type::String).format(Some(SchemaFormat::Custom("uuid".into()))))
            .description(Some("Identifies the request; quote it when contacting support."))
            .build(),
    )
    .header(
        "Gable-Version",
        HeaderBuilder::new()
            .schema(ObjectBuilder::new().schema_type(Type::String).format(Some(SchemaFormat::KnownFormat(KnownFormat::Date))))
            .description(Some("The dated API version that served the request."))
            .build(),
    )
}

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

fn version_parameter() -> utoipa::openapi::path::Parameter {
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

fn id_parameter(c: &Collection) -> utoipa::openapi::path::Parameter {
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

/// A comma-separated list in one query parameter (`a,b,c`): form style, not exploded.
fn comma_list(p: ParameterBuilder) -> utoipa::openapi::path::Parameter {
    p.style(Some(ParameterStyle::Form)).explode(Some(false)).build()
}

/// The fields lists may filter and sort on: the system fields first, as `domain::list::lookup`
/// resolves them, then the collection's own.
fn list_fields(c: &'static Collection) -> impl Iterator<Item = &'static Field> {
    [&ID, &CREATED_AT, &UPDATED_AT].into_iter().chain(c.fields.iter())
}

/// Every list query parameter: paging, sort, sparse fieldset, then the filters.
fn list_parameters(c: &'static Collection) -> Vec<utoipa::openapi::path::Parameter> {
    let mut params = vec![
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
    ];
    for f in list_fields(c).filter(|f| f.filterable) {
        params.extend(filter_parameters(f));
    }
    params
}

fn sort_parameter(c: &'static Collection) -> utoipa::openapi::path::Parameter {
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

fn fields_parameter(c: &Collection) -> utoipa::openapi::path::Parameter {
    comma_list(query(
        format!("fields[{}]", c.name),
        "Sparse fieldset: only these fields are returned (`id` and `object` always are).",
        ArrayBuilder::new().items(ObjectBuilder::new().schema_type(Type::String).enum_values(Some(selectable(c)))).min_items(Some(1)),
    ))
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

/// `filter[f]` (equality) and one `filter[f][op]` per operator the field takes.
fn filter_parameters(f: &Field) -> Vec<utoipa::openapi::path::Parameter> {
    let Some(value) = filter_value_schema(f) else { return vec![] };
    let money_note = if f.ty == Ty::Money { " Needs `filter[currency]` too: amounts are compared in that currency." } else { "" };
    let base = format!("filter[{}]", f.name);
    let mut params = vec![query(&base, format!("Only records whose `{}` equals this.{money_note}", f.name), value.clone()).build()];
    for op in filter_ops(f) {
        let name = format!("{base}[{op}]");
        params.push(match op {
            "in" | "nin" => {
                let what = if op == "in" { "is one of" } else { "is none of" };
                comma_list(query(
                    name,
                    format!("Only records whose `{}` {what} these (comma-separated).{money_note}", f.name),
                    ArrayBuilder::new().items(value.clone()).min_items(Some(1)).max_items(Some(100)),
                ))
            }
            "exists" => query(
                name,
                format!("`true`: only records where `{}` is set; `false`: only those where it is not.{money_note}", f.name),
                ObjectBuilder::new().schema_type(Type::Boolean),
            )
            .build(),
            _ => {
                let what = match op {
                    "ne" => "does not equal",
                    "gt" => "is greater than",
                    "gte" => "is greater than or equal to",
                    "lt" => "is less than",
                    _ => "is less than or equal to",
                };
                query(name, format!("Only records whose `{}` {what} this.{money_note}", f.name), value.clone()).build()
            }
        });
    }
    params
}

/// The schema of one filter value, or `None` for types lists cannot filter on.
fn filter_value_schema(f: &Field) -> Option<RefOr<Schema>> {
    Some(match f.ty {
        // Query values are text: a decimal amount in the major unit.
        Ty::Money => ObjectBuilder::new().schema_type(Type::String).pattern(Some(r"^[0-9]+(\.[0-9]+)?$")).into(),
        Ty::StrList { .. } | Ty::RefList(_) | Ty::Json(_) | Ty::Metadata => return None,
        ty => ty_schema(ty, Side::Request),
    })
}

// ---------------------------------------------------------------------------------------------
// Responses
// ---------------------------------------------------------------------------------------------

/// One example of every error the API answers with: the status and code come from
/// `Error::status_and_code`, so this list only decides which are documented.
fn known_errors() -> Vec<(u16, &'static str)> {
    let samples = [
        Error::InvalidRequest { message: String::new(), param: None },
        Error::parameter("", ""),
        Error::InvalidCursor,
        Error::InvalidJson(String::new()),
        Error::validation("", ""),
        Error::UnsupportedVersion(String::new()),
        Error::Unauthenticated(String::new()),
        Error::KeyEnvironmentMismatch(String::new()),
        Error::InsufficientScope(String::new()),
        Error::PropertyForbidden(String::new()),
        Error::not_found(""),
        Error::MethodNotAllowed(String::new()),
        Error::InvalidStateTransition { message: String::new(), current: String::new(), allowed: vec![] },
        Error::Immutable(String::new()),
        Error::Conflict(String::new()),
        Error::PayloadTooLarge(0),
        Error::UnsupportedMediaType(String::new()),
        Error::internal(anyhow::anyhow!("sample")),
    ];
    let mut known: Vec<(u16, &'static str)> = samples
        .iter()
        .map(|e| {
            let (status, code) = e.status_and_code();
            (status.as_u16(), code)
        })
        .collect();
    // Per-credential rate limits (DESIGN.md §9).
    known.push((429, "rate_limited"));
    known
}

/// The shared error response of a status: its component name and what it means.
fn error_response_name(status: u16) -> (&'static str, &'static str) {
    match status {
        400 => ("BadRequest", "The request is malformed or a value is invalid; `param` names it."),
        401 => ("Unauthorized", "No valid credential, or a key used on the other environment's address."),
        403 => ("Forbidden", "The credential lacks the scope (named in `details.required_scope`) or the property."),
        404 => ("NotFound", "No such record visible to this credential (another tenant's records are never visible)."),
        405 => ("MethodNotAllowed", "The collection does not offer this method."),
        409 => ("Conflict", "The request conflicts with the record's state or with other records."),
        413 => ("PayloadTooLarge", "The request body is larger than 1 MiB."),
        415 => ("UnsupportedMediaType", "The body is not sent as `Content-Type: application/json`."),
        429 => ("TooManyRequests", "Too many requests for this credential; retry after `Retry-After` seconds."),
        _ => ("InternalError", "Something went wrong on Gable's side; the message holds no internals."),
    }
}

fn error_ref(status: u16) -> RefOr<utoipa::openapi::Response> {
    RefOr::Ref(Ref::from_response_name(error_response_name(status).0))
}

/// Adds the shared error responses of these statuses to an operation.
fn with_errors(mut op: OperationBuilder, statuses: &[u16]) -> OperationBuilder {
    for s in statuses {
        op = op.response(s.to_string(), error_ref(*s));
    }
    op
}

/// `components.responses`: one per error status, each listing its codes.
fn error_responses(mut b: ComponentsBuilder) -> ComponentsBuilder {
    let known = known_errors();
    let mut statuses: Vec<u16> = known.iter().map(|(s, _)| *s).collect();
    statuses.sort_unstable();
    statuses.dedup();
    for status in statuses {
        let codes: Vec<&str> = known.iter().filter(|(s, _)| *s == status).map(|(_, c)| *c).collect();
        let (name, what) = error_response_name(status);
        let listed: Vec<String> = codes.iter().map(|c| format!("`{c}`")).collect();
        let mut resp = with_standard_headers(ResponseBuilder::new()).description(format!("{what} Codes: {}.", listed.join(", "))).content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(schema_ref("Error")))
                .example(Some(json!({ "error": {
                    "code": codes[0],
                    "message": what,
                    "request_id": "0192f5e0-7c1a-7cc3-9d2b-6a1f3e4d5c6b",
                }})))
                .build(),
        );
        if status == 429 {
            resp = resp.header(
                "Retry-After",
                HeaderBuilder::new()
                    .schema(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0)))
                    .description(Some("Seconds to wait before retrying."))
                    .build(),
            );
        }
        b = b.response(name, resp.build());
    }
    b
}

// ---------------------------------------------------------------------------------------------
// Components
// ---------------------------------------------------------------------------------------------

fn tags() -> Vec<Tag> {
    let mut tags = vec![TagBuilder::new().name("meta").description(Some("The API description itself.")).build()];
    tags.extend(COLLECTIONS.iter().map(|c| TagBuilder::new().name(c.name).description(Some(c.doc)).build()));
    tags
}

fn components(public_url: &str) -> Components {
    let mut b = ComponentsBuilder::new()
        .schema("Error", error_schema())
        .schema("Meta", meta_schema())
        .schema("Deleted", deleted_schema())
        .schema("DeletedEnvelope", envelope(ObjectBuilder::new().schema_type(Type::String), schema_ref("Deleted"), None))
        .schema("Metadata", metadata_schema())
        .security_scheme("api_key", api_key_scheme())
        .security_scheme("oauth2", oauth2_scheme(public_url));
    for shape in [JsonShape::Address, JsonShape::People, JsonShape::LedgerLines, JsonShape::OrderLines, JsonShape::InspectionItems] {
        let (name, schema) = shape_item_schema(shape);
        b = b.schema(name, schema);
    }
    for c in COLLECTIONS {
        b = collection_schemas(b, c);
    }
    error_responses(b).build()
}

/// Every schema of one collection: the record, its envelopes and its write bodies.
fn collection_schemas(mut b: ComponentsBuilder, c: &'static Collection) -> ComponentsBuilder {
    let name = pascal(c.object);
    let object_value = || ObjectBuilder::new().schema_type(Type::String).enum_values(Some([c.object]));
    b = b
        .schema(&name, record_schema(c, None))
        .schema(format!("{name}Envelope"), envelope(object_value(), schema_ref(&name), None))
        .schema(
            format!("{name}List"),
            envelope(
                ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["list"])),
                ArrayBuilder::new().items(schema_ref(&name)).into(),
                Some(format!("A page of {}.", c.name)),
            ),
        );
    if offers(c, WriteOp::Create) {
        b = b.schema(format!("{name}Create"), create_schema(c));
        if secret_on_create(c).is_some() {
            b = b
                .schema(format!("{name}Created"), record_schema(c, secret_on_create(c)))
                .schema(format!("{name}CreatedEnvelope"), envelope(object_value(), schema_ref(&format!("{name}Created")), None));
        }
    }
    if offers(c, WriteOp::Update) {
        b = b.schema(format!("{name}Update"), update_schema(c));
    }
    b
}

fn envelope(object: ObjectBuilder, data: RefOr<Schema>, description: Option<String>) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(description)
        .property("object", object.description(Some("What `data` is.")))
        .property("data", data)
        .property("meta", schema_ref("Meta"))
        .required("object")
        .required("data")
        .required("meta")
}

fn error_schema() -> ObjectBuilder {
    let codes: Vec<String> = known_errors().iter().map(|(s, c)| format!("`{c}` ({s})")).collect();
    let string = || ObjectBuilder::new().schema_type(Type::String);
    let body = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("code", string().description(Some(format!("Machine-readable; one of {}.", codes.join(", ")))))
        .property("message", string().description(Some("Human-readable explanation.")))
        .property("request_id", uuid().description(Some("The request's id, as in the `Request-Id` header.")))
        .property("param", string().description(Some("The parameter or body field at fault, e.g. `limit`, `rent`, `address.city`.")))
        .property(
            "details",
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .description(Some("More about the error, e.g. `required_scope` for `insufficient_scope`.")),
        )
        .required("code")
        .required("message");
    ObjectBuilder::new().schema_type(Type::Object).property("error", body).required("error")
}

fn meta_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("request_id", uuid().description(Some("Identifies the request.")))
        .property(
            "next_cursor",
            ObjectBuilder::new()
                .schema_type([Type::String, Type::Null].into_iter().collect::<SchemaType>())
                .description(Some("Pass as `cursor` for the next page; null when there is none.")),
        )
        .property("has_more", ObjectBuilder::new().schema_type(Type::Boolean).description(Some("Whether more results follow.")))
        .required("request_id")
        .required("next_cursor")
        .required("has_more")
}

fn deleted_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("id", uuid())
        .property("object", ObjectBuilder::new().schema_type(Type::String))
        .property("deleted", ObjectBuilder::new().schema_type(Type::Boolean).enum_values(Some([true])))
        .required("id")
        .required("object")
        .required("deleted")
}

/// As `domain::value::metadata` checks it.
fn metadata_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("Your own key-value pairs: at most 50 keys of 1 to 40 characters, string values of at most 500."))
        .max_properties(Some(50))
        .property_names(Some(ObjectBuilder::new().schema_type(Type::String).min_length(Some(1)).max_length(Some(40))))
        .additional_properties(Some(ObjectBuilder::new().schema_type(Type::String).max_length(Some(500))))
}

fn api_key_scheme() -> SecurityScheme {
    SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .bearer_format("gbl_live_… | gbl_test_…")
            .description(Some(
                "An API key as a bearer token: `Authorization: Bearer gbl_live_…` on production, \
                 `gbl_test_…` on the sandbox (a key works only on its own environment's address). \
                 Keys are created in the console, shown once, and carry their own scopes.",
            ))
            .build(),
    )
}

fn oauth2_scheme(public_url: &str) -> SecurityScheme {
    let scopes: Scopes = scopes::all()
        .into_iter()
        .map(|s| {
            let description = scope_description(&s);
            (s, description)
        })
        .collect();
    SecurityScheme::OAuth2(OAuth2::with_description(
        [Flow::AuthorizationCode(AuthorizationCode::with_refresh_url(
            format!("{public_url}/oauth/authorize"),
            format!("{public_url}/oauth/token"),
            scopes,
            format!("{public_url}/oauth/token"),
        ))],
        "OAuth 2.1 authorization code with mandatory PKCE (S256). Lists and retrievals need \
         `{collection}:read`; creates, updates, deletes and actions need `{collection}:write`.",
    ))
}

fn scope_description(scope: &str) -> String {
    match scope.rsplit_once(':') {
        _ if scope == "*" => "Read and write every collection.".into(),
        Some(("*", "read")) => "Read every collection.".into(),
        Some((c, "read")) => format!("Read {c}."),
        Some((c, _)) => format!("Read, create, change and delete {c}."),
        None => scope.into(),
    }
}

// ---------------------------------------------------------------------------------------------
// Schemas of records and bodies
// ---------------------------------------------------------------------------------------------

/// Which side of the API a schema describes: what clients send, or what Gable returns.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Side {
    Request,
    Response,
}

fn uuid() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String).format(Some(SchemaFormat::Custom("uuid".into())))
}

fn date_time() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String).format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
}

/// A record as `Record::to_json` renders it: system fields, every field in order, metadata.
/// Only `id` and `object` are required, because a sparse fieldset may leave out the rest.
fn record_schema(c: &Collection, secret: Option<(&str, &str)>) -> ObjectBuilder {
    let mut o = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(format!("{} Every property is present unless a sparse fieldset (`fields[{}]`) leaves it out.", c.doc, c.name)))
        .property("id", uuid().description(Some("Unique id.")))
        .property("object", ObjectBuilder::new().schema_type(Type::String).enum_values(Some([c.object])))
        .property(
            "livemode",
            ObjectBuilder::new().schema_type(Type::Boolean).description(Some("`true` in production, `false` in the sandbox.")),
        )
        .property("created_at", date_time().description(Some("When the record was created (RFC 3339, UTC).")))
        .property("updated_at", date_time().description(Some("When the record last changed (RFC 3339, UTC).")))
        .required("id")
        .required("object");
    for f in c.fields {
        o = o.property(f.name, field_schema(f, Side::Response));
    }
    if c.metadata {
        o = o.property("metadata", schema_ref("Metadata"));
    }
    if let Some((name, description)) = secret {
        o = o.property(name, ObjectBuilder::new().schema_type(Type::String).description(Some(description))).required(name);
    }
    o
}

/// Exactly what `validate::create` accepts: the writable fields, the required ones required,
/// nothing else. Cross-field rules JSON Schema cannot say are in the description.
fn create_schema(c: &Collection) -> ObjectBuilder {
    let mut o = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(format!("Creates {}.{}", a_record(c), rules_text(c))))
        .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)));
    for f in validate::create_fields(c) {
        o = o.property(f.name, field_schema(f, Side::Request));
        if f.required && f.access != Access::ReadOnly {
            o = o.required(f.name);
        }
    }
    if c.metadata {
        o = o.property("metadata", nullable(schema_ref("Metadata")));
    }
    o
}

/// Exactly what `validate::update` accepts: the changeable fields, all optional, at least one.
fn update_schema(c: &Collection) -> ObjectBuilder {
    let create_only: Vec<String> = c.fields.iter().filter(|f| f.access == Access::CreateOnly).map(|f| format!("`{}`", f.name)).collect();
    let fixed =
        if create_only.is_empty() { String::new() } else { format!(" Set at creation only, never changed: {}.", create_only.join(", ")) };
    let money = if c.has_money() { " Changing `currency` needs every amount on the record given again in the same request." } else { "" };
    let mut o = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(format!("The fields to change; `null` removes an optional value.{fixed}{money}{}", rules_text(c))))
        .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)))
        .min_properties(Some(1));
    for f in validate::update_fields(c) {
        o = o.property(f.name, field_schema(f, Side::Request));
    }
    if c.metadata {
        o = o.property("metadata", nullable(schema_ref("Metadata")));
    }
    o
}

/// The collection's cross-field rules, in words.
fn rules_text(c: &Collection) -> String {
    let mut text = String::new();
    for rule in c.rules {
        text.push(' ');
        text.push_str(&match rule {
            Rule::OneOf(names) => {
                let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                format!("At least one of {} is required.", names.join(", "))
            }
            Rule::After { earlier, later } => format!("`{later}` must be after `{earlier}`."),
            Rule::Balanced(field) => format!(
                "`{field}` must balance: at least two lines, each with exactly one of `debit` or `credit` above \
                 zero, and debits equal to credits."
            ),
            Rule::SameProperty(field) => format!("`{field}` must belong to the same property as this record."),
        });
    }
    text
}

/// One field's schema: its type's, described, with its default, nullable where the
/// field can be absent (not required and without a default, as `Field::nullable` says).
fn field_schema(f: &Field, side: Side) -> RefOr<Schema> {
    let mut schema = ty_schema(f.ty, side);
    if f.nullable() {
        schema = nullable(schema);
    }
    let mut description = f.doc.to_string();
    let reference = match f.ty {
        Ty::Ref(target) => format!("Id of a record of `{target}`."),
        Ty::RefList(target) => format!("Ids of records of `{target}`."),
        _ => String::new(),
    };
    if !reference.is_empty() {
        description = if description.is_empty() { reference } else { format!("{reference} {description}") };
    }
    let default = match (side, f.default) {
        (Side::Request, D::Str(s)) => Some(json!(s)),
        (Side::Request, D::Int(i)) => Some(json!(i)),
        (Side::Request, D::Bool(b)) => Some(json!(b)),
        (Side::Request, D::Zero) => Some(json!(0)),
        _ => None,
    };
    annotate(schema, (!description.is_empty()).then_some(description), default)
}

/// Sets a description and default on a schema, whatever kind it is.
fn annotate(schema: RefOr<Schema>, description: Option<String>, default: Option<Json>) -> RefOr<Schema> {
    match schema {
        RefOr::T(Schema::Object(mut o)) => {
            o.description = description.or(o.description);
            o.default = default.or(o.default);
            RefOr::T(Schema::Object(o))
        }
        RefOr::T(Schema::Array(mut a)) => {
            a.description = description.or(a.description);
            a.default = default.or(a.default);
            RefOr::T(Schema::Array(a))
        }
        RefOr::T(Schema::AnyOf(mut a)) => {
            a.description = description.or(a.description);
            a.default = default.or(a.default);
            RefOr::T(Schema::AnyOf(a))
        }
        RefOr::Ref(mut r) => {
            if let Some(d) = description {
                r.description = d;
            }
            RefOr::Ref(r)
        }
        other => other,
    }
}

/// Adds `null` to a schema: to its `type` (and `enum`), or, for a reference, as an
/// alternative (`anyOf: [$ref, {type: null}]`, which generators read as "nullable").
fn nullable(schema: RefOr<Schema>) -> RefOr<Schema> {
    fn with_null(t: SchemaType) -> SchemaType {
        match t {
            SchemaType::Type(t) => [t, Type::Null].into_iter().collect(),
            SchemaType::Array(mut ts) => {
                ts.push(Type::Null);
                SchemaType::Array(ts)
            }
            SchemaType::AnyValue => SchemaType::AnyValue,
        }
    }
    match schema {
        RefOr::T(Schema::Object(mut o)) => {
            o.schema_type = with_null(o.schema_type);
            if let Some(values) = o.enum_values.as_mut() {
                values.push(Json::Null);
            }
            RefOr::T(Schema::Object(o))
        }
        RefOr::T(Schema::Array(mut a)) => {
            a.schema_type = with_null(a.schema_type);
            RefOr::T(Schema::Array(a))
        }
        other => AnyOfBuilder::new().item(other).item(ObjectBuilder::new().schema_type(Type::Null)).into(),
    }
}

/// The schema of a value of a type, as `domain::value::from_json` checks it (requests) and
/// `domain::value::to_json` renders it (responses).
fn ty_schema(ty: Ty, side: Side) -> RefOr<Schema> {
    let string = || ObjectBuilder::new().schema_type(Type::String);
    match ty {
        Ty::Str { max } => string().max_length(Some(max)).into(),
        Ty::Text => string().max_length(Some(10_000)).into(),
        Ty::Email => string().format(Some(SchemaFormat::KnownFormat(KnownFormat::Email))).max_length(Some(320)).into(),
        Ty::Url => string()
            .format(Some(SchemaFormat::Custom("uri".into())))
            .pattern(Some("^https?://"))
            .max_length(Some(2048))
            .description(Some("An absolute http or https URL."))
            .into(),
        Ty::Origin => string()
            .format(Some(SchemaFormat::Custom("uri".into())))
            .pattern(Some(r"^https?://[^/?#]+/?$"))
            .max_length(Some(2048))
            .description(Some("An origin: scheme, host and optional port, e.g. `https://www.example.com`."))
            .into(),
        Ty::Enum(values) => string().enum_values(Some(values.iter().copied())).into(),
        Ty::Int { min, max } => ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(min))
            .maximum(Some(max))
            .into(),
        Ty::Num { min, max } => ObjectBuilder::new().schema_type(Type::Number).minimum(Some(min)).maximum(Some(max)).into(),
        Ty::Money => money_schema(side),
        Ty::Currency => string().pattern(Some("^[A-Z]{3}$")).description(Some("An ISO 4217 currency code, e.g. `USD`.")).into(),
        Ty::Bool => ObjectBuilder::new().schema_type(Type::Boolean).into(),
        Ty::Date => string().format(Some(SchemaFormat::KnownFormat(KnownFormat::Date))).into(),
        Ty::DateTime => date_time().into(),
        Ty::Ref(_) | Ty::Uuid => uuid().into(),
        Ty::StrList { max_items } => {
            ArrayBuilder::new().items(string().min_length(Some(1)).max_length(Some(100))).max_items(Some(max_items)).into()
        }
        Ty::RefList(_) => ArrayBuilder::new().items(uuid()).max_items(Some(100)).into(),
        Ty::Json(JsonShape::Object) => {
            ObjectBuilder::new().schema_type(Type::Object).description(Some("A JSON object (at most 64 KiB).")).into()
        }
        Ty::Json(JsonShape::Address) => schema_ref(shape_item_schema(JsonShape::Address).0),
        Ty::Json(shape) => {
            let (item, _) = shape_item_schema(shape);
            // People, ledger lines and order lines must not be empty.
            let min = matches!(shape, JsonShape::People | JsonShape::LedgerLines | JsonShape::OrderLines).then_some(1);
            ArrayBuilder::new().items(schema_ref(item)).min_items(min).max_items(Some(200)).into()
        }
        Ty::Metadata => schema_ref("Metadata"),
    }
}

/// Money: a decimal amount in the currency's major unit. Gable renders it as a number; a
/// client may send a number or a decimal string (exact, whatever its JSON library does).
fn money_schema(side: Side) -> RefOr<Schema> {
    let text = "A decimal amount in the major unit of the record's `currency` (e.g. `1250.50`), with no more \
                decimals than the currency has.";
    match side {
        Side::Response => ObjectBuilder::new().schema_type(Type::Number).minimum(Some(0)).description(Some(text)).into(),
        Side::Request => ObjectBuilder::new()
            .schema_type([Type::Number, Type::String].into_iter().collect::<SchemaType>())
            .minimum(Some(0))
            .exclusive_maximum(Some(1.0e12))
            .pattern(Some(r"^[0-9]+(\.[0-9]+)?$"))
            .description(Some(format!("{text} A JSON number or a decimal string.")))
            .into(),
    }
}

/// The component schema of a structured field's value (or of one item of a list), with the
/// keys and required keys `domain::value::shape_check` enforces. Values are strings of at most
/// 500 characters unless noted.
fn shape_item_schema(shape: JsonShape) -> (&'static str, ObjectBuilder) {
    let text = || ObjectBuilder::new().schema_type(Type::String).max_length(Some(500));
    let amount = || {
        ObjectBuilder::new()
            .schema_type([Type::Number, Type::String].into_iter().collect::<SchemaType>())
            .minimum(Some(0))
            .pattern(Some(r"^[0-9]+(\.[0-9]+)?$"))
            .description(Some("A decimal amount in the major unit, as a number or a decimal string."))
    };
    let closed = || {
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .additional_properties(Some(utoipa::openapi::schema::AdditionalProperties::FreeForm(false)))
    };
    match shape {
        JsonShape::Address => (
            "Address",
            closed()
                .description(Some("A postal address."))
                .property("line1", text())
                .property("line2", text())
                .property("city", text())
                .property("region", text())
                .property("postal_code", text())
                .property("country", text().pattern(Some("^[A-Z]{2}$")).description(Some("ISO 3166-1 alpha-2 code, e.g. `US`.")))
                .required("line1")
                .required("city")
                .required("country"),
        ),
        JsonShape::People => (
            "Person",
            closed()
                .description(Some("A person named on a record."))
                .property("name", text())
                .property("email", text())
                .property("phone", text())
                .required("name"),
        ),
        JsonShape::LedgerLines => (
            "LedgerLine",
            closed()
                .description(Some("One line of a journal entry: exactly one of `debit` and `credit` above zero."))
                .property("account", ObjectBuilder::new().schema_type(Type::String).enum_values(Some(ACCOUNTS.iter().copied())))
                .property("debit", amount())
                .property("credit", amount())
                .required("account")
                .required("debit")
                .required("credit"),
        ),
        JsonShape::OrderLines => (
            "OrderLine",
            closed()
                .description(Some("One line of a purchase order."))
                .property("description", text())
                .property("quantity", ObjectBuilder::new().schema_type(Type::Number).exclusive_minimum(Some(0)))
                .property("unit_amount", amount())
                .required("description")
                .required("quantity")
                .required("unit_amount"),
        ),
        JsonShape::InspectionItems => (
            "InspectionItem",
            closed()
                .description(Some("One checked item of an inspection."))
                .property("name", text())
                .property("condition", text())
                .property("notes", text())
                .required("name"),
        ),
        JsonShape::Object => ("JsonObject", ObjectBuilder::new().schema_type(Type::Object)),
    }
}

// ---------------------------------------------------------------------------------------------
// What utoipa cannot express, added to the JSON
// ---------------------------------------------------------------------------------------------

/// Parameters defined once in `components.parameters` and referenced everywhere:
/// (name, in, component key).
const SHARED_PARAMETERS: &[(&str, &str, &str)] =
    &[("Gable-Version", "header", "GableVersion"), ("limit", "query", "limit"), ("cursor", "query", "cursor")];
/// Response headers defined once in `components.headers`.
const SHARED_HEADERS: &[&str] = &["Request-Id", "Gable-Version"];

/// Moves the shared parameters and response headers, built inline above, into
/// `components.parameters` / `components.headers` and leaves `$ref`s in their place. An
/// occurrence that differs from the first one stays inline, so nothing is ever lost.
fn hoist_shared(doc: &mut Json) {
    let mut parameters = Map::new();
    let mut headers = Map::new();
    if let Some(paths) = doc.get_mut("paths").and_then(Json::as_object_mut) {
        for item in paths.values_mut().filter_map(Json::as_object_mut) {
            // Operations are the entries with responses (not `summary`, `parameters`, …).
            for op in item.values_mut().filter(|v| v.get("responses").is_some()) {
                if let Some(ps) = op.get_mut("parameters").and_then(Json::as_array_mut) {
                    for p in ps {
                        hoist_parameter(p, &mut parameters);
                    }
                }
                if let Some(rs) = op.get_mut("responses").and_then(Json::as_object_mut) {
                    for r in rs.values_mut() {
                        hoist_headers(r, &mut headers);
                    }
                }
            }
        }
    }
    if let Some(components) = doc.get_mut("components").and_then(Json::as_object_mut) {
        if let Some(rs) = components.get_mut("responses").and_then(Json::as_object_mut) {
            for r in rs.values_mut() {
                hoist_headers(r, &mut headers);
            }
        }
        components.insert("parameters".into(), Json::Object(parameters));
        components.insert("headers".into(), Json::Object(headers));
    }
}

fn hoist_parameter(p: &mut Json, shared: &mut Map<String, Json>) {
    let (name, location) = (p.get("name").and_then(Json::as_str), p.get("in").and_then(Json::as_str));
    let Some(&(_, _, key)) = SHARED_PARAMETERS.iter().find(|(n, l, _)| Some(*n) == name && Some(*l) == location) else {
        return;
    };
    if shared.get(key).is_some_and(|first| first != p) {
        return;
    }
    let definition = std::mem::replace(p, json!({ "$ref": format!("#/components/parameters/{key}") }));
    shared.entry(key).or_insert(definition);
}

fn hoist_headers(response: &mut Json, shared: &mut Map<String, Json>) {
    let Some(hs) = response.get_mut("headers").and_then(Json::as_object_mut) else { return };
    for name in SHARED_HEADERS {
        let Some(h) = hs.get_mut(*name) else { continue };
        if shared.get(*name).is_some_and(|first| first != h) {
            continue;
        }
        let definition = std::mem::replace(h, json!({ "$ref": format!("#/components/headers/{name}") }));
        shared.entry(name.to_string()).or_insert(definition);
    }
}

/// An amount is meaningless without its currency: where `currency` is optional, giving an
/// amount on create makes it required (`validate::create` refuses the body otherwise).
fn add_dependent_required(doc: &mut Json) {
    for c in COLLECTIONS.iter().filter(|c| offers(c, WriteOp::Create)) {
        let currency_optional = c.field("currency").is_some_and(|f| !f.required);
        if !currency_optional {
            continue;
        }
        let deps: Map<String, Json> =
            validate::create_fields(c).filter(|f| f.ty == Ty::Money).map(|f| (f.name.to_string(), json!(["currency"]))).collect();
        if deps.is_empty() {
            continue;
        }
        if let Some(schema) = doc.pointer_mut(&format!("/components/schemas/{}Create", pascal(c.object))).and_then(Json::as_object_mut) {
            schema.insert("dependentRequired".into(), Json::Object(deps));
        }
    }
}

#[cfg(test)]
mod tests {
    //! The document is checked against the code that serves the API: every documented list
    //! parameter must parse, and bodies made from the create/update schemas alone (no registry
    //! knowledge beyond the rules JSON Schema cannot say) must validate.

    use std::collections::HashSet;

    use chrono::Utc;
    use serde_json::{json, Map, Value as Json};

    use super::*;
    use crate::domain::list::ListQuery;
    use crate::domain::record::Record;

    fn doc() -> Json {
        document("http://127.0.0.1:8080")
    }

    /// Resolves a local `$ref` (`#/a/b`) against the document.
    fn resolve<'a>(doc: &'a Json, v: &'a Json) -> &'a Json {
        match v.get("$ref").and_then(Json::as_str) {
            Some(r) => resolve(doc, doc.pointer(r.trim_start_matches('#')).unwrap_or_else(|| panic!("unresolved {r}"))),
            None => v,
        }
    }

    fn walk_refs(doc: &Json, v: &Json) {
        match v {
            Json::Object(m) => {
                if let Some(r) = m.get("$ref").and_then(Json::as_str) {
                    assert!(doc.pointer(r.trim_start_matches('#')).is_some(), "unresolved $ref {r}");
                }
                m.values().for_each(|x| walk_refs(doc, x));
            }
            Json::Array(a) => a.iter().for_each(|x| walk_refs(doc, x)),
            _ => {}
        }
    }

    #[test]
    fn covers_every_collection_with_unique_operations_and_resolvable_refs() {
        let d = doc();
        assert_eq!(d["openapi"], "3.1.0");
        assert_eq!(d["info"]["version"], version::CURRENT);
        assert_eq!(d["servers"][0]["url"], "http://127.0.0.1:8080");
        let mut ids = HashSet::new();
        for item in d["paths"].as_object().unwrap().values() {
            for op in item.as_object().unwrap().values().filter(|v| v.get("responses").is_some()) {
                let id = op["operationId"].as_str().unwrap();
                assert!(ids.insert(id.to_string()), "operationId {id} twice");
            }
        }
        for c in COLLECTIONS {
            let p = &d["paths"][format!("/v1/{}", c.name)];
            assert!(p["get"].is_object(), "{} has no list", c.name);
            assert_eq!(p["post"].is_object(), offers(c, WriteOp::Create), "{}", c.name);
            let r = &d["paths"][format!("/v1/{}/{{id}}", c.name)];
            assert!(r["get"].is_object());
            assert_eq!(r["patch"].is_object(), offers(c, WriteOp::Update), "{}", c.name);
            assert_eq!(r["delete"].is_object(), offers(c, WriteOp::Delete), "{}", c.name);
        }
        assert_eq!(d["paths"]["/v1/openapi.json"]["get"]["security"], json!([]));
        walk_refs(&d, &d);
    }

    /// Every event type has a webhook whose payload schema names its type and resource.
    #[test]
    fn webhooks_describe_the_23_events() {
        let d = doc();
        let hooks = d["webhooks"].as_object().unwrap();
        assert_eq!(hooks.len(), 23);
        for e in EVENT_TYPES {
            let r = hooks[e.name]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"].as_str().unwrap();
            let reference = json!({ "$ref": r });
            let schema = resolve(&d, &reference);
            assert_eq!(schema["properties"]["type"]["const"], json!(e.name));
            let object = schema["properties"]["data"]["properties"]["object"]["$ref"].as_str().unwrap();
            let c = crate::domain::collections::collection(e.collection).unwrap();
            assert_eq!(object, format!("#/components/schemas/{}", pascal(c.object)));
        }
        assert_eq!(event_schema_name("application.status_changed"), "ApplicationStatusChangedEvent");
    }

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

    #[test]
    fn every_documented_list_parameter_is_accepted() {
        let d = doc();
        for c in COLLECTIONS {
            let params = d["paths"][format!("/v1/{}", c.name)]["get"]["parameters"].as_array().unwrap();
            for p in params.iter().map(|p| resolve(&d, p)).filter(|p| p["in"] == "query") {
                let name = p["name"].as_str().unwrap();
                let values: Vec<String> = if name == "sort" {
                    // Every key the description calls sortable, ascending and descending.
                    let listed = p["description"].as_str().unwrap().split("Sortable:").nth(1).unwrap();
                    listed.split('`').skip(1).step_by(2).flat_map(|k| [k.to_string(), format!("-{k}")]).collect()
                } else {
                    vec![query_sample(&p["schema"])]
                };
                for value in values {
                    let mut pairs = vec![(name.to_string(), value.clone())];
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

    /// Builds a body from a schema alone. `full`: every property; otherwise the required
    /// ones. `nulls`: nullable optional properties are sent as `null`.
    struct Sampler<'a> {
        doc: &'a Json,
        counter: i64,
    }

    impl Sampler<'_> {
        fn value(&mut self, s: &Json, full: bool, nulls: bool) -> Json {
            let s = resolve(self.doc, s);
            if let Some(first) = s.get("anyOf").and_then(|a| a.get(0)) {
                return self.value(first, full, nulls);
            }
            if let Some(d) = s.get("default") {
                return d.clone();
            }
            if let Some(first) = s.get("enum").and_then(|e| e.get(0)) {
                return first.clone();
            }
            let types: Vec<&str> = match &s["type"] {
                Json::String(t) => vec![t.as_str()],
                Json::Array(ts) => ts.iter().filter_map(Json::as_str).collect(),
                _ => vec![],
            };
            self.counter += 1;
            let n = self.counter;
            match (types.first().copied(), s["format"].as_str()) {
                (Some("object"), _) => self.object(s, full, nulls),
                (Some("array"), _) => {
                    let min = s["minItems"].as_u64().unwrap_or(0).max(1) as usize;
                    Json::Array((0..min).map(|_| self.value(&s["items"], full, nulls)).collect())
                }
                (_, Some("uuid")) => json!(uuid::Uuid::now_v7().to_string()),
                // Increasing, so "later" fields in declaration order come after "earlier" ones.
                (_, Some("date")) => json!(format!("2026-01-{:02}", 1 + n % 28)),
                (_, Some("date-time")) => json!(format!("2026-01-01T{:02}:00:00Z", n % 24)),
                (_, Some("email")) => json!("someone@example.com"),
                (_, Some("uri")) => json!("https://www.example.com"),
                (Some("integer"), _) => s.get("minimum").cloned().unwrap_or(json!(1)),
                (Some("number"), _) => {
                    let min = s["minimum"].as_f64().or(s["exclusiveMinimum"].as_f64().map(|m| m + 1.0)).unwrap_or(1.0);
                    json!(min + 12.5)
                }
                (Some("boolean"), _) => json!(true),
                _ if s["pattern"] == "^[A-Z]{3}$" => json!("USD"),
                _ if s["pattern"] == "^[A-Z]{2}$" => json!("US"),
                _ => json!("text"),
            }
        }

        fn object(&mut self, s: &Json, full: bool, nulls: bool) -> Json {
            let required: Vec<&str> = s["required"].as_array().into_iter().flatten().filter_map(Json::as_str).collect();
            let mut out = Map::new();
            for (k, p) in s["properties"].as_object().into_iter().flatten() {
                let rp = resolve(self.doc, p);
                let can_null = rp["type"].as_array().is_some_and(|t| t.contains(&json!("null")))
                    || rp["anyOf"].as_array().is_some_and(|a| a.contains(&json!({"type": "null"})));
                if required.contains(&k.as_str()) || full {
                    out.insert(k.clone(), self.value(p, full, nulls));
                } else if nulls && can_null {
                    out.insert(k.clone(), Json::Null);
                }
            }
            // JSON Schema `dependentRequired`: a present key brings its dependencies.
            for (k, deps) in s["dependentRequired"].as_object().into_iter().flatten() {
                if out.contains_key(k) {
                    for dep in deps.as_array().into_iter().flatten().filter_map(Json::as_str) {
                        if !out.contains_key(dep) || out[dep].is_null() {
                            let v = self.value(&s["properties"][dep], full, false);
                            out.insert(dep.into(), v);
                        }
                    }
                }
            }
            Json::Object(out)
        }
    }

    /// The rules JSON Schema cannot say (they are in the schema's description), applied the
    /// way a reader of that description would.
    fn apply_rules(c: &Collection, body: &mut Json) {
        for rule in c.rules {
            match rule {
                Rule::OneOf(names) if names.iter().all(|n| body[n].is_null()) => {
                    body[names[0]] = json!(uuid::Uuid::now_v7().to_string());
                }
                Rule::Balanced(field) => {
                    body[field] = json!([
                        { "account": "cash", "debit": 100.5, "credit": 0 },
                        { "account": "rent_income", "debit": 0, "credit": 100.5 },
                    ]);
                }
                _ => {}
            }
        }
    }

    /// A stored record to update: it already satisfies the "one of" rules, as any stored record does.
    fn current(c: &Collection) -> Record {
        let mut values = std::collections::HashMap::new();
        for rule in c.rules {
            if let Rule::OneOf(names) = rule {
                values.insert(names[0], crate::domain::value::Val::Uuid(uuid::Uuid::now_v7()));
            }
        }
        // A stored record has its currency (create-only on some collections, so an
        // update body cannot give it).
        if c.field("currency").is_some_and(|f| f.required) {
            values.insert("currency", crate::domain::value::Val::Str("USD".into()));
        }
        Record { id: uuid::Uuid::now_v7(), livemode: false, created_at: Utc::now(), updated_at: Utc::now(), values, metadata: None }
    }

    #[test]
    fn bodies_made_from_the_write_schemas_are_accepted() {
        let d = doc();
        // A fresh sampler per body, so its dates and times increase within the body.
        let sampler = || Sampler { doc: &d, counter: 0 };
        for c in COLLECTIONS {
            let name = pascal(c.object);
            if offers(c, WriteOp::Create) {
                let schema = &d["components"]["schemas"][format!("{name}Create")];
                for (full, nulls) in [(false, false), (true, false), (false, true)] {
                    let mut body = sampler().value(schema, full, nulls);
                    apply_rules(c, &mut body);
                    if let Err(e) = validate::create(c, &body) {
                        panic!("{name}Create refuses a body built from its schema: {e}\n{body:#}");
                    }
                }
            }
            if offers(c, WriteOp::Update) {
                let schema = &d["components"]["schemas"][format!("{name}Update")];
                let body = sampler().value(schema, true, false);
                if body.as_object().is_some_and(|o| !o.is_empty()) {
                    if let Err(e) = validate::update(c, &body, &current(c)) {
                        panic!("{name}Update refuses a body built from its schema: {e}\n{body:#}");
                    }
                }
            }
        }
    }

    #[test]
    fn write_schemas_are_closed_and_list_only_writable_fields() {
        let d = doc();
        for c in COLLECTIONS.iter().filter(|c| offers(c, WriteOp::Create)) {
            let s = &d["components"]["schemas"][format!("{}Create", pascal(c.object))];
            assert_eq!(s["additionalProperties"], json!(false));
            for f in c.fields.iter().filter(|f| f.access == Access::ReadOnly) {
                assert!(s["properties"].get(f.name).is_none(), "{}.{} is read-only", c.name, f.name);
            }
        }
    }
}
