//! The router's state: what every request can reach (the store, the operations, the
//! settings, the embed assets), and which listener it came in on.

use std::sync::Arc;

use crate::config::Settings;
use crate::http::asset::Assets;
use crate::http::rate_limit::RateLimits;
use crate::ops::Operations;
use crate::store::Store;

pub struct AppState {
    pub store: Store,
    /// Writes with their consequences (events, couplings, postings), at the app's clock.
    pub ops: Operations,
    pub settings: Settings,
    /// The SSRF-guarded HTTP client webhook deliveries go through (`jobs`).
    pub outbound: crate::outbound::Client,
    /// The embed loader and the flows' bundle, served from memory (`http::embed`).
    pub embed: Arc<Assets>,
    /// The background loops' health, for readiness (`http::health`).
    pub health: crate::observe::Health,
    /// The event streams open on this process, per credential (`ops::event_stream`).
    pub event_streams: crate::ops::event_stream::OpenStreams,
    /// Turns true when the process begins to shut down: long-lived answers (event
    /// streams) end then, rather than hold the drain to its deadline.
    pub stopping: tokio::sync::watch::Sender<bool>,
}

/// The state of one listener: production (`livemode`) or sandbox.
#[derive(Clone)]
pub struct ApiState {
    pub app: Arc<AppState>,
    pub livemode: bool,
    /// Per-credential rate limits (`http::rate_limit`), shared by both listeners.
    pub rate_limits: Arc<RateLimits>,
}

impl ApiState {
    pub fn public_url(&self) -> &str {
        if self.livemode {
            &self.app.settings.public_url
        } else {
            &self.app.settings.sandbox_public_url
        }
    }
}
