//! Serving a listener: hyper's HTTP/1.1 server under limits that keep slow or abusive
//! clients from holding the process. axum's own `serve` sets no timer, so hyper's
//! header-read timeout never fires there and a client trickling a request head keeps its
//! connection for ever; here every connection has one:
//!
//! - a client has `header_read_timeout` to send a request's head, on a new connection and
//!   between requests on a kept-alive one (hyper starts the timer when the connection is
//!   idle), then the connection is closed;
//! - a head larger than `max_header_bytes` is answered 431 by hyper;
//! - at most `max_connections` connections are open at once: at the cap the listener stops
//!   accepting, so further clients wait in the kernel's queue rather than cost memory;
//! - on shutdown the listener closes, each connection finishes the request it is serving
//!   and closes, and whatever is still open after the deadline is dropped.
//!
//! The request timeout and the early 413 are layers of the router (`http::router`), since
//! they answer in the documented error body. TLS and HTTP/2 belong to the load balancer in
//! front (docs/deployment.md).

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{watch, Semaphore};
use tower::Service;

/// hyper's smallest read buffer; a head must fit in it.
const MIN_HEADER_BYTES: usize = 8192;

/// The connection limits of a listener (`ServeArgs`' settings of the same names).
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub header_read_timeout: Duration,
    pub max_connections: usize,
    pub max_header_bytes: usize,
}

/// Serves `router` on `listener` until `stop` turns true, then drains the open
/// connections for at most `deadline`.
pub async fn serve(listener: TcpListener, router: Router, limits: Limits, mut stop: watch::Receiver<bool>, deadline: Duration) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes.max(MIN_HEADER_BYTES));
    let permits = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let graceful = GracefulShutdown::new();
    loop {
        let permit = tokio::select! {
            permit = permits.clone().acquire_owned() => match permit {
                Ok(p) => p,
                Err(_) => break,
            },
            () = stopped(&mut stop) => break,
        };
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(a) => a,
                // Out of file descriptors, say: wait a little rather than spin.
                Err(e) => {
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = stopped(&mut stop) => break,
        };
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        // The peer reaches the client layer (`http::client`) as axum's `ConnectInfo`.
        let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            let mut router = router.clone();
            async move { Ok::<_, Infallible>(router.call(req.map(Body::new)).await.unwrap_or_else(|never| match never {})) }
        });
        let connection = graceful.watch(http.serve_connection(TokioIo::new(stream), service));
        tokio::spawn(async move {
            // A timed-out head or a client gone away ends the connection; nothing to report.
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, %peer, "connection ended");
            }
            drop(permit);
        });
    }
    drop(listener);
    if tokio::time::timeout(deadline, graceful.shutdown()).await.is_err() {
        tracing::warn!(deadline_secs = deadline.as_secs(), "connections still open at the shutdown deadline were closed");
    }
}

/// Resolves once stop is asked (the guard `wait_for` returns is not `Send`: dropped here).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}
