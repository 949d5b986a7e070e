//! Background work started beside the listeners: the scheduler (what time causes,
//! `ops::time`, on real time and on each sandbox's clock, then the retention of events,
//! deliveries, idempotency keys and the request log), the report worker, the import
//! worker, the webhook delivery worker, and the request log's writer.
//! All work through the database, so any number of processes may run them side by side.
//! They take what they use, a [`Background`]: the operations and the outbound client.

pub mod deliveries;
pub mod imports;
pub mod lowest_priority;
pub mod reports;
pub mod request_log;
pub mod retention;
pub mod supervise;

use std::time::Duration;

use tokio::sync::watch;

use crate::domain::reach::Reach;
use crate::error::Result;
use crate::observe::{metrics as m, Health};
use crate::ops::time::{self, Passed};
use crate::ops::Operations;
use crate::outbound;
use crate::store::{sandbox, Intent};

/// What background work uses: the operations (their store, clock, master key and
/// signals) and the SSRF-guarded client webhook deliveries go through.
#[derive(Clone)]
pub struct Background {
    pub ops: Operations,
    pub outbound: outbound::Client,
    /// Where each loop reports its rounds and panics (readiness reads it).
    pub health: Health,
}

/// The loops' names, as logs, metrics and readiness show them.
pub const SCHEDULER: &str = "scheduler";
pub const REPORTS: &str = "reports";
pub const DELIVERIES: &str = "deliveries";

/// What one round of background work did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    /// Rent periods billed (a charge and its invoice each).
    pub rent_billed: usize,
    /// Leases ended on reaching their end date.
    pub leases_ended: usize,
    pub events_fired: usize,
    /// Of which `rent.due`.
    pub rent_due_fired: usize,
    pub events_purged: u64,
    pub reports_completed: usize,
    /// Batches of committed imports written.
    pub import_batches: usize,
}

impl Round {
    /// Adds what time caused (on real time, in a sandbox).
    fn absorb(&mut self, p: Passed) {
        self.rent_billed += p.rent_billed;
        self.leases_ended += p.leases_ended;
        self.events_fired += p.events_fired;
        self.rent_due_fired += p.rent_due_fired;
    }
}

/// One round of everything, at the application clock's time (tests call this after
/// moving the clock).
pub async fn run_once(ops: &Operations) -> Result<Round> {
    let mut round = scheduler_round(ops).await?;
    round.reports_completed = reports::run_queued(ops).await?;
    round.import_batches = imports::run_committed(ops, None).await?;
    Ok(round)
}

/// What time causes, for everything on real time and for each sandbox on its own clock
/// at that clock's time; then what is past its retention purged.
async fn scheduler_round(ops: &Operations) -> Result<Round> {
    let now = ops.clock().now();
    let mut round = Round::default();
    round.absorb(time::passes(ops, now, Reach::RealTime).await?);
    let clocked = ops.store().in_system(Intent::Read, async |tx| sandbox::clocked(tx).await).await?;
    for (tenant, offset) in clocked {
        round.absorb(time::passes(ops, now + offset, Reach::Sandbox(tenant)).await?);
    }
    round.events_purged = retention::purge_old_events(ops.store(), now, ops.request_log().retention()).await?;
    ops.store().refresh_statistics_if_due().await?;
    Ok(round)
}

/// Runs the scheduler every `interval` (never when it is `None`) and the report worker
/// whenever a report is queued here (or every few seconds, for reports queued by other
/// processes), until `stop` turns true.
pub async fn run(with: Background, interval: Option<Duration>, delivery_concurrency: usize, stop: watch::Receiver<bool>) {
    let Background { ops, outbound, health } = with;
    let scheduler = {
        let (ops, stop, health) = (ops.clone(), stop.clone(), health.clone());
        move || {
            let (ops, stop, health) = (ops.clone(), stop.clone(), health.clone());
            async move {
                let Some(interval) = interval else { return };
                let round = || async {
                    let started = std::time::Instant::now();
                    let passed = scheduler_round(&ops).await?;
                    metrics::histogram!(m::SCHEDULER_ROUND).record(started.elapsed().as_secs_f64());
                    Ok(passed)
                };
                repeat(SCHEDULER, &health, stop, interval, None, round).await
            }
        }
    };
    let deliveries = {
        let (ops, stop, health) = (ops.clone(), stop.clone(), health.clone());
        move || {
            let deliverer =
                (delivery_concurrency > 0).then(|| deliveries::Deliverer::new(ops.clone(), outbound.clone(), delivery_concurrency));
            let (stop, health) = (stop.clone(), health.clone());
            async move {
                if let Some(d) = deliverer {
                    d.run(stop, health).await;
                }
            }
        }
    };
    let worker = {
        let (ops, stop, health) = (ops.clone(), stop.clone(), health.clone());
        move || {
            let (ops, stop, health) = (ops.clone(), stop.clone(), health.clone());
            async move {
                let queued = ops.signals().reports_queued.clone();
                repeat(REPORTS, &health, stop, LOOK_EVERY, Some(queued), || reports::run_queued(&ops)).await
            }
        }
    };
    let importer = {
        let (ops, stop, health) = (ops.clone(), stop.clone(), health.clone());
        move || imports::run(ops.clone(), stop.clone(), health.clone())
    };
    let request_log = {
        let (ops, stop, health) = (ops.clone(), stop.clone(), health.clone());
        move || request_log::run(ops.clone(), stop.clone(), health.clone())
    };
    // Each loop in a task of its own: a panic in one is logged and that loop restarts,
    // the others run on (`supervise`).
    // A loop this process does not run is not watched (readiness does not wait for it).
    tokio::join!(
        async {
            if interval.is_some() {
                supervise::supervise(SCHEDULER, &health, stop.clone(), scheduler).await;
            }
        },
        supervise::supervise(REPORTS, &health, stop.clone(), worker),
        supervise::supervise(imports::IMPORTS, &health, stop.clone(), importer),
        supervise::supervise(request_log::REQUEST_LOG, &health, stop.clone(), request_log),
        async {
            if delivery_concurrency > 0 {
                supervise::supervise(DELIVERIES, &health, stop.clone(), deliveries).await;
            }
        },
    );
}

/// How often a worker woken by its signal (reports, imports) also looks by itself: for
/// work another process queued, or one that stopped left.
pub const LOOK_EVERY: Duration = Duration::from_secs(2);

/// A worker's loop: `round`, then again when `woken` is notified or `every` has passed,
/// until `stop` turns true. Each round's outcome is the loop's health (`/readyz`); a
/// failed round is logged with its worker's name and tried again next time.
pub async fn repeat<T, Fut>(
    name: &'static str,
    health: &Health,
    mut stop: watch::Receiver<bool>,
    every: Duration,
    woken: Option<std::sync::Arc<tokio::sync::Notify>>,
    mut round: impl FnMut() -> Fut,
) where
    Fut: std::future::Future<Output = Result<T>>,
{
    loop {
        match round().await {
            Ok(_) => health.succeeded(name),
            Err(e) => {
                health.failed(name, &e.to_string());
                tracing::error!(error = %e, worker = name, "background round failed; retrying");
            }
        }
        let signalled = async {
            match &woken {
                Some(n) => n.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = signalled => {}
            _ = tokio::time::sleep(every) => {}
            _ = stop.wait_for(|s| *s) => return,
        }
    }
}

/// Makes every webhook delivery attempt due at the clock's time, and waits for them
/// (tests call this after moving the clock, as the worker would).
pub async fn deliver_due(with: &Background) -> Result<usize> {
    deliveries::Deliverer::new(with.ops.clone(), with.outbound.clone(), deliveries::CONCURRENCY).run_due().await
}
