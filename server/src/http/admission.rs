//! What every request must meet to be served at all, checked in one layer that costs no
//! allocation (`from_fn` middleware boxes and clones per request; measured at about 2 %
//! of a request that does no database work, docs/benchmarks.md):
//! - a body over the limit (1 MiB; an import's file, `body::is_upload`, 100 MiB, read as
//!   a stream by its handler within ten request timeouts) is refused `413`, whichever
//!   route reads it. One whose
//!   declared `Content-Length` is over is refused at once, without waiting for the body,
//!   and the connection closes after the answer; one sent without a length (chunked) is
//!   read here first and refused the same way when it reaches the limit. What the
//!   client sends meanwhile is read and thrown away for a while (up to 8 MiB or 5 s,
//!   a "lingering close"), so that a client still writing its body gets to read the
//!   `413` rather than a broken pipe;
//! - a request that takes longer than the request timeout, its body included, is answered
//!   `503 service_unavailable` with `Retry-After: 1`. Its handler's future is dropped
//!   there: a transaction it holds rolls back, but a commit already sent may have landed,
//!   so a write should be retried with the same `Idempotency-Key` (docs/api.md).

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use axum::body::{Body, HttpBody};
use axum::extract::Request;
use axum::http::header::{CONNECTION, CONTENT_LENGTH};
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use tower::{Layer, Service};

use crate::error::Error;
use crate::http::body::{self, MAX_BODY};

/// The layer: `router.layer(Admission { request_timeout })`.
#[derive(Debug, Clone, Copy)]
pub struct Admission {
    pub request_timeout: Duration,
}

impl<S> Layer<S> for Admission {
    type Service = Admitted<S>;
    fn layer(&self, inner: S) -> Admitted<S> {
        Admitted { inner, limit: self.request_timeout }
    }
}

#[derive(Debug, Clone)]
pub struct Admitted<S> {
    inner: S,
    limit: Duration,
}

impl<S> Service<Request> for Admitted<S>
where
    S: Service<Request, Response = Response, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Admit<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let declared = req.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
        let max = body::limit_of(req.method(), req.uri().path());
        if declared.is_some_and(|n| n > max as u64) {
            tokio::spawn(linger(req.into_body()));
            let mut resp = Error::PayloadTooLarge(max).into_response();
            resp.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
            return Admit::Refused { resp: Some(resp) };
        }
        // A body sent without a declared length (chunked) is read here first, within the
        // request's time, so that one over the limit gets the same early 413 and lingering
        // close whoever would have read it (the API, the console's server functions, the
        // OAuth forms). Such bodies are rare; requests without a body (every read) and with
        // a declared length pass as they are.
        // An upload's file is read as a stream by its handler, which keeps to its limit.
        if body::is_upload(req.method(), req.uri().path()) {
            let limit = self.limit * body::UPLOAD_TIMEOUTS;
            return Admit::Running { run: tokio::time::timeout(limit, self.inner.call(req)), limit };
        }
        if declared.is_none() && !req.body().is_end_stream() {
            let inner = self.inner.clone();
            let run: BoxedAnswer = Box::pin(async move {
                match buffered(req).await {
                    Ok(req) => {
                        let mut inner = inner;
                        inner.call(req).await
                    }
                    Err(refused) => Ok(refused),
                }
            });
            return Admit::Buffering { run: tokio::time::timeout(self.limit, run), limit: self.limit };
        }
        Admit::Running { run: tokio::time::timeout(self.limit, self.inner.call(req)), limit: self.limit }
    }
}

/// A request whose body came without a length, with that body read into memory; or the
/// `413` when it runs past the limit (the rest is read and dropped, as for a declared one).
async fn buffered(req: Request) -> Result<Request, Response> {
    use http_body_util::BodyExt;
    let (parts, mut body) = req.into_parts();
    let mut read = Vec::new();
    while let Some(frame) = body.frame().await {
        let Ok(frame) = frame else {
            return Err(Error::InvalidRequest { message: "the request body could not be read".into(), param: None }.into_response());
        };
        if let Some(data) = frame.data_ref() {
            if read.len() + data.len() > MAX_BODY {
                tokio::spawn(linger(body));
                let mut resp = Error::PayloadTooLarge(MAX_BODY).into_response();
                resp.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
                return Err(resp);
            }
            read.extend_from_slice(data);
        }
    }
    Ok(Request::from_parts(parts, Body::from(read)))
}

/// A request's answer being made, boxed (only requests with a chunked body take this path).
type BoxedAnswer = Pin<Box<dyn Future<Output = Result<Response, Infallible>> + Send>>;

/// How much of a refused body is read and thrown away, at most, and for how long.
const LINGER_BYTES: usize = 8 << 20;
const LINGER_TIME: Duration = Duration::from_secs(5);

/// Reads a refused request's body and drops it, within `LINGER_BYTES` and `LINGER_TIME`
/// (also an upload refused before its file is read, `http::api::imports`).
pub async fn linger(body: axum::body::Body) {
    use http_body_util::BodyExt;
    let mut body = body;
    let mut read = 0;
    let drained = async {
        while let Some(Ok(frame)) = body.frame().await {
            read += frame.data_ref().map_or(0, |d| d.len());
            if read > LINGER_BYTES {
                return;
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, drained).await;
}

pin_project_lite::pin_project! {
    /// The request's future, or the answer it got without running.
    #[project = AdmitProj]
    pub enum Admit<F> {
        Refused { resp: Option<Response> },
        Running { #[pin] run: tokio::time::Timeout<F>, limit: Duration },
        Buffering { #[pin] run: tokio::time::Timeout<BoxedAnswer>, limit: Duration },
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for Admit<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            AdmitProj::Refused { resp } => Poll::Ready(Ok(resp.take().unwrap_or_else(|| Error::PayloadTooLarge(MAX_BODY).into_response()))),
            AdmitProj::Running { run, limit } => match run.poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(answered)) => Poll::Ready(answered),
                Poll::Ready(Err(_elapsed)) => Poll::Ready(Ok(timed_out(*limit))),
            },
            AdmitProj::Buffering { run, limit } => match run.poll(cx) {
                Poll::Pending => Poll::Pending,
                Poll::Ready(Ok(answered)) => Poll::Ready(answered),
                Poll::Ready(Err(_elapsed)) => Poll::Ready(Ok(timed_out(*limit))),
            },
        }
    }
}

/// The answer to a request that ran past `limit`.
fn timed_out(limit: Duration) -> Response {
    tracing::warn!(limit_secs = limit.as_secs(), "request timed out");
    let message =
        format!("the request took longer than {} s and was stopped; retry it (a write with the same Idempotency-Key)", limit.as_secs());
    Error::Unavailable { message, retry_after_secs: 1 }.into_response()
}
