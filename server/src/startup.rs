//! `Application::build` binds both listeners (port 0 works, for tests) and reports the
//! bound addresses; `run` serves them until shutdown.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use gable_app::api::ConsoleConfig;
use leptos::prelude::LeptosOptions;
use tokio::net::TcpListener;

use crate::clock::Clock;
use crate::config::{ServeArgs, Settings};
use crate::crypto::MasterKey;
use crate::domain::cursor::CursorKey;
use crate::http;
use crate::http::state::{ApiState, AppState};
use crate::ops::Operations;
use crate::store::Store;

pub struct Application {
    live: TcpListener,
    test: TcpListener,
    pub live_addr: SocketAddr,
    pub test_addr: SocketAddr,
    pub state: Arc<AppState>,
    scheduler_interval: Option<Duration>,
    delivery_concurrency: usize,
    limits: http::listener::Limits,
    shutdown_deadline: Duration,
    /// The metrics listener (`metrics_addr`) and its router, when one is configured.
    metrics: Option<(TcpListener, axum::Router)>,
    pub metrics_addr: Option<SocketAddr>,
    live_routers: http::listener::Routers,
    test_routers: http::listener::Routers,
}

impl Application {
    /// Connects to a migrated store and binds the listeners.
    pub async fn build(store: Store, args: &ServeArgs, key: MasterKey) -> anyhow::Result<Application> {
        Self::build_with_clock(store, args, Clock::system(), key).await
    }

    /// As `build`, acting at the given clock's time (tests move a manual clock).
    pub async fn build_with_clock(store: Store, args: &ServeArgs, clock: Clock, key: MasterKey) -> anyhow::Result<Application> {
        let live = TcpListener::bind(args.addr).await?;
        let test = TcpListener::bind(args.sandbox_addr).await?;
        let live_addr = live.local_addr()?;
        let test_addr = test.local_addr()?;
        let settings = Settings {
            public_url: args.public_url.clone().unwrap_or_else(|| format!("http://{live_addr}")).trim_end_matches('/').to_string(),
            sandbox_public_url: args
                .sandbox_public_url
                .clone()
                .unwrap_or_else(|| format!("http://{test_addr}"))
                .trim_end_matches('/')
                .to_string(),
            trusted_proxies: args.trusted_proxies.clone(),
            webhook_allow_cidrs: args.webhook_allow_cidrs.clone(),
            request_timeout: Duration::from_secs(args.request_timeout_secs.max(1)),
        };
        let cursors = CursorKey::new(&store.instance_secret("cursor").await?);
        let leptos = LeptosOptions::builder()
            .output_name("gable")
            .site_root(args.site_root.as_str())
            .site_pkg_dir("pkg")
            .site_addr(live_addr)
            .build();
        let console_config = ConsoleConfig {
            secure_cookies: settings.public_url.starts_with("https://"),
            session_max_age_secs: crate::ops::access::SESSION_ABSOLUTE.num_seconds().unsigned_abs(),
        };
        let guard = crate::outbound::Guard::new(settings.webhook_allow_cidrs.clone());
        let outbound = crate::outbound::Client::new(guard.clone())?;
        let ops = Operations::new(store.clone(), clock, key)
            .with_guard(guard)
            .with_cursors(cursors)
            .with_request_log(crate::ops::request_log::RequestLog::new(args.request_log_retention_days));
        let console =
            crate::accounts::AccountService::new(ops.clone()).with_api(&settings.public_url, &settings.sandbox_public_url).into_console();
        let embed = http::asset::Assets::load(&args.site_root);
        let state = Arc::new(AppState {
            store,
            ops,
            settings,
            outbound,
            embed,
            health: Default::default(),
            event_streams: Default::default(),
            stopping: tokio::sync::watch::Sender::new(false),
        });
        // The client layer (`http::caller`) reads the trusted proxies from the request.
        let trusted = axum::Extension(http::caller::TrustedProxies::new(&state.settings.trusted_proxies));
        let rate_limits = http::rate_limit::RateLimits::new(args.rate_limit_live, args.rate_limit_test);
        let live_api = ApiState { app: state.clone(), livemode: true, rate_limits: rate_limits.clone() };
        let reserve = |livemode| Some(http::reserve_router(state.clone(), livemode).layer(trusted.clone()));
        let live_routers = http::listener::Routers {
            main: http::router(live_api, Some((leptos, console, console_config))).layer(trusted.clone()),
            reserve: reserve(true),
        };
        let test_routers = http::listener::Routers {
            main: http::router(ApiState { app: state.clone(), livemode: false, rate_limits }, None).layer(trusted.clone()),
            reserve: reserve(false),
        };
        let scheduler_interval = (args.scheduler_interval_secs > 0).then(|| Duration::from_secs(args.scheduler_interval_secs));
        let delivery_concurrency = args.delivery_concurrency;
        let limits = http::listener::Limits {
            header_read_timeout: Duration::from_secs(args.header_read_timeout_secs.max(1)),
            write_timeout: Duration::from_secs(args.write_timeout_secs.max(1)),
            max_connections: args.max_connections,
            max_connections_per_client: args.max_connections_per_client,
            max_header_bytes: args.max_header_bytes,
            trusted_proxies: http::caller::TrustedProxies::new(&state.settings.trusted_proxies),
        };
        let shutdown_deadline = Duration::from_secs(args.shutdown_timeout_secs);
        let metrics = match args.metrics_addr {
            Some(addr) => {
                let handle = crate::observe::metrics::install()?;
                let listener = TcpListener::bind(addr).await?;
                Some((listener, http::health::metrics_router(state.clone(), handle)))
            }
            None => None,
        };
        let metrics_addr = metrics.as_ref().map(|(l, _)| l.local_addr()).transpose()?;
        Ok(Application {
            metrics,
            metrics_addr,
            live,
            test,
            live_addr,
            test_addr,
            state,
            scheduler_interval,
            delivery_concurrency,
            limits,
            shutdown_deadline,
            live_routers,
            test_routers,
        })
    }

    /// What the background work runs with: the operations, the outbound client and the
    /// loops' health (the listeners' state holds the same).
    pub fn background(&self) -> crate::jobs::Background {
        crate::jobs::Background { ops: self.state.ops.clone(), outbound: self.state.outbound.clone(), health: self.state.health.clone() }
    }

    /// Serves both listeners until `shutdown` resolves, then drains in-flight requests and
    /// background work for at most the shutdown deadline.
    pub async fn run(self, shutdown: impl std::future::Future<Output = ()> + Send + 'static) -> anyhow::Result<()> {
        // Building (migrations, the routers) ran on this thread and freed what it no
        // longer needs; a process that is quiet from the start would otherwise keep it.
        crate::observe::memory::release_unused();
        let revocations = {
            let store = self.state.store.clone();
            tokio::spawn(async move {
                if let Err(e) = store.listen_for_revocations().await {
                    tracing::error!(error = %e, "revocation listener stopped; keys are re-read every few seconds");
                }
            })
        };
        let rx = self.state.stopping.subscribe();
        let background = self.background();
        let deadline = self.shutdown_deadline;
        let live = http::listener::serve(self.live, self.live_routers, self.limits.clone(), rx.clone(), deadline);
        let test = http::listener::serve(self.test, self.test_routers, self.limits.clone(), rx.clone(), deadline);
        let metrics = async {
            if let Some((listener, router)) = self.metrics {
                let routers = http::listener::Routers { main: router, reserve: None };
                http::listener::serve(listener, routers, self.limits.clone(), rx.clone(), deadline).await;
            }
        };
        let jobs = tokio::spawn(crate::jobs::run(background, self.scheduler_interval, self.delivery_concurrency, rx.clone()));
        let stopping = self.state.clone();
        tokio::spawn(async move {
            shutdown.await;
            stopping.stopping.send_replace(true);
        });
        // The jobs stop at the same signal: a round or a delivery attempt in progress
        // finishes first, within the same deadline as the requests in flight.
        let cut_off = jobs.abort_handle();
        let mut signalled = rx.clone();
        tokio::spawn(async move {
            let _ = signalled.wait_for(|stop| *stop).await;
            tokio::time::sleep(deadline).await;
            cut_off.abort();
        });
        tokio::join!(live, test, metrics);
        if jobs.await.is_err() {
            tracing::warn!(deadline_secs = deadline.as_secs(), "background work still running at the shutdown deadline was stopped");
        }
        // The last requests' calls, queued after the writer stopped.
        if let Err(e) = self.state.ops.request_log().flush(&self.state.store).await {
            tracing::error!(error = %e, "the request log's last calls could not be written");
        }
        revocations.abort();
        self.state.store.close().await;
        Ok(())
    }
}

/// Resolves on Ctrl-C or SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        if let Ok(mut s) = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            s.recv().await;
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
    tracing::info!("shutting down");
}
