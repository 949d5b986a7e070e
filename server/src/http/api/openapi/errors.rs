//! Errors: the one error body (`components.schemas.Error`), one shared response per error
//! status (`components.responses`), and which statuses each operation documents.
//!
//! An operation documents a status only when a request made for it can get that status
//! (`tests/tests/it/api/openapi.rs` provokes each one on a running server). `429`
//! (per-credential rate limits, `http::rate_limit`) can answer any authenticated operation;
//! it is described once, as the shared `TooManyRequests` response with its headers and in
//! `info.description`, and no operation lists it.

use serde_json::json;
use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::header::HeaderBuilder;
use utoipa::openapi::path::OperationBuilder;
use utoipa::openapi::{ComponentsBuilder, ObjectBuilder, Ref, RefOr, ResponseBuilder, Type};

use super::schemas::uuid;
use super::{schema_ref, with_standard_headers};
use crate::domain::collections::COLLECTIONS;
use crate::domain::registry::{Collection, Ty};
use crate::domain::validate;
use crate::error::Error;

// ---------------------------------------------------------------------------------------------
// Which statuses each operation documents
// ---------------------------------------------------------------------------------------------

/// Every operation can fail on Gable's side (the database unreachable, say): `500`.
const INTERNAL: u16 = 500;

/// `GET /v1/openapi.json`: an unknown `Gable-Version`. It reads no storage and needs no
/// credential, so neither `401` nor `500` (short of a bug) can answer it.
pub(super) fn describe_itself() -> Vec<u16> {
    vec![400]
}

/// A list: bad parameters, no key, a key without the read scope.
pub(super) fn list(_: &Collection) -> Vec<u16> {
    vec![400, 401, 403, INTERNAL]
}

/// A retrieval: as a list, and a record that does not exist (or is not visible).
pub(super) fn get(_: &Collection) -> Vec<u16> {
    vec![400, 401, 403, 404, INTERNAL]
}

/// A create: `404` only when the body can name other records, `409` only where a create
/// can conflict with other records.
pub(super) fn create(c: &Collection) -> Vec<u16> {
    let mut s = vec![400, 401, 403];
    if create_finds_records(c) {
        s.push(404);
    }
    if crate::ops::create_answers(c).contains(&409) {
        s.push(409);
    }
    s.extend([413, 415, INTERNAL]);
    s
}

/// An update: the record may be missing; no update conflicts (unique values and state
/// rules are `400 validation_failed`, and statuses change through actions).
pub(super) fn update(_: &Collection) -> Vec<u16> {
    vec![400, 401, 403, 404, 413, 415, INTERNAL]
}

/// A delete takes no body (so no `413`/`415`); `409` when other records can reference it.
pub(super) fn delete(c: &Collection) -> Vec<u16> {
    let mut s = vec![400, 401, 403, 404];
    if delete_can_conflict(c) {
        s.push(409);
    }
    s.push(INTERNAL);
    s
}

/// An action: every action has states it does not leave, so `409` always.
pub(super) fn action(_: &Collection) -> Vec<u16> {
    vec![400, 401, 403, 404, 409, 413, 415, INTERNAL]
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
        409 => ("Conflict", "The request conflicts with the record's state or with other records."),
        413 => ("PayloadTooLarge", "The request body is larger than 1 MiB."),
        415 => ("UnsupportedMediaType", "The body is not sent as `Content-Type: application/json`."),
        422 => ("IdempotencyKeyReused", "The `Idempotency-Key` was used for another request (method, path or body); use a new key."),
        429 => ("TooManyRequests", "The credential is over its rate limit; retry after `Retry-After` seconds."),
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
        let headers = if status == 429 {
            with_rate_limit_headers(with_standard_headers(ResponseBuilder::new()))
        } else {
            with_standard_headers(ResponseBuilder::new())
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
        // 429 is described once, not per operation (see the module's doc).
        for item in d["paths"].as_object().unwrap().values() {
            assert!(item.as_object().unwrap().values().all(|op| op["responses"].get("429").is_none()));
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
        assert!(has(&responses("/v1/accounting-entries".into(), "post"), "409"));
        assert!(!has(&responses("/v1/units".into(), "post"), "409"));
        assert!(!has(&responses("/v1/units/{id}".into(), "patch"), "409"));
        assert_eq!(responses("/v1/openapi.json".into(), "get").iter().filter(|s| s.starts_with('4') || s.starts_with('5')).count(), 1);
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
