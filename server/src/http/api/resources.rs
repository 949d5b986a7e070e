//! The generic collection endpoints, for every collection:
//! `GET/POST /v1/{resource}` and `GET/PATCH/DELETE /v1/{resource}/{id}`.
//! Handlers are thin: authorise, parse, call the operations, wrap. Every answer with
//! records takes `fields[...]` and `expand[]` (`domain::answer`).

use axum::extract::{FromRequest, Path, RawQuery, Request, State};
use axum::http::{StatusCode, Uri};
use axum::response::Response;
use serde_json::json;

use super::query;
use crate::domain::answer::Answer;
use crate::domain::collections::collection;
use crate::domain::list::ListQuery;
use crate::domain::record::Record;
use crate::domain::registry::{Collection, WriteOp};
use crate::domain::scopes::Access;
use crate::domain::workflow;
use crate::error::{Error, Result};
use crate::http::auth::Principal;
use crate::http::body::JsonBody;
use crate::http::envelope;
use crate::http::idempotency::Idem;
use crate::http::state::ApiState;
use crate::ops::Work;

fn resolve(name: &str) -> Result<&'static Collection> {
    collection(name).ok_or_else(|| Error::NotFound { message: format!("there is no collection named `{name}`"), param: None })
}

/// The answer's shape (`fields[...]` and `expand[]`) of an operation that takes no other
/// query parameter, its expansions checked against the credential before anything is read.
fn answer_of(c: &'static Collection, cred: &Principal, raw: Option<String>) -> Result<Answer> {
    let answer = Answer::parse(c, &query::pairs(raw))?;
    cred.actor.require_expand(&answer.expand)?;
    Ok(answer)
}

/// A write's answer: the record as `answer` shapes it, its expansions read in the write's
/// own transaction.
async fn shaped(work: &mut Work, c: &'static Collection, rec: &Record, answer: &Answer) -> Result<serde_json::Value> {
    let related = work.related(rec, &answer.expand).await?;
    serde_json::to_value(rec.view_with(c, &answer.fields, &related)).map_err(Error::internal)
}

pub async fn list(State(st): State<ApiState>, cred: Principal, Path(resource): Path<String>, RawQuery(raw): RawQuery) -> Result<Response> {
    let c = resolve(&resource)?;
    cred.actor.require(c, Access::Read)?;
    let mut q = ListQuery::parse(c, &query::pairs(raw))?;
    // The fieldsets shape the answer only; the list reads the expansions.
    let fields = std::mem::take(&mut q.answer.fields);
    let page = st.app.ops.list(&cred.actor, c, q).await?;
    let data: Vec<_> = page.records.iter().map(|r| r.view_with(c, &fields, &page.related)).collect();
    Ok(envelope::list(&data, page.next, page.has_more))
}

pub async fn get(
    State(st): State<ApiState>,
    cred: Principal,
    Path((resource, id)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Result<Response> {
    let c = resolve(&resource)?;
    cred.actor.require(c, Access::Read)?;
    let id = query::record_id(&id)?;
    let answer = answer_of(c, &cred, raw)?;
    let one = st.app.ops.read(&cred.actor, c, id, &answer.expand).await?;
    Ok(envelope::single_serialized(StatusCode::OK, c.object, &one.record.view_with(c, &answer.fields, &one.related)))
}

pub async fn create(
    State(st): State<ApiState>,
    cred: Principal,
    idem: Idem,
    Path(resource): Path<String>,
    RawQuery(raw): RawQuery,
    req: Request,
) -> Result<Response> {
    let c = resolve(&resource)?;
    // An import's body is its file, read as a stream.
    if crate::domain::import::is_uploaded(c) {
        return super::imports::upload(st, cred, raw, req).await;
    }
    check_offered(c, WriteOp::Create, &cred)?;
    let answer = answer_of(c, &cred, raw)?;
    let JsonBody(body) = JsonBody::from_request(req, &()).await?;
    let mut work = st.app.ops.begin(&cred.actor).await?;
    let created = work.create(c, &body).await?;
    let mut data = shaped(&mut work, c, &created.record, &answer).await?;
    if let (Some(secret), Some(value)) = (c.secret, created.secret) {
        data[secret.field] = json!(value);
    }
    idem.commit(work, StatusCode::CREATED, &envelope::single_value(c.object, data)).await
}

pub async fn update(
    State(st): State<ApiState>,
    cred: Principal,
    Path((resource, id)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
    req: Request,
) -> Result<Response> {
    let c = resolve(&resource)?;
    check_offered(c, WriteOp::Update, &cred)?;
    let id = query::record_id(&id)?;
    let answer = answer_of(c, &cred, raw)?;
    let JsonBody(body) = JsonBody::from_request(req, &()).await?;
    let mut work = st.app.ops.begin(&cred.actor).await?;
    let rec = work.update(c, id, &body).await?;
    let data = shaped(&mut work, c, &rec, &answer).await?;
    work.commit().await?;
    Ok(envelope::single(StatusCode::OK, c.object, data))
}

pub async fn delete(
    State(st): State<ApiState>,
    cred: Principal,
    Path((resource, id)): Path<(String, String)>,
    RawQuery(raw): RawQuery,
) -> Result<Response> {
    let c = resolve(&resource)?;
    check_offered(c, WriteOp::Delete, &cred)?;
    let id = query::record_id(&id)?;
    // A deletion answers with the id alone: nothing to shape or expand.
    if let Some((k, _)) = query::pairs(raw).first() {
        return Err(Error::parameter(k, "is not a parameter of this operation"));
    }
    let rec = st.app.ops.delete(&cred.actor, c, id).await?;
    Ok(envelope::single(StatusCode::OK, c.object, json!({ "id": rec.id, "object": c.object, "deleted": true })))
}

/// Refuses, before the body is read, what the collection does not offer (405/409) and
/// what the credential may not do (403). Operations check both again.
fn check_offered(c: &Collection, op: WriteOp, cred: &Principal) -> Result<()> {
    if let Some(e) = c.refuse(op) {
        return Err(e);
    }
    cred.actor.require(c, Access::Write)
}

/// `POST /v1/{resource}/{id}/{action}`: moves a record through its state machine.
/// The body is optional (JSON) and carries only the action's parameters.
pub async fn action(
    State(st): State<ApiState>,
    cred: Principal,
    idem: Idem,
    Path((resource, id, action)): Path<(String, String, String)>,
    RawQuery(raw): RawQuery,
    req: Request,
) -> Result<Response> {
    let c = resolve(&resource)?;
    let no_such = || Error::NotFound { message: format!("{} have no action `{action}`", c.name), param: None };
    let machine = workflow::machine(c.name).ok_or_else(no_such)?;
    let act = machine.action(&action).ok_or_else(no_such)?;
    cred.actor.require(c, Access::Write)?;
    let id = query::record_id(&id)?;
    let answer = answer_of(c, &cred, raw)?;
    let body = action_body(req).await?;
    let mut work = st.app.ops.begin(&cred.actor).await?;
    let rec = work.act(c, machine, act, id, &body).await?;
    let data = shaped(&mut work, c, &rec, &answer).await?;
    idem.commit(work, StatusCode::OK, &envelope::single_value(c.object, data)).await
}

/// The 405 of a served path: its `Allow` lists what the path does serve.
pub async fn method_not_allowed(State(st): State<ApiState>, uri: Uri) -> Error {
    let segments: Vec<&str> = uri.path().trim_matches('/').split('/').collect();
    let allow = match segments.as_slice() {
        ["v1", "openapi.json"] | ["v1", "flow"] => vec!["GET", "HEAD"],
        ["v1", "flow", _] => vec!["POST"],
        // The sandbox clock's paths (production has none: `404` whatever the method).
        ["v1", "sandbox", "clock"] | ["v1", "sandbox", "clock", "advance"] if st.livemode => {
            return Error::NotFound { message: "there is no such endpoint; see /v1/openapi.json".into(), param: None }
        }
        ["v1", "sandbox", "clock"] => vec!["GET", "HEAD"],
        ["v1", "sandbox", "clock", "advance"] => vec!["POST"],
        ["v1", resource] => match resolve(resource) {
            Ok(c) => c.methods(false),
            Err(e) => return e,
        },
        ["v1", resource, _] => match resolve(resource) {
            Ok(c) => c.methods(true),
            Err(e) => return e,
        },
        _ => vec!["POST"],
    };
    Error::MethodNotAllowed { message: format!("this endpoint serves {}", allow.join(", ")), allow }
}

/// An action's body: absent, or a JSON object.
pub(super) async fn action_body(req: Request) -> Result<serde_json::Map<String, serde_json::Value>> {
    let has_body = req.headers().get(axum::http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()).is_some_and(|v| v != "0")
        || req.headers().contains_key(axum::http::header::TRANSFER_ENCODING);
    if !has_body {
        return Ok(Default::default());
    }
    let JsonBody(body) = JsonBody::from_request(req, &()).await?;
    match body {
        serde_json::Value::Object(m) => Ok(m),
        _ => Err(Error::InvalidRequest { message: "the request body must be a JSON object".into(), param: None }),
    }
}
