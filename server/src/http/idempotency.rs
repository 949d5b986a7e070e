//! `Idempotency-Key` on every `POST` of `/v1` (the IETF Idempotency-Key draft, as
//! Stripe does it): a client may retry any write blindly, and it happens once.
//!
//! [`guard`] runs after the credential is resolved and counted. A `POST` with a key reserves it for its
//! tenant, environment and credential (`store::idempotency`), and then:
//! - the same key with the same request (method, path and body) replays the stored
//!   status and body with `Idempotent-Replayed: true`;
//! - the same key while its first request still runs is `409 idempotency_key_in_use`;
//! - the same key with another method, path or body is `422 idempotency_key_reused`.
//!
//! A handler that writes commits its [`Work`] with [`Idem::commit`], which stores the
//! answer in the write's own transaction: the write and its stored answer commit
//! together or not at all, across processes and restarts. An answer the handler did not
//! store (a refused request: 4xx) is stored by the layer afterwards; a server error
//! gives the key up, so the retry runs anew. Keys are kept 24 hours, then purged.
//! Answers are sealed under the master key: a create's answer may carry a secret that is
//! shown once.
//!
//! `POST /v1/payments` requires a key (a payment must never be booked twice); elsewhere
//! it is optional.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use axum::body::Body;
use axum::extract::{FromRequestParts, Request};
use axum::http::request::Parts;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use chrono::Duration;
use serde_json::Value as Json;
use sha2::{Digest, Sha256};
use uuid::Uuid;

use crate::crypto::MasterKey;
use crate::error::{Error, Result};
use crate::http::auth::Principal;
use crate::http::body::MAX_BODY;
use crate::http::state::ApiState;
use crate::observe::metrics as m;
use crate::ops::Work;
use crate::store::idempotency::{self, Owner, Reservation, KEEP};
use crate::store::{Intent, Tx};

pub const HEADER: &str = "idempotency-key";
pub const REPLAYED: &str = "idempotent-replayed";
/// How long a request holds its key beyond the request timeout (`http::deadline` ends
/// every request by then): a process that died mid-request leaves its reservation behind,
/// and a retry may take it over once the hold lapses.
const LEASE_MARGIN: Duration = Duration::seconds(5);
/// The operations that require a key.
const REQUIRED: &[&str] = &["/v1/payments", "/v1/flow/payments"];

/// The key a request runs under, for its handler (`Idem::commit`).
#[derive(Clone)]
struct Reserved {
    owner: Owner,
    key: String,
    token: Uuid,
    master: MasterKey,
    /// Set once the answer is stored with the write.
    answered: Arc<AtomicBool>,
}

fn context(owner: &Owner, key: &str) -> String {
    idempotency::sealing_context(owner, key)
}

/// A handler's view of the request's idempotency key (absent without one).
pub struct Idem(Option<Reserved>);

impl<S: Send + Sync> FromRequestParts<S> for Idem {
    type Rejection = Error;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self> {
        Ok(Idem(parts.extensions.get::<Reserved>().cloned()))
    }
}

impl Idem {
    /// Stores the answer (with a key) in the work's transaction, commits, and answers.
    pub async fn commit(&self, work: Work, status: StatusCode, body: &Json) -> Result<Response> {
        let bytes = serde_json::to_vec(body).map_err(Error::internal)?;
        self.commit_bytes(work, status, bytes).await
    }

    /// As [`Idem::commit`], with the body already written.
    pub async fn commit_bytes(&self, mut work: Work, status: StatusCode, body: Vec<u8>) -> Result<Response> {
        if let Some(r) = &self.0 {
            answer(work.tx(), &r.master, &r.owner, &r.key, r.token, status, &body).await?;
        }
        work.commit().await?;
        if let Some(r) = &self.0 {
            r.answered.store(true, Ordering::Release);
        }
        Ok(json_response(status, body))
    }
}

/// Stores a key's answer, sealed, in `tx` (only while the reservation is `token`'s).
async fn answer(tx: &mut Tx, master: &MasterKey, owner: &Owner, key: &str, token: Uuid, status: StatusCode, body: &[u8]) -> Result<()> {
    let text = std::str::from_utf8(body).map_err(Error::internal)?;
    let sealed = master.seal(text, &context(owner, key));
    idempotency::answer(tx, owner, key, token, status.as_u16(), sealed).await
}

fn json_response(status: StatusCode, body: Vec<u8>) -> Response {
    (status, [(axum::http::header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// The key of a request, checked: 8 to 200 visible ASCII characters.
fn key_of(req: &Request) -> Result<Option<String>> {
    let Some(v) = req.headers().get(HEADER) else { return Ok(None) };
    let bad = || Error::parameter("Idempotency-Key", "must be 8 to 200 visible ASCII characters (a UUID is a good key)");
    let s = v.to_str().map_err(|_| bad())?;
    if !(8..=200).contains(&s.len()) || !s.bytes().all(|b| b.is_ascii_graphic()) {
        return Err(bad());
    }
    Ok(Some(s.to_string()))
}

/// What makes two requests the same: method, path with query, and body.
pub fn fingerprint(method: &Method, path: &str, body: &[u8]) -> String {
    let mut h = Sha256::new();
    h.update(method.as_str().as_bytes());
    h.update(b" ");
    h.update(path.as_bytes());
    h.update(b"\n");
    h.update(body);
    hex::encode(h.finalize())
}

/// Runs the request (`next`) under its `Idempotency-Key`, as above (`http::api::per_credential`,
/// after the credential and its rate limit).
pub async fn guard(st: &ApiState, req: Request, next: Next) -> Response {
    match run(st, req, next).await {
        Ok(resp) | Err(resp) => resp,
    }
}

async fn run(st: &ApiState, req: Request, next: Next) -> std::result::Result<Response, Response> {
    let fail = |e: Error| e.into_response();
    if req.method() != Method::POST {
        return Ok(next.run(req).await);
    }
    let Some(cred) = req.extensions().get::<Principal>().cloned() else { return Ok(next.run(req).await) };
    // An upload is not held for replay (its file may be 100 MiB); uploading again makes
    // another import, which writes nothing until it is committed (docs/imports.md).
    if crate::http::body::is_upload(req.method(), req.uri().path()) {
        return Ok(next.run(req).await);
    }
    let Some(key) = key_of(&req).map_err(fail)? else {
        if REQUIRED.contains(&req.uri().path()) {
            return Err(fail(Error::MissingIdempotencyKey(format!(
                "POST {} needs an Idempotency-Key header (8 to 200 characters, e.g. a UUID), so that a retried request is never booked twice",
                req.uri().path()
            ))));
        }
        return Ok(next.run(req).await);
    };
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY).await.map_err(|_| fail(Error::PayloadTooLarge(MAX_BODY)))?;
    let path = parts.uri.path_and_query().map(|p| p.as_str()).unwrap_or("/").to_string();
    let owner = Owner { tenant: cred.actor.scope.tenant, livemode: cred.actor.scope.livemode, credential: cred.id };
    let request = idempotency::Request {
        key: key.clone(),
        fingerprint: fingerprint(&parts.method, &path, &bytes),
        method: parts.method.to_string(),
        path: path.clone(),
    };
    let app = &st.app;
    let now = app.ops.clock().now();
    let lease = Duration::from_std(app.settings.request_timeout).unwrap_or(Duration::seconds(30)) + LEASE_MARGIN;
    let reserved = app
        .store
        .in_tenant(owner.tenant, owner.livemode, Intent::Write, async |tx| {
            idempotency::reserve(tx, &owner, &request, now, lease, KEEP).await
        })
        .await
        .map_err(fail)?;
    let token = match reserved {
        Reservation::Reserved { token } => token,
        Reservation::Answered { status, sealed } => {
            let body = app.ops.master_key().open(&sealed, &context(&owner, &key)).ok_or_else(|| {
                fail(Error::internal(anyhow::anyhow!("a stored idempotent answer does not open under this master key")))
            })?;
            let mut resp = json_response(StatusCode::from_u16(status).unwrap_or(StatusCode::OK), body.into_bytes());
            resp.headers_mut().insert(REPLAYED, HeaderValue::from_static("true"));
            metrics::counter!(m::IDEMPOTENT_REPLAYS, "listener" => m::listener(owner.livemode)).increment(1);
            return Ok(resp);
        }
        Reservation::InUse { until } => {
            let retry_after_secs = (until - now).num_seconds().max(0) as u64 + 1;
            return Err(fail(Error::IdempotencyKeyInUse { retry_after_secs }));
        }
        Reservation::Reused { method, path } => {
            return Err(fail(Error::IdempotencyKeyReused(format!(
                "this Idempotency-Key was used for another request ({method} {path}, or the same with a different body); use a new key for a new request"
            ))))
        }
    };
    let answered = Arc::new(AtomicBool::new(false));
    let mut req = Request::from_parts(parts, Body::from(bytes));
    req.extensions_mut().insert(Reserved {
        owner: owner.clone(),
        key: key.clone(),
        token,
        master: app.ops.master_key().clone(),
        answered: answered.clone(),
    });
    let resp = next.run(req).await;
    if answered.load(Ordering::Acquire) {
        return Ok(resp);
    }
    let status = resp.status();
    if status.is_server_error() {
        // Nothing was written: the key is given up so that the retry runs anew. Beside the
        // answer, not before it: in an outage giving it up waits for a connection too, and
        // the 503 must not wait twice (a retry meanwhile gets 409 with Retry-After; only
        // this request's own reservation, by its token, is ever released).
        let store = app.store.clone();
        tokio::spawn(async move {
            let released = store
                .in_tenant(owner.tenant, owner.livemode, Intent::Write, async |tx| idempotency::release(tx, &owner, &key, token).await)
                .await;
            if let Err(e) = released {
                tracing::warn!(error = %format!("{e:#}"), "an idempotency key could not be given up; its hold lapses after the request timeout");
            }
        });
        return Ok(resp);
    }
    // A refusal (or an answer of a handler that wrote nothing): stored on its own.
    let (parts, body) = resp.into_parts();
    let bytes = axum::body::to_bytes(body, usize::MAX).await.map_err(|e| fail(Error::internal(e)))?;
    let stored = app.store.in_tenant(owner.tenant, owner.livemode, Intent::Write, async |tx| {
        answer(tx, app.ops.master_key(), &owner, &key, token, status, &bytes).await
    });
    if let Err(e) = stored.await {
        tracing::warn!(error = %format!("{e:#}"), "an idempotent answer could not be stored; a retry runs the request again");
    }
    Ok(Response::from_parts(parts, Body::from(bytes)))
}
