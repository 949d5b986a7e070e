//! Serving a listener: hyper's HTTP/1.1 server under limits that keep slow or abusive
//! clients from holding the process. axum's own `serve` sets no timer, so hyper's
//! header-read timeout never fires there and a client trickling a request head keeps its
//! connection for ever; here every connection has one:
//!
//! - a client has `header_read_timeout` to send a request's head, on a new connection and
//!   between requests on a kept-alive one (hyper starts the timer when the connection is
//!   idle), then the connection is closed;
//! - a client must read its answers: once the socket stops taking bytes, the answer must
//!   move at a minimum pace after `write_timeout` (`send_deadline`), or the connection is
//!   closed;
//! - a head larger than `max_header_bytes` is answered 431 by hyper;
//! - at most `max_connections` connections are open at once. Beyond them a small reserve
//!   (`RESERVE`) is served one request each by the reserve router, which answers the
//!   health checks and refuses everything else `503` at once: a load balancer's check is
//!   answered even when every connection is taken. With the reserve full too, the listener
//!   stops accepting and further clients wait in the kernel's queue;
//! - one client address (an IPv6 client's /64) holds at most `max_connections_per_client`
//!   of them. Each connection over that is answered `503` to its first request and closed;
//!   at most `REFUSING` such connections are open at once (each within the header-read
//!   timeout), and past them one is closed unanswered. Trusted proxies, which carry many
//!   clients, are not limited;
//! - on shutdown the listener closes, each connection finishes the request it is serving
//!   and closes, and whatever is still open after the deadline is dropped.
//!
//! The request timeout and the early 413 are layers of the router (`http::router`), since
//! they answer in the documented error body. TLS and HTTP/2 belong to the load balancer in
//! front (docs/deployment.md).

use std::collections::HashMap;
use std::convert::Infallible;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::body::Body;
use axum::extract::ConnectInfo;
use axum::http::Request;
use axum::Router;
use hyper::body::Incoming;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::sync::{watch, OwnedSemaphorePermit, Semaphore};
use tower::Service;

use crate::http::caller::TrustedProxies;
use crate::http::send_deadline::SendDeadline;

/// hyper's smallest read buffer; a head must fit in it.
const MIN_HEADER_BYTES: usize = 8192;

/// Connections served beyond `max_connections`, one request each, by the reserve router.
pub const RESERVE: usize = 16;

/// Connections over their client's limit that are answered at once (the rest are closed).
pub const REFUSING: usize = 64;

/// The connection limits of a listener (`ServeArgs`' settings of the same names).
#[derive(Debug, Clone)]
pub struct Limits {
    pub header_read_timeout: Duration,
    pub write_timeout: Duration,
    pub max_connections: usize,
    /// 0: no limit per client.
    pub max_connections_per_client: usize,
    pub max_header_bytes: usize,
    /// Peers not limited per client (`--trusted-proxy`).
    pub trusted_proxies: TrustedProxies,
}

/// What a listener serves: `router` on its connections, and `reserve` (when given) on
/// the reserve's (see the module's comment).
pub struct Routers {
    pub main: Router,
    pub reserve: Option<Router>,
}

/// Serves `routers` on `listener` until `stop` turns true, then drains the open
/// connections for at most `deadline`.
pub async fn serve(listener: TcpListener, routers: Routers, limits: Limits, mut stop: watch::Receiver<bool>, deadline: Duration) {
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new())
        .header_read_timeout(limits.header_read_timeout)
        .max_buf_size(limits.max_header_bytes.max(MIN_HEADER_BYTES));
    let mut once = http.clone();
    once.keep_alive(false);
    let main = Arc::new(Semaphore::new(limits.max_connections.max(1)));
    let reserve = Arc::new(Semaphore::new(if routers.reserve.is_some() { RESERVE } else { 0 }));
    let clients = Clients::new(&limits);
    let refusing = Arc::new(Semaphore::new(REFUSING));
    let graceful = GracefulShutdown::new();
    loop {
        // A slot before accepting: beyond every slot, clients wait in the kernel's queue.
        let slot = tokio::select! {
            biased;
            () = stopped(&mut stop) => break,
            permit = main.clone().acquire_owned() => match permit {
                Ok(p) => Slot::Main(p),
                Err(_) => break,
            },
            permit = reserve.clone().acquire_owned() => match permit {
                Ok(p) => Slot::Reserve(p),
                Err(_) => break,
            },
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
        let Some(client) = clients.admit(peer.ip()) else {
            drop(slot);
            tracing::debug!(%peer, "a client over its connection limit was refused");
            // Answered when few are being refused, else closed at once.
            if let Ok(permit) = refusing.clone().try_acquire_owned() {
                let refusal = once
                    .serve_connection(TokioIo::new(SendDeadline::new(stream, limits.write_timeout)), hyper::service::service_fn(refused));
                let refusal = graceful.watch(refusal);
                tokio::spawn(async move {
                    let _ = refusal.await;
                    drop(permit);
                });
            }
            continue;
        };
        // A main slot may have come free while a reserve slot waited for the connection.
        let slot = match slot {
            Slot::Reserve(p) => main.clone().try_acquire_owned().map(Slot::Main).unwrap_or(Slot::Reserve(p)),
            main => main,
        };
        let _ = stream.set_nodelay(true);
        let (router, builder) = match (&slot, &routers.reserve) {
            (Slot::Reserve(_), Some(reserve)) => (reserve.clone(), &once),
            _ => (routers.main.clone(), &http),
        };
        // The peer reaches the client layer (`http::caller`) as axum's `ConnectInfo`.
        let service = hyper::service::service_fn(move |mut req: Request<Incoming>| {
            req.extensions_mut().insert(ConnectInfo::<SocketAddr>(peer));
            let mut router = router.clone();
            async move { Ok::<_, Infallible>(router.call(req.map(Body::new)).await.unwrap_or_else(|never| match never {})) }
        });
        let io = TokioIo::new(SendDeadline::new(stream, limits.write_timeout));
        let connection = graceful.watch(builder.serve_connection(io, service));
        tokio::spawn(async move {
            // A timed-out head, an answer nobody read or a client gone away ends the
            // connection; nothing to report.
            if let Err(e) = connection.await {
                tracing::debug!(error = %e, %peer, "connection ended");
            }
            drop((slot, client));
        });
    }
    drop(listener);
    if tokio::time::timeout(deadline, graceful.shutdown()).await.is_err() {
        tracing::warn!(deadline_secs = deadline.as_secs(), "connections still open at the shutdown deadline were closed");
    }
}

/// Which of the listener's connections one is: a regular one, or one of the reserve's.
enum Slot {
    Main(#[allow(dead_code)] OwnedSemaphorePermit),
    Reserve(#[allow(dead_code)] OwnedSemaphorePermit),
}

/// Resolves once stop is asked (the guard `wait_for` returns is not `Send`: dropped here).
async fn stopped(stop: &mut watch::Receiver<bool>) {
    let _ = stop.wait_for(|s| *s).await;
}

/// What a connection over its client's limit is answered, whatever it asks.
async fn refused(_: Request<Incoming>) -> Result<axum::response::Response, Infallible> {
    let message = "this client has too many connections open; retry after Retry-After seconds".to_string();
    Ok(axum::response::IntoResponse::into_response(crate::error::Error::Unavailable { message, retry_after_secs: 1 }))
}

/// The connections each client address holds (IPv6 by /64: one host has many addresses).
struct Clients {
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
    max: usize,
    trusted: TrustedProxies,
}

/// One connection counted against its client; uncounted when dropped.
struct Counted {
    open: Arc<Mutex<HashMap<IpAddr, usize>>>,
    key: IpAddr,
}

impl Clients {
    fn new(limits: &Limits) -> Clients {
        Clients { open: Arc::default(), max: limits.max_connections_per_client, trusted: limits.trusted_proxies.clone() }
    }

    /// Counts a connection from `ip`, or `None` when that client is at its limit.
    /// Unlimited clients count nothing (`Some(None)`).
    fn admit(&self, ip: IpAddr) -> Option<Option<Counted>> {
        let ip = ip.to_canonical();
        if self.max == 0 || self.trusted.contains(&ip) {
            return Some(None);
        }
        let key = client_key(ip);
        // A poisoned lock only means a holder panicked mid-update of a counter.
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        let n = open.entry(key).or_insert(0);
        if *n >= self.max {
            return None;
        }
        *n += 1;
        Some(Some(Counted { open: self.open.clone(), key }))
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = open.get_mut(&self.key) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.key);
            }
        }
    }
}

/// The address a client is counted by: IPv4 as it is, IPv6 by its /64.
fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
    }
}

#[cfg(test)]
mod tests {
    use std::net::IpAddr;

    use super::client_key;

    #[test]
    fn ipv6_clients_are_counted_by_their_64() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::9".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(client_key(a), client_key(b));
        assert_ne!(client_key(a), client_key(c));
        let v4: IpAddr = "192.0.2.7".parse().unwrap();
        assert_eq!(client_key(v4), v4);
    }
}
