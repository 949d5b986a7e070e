//! What of each authenticated `/v1` call the request log keeps, taken as the call passes
//! (`api::per_credential`, right after the credential is known): the request's line,
//! headers and body, and the answer's status, headers of interest and body. The record
//! is handed to the log's queue (`ops::request_log`) and written later, redacted, by
//! the writer; nothing here waits on it.
//!
//! A request body of a declared length (what clients send) is read before the handler
//! (`take_declared_body`; the admission layer has refused one over the limit), so the log
//! has it even when the call is refused before its body is looked at; a chunked body is
//! copied as the handler reads it ([`Tee`], up to `BODY_LIMIT`), so what the handler
//! sees and refuses is unchanged. What is kept is copied (headers into one buffer,
//! bodies): the request's own are slices of the connection's read buffer. The answer's body is
//! taken when it is already whole (every answer of the API is made in memory); a
//! streamed answer would be recorded without its body rather than held.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Instant;

use axum::body::{Body, Bytes};
use axum::extract::{MatchedPath, Request};
use axum::response::{IntoResponse, Response};
use http_body::{Body as _, Frame, SizeHint};

use crate::domain::request_log::BODY_LIMIT;
use crate::error::Error;
use crate::http::auth::Principal;
use crate::http::body::MAX_BODY;
use crate::http::caller::Caller;
use crate::http::request_id::current_request_id;
use crate::http::state::ApiState;
use crate::http::{access_log, idempotency, version};
use crate::ops::access::Kind;
use crate::ops::request_log::{Captured, Credential, Headers};

/// A call being recorded: what was known of it when it arrived.
pub struct Recording {
    started: Instant,
    call: Captured,
    request_copy: Option<Arc<Mutex<Copied>>>,
}

#[derive(Default)]
struct Copied {
    chunks: Vec<Bytes>,
    kept: usize,
    total: usize,
}

/// Starts recording `req` (its credential resolved into its extensions), or `None` for a
/// request the log does not keep: one without a bearer credential's principal, any while
/// the log is off, and one that arrives while the log's queue is full (counted dropped).
pub fn start(st: &ApiState, req: &mut Request) -> Option<Recording> {
    let started = Instant::now();
    let principal = req.extensions().get::<Principal>()?;
    if principal.kind == Kind::ConsoleSession || !st.app.ops.request_log().take_turn() {
        return None;
    }
    let id = current_request_id()?;
    let credential = Credential { kind: principal.kind, id: principal.id, oauth: principal.oauth };
    let scope = &principal.actor.scope;
    let (tenant, livemode) = (scope.tenant, scope.livemode);
    let uri = req.uri();
    let call = Captured {
        tenant,
        livemode,
        id,
        at: st.app.ops.clock().now(),
        method: access_log::method_label(req.method()),
        path: uri.path().to_string(),
        query: uri.query().map(str::to_string),
        route: req.extensions().get::<MatchedPath>().map(|p| p.as_str().to_string()),
        headers: Headers::copy(req.headers()),
        credential,
        status: 0,
        duration: Default::default(),
        replayed: false,
        // The versioning layer refused any other before this.
        api_version: req
            .headers()
            .get("gable-version")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| version::SUPPORTED.iter().copied().find(|s| *s == v.trim()))
            .unwrap_or(version::CURRENT),
        client_ip: req.extensions().get::<Caller>().and_then(|c| c.address),
        request_body: vec![],
        request_len: 0,
        response_body: Bytes::new(),
        response_len: 0,
    };
    // A body that is known to be empty (most reads) is not wrapped; one of a declared
    // length is read by `take_declared_body`; any other is copied as the handler reads it.
    let streamed = crate::http::body::is_upload(req.method(), req.uri().path());
    let request_copy = if req.body().is_end_stream() || (req.body().size_hint().exact().is_some() && !streamed) {
        None
    } else {
        let copy = Arc::new(Mutex::new(Copied::default()));
        let body = std::mem::take(req.body_mut());
        *req.body_mut() = Body::new(Tee { inner: body, copy: copy.clone() });
        Some(copy)
    };
    Some(Recording { started, call, request_copy })
}

/// Reads a body of a declared length (the admission layer refused one over the limit)
/// before the handler, so that the log has it even when the handler refuses the call
/// without reading it (a bad query, a wrong content type); the handler gets the same
/// bytes. A body that cannot be read is refused as the handler would refuse it.
pub async fn take_declared_body(recording: &mut Option<Recording>, req: Request) -> Result<Request, Response> {
    let Some(r) = recording.as_mut() else { return Ok(req) };
    // An upload's file is copied as its handler reads it (its start only), never held whole.
    if req.body().is_end_stream()
        || req.body().size_hint().exact().is_none()
        || crate::http::body::is_upload(req.method(), req.uri().path())
    {
        return Ok(req);
    }
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| Error::InvalidRequest { message: "the request body could not be read".into(), param: None }.into_response())?;
    r.call.request_len = bytes.len();
    // A copy: the body may be a slice of the connection's read buffer, which a queued
    // call would keep alive whole.
    r.call.request_body = vec![Bytes::copy_from_slice(&bytes[..bytes.len().min(BODY_LIMIT + 4)])];
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

impl Recording {
    /// Ends the recording with the answer: queues the record, and gives the answer back
    /// (its body taken whole and put back unchanged).
    pub async fn finish(mut self, st: &ApiState, resp: Response) -> Response {
        self.call.duration = self.started.elapsed();
        self.call.status = resp.status().as_u16();
        self.call.replayed = resp.headers().get(idempotency::REPLAYED).is_some_and(|v| v.as_bytes() == b"true");
        if let Some(copy) = self.request_copy.take() {
            if let Ok(mut c) = copy.lock() {
                self.call.request_body = std::mem::take(&mut c.chunks);
                self.call.request_len = c.total;
            }
        }
        let (parts, body) = resp.into_parts();
        let resp = match body.size_hint().exact() {
            Some(_) => match axum::body::to_bytes(body, usize::MAX).await {
                Ok(bytes) => {
                    self.call.response_len = bytes.len();
                    self.call.response_body =
                        if bytes.len() > BODY_LIMIT { Bytes::copy_from_slice(&bytes[..BODY_LIMIT]) } else { bytes.clone() };
                    Response::from_parts(parts, Body::from(bytes))
                }
                Err(e) => Error::internal(anyhow::anyhow!("an answer's body could not be read: {e}")).into_response(),
            },
            None => Response::from_parts(parts, body),
        };
        st.app.ops.request_log().offer(self.call);
        resp
    }
}

/// A request body that keeps a copy of its first `BODY_LIMIT` bytes as it is read.
struct Tee {
    inner: Body,
    copy: Arc<Mutex<Copied>>,
}

impl http_body::Body for Tee {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let polled = Pin::new(&mut self.inner).poll_frame(cx);
        if let Poll::Ready(Some(Ok(frame))) = &polled {
            if let (Some(data), Ok(mut c)) = (frame.data_ref(), self.copy.lock()) {
                c.total += data.len();
                let room = (BODY_LIMIT + 4).saturating_sub(c.kept);
                if room > 0 {
                    // Copied: a chunk is a slice of a larger buffer the queue must not pin.
                    let piece = Bytes::copy_from_slice(&data[..data.len().min(room)]);
                    c.kept += piece.len();
                    c.chunks.push(piece);
                }
            }
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
