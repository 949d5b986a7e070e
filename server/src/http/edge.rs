//! The edge of every listener: what each request gets before anything else runs and
//! what each response gets last, in one layer that neither clones the routes below it
//! nor allocates (a `from_fn` middleware does both on every request; four of them cost
//! about a sixth of a single-record read, docs/benchmarks.md):
//! - who the client is (`caller::attach`);
//! - a request id (`request_id`): on the tracing span the request runs in, in the
//!   request's task-local for the error and success bodies, and in the `Request-Id`
//!   response header;
//! - one access-log line and the request metrics (`access_log::record`), written after
//!   the response, outside the request's span.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use axum::extract::{MatchedPath, Request};
use axum::http::Response;
use tokio::task::futures::TaskLocalFuture;
use tower::{Layer, Service};
use tracing::instrument::Instrumented;
use tracing::Instrument;
use uuid::Uuid;

use crate::http::{access_log, caller, request_id};

/// The layer: `router.layer(Edge { listener })`, outermost.
#[derive(Debug, Clone, Copy)]
pub struct Edge {
    /// The listener's name in the access log and the metrics.
    pub listener: &'static str,
}

impl<S> Layer<S> for Edge {
    type Service = Edged<S>;
    fn layer(&self, inner: S) -> Edged<S> {
        Edged { inner, listener: self.listener }
    }
}

#[derive(Debug, Clone)]
pub struct Edged<S> {
    inner: S,
    listener: &'static str,
}

/// Generic over the response body: inside it, `CatchPanic` answers with a body of its own.
impl<S, B> Service<Request> for Edged<S>
where
    S: Service<Request, Response = Response<B>, Error = Infallible>,
{
    type Response = Response<B>;
    type Error = Infallible;
    type Future = Served<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut req: Request) -> Self::Future {
        let started = Instant::now();
        caller::attach(&mut req);
        let id = Uuid::now_v7();
        let method = access_log::method_label(req.method());
        let span = tracing::info_span!("request", request_id = %id, method, path = %req.uri().path());
        let path = req.extensions().get::<MatchedPath>().cloned();
        // The layers below may answer in `call` itself (a refusal), before the future
        // runs: that too in the request's span and with its id.
        let inner = &mut self.inner;
        let called = span.in_scope(|| request_id::sync_scope(id, || inner.call(req)));
        let running = request_id::scope(id, called.instrument(span.clone()));
        Served { running, span, id, started, method, path, listener: self.listener }
    }
}

pin_project_lite::pin_project! {
    /// A request being served at the edge.
    pub struct Served<F> {
        #[pin]
        running: TaskLocalFuture<Uuid, Instrumented<F>>,
        span: tracing::Span,
        id: Uuid,
        started: Instant,
        method: &'static str,
        path: Option<MatchedPath>,
        listener: &'static str,
    }
}

impl<F: Future<Output = Result<Response<B>, Infallible>>, B> Future for Served<F> {
    type Output = Result<Response<B>, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        let mut resp = match this.running.poll(cx) {
            Poll::Pending => return Poll::Pending,
            Poll::Ready(Ok(resp)) => resp,
            Poll::Ready(Err(never)) => match never {},
        };
        this.span.in_scope(|| tracing::debug!(status = resp.status().as_u16(), "served"));
        request_id::mark(&mut resp, *this.id);
        let path = this.path.as_ref().map_or(access_log::UNMATCHED_PATH, |p| p.as_str());
        access_log::record(this.listener, this.method, path, resp.status(), this.started.elapsed(), *this.id);
        Poll::Ready(Ok(resp))
    }
}
