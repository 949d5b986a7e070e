//! API versions: `/v1` in the path, and `Gable-Version: YYYY-MM-DD` to pin a dated
//! version, echoed on every response.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::extract::Request;
use axum::http::HeaderValue;
use axum::response::{IntoResponse, Response};
use tower::{Layer, Service};

use crate::error::Error;

/// The current dated version, the events' (`domain::events::API_VERSION`); also the API
/// description's `info.version`.
pub const CURRENT: &str = crate::domain::events::API_VERSION;
/// Every dated version this server still serves.
pub const SUPPORTED: &[&str] = &[CURRENT];

/// The layer of every `/v1` route: refuses an unsupported `Gable-Version` (`400
/// unsupported_version`) and echoes the version served on every response. A service of
/// its own rather than a `from_fn` middleware, which would clone the routes below it and
/// box a future on every request (`http::edge`).
#[derive(Debug, Clone, Copy)]
pub struct Versioning;

impl<S> Layer<S> for Versioning {
    type Service = Versioned<S>;
    fn layer(&self, inner: S) -> Versioned<S> {
        Versioned { inner }
    }
}

#[derive(Debug, Clone)]
pub struct Versioned<S> {
    inner: S,
}

impl<S> Service<Request> for Versioned<S>
where
    S: Service<Request, Response = Response, Error = Infallible>,
{
    type Response = Response;
    type Error = Infallible;
    type Future = Answer<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, req: Request) -> Self::Future {
        let version = match req.headers().get("gable-version").map(|v| v.to_str().map(str::trim)) {
            None => CURRENT,
            Some(Ok(v)) => match SUPPORTED.iter().find(|s| **s == v) {
                Some(known) => known,
                None => return Answer::Refused { resp: Some(refusal()) },
            },
            Some(Err(_)) => return Answer::Refused { resp: Some(refusal()) },
        };
        Answer::Running { run: self.inner.call(req), version }
    }
}

fn refusal() -> Response {
    Error::UnsupportedVersion(format!("Gable-Version must be one of: {}", SUPPORTED.join(", "))).into_response()
}

pin_project_lite::pin_project! {
    /// The request's future and the version it is served at, or the refusal.
    #[project = AnswerProj]
    pub enum Answer<F> {
        Refused { resp: Option<Response> },
        Running { #[pin] run: F, version: &'static str },
    }
}

impl<F: Future<Output = Result<Response, Infallible>>> Future for Answer<F> {
    type Output = Result<Response, Infallible>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        match self.project() {
            AnswerProj::Refused { resp } => Poll::Ready(Ok(resp.take().unwrap_or_else(refusal))),
            AnswerProj::Running { run, version } => {
                let mut resp = match run.poll(cx) {
                    Poll::Pending => return Poll::Pending,
                    Poll::Ready(Ok(resp)) => resp,
                    Poll::Ready(Err(never)) => match never {},
                };
                resp.headers_mut().insert("gable-version", HeaderValue::from_static(version));
                Poll::Ready(Ok(resp))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Responses carry a supported version as a static header value, which must be one.
    #[test]
    fn every_supported_version_is_a_header_value() {
        for v in SUPPORTED {
            assert!(HeaderValue::from_str(v).is_ok(), "{v}");
        }
    }
}
