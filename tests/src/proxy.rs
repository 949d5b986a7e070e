//! A TCP proxy between a client and a server, for what a network does to long-lived
//! connections: `cut` drops every connection through it at once (a blip, a load balancer
//! restarting), and `point_to` sends new connections to another server (a process that
//! went away, and the one taking its clients).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

pub struct Proxy {
    pub addr: SocketAddr,
    upstream: Arc<Mutex<SocketAddr>>,
    open: Arc<Mutex<Vec<JoinHandle<()>>>>,
    accept: JoinHandle<()>,
}

impl Proxy {
    /// A proxy on a free port of 127.0.0.1 to `upstream` (`host:port`, or a base address
    /// such as `http://127.0.0.1:41234`).
    pub async fn start(upstream: &str) -> Proxy {
        let upstream = Arc::new(Mutex::new(socket(upstream)));
        let open: Arc<Mutex<Vec<JoinHandle<()>>>> = Arc::default();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind the proxy");
        let addr = listener.local_addr().expect("the proxy's address");
        let accept = {
            let (upstream, open) = (upstream.clone(), open.clone());
            tokio::spawn(async move {
                while let Ok((mut client, _)) = listener.accept().await {
                    let to = *upstream.lock().expect("upstream");
                    let task = tokio::spawn(async move {
                        if let Ok(mut server) = TcpStream::connect(to).await {
                            let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                        }
                    });
                    let mut open = open.lock().expect("open connections");
                    open.retain(|t| !t.is_finished());
                    open.push(task);
                }
            })
        };
        Proxy { addr, upstream, open, accept }
    }

    /// The proxy's base address, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Drops every connection through the proxy now; new ones are taken as before.
    pub fn cut(&self) {
        for task in self.open.lock().expect("open connections").drain(..) {
            task.abort();
        }
    }

    /// Sends the connections made from now on to `upstream`.
    pub fn point_to(&self, upstream: &str) {
        *self.upstream.lock().expect("upstream") = socket(upstream);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.accept.abort();
        self.cut();
    }
}

fn socket(upstream: &str) -> SocketAddr {
    let hostport = upstream.trim_start_matches("http://").trim_end_matches('/');
    let hostport = hostport.split('/').next().unwrap_or(hostport);
    hostport.parse().unwrap_or_else(|_| panic!("{upstream} is not an address the proxy can reach"))
}
