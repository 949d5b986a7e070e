//! The OpenAPI 3.1 description of the `/v1` API, generated from the collection registry
//! (`docs/api.md`) and served, without credentials, at `GET /v1/openapi.json` on both
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
//! - statuses and codes: `Error::status_and_code`;
//! - the few operations with handlers of their own: the table in `commands`.
//!
//! It describes only what the server does today: two credentials (API keys as bearer
//! tokens, and OAuth 2.1 access tokens with the operation's scope), and for each operation
//! only the statuses a request can actually get
//! (`tests/tests/it/api/openapi.rs` provokes every one of them on a running server).
//!
//! One module per concern: `schemas` (records, write bodies, envelopes), `paths`
//! (operations and parameters), `commands` (the table of operations on a record beyond its
//! collection's and its actions: webhook rotation, test sends, recovery, replays), `errors`
//! (the error body, the shared error responses and which statuses each operation documents),
//! `events` (the `webhooks` section and how deliveries are signed). This one assembles the
//! document and holds what the others share.
//!
//! The document is built with utoipa's builders. utoipa 5 cannot express a few things, which
//! are added to the serialised JSON afterwards: `components.parameters` and
//! `components.headers` (`hoist_shared`: utoipa has neither map, and its operations cannot
//! hold a `$ref` parameter or header), JSON Schema's `dependentRequired` and `anyOf` of
//! `required` lists (`rules::add_cross_field_rules`), and the `webhooks` section
//! (`events::add_webhooks`).

mod answers;
mod commands;
mod errors;
mod event_stream;
mod events;
mod imports;
mod links;
mod parts;
mod paths;
mod request_log_stream;
mod rules;
mod sandbox;
mod schemas;

use std::sync::{Arc, Mutex, OnceLock};

use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Map, Value as Json};
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::security::{
    AuthorizationCode, Flow, HttpAuthScheme, HttpBuilder, OAuth2, Scopes, SecurityRequirement, SecurityScheme,
};
use utoipa::openapi::tag::TagBuilder;
use utoipa::openapi::{
    Components, ComponentsBuilder, InfoBuilder, KnownFormat, ObjectBuilder, OpenApiBuilder, Ref, RefOr, ResponseBuilder, Schema,
    SchemaFormat, ServerBuilder, Tag, Type,
};

use crate::domain::collections::COLLECTIONS;
use crate::domain::list::{DEFAULT_LIMIT, MAX_LIMIT};
use crate::domain::registry::{Collection, WriteOp};
use crate::error::Error;
use crate::http::asset::Asset;
use crate::http::state::ApiState;
use crate::http::version;

/// `GET /v1/openapi.json`: the description for the listener it is asked on (its `servers`
/// entry is that listener's public address). Public, like any API reference. Gzipped for
/// clients that take it (about 53 KB instead of 740 KB) and revalidated by `ETag`.
pub async fn serve(State(st): State<ApiState>, headers: HeaderMap) -> Response {
    match rendered(st.public_url(), st.livemode) {
        Ok(doc) => {
            // Revalidated on every use (`no-cache`): a new release may describe more.
            let mut res = doc.respond(&headers, "public, no-cache");
            // Readable by API explorers hosted elsewhere; it holds nothing secret.
            res.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
            res
        }
        Err(e) => e.into_response(),
    }
}

/// The document, serialised and compressed once per public address. A process has two
/// listeners, but a test process may start many servers, so only the few most recent are kept.
fn rendered(public_url: &str, livemode: bool) -> Result<Arc<Asset>, Error> {
    const KEEP: usize = 4;
    type Rendered = Vec<(String, bool, Arc<Asset>)>;
    static CACHE: OnceLock<Mutex<Rendered>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let hit =
        cache.lock().ok().and_then(|c| c.iter().find(|(url, live, _)| url == public_url && *live == livemode).map(|(_, _, a)| a.clone()));
    if let Some(doc) = hit {
        return Ok(doc);
    }
    let body = serde_json::to_vec(&document(public_url, livemode)).map_err(Error::internal)?;
    let doc = Arc::new(Asset::new("application/json", body));
    // Rendering built and dropped several MB of schema objects.
    crate::observe::memory::release_unused();
    if let Ok(mut c) = cache.lock() {
        if c.len() >= KEEP {
            c.remove(0);
        }
        c.push((public_url.to_string(), livemode, doc.clone()));
    }
    Ok(doc)
}

/// The whole OpenAPI 3.1 document for a listener whose base address is `public_url`
/// (without `/v1`; the paths carry it): production's (`livemode`) or the sandbox's, which
/// differ where a field's rules do (`rules::add_environment_rules`).
pub fn document(public_url: &str, livemode: bool) -> Json {
    let api = OpenApiBuilder::new()
        .info(InfoBuilder::new().title("Gable API").version(version::CURRENT).description(Some(api_description())).build())
        .servers(Some([ServerBuilder::new()
            .url(public_url)
            .description(Some("This listener's base address: production (live keys) or sandbox (test keys)."))
            .build()]))
        .paths(paths::paths())
        .components(Some(components()))
        .tags(Some(tags()))
        .build();
    let mut doc = serde_json::to_value(&api).expect("an OpenAPI document serialises to JSON");
    hoist_shared(&mut doc);
    rules::add_cross_field_rules(&mut doc);
    paths::add_filter_rules(&mut doc);
    rules::add_environment_rules(&mut doc, livemode);
    links::add_links(&mut doc);
    events::add_webhooks(&mut doc);
    doc
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
         `sort` (comma-separated sortable keys, `-` for descending, `id` breaks ties), `fields[<collection>]` \
         (sparse fieldset; `id` and `object` are always returned) and the filters: `filter[<field>]=<value>` \
         (equals) and `filter[<field>][<op>]=<value>` with `ne` (does not equal; records without a value \
         included), `gt`, `gte`, `lt`, `lte` (compares), `in`, `nin` (is one of, is none of: a comma-separated \
         list, or the key repeated), `exists` (`true`: has a value, `false`: has none) and, on text fields, \
         `contains` (holds the text, ignoring case). All filters given \
         must hold. A filter on an amount needs `filter[currency]` beside it. Unknown or unsupported \
         parameters are `400`, never ignored.\n\n\
         **Writes.** Unknown fields are refused (`400 validation_failed` naming the field). Money is a \
         decimal amount in the major unit of the record's ISO 4217 `currency`, never with more \
         decimals than the currency has. Statuses governed by a state machine are read-only.\n\n\
         **Versions.** `/v1` in the path; `Gable-Version: YYYY-MM-DD` pins a dated version (current: \
         `{version}`).\n\n\
         **Rate limits.** Each credential may make a number of requests per second, live and test \
         keys each their own (bursts up to one second's worth). Every response to an authenticated \
         request carries `RateLimit-Policy` (`\"default\";q=<requests>;w=1`) and `RateLimit` \
         (`\"default\";r=<remaining>;t=<seconds until the full quota is back>`). Over the limit any \
         authenticated operation answers `429 rate_limited` (the `TooManyRequests` response) with \
         `Retry-After` in whole seconds, and the refused request does nothing.\n\n\
         **Availability.** Any operation that reads or writes data may answer `503 service_unavailable` \
         (the `ServiceUnavailable` response, with `Retry-After`) when the database cannot serve it in time \
         or the request runs past the server's request timeout: a refused write changed nothing, and a write \
         the timeout cut may be retried safely with the same `Idempotency-Key`. A body over 1 MiB is \
         `413` on any operation, refused before it is read.\n\n\
         **Idempotency.** Every `POST` takes an `Idempotency-Key` header (required on `POST /v1/payments`): \
         the same key with the same request replays the stored answer with `Idempotent-Replayed: true`; \
         while the first request runs, the same request again answers `409 idempotency_key_in_use` (with \
         `Retry-After`); with another method, path or body `422 idempotency_key_reused` (the \
         `IdempotencyKeyReused` response). Every `POST` documents both. \
         Refusals are stored and replayed too; keys are kept 24 hours.\n\n\
         **Sandbox.** On the sandbox address, `POST /v1/payments` is `createTestPayment`: `scenario` \
         (`succeeded`, `failed`, `reversed`) is required and runs at once, so a sandbox payment is never \
         `pending` (the `succeed`, `fail` and `reverse` actions record what really happened in live mode; \
         `reverse` also works on a succeeded test payment). `GET /v1/sandbox/clock` and \
         `POST /v1/sandbox/clock/advance` move the sandbox's time forward, running what time causes.\n\n\
         {webhooks}",
        webhooks = events::delivery_text(),
        n = COLLECTIONS.len(),
        max = MAX_LIMIT,
        default = DEFAULT_LIMIT,
        version = version::CURRENT,
    )
}

fn tags() -> Vec<Tag> {
    let mut tags = vec![TagBuilder::new().name("meta").description(Some("The API description itself.")).build()];
    tags.extend(COLLECTIONS.iter().map(|c| TagBuilder::new().name(c.name).description(Some(c.doc)).build()));
    tags.push(
        TagBuilder::new()
            .name(sandbox::TAG)
            .description(Some("The sandbox's own clock: move its time forward to rehearse what time causes."))
            .build(),
    );
    tags
}

fn components() -> Components {
    let b = ComponentsBuilder::new()
        .schema("Error", errors::error_schema())
        .security_scheme(API_KEY, api_key_scheme())
        .security_scheme(OAUTH2, oauth2_scheme());
    errors::responses(imports::register(sandbox::register(commands::register(answers::register(paths::register_filters(
        schemas::register(b),
    ))))))
    .build()
}

// ---------------------------------------------------------------------------------------------
// Credentials
// ---------------------------------------------------------------------------------------------

/// The names of the security schemes: what `http::auth::Principal` accepts.
const API_KEY: &str = "api_key";
const OAUTH2: &str = "oauth2";

/// What an operation accepts: an API key, or an OAuth access token with `scope` (none
/// named: any token). A key's own scopes are checked the same way.
fn securities(scope: Option<&str>) -> Vec<SecurityRequirement> {
    vec![
        SecurityRequirement::new(API_KEY, Vec::<String>::new()),
        SecurityRequirement::new(OAUTH2, scope.map(|s| vec![s.to_string()]).unwrap_or_default()),
    ]
}

/// OAuth 2.1's authorization code flow with PKCE (`docs/oauth.md`). Its endpoints are at
/// the production address's root (`/oauth/…`, an absolute path, so they resolve against
/// the server's host whatever its `/v1`).
fn oauth2_scheme() -> SecurityScheme {
    let scopes = Scopes::from_iter(crate::domain::scopes::all().into_iter().map(|s| {
        let words = crate::domain::oauth::describe_scope(&s);
        (s, words)
    }));
    let flow = AuthorizationCode::with_refresh_url("/oauth/authorize", "/oauth/token", scopes, "/oauth/token");
    let mut scheme = OAuth2::new([Flow::AuthorizationCode(flow)]);
    scheme.description = Some(
        "OAuth 2.1 for third-party apps: authorization code with PKCE (S256, mandatory), rotating refresh tokens.          An access token (`gat_…`) acts for the user who granted it, in their tenant, with the granted scopes,          on its app's environment's address. Metadata: `/.well-known/oauth-authorization-server`."
            .into(),
    );
    SecurityScheme::OAuth2(scheme)
}

fn api_key_scheme() -> SecurityScheme {
    SecurityScheme::Http(
        HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .bearer_format("gbl_live_… | gbl_test_…")
            .description(Some(
                "An API key as a bearer token: `Authorization: Bearer gbl_live_…` on production, \
                 `gbl_test_…` on the sandbox (a key works only on its own environment's address). \
                 Keys are created in the console, shown once, and carry their own scopes: \
                 lists and retrievals need `{collection}:read`; creates, updates, deletes and \
                 actions need `{collection}:write`.",
            ))
            .build(),
    )
}

// ---------------------------------------------------------------------------------------------
// Names and shared pieces
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

/// Whether the API offers a write on a collection: exactly when the handler does not refuse it.
fn offers(c: &Collection, w: WriteOp) -> bool {
    c.refuse(w).is_none()
}

/// Whether the collection's create takes a JSON body (an import's takes its file).
fn json_create(c: &Collection) -> bool {
    offers(c, WriteOp::Create) && !crate::domain::import::is_uploaded(c)
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
// Shared parameters and headers, hoisted into components (utoipa cannot reference them)
// ---------------------------------------------------------------------------------------------

/// Parameters defined once in `components.parameters` and referenced everywhere:
/// (name, in, component key).
const SHARED_PARAMETERS: &[(&str, &str, &str)] = &[
    ("Gable-Version", "header", "GableVersion"),
    ("Idempotency-Key", "header", "IdempotencyKey"),
    ("limit", "query", "limit"),
    ("cursor", "query", "cursor"),
    ("id", "path", "id"),
];
/// Response headers defined once in `components.headers`.
const SHARED_HEADERS: &[&str] = &["Request-Id", "Gable-Version", "RateLimit-Policy", "RateLimit"];

/// Moves the shared parameters, response headers and success responses, built inline, into
/// `components.parameters` / `components.headers` / `components.responses` and leaves
/// `$ref`s in their place. An occurrence that differs from the first one stays inline, so
/// nothing is ever lost.
fn hoist_shared(doc: &mut Json) {
    let mut parameters = Map::new();
    let mut headers = Map::new();
    let mut successes = Map::new();
    if let Some(paths) = doc.get_mut("paths").and_then(Json::as_object_mut) {
        for item in paths.values_mut().filter_map(Json::as_object_mut) {
            if let Some(ps) = item.get_mut("parameters").and_then(Json::as_array_mut) {
                for p in ps {
                    hoist_parameter(p, &mut parameters);
                }
            }
            // Operations are the entries with responses (not `summary`, `parameters`, …).
            for op in item.values_mut().filter(|v| v.get("responses").is_some()) {
                if let Some(ps) = op.get_mut("parameters").and_then(Json::as_array_mut) {
                    for p in ps {
                        hoist_parameter(p, &mut parameters);
                    }
                }
                if let Some(rs) = op.get_mut("responses").and_then(Json::as_object_mut) {
                    for (status, r) in rs.iter_mut() {
                        hoist_headers(r, &mut headers);
                        // A create's `201` is its own: it gets the create's links (`links`).
                        if status == "200" {
                            hoist_success(r, &mut successes);
                        }
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
        if let Some(rs) = components.get_mut("responses").and_then(Json::as_object_mut) {
            rs.extend(successes);
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
    // A parameter some operations require (`Idempotency-Key` on payments) is shared as two.
    let key = if p.get("required") == Some(&Json::Bool(true)) { format!("{key}Required") } else { key.to_string() };
    if shared.get(&key).is_some_and(|first| first != p) {
        return;
    }
    let definition = std::mem::replace(p, json!({ "$ref": format!("#/components/parameters/{key}") }));
    shared.entry(key).or_insert(definition);
}

/// A success response, shared under its body's name (`UnitEnvelope` → `Unit`): the
/// retrieval, update and actions of a collection answer the same.
fn hoist_success(response: &mut Json, shared: &mut Map<String, Json>) {
    if response.get("links").is_some() || response.get("$ref").is_some() {
        return;
    }
    let Some(schema) = response.pointer("/content/application~1json/schema/$ref").and_then(Json::as_str) else { return };
    let name = schema.trim_start_matches("#/components/schemas/");
    let key = name.strip_suffix("Envelope").unwrap_or(name).to_string();
    if shared.get(&key).is_some_and(|first| first != response) {
        return;
    }
    let definition = std::mem::replace(response, json!({ "$ref": format!("#/components/responses/{key}") }));
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

#[cfg(test)]
mod tests {
    //! The document as a whole; each module's tests check its own part against the code that
    //! serves requests.

    use std::collections::HashSet;

    use serde_json::{json, Value as Json};

    use super::*;

    pub(super) fn doc() -> Json {
        document("http://127.0.0.1:8080", false)
    }

    /// Resolves a local `$ref` (`#/a/b`) against the document.
    pub(super) fn resolve<'a>(doc: &'a Json, v: &'a Json) -> &'a Json {
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

    /// The document's size is watched, not left to grow unnoticed (docs/api.md, "Its size,
    /// decided"): every status and exact value made it 740 KB, about 53 KB gzipped as
    /// served; describing expansions on every operation that answers with records, 879 KB
    /// and 61 KB; the request log's collection, 906 KB and 64.5 KB; `external_id` on 31
    /// collections (its rule one component, `ExternalId`), 944 KB and 67.4 KB; bulk import
    /// (the `imports` collection, its upload and error report), 968 KB and 71.0 KB. A change
    /// that crosses a budget has to say why in the docs and move it.
    #[test]
    fn the_document_stays_within_its_size_budget() {
        const BUDGET: usize = 1_000_000;
        const GZIPPED_BUDGET: usize = 72_000;
        for livemode in [true, false] {
            let body = serde_json::to_vec(&document("https://api.example.com", livemode)).unwrap();
            let mut zipped = Vec::new();
            let mut enc = flate2::write::GzEncoder::new(&mut zipped, flate2::Compression::best());
            std::io::Write::write_all(&mut enc, &body).unwrap();
            enc.finish().unwrap();
            assert!(body.len() <= BUDGET, "livemode {livemode}: {} bytes, over the budget of {BUDGET}", body.len());
            assert!(zipped.len() <= GZIPPED_BUDGET, "livemode {livemode}: {} bytes gzipped, over {GZIPPED_BUDGET}", zipped.len());
        }
    }

    /// Two schemes, API keys and OAuth 2.1, and every operation that needs a credential
    /// takes either, the OAuth token with the scope the operation needs.
    #[test]
    fn every_operation_takes_a_key_or_an_oauth_token_with_its_scope() {
        let d = doc();
        let schemes = d["components"]["securitySchemes"].as_object().unwrap();
        assert_eq!(schemes.keys().collect::<Vec<_>>(), vec![API_KEY, OAUTH2]);
        let flow = &schemes[OAUTH2]["flows"]["authorizationCode"];
        assert_eq!((flow["authorizationUrl"].clone(), flow["tokenUrl"].clone()), (json!("/oauth/authorize"), json!("/oauth/token")));
        assert_eq!(flow["scopes"]["payments:write"], json!("Read, create and change payments"));
        for (path, item) in d["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap().iter().filter(|(_, v)| v.get("responses").is_some()) {
                if path == "/v1/openapi.json" {
                    assert_eq!(op["security"], json!([]));
                    continue;
                }
                let sec = op["security"].as_array().unwrap();
                assert_eq!(sec.len(), 2, "{method} {path}");
                assert_eq!(sec[0], json!({ API_KEY: [] }), "{method} {path}");
                let scopes = sec[1][OAUTH2].as_array().unwrap();
                // The scope the operation's description says it needs, when it names one.
                let named = op["description"].as_str().and_then(|d| d.split("Needs the scope `").nth(1)).and_then(|r| r.split('`').next());
                if let Some(scope) = named {
                    assert_eq!(scopes, &vec![json!(scope)], "{method} {path}");
                }
            }
        }
    }
}
