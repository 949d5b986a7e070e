//! What every request must meet to be served at all, checked in one layer that costs no
//! allocation (`from_fn` middleware boxes and clones per request; measured at about 2 %
//! of a request that does no database work, docs/benchmarks.md):
//! - a body over the limit (1 MiB) is refused `413`, whichever route reads it. One whose
//!   declared `Content-Length` is over is refused at once, without waiting for the body,
//!   and the connection closes after the answer; one sent without a length (chunked) is
//!   cut when the limit is reached (the reader gets an error, the client `413`). What the
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
use http_body_util::Limited;
use tower::{Layer, Service};

use crate::error::Error;
use crate::http::body::MAX_BODY;

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
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Admit<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let declared = req.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()).and_then(|v| v.trim().parse::<u64>().ok());
        if declared.is_some_and(|n| n > MAX_BODY as u64) {
            tokio::spawn(linger(req.into_body()));
            let mut resp = Error::PayloadTooLarge(MAX_BODY).into_response();
            resp.headers_mut().insert(CONNECTION, HeaderValue::from_static("close"));
            return Admit::Refused { resp: Some(resp) };
        }
        // A body sent without a declared length (chunked) is cut at the limit as it is read,
        // whoever reads it: the API's extractors, the console's server functions, the OAuth
        // forms. Requests without a body (every read) are passed as they are, for nothing.
        let req = if req.body().is_end_stream() { req } else { req.map(|b| Body::new(Limited::new(b, MAX_BODY))) };
        Admit::Running { run: tokio::time::timeout(self.limit, self.inner.call(req)), limit: self.limit }
    }
}

/// How much of a refused body is read and thrown away, at most, and for how long.
const LINGER_BYTES: usize = 8 << 20;
const LINGER_TIME: Duration = Duration::from_secs(5);

/// Reads a refused request's body and drops it, within `LINGER_BYTES` and `LINGER_TIME`.
async fn linger(body: axum::body::Body) {
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
                Poll::Ready(Err(_elapsed)) => {
                    tracing::warn!(limit_secs = limit.as_secs(), "request timed out");
                    let message = format!(
                        "the request took longer than {} s and was stopped; retry it (a write with the same Idempotency-Key)",
                        limit.as_secs()
                    );
                    Poll::Ready(Ok(Error::Unavailable { message, retry_after_secs: 1 }.into_response()))
                }
            },
        }
    }
}
