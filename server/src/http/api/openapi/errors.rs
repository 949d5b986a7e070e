//! Errors: the one error body (`components.schemas.Error`), one shared response per error
//! status (`components.responses`), and which statuses each operation documents.
//!
//! An operation documents exactly the statuses a request made for it can get: what its
//! handler answers, and what the layers in front of every handler answer (`layered`).
//! `tests/tests/it/api/openapi.rs` provokes each documented status of each operation on a
//! running server, and fails when an operation omits a status a layer gave it.

use serde_json::json;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::OperationBuilder;
use utoipa::openapi::{ComponentsBuilder, ObjectBuilder, Ref, RefOr, ResponseBuilder, Type};

use super::schemas::uuid;
use super::{schema_ref, with_standard_headers};
use crate::domain::collections::COLLECTIONS;
use crate::domain::registry::{Access, Collection, Ty};
use crate::domain::validate;
use crate::error::Error;

// ---------------------------------------------------------------------------------------------
// Which statuses each operation documents
// ---------------------------------------------------------------------------------------------

/// Every operation that reads storage can fail on Gable's side: `500`.
const INTERNAL: u16 = 500;

/// What an operation is, for the layers in front of its handler (`http::router`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Route {
    /// `GET /v1/openapi.json`: no credential, answered from memory.
    Public,
    /// Any other operation with this method: a credential, rate limits, storage.
    Api(Method),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Method {
    Get,
    Post,
    /// A `POST` whose body is a file (an import's upload): not held under an
    /// `Idempotency-Key`, so neither `409` nor `422` of that layer.
    Upload,
    Patch,
    Delete,
}

/// The statuses the layers can answer before (or instead of) the handler:
/// - every route: an unknown `Gable-Version` (`400`, `version`) and a declared body over
///   1 MiB (`413`, `admission`: refused before it is read, whatever the method);
/// - every operation with a credential: none or an invalid one (`401`, `auth`), over the
///   credential's rate limit (`429`, `rate_limit`), and `503` when it runs past the request
///   timeout or the database cannot serve it (`admission`, `Error::Unavailable`). The
///   description itself is answered from memory, so neither can delay it;
/// - every `POST`: its `Idempotency-Key` malformed (`400`) or in use by a request still
///   running (`409 idempotency_key_in_use`), or used before for another request (`422`).
pub(super) fn layered(route: Route) -> Vec<u16> {
    let mut s = vec![400, 413];
    if let Route::Api(method) = route {
        s.extend([401, 429, 503]);
        if method == Method::Post {
            s.extend([409, 422]);
        }
    }
    s
}

/// An operation's own statuses and its layers', in order, each once.
pub(super) fn with_layers(route: Route, own: &[u16]) -> Vec<u16> {
    let mut s = layered(route);
    s.extend_from_slice(own);
    s.sort_unstable();
    s.dedup();
    s
}

/// `GET /v1/openapi.json`: only its layers' (it reads no storage and needs no credential).
pub(super) fn describe_itself() -> Vec<u16> {
    with_layers(Route::Public, &[])
}

/// A list: bad parameters, a key without the read scope.
pub(super) fn list(_: &Collection) -> Vec<u16> {
    with_layers(Route::Api(Method::Get), &[400, 403, INTERNAL])
}

/// A retrieval: as a list, and a record that does not exist (or is not visible).
pub(super) fn get(_: &Collection) -> Vec<u16> {
    with_layers(Route::Api(Method::Get), &[400, 403, 404, INTERNAL])
}

/// A create: `404` only when the body can name other records; `409` is the idempotency
/// layer's everywhere, and also a conflict with other records where a create can have one.
pub(super) fn create(c: &Collection) -> Vec<u16> {
    let mut s = vec![400, 403, 415, INTERNAL];
    if create_finds_records(c) {
        s.push(404);
    }
    with_layers(Route::Api(Method::Post), &s)
}

/// An update: the record may be missing; a unique value another record holds
/// (`external_id`) is `409 conflict`; state rules are `400 validation_failed`, and
/// statuses change through actions.
pub(super) fn update(c: &Collection) -> Vec<u16> {
    let mut s = vec![400, 403, 404, 415, INTERNAL];
    if c.fields.iter().any(|f| f.unique && f.access == Access::Write) {
        s.push(409);
    }
    with_layers(Route::Api(Method::Patch), &s)
}

/// A delete takes no body (so no `415`); `409` when other records can reference it.
pub(super) fn delete(c: &Collection) -> Vec<u16> {
    let mut s = vec![400, 403, 404, INTERNAL];
    if delete_can_conflict(c) {
        s.push(409);
    }
    with_layers(Route::Api(Method::Delete), &s)
}

/// An action: every action has states it does not leave (`409`, also the idempotency
/// layer's).
pub(super) fn action(_: &Collection) -> Vec<u16> {
    with_layers(Route::Api(Method::Post), &[400, 403, 404, 409, 415, INTERNAL])
}

/// Whether a create can conflict with other records (`409 conflict`), beyond the
/// idempotency layer's `409`: a create's description says so.
pub(super) fn create_can_conflict(c: &Collection) -> bool {
    crate::ops::create_answers(c).contains(&409)
}

/// Whether a create body can name a record that does not exist (`404` naming the field).
pub(super) fn create_finds_records(c: &Collection) -> bool {
    crate::ops::create_answers(c).contains(&404) || validate::create_fields(c).any(|f| matches!(f.ty, Ty::Ref(_) | Ty::RefList(_)))
}

/// References (collection, field) whose records go with the record they name: the
/// migrations' `ON DELETE CASCADE` (a delivery attempt goes with its subscription and its
/// event). They never make a delete conflict. The registry does not say this, so it is
/// listed here, and a test holds the list to the migrations.
const GO_WITH_TARGET: &[(&str, &str)] = &[("webhook-deliveries", "webhook_id"), ("webhook-deliveries", "event_id")];

/// Whether some collection holds a reference (a foreign key, `store::schema`) to records of
/// this one that does not go with them, so that deleting one can be `409 conflict`.
pub(super) fn delete_can_conflict(c: &Collection) -> bool {
    COLLECTIONS
        .iter()
        .flat_map(|other| other.fields.iter().map(move |f| (other.name, f)))
        .any(|(other, f)| f.ty == Ty::Ref(c.name) && !GO_WITH_TARGET.contains(&(other, f.name)))
}

// ---------------------------------------------------------------------------------------------
// The error body and the shared error responses
// ---------------------------------------------------------------------------------------------

/// One example of every error the API answers with: the status and code come from
/// `Error::status_and_code`, so this list only decides which are documented.
pub(super) fn known_errors() -> Vec<(u16, &'static str)> {
    let samples = [
        Error::InvalidRequest { message: String::new(), param: None },
        Error::parameter("", ""),
        Error::InvalidCursor,
        Error::InvalidJson(String::new()),
        Error::validation("", ""),
        Error::UnsupportedVersion(String::new()),
        Error::Unauthenticated(String::new()),
        Error::KeyEnvironmentMismatch(String::new()),
        Error::insufficient_scope(""),
        Error::PropertyForbidden(String::new()),
        Error::not_found(""),
        Error::MethodNotAllowed { message: String::new(), allow: vec![] },
        Error::InvalidStateTransition { message: String::new(), current: String::new(), allowed: vec![] },
        Error::Immutable(String::new()),
        Error::Conflict(String::new()),
        Error::PayloadTooLarge(0),
        Error::UnsupportedMediaType(String::new()),
        Error::RateLimited { retry_after_secs: 1 },
        Error::MissingIdempotencyKey(String::new()),
        Error::IdempotencyKeyInUse { retry_after_secs: 1 },
        Error::IdempotencyKeyReused(String::new()),
        Error::internal(anyhow::anyhow!("sample")),
        Error::Unavailable { message: String::new(), retry_after_secs: 1 },
    ];
    samples
        .iter()
        .map(|e| {
            let (status, code) = e.status_and_code();
            (status.as_u16(), code)
        })
        .collect()
}

/// The shared error response of a status: its component name and what it means.
fn error_response_name(status: u16) -> (&'static str, &'static str) {
    match status {
        400 => ("BadRequest", "The request is malformed or a value is invalid; `param` names it."),
        401 => ("Unauthorized", "No valid credential, or a key used on the other environment's address."),
        403 => ("Forbidden", "The credential lacks the scope (named in `details.required_scope`) or the property."),
        404 => ("NotFound", "No such record visible to this credential (another tenant's records are never visible)."),
        405 => ("MethodNotAllowed", "The collection does not offer this method."),
        409 => (
            "Conflict",
            "The request conflicts with the record's state or with other records, or its `Idempotency-Key` is in use by a \
             request still running (`idempotency_key_in_use`, with `Retry-After`: the seconds its hold has left at most).",
        ),
        413 => ("PayloadTooLarge", "The request body is larger than 1 MiB."),
        415 => ("UnsupportedMediaType", "The body is not sent as `Content-Type: application/json`."),
        422 => ("IdempotencyKeyReused", "The `Idempotency-Key` was used for another request (method, path or body); use a new key."),
        429 => ("TooManyRequests", "The credential is over its rate limit; retry after `Retry-After` seconds."),
        503 => (
            "ServiceUnavailable",
            "Gable could not serve the request in time: the database is unreachable or busy, or the request ran past the \
             request timeout. A refused write changed nothing, and a write cut by the timeout is safe to retry with the \
             same `Idempotency-Key`. Retry after `Retry-After` seconds.",
        ),
        _ => ("InternalError", "Something went wrong on Gable's side; the message holds no internals."),
    }
}

pub(super) fn error_ref(status: u16) -> RefOr<utoipa::openapi::Response> {
    RefOr::Ref(Ref::from_response_name(error_response_name(status).0))
}

/// Adds the shared error responses of these statuses to an operation.
pub(super) fn with_errors(mut op: OperationBuilder, statuses: &[u16]) -> OperationBuilder {
    for s in statuses {
        op = op.response(s.to_string(), error_ref(*s));
    }
    op
}

/// `components.responses`: one per error status, each listing its codes.
pub(super) fn responses(mut b: ComponentsBuilder) -> ComponentsBuilder {
    let known = known_errors();
    let mut statuses: Vec<u16> = known.iter().map(|(s, _)| *s).collect();
    statuses.sort_unstable();
    statuses.dedup();
    for status in statuses {
        let codes: Vec<&str> = known.iter().filter(|(s, _)| *s == status).map(|(_, c)| *c).collect();
        let (name, what) = error_response_name(status);
        let listed: Vec<String> = codes.iter().map(|c| format!("`{c}`")).collect();
        let headers = match status {
            429 => with_rate_limit_headers(with_standard_headers(ResponseBuilder::new())),
            409 | 503 => with_standard_headers(ResponseBuilder::new()).header("Retry-After", retry_after(status)),
            _ => with_standard_headers(ResponseBuilder::new()),
        };
        let resp = headers.description(format!("{what} Codes: {}.", listed.join(", "))).content(
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
        b = b.response(name, resp.build());
    }
    b
}

/// `Retry-After` on a `409` (only with `idempotency_key_in_use`) and a `503`.
fn retry_after(status: u16) -> utoipa::openapi::header::Header {
    let description = if status == 409 {
        "With `idempotency_key_in_use` only: whole seconds until the running request's hold on the key ends at the latest."
    } else {
        "Whole seconds after which a retry may succeed."
    };
    HeaderBuilder::new().schema(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(1))).description(Some(description)).build()
}

/// `Retry-After` and the rate-limit fields of a refused request (`http::rate_limit`).
fn with_rate_limit_headers(r: ResponseBuilder) -> ResponseBuilder {
    let header =
        |schema: ObjectBuilder, description: &str| HeaderBuilder::new().schema(schema).description(Some(description.to_string())).build();
    let string = || ObjectBuilder::new().schema_type(Type::String);
    r.header(
        "Retry-After",
        header(
            ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(1)),
            "Whole seconds (rounded up) after which a request of this credential is allowed again.",
        ),
    )
    .header("RateLimit-Policy", header(string(), RATELIMIT_POLICY))
    .header("RateLimit", header(string(), RATELIMIT))
}

/// What the two fields say; every authenticated response carries them.
pub(super) const RATELIMIT_POLICY: &str = "The credential's quota (IETF draft RateLimit fields): `\"default\";q=<requests>;w=1`, \
     requests per one-second window; live and test keys have quotas of their own.";
pub(super) const RATELIMIT: &str = "What is left of the quota: `\"default\";r=<remaining>;t=<seconds>`, the requests left now \
     and the whole seconds until the full quota is available again.";

pub(super) fn error_schema() -> ObjectBuilder {
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

#[cfg(test)]
mod tests {
    use super::super::tests::doc;
    use super::*;

    /// Every status an operation documents has its shared response, and every error
    /// response is one of the statuses `Error` maps to: nothing Gable cannot answer.
    #[test]
    fn operations_document_only_statuses_gable_answers() {
        let d = doc();
        let known: Vec<u16> = known_errors().iter().map(|(s, _)| *s).collect();
        let responses = d["components"]["responses"].as_object().unwrap();
        for (path, item) in d["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap().iter().filter(|(_, v)| v.get("responses").is_some()) {
                for (status, r) in op["responses"].as_object().unwrap() {
                    let n: u16 = status.parse().unwrap_or_else(|_| panic!("{method} {path}: status {status}"));
                    if n >= 400 {
                        assert!(known.contains(&n), "{method} {path}: {n} is not a status of `Error`");
                        let name = r["$ref"].as_str().and_then(|r| r.strip_prefix("#/components/responses/")).unwrap();
                        assert!(responses.contains_key(name), "{method} {path}: {name}");
                    }
                }
            }
        }
        // What the layers answer is on every operation they stand in front of.
        for (path, item) in d["paths"].as_object().unwrap() {
            for (method, op) in item.as_object().unwrap().iter().filter(|(_, v)| v.get("responses").is_some()) {
                let has = |s: &str| op["responses"].get(s).is_some();
                let authenticated = path != "/v1/openapi.json";
                for s in ["400", "413"] {
                    assert!(has(s), "{method} {path} lacks {s}");
                }
                for s in ["401", "429", "503"] {
                    assert_eq!(has(s), authenticated, "{method} {path}: {s}");
                }
                // An upload is not held under an `Idempotency-Key`.
                let upload = op["requestBody"]["content"].get("text/csv").is_some();
                for s in ["409", "422"] {
                    assert!(method != "post" || upload || has(s), "{method} {path} lacks {s}");
                }
            }
        }
        for (name, header) in [("Conflict", "Retry-After"), ("ServiceUnavailable", "Retry-After")] {
            assert!(d["components"]["responses"][name]["headers"][header].is_object(), "{name} lacks {header}");
        }
        let too_many = &d["components"]["responses"]["TooManyRequests"];
        assert!(too_many["description"].as_str().unwrap().contains("`rate_limited`"), "{too_many}");
        for h in ["Retry-After", "RateLimit-Policy", "RateLimit", "Request-Id"] {
            assert!(too_many["headers"][h].is_object(), "TooManyRequests lacks {h}: {too_many}");
        }
    }

    /// The registry's answers are what the description says, both ways.
    #[test]
    fn conditional_statuses_follow_the_registry() {
        let d = doc();
        let responses = |path: String, method: &str| -> Vec<String> {
            d["paths"][&path][method]["responses"].as_object().map(|r| r.keys().cloned().collect()).unwrap_or_default()
        };
        let has = |rs: &[String], s: &str| rs.iter().any(|r| r == s);
        // A collection nothing references, and one many do.
        let never_referenced =
            COLLECTIONS.iter().find(|c| super::super::offers(c, crate::domain::registry::WriteOp::Delete) && !delete_can_conflict(c));
        let c = never_referenced.expect("some deletable collection is referenced by nothing");
        assert!(!has(&responses(format!("/v1/{}/{{id}}", c.name), "delete"), "409"), "{}", c.name);
        assert!(has(&responses("/v1/units/{id}".into(), "delete"), "409"));
        // Roles name no other record; leases name their unit.
        assert!(!has(&responses("/v1/roles".into(), "post"), "404"));
        assert!(has(&responses("/v1/leases".into(), "post"), "404"));
        // Every POST may meet a key in use; only some creates conflict with other records.
        let conflict_text = |path: &str| d["paths"][path]["post"]["description"].as_str().unwrap().contains("`409 conflict`");
        assert!(conflict_text("/v1/accounting-entries") && !conflict_text("/v1/units"));
        // An update conflicts only over a unique value (`external_id`), which webhooks lack.
        assert!(has(&responses("/v1/units/{id}".into(), "patch"), "409"));
        assert!(!has(&responses("/v1/webhooks/{id}".into(), "patch"), "409"));
        assert_eq!(responses("/v1/openapi.json".into(), "get").iter().filter(|s| s.starts_with('4') || s.starts_with('5')).count(), 2);
        // Referenced only by the delivery register, whose attempts go with their subscription.
        assert!(!has(&responses("/v1/webhooks/{id}".into(), "delete"), "409"));
    }

    /// `GO_WITH_TARGET` is exactly the collections' `ON DELETE CASCADE` foreign keys, in the
    /// migrations of both databases.
    #[test]
    fn references_that_go_with_their_target_are_the_cascades() {
        for dialect in ["sqlite", "postgres"] {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../migrations").join(dialect);
            let mut files: Vec<_> = std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).collect();
            files.sort();
            let mut found = vec![];
            for f in files {
                let sql = std::fs::read_to_string(f).unwrap();
                let mut table = String::new();
                for line in sql.lines().map(str::trim) {
                    for start in ["CREATE TABLE ", "ALTER TABLE "] {
                        if let Some(rest) = line.strip_prefix(start) {
                            table = rest.split([' ', '(']).next().unwrap_or_default().to_string();
                        }
                    }
                    if !(line.contains("FOREIGN KEY (") && line.contains("ON DELETE CASCADE")) {
                        continue;
                    }
                    let columns = line.split("FOREIGN KEY (").nth(1).and_then(|r| r.split(')').next()).unwrap();
                    let column = columns.split(',').next_back().unwrap().trim();
                    // Only collections' tables: the console's own tables are not described.
                    if let Some(c) = COLLECTIONS.iter().find(|c| c.table == table) {
                        found.push((c.name, column.to_string()));
                    }
                }
            }
            let mut want: Vec<(&str, String)> = GO_WITH_TARGET.iter().map(|(c, f)| (*c, f.to_string())).collect();
            found.sort();
            found.dedup();
            want.sort();
            assert_eq!(found, want, "{dialect}");
        }
    }
}
