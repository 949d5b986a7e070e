//! Background work started beside the listeners: the scheduler of timed events (and
//! the 30-day retention of events and deliveries), the report worker, and the webhook
//! delivery worker. All work through the database, so any number of processes may run
//! them side by side.

pub mod deliveries;
pub mod reports;
pub mod scheduler;

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use crate::error::Result;
use crate::state::AppState;

/// What one round of background work did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Round {
    pub events_fired: usize,
    pub events_purged: u64,
    pub reports_completed: usize,
}

/// One round of everything, at the application clock's time (tests call this after
/// moving the clock).
pub async fn run_once(app: &AppState) -> Result<Round> {
    let (events_fired, events_purged) = scheduler_round(app).await?;
    let clock = app.ops.clock().clone();
    let reports_completed = reports::run_queued(&app.store, move || clock.now()).await?;
    Ok(Round { events_fired, events_purged, reports_completed })
}

/// Fires the scheduled events due now, then drops events past their 30 days.
async fn scheduler_round(app: &AppState) -> Result<(usize, u64)> {
    let now = app.ops.clock().now();
    let fired = scheduler::tick(&app.store, now).await?;
    if fired > 0 {
        // Their deliveries were written with them; this process's worker starts now.
        app.ops.signals().deliveries_due.notify_one();
    }
    Ok((fired, scheduler::purge_old_events(&app.store, now).await?))
}

/// Runs the scheduler every `interval` (never when it is `None`) and the report worker
/// whenever a report is queued here (or every few seconds, for reports queued by other
/// processes), until `stop` turns true.
pub async fn run(app: Arc<AppState>, interval: Option<Duration>, delivery_concurrency: usize, stop: watch::Receiver<bool>) {
    let scheduler = {
        let app = app.clone();
        let mut stop = stop.clone();
        async move {
            let Some(interval) = interval else { return };
            loop {
                if let Err(e) = scheduler_round(&app).await {
                    tracing::error!(error = %e, "scheduler round failed; retrying next round");
                }
                tokio::select! {
                    _ = tokio::time::sleep(interval) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
            }
        }
    };
    let deliveries = {
        let deliverer =
            (delivery_concurrency > 0).then(|| deliveries::Deliverer::new(app.clone(), app.outbound.clone(), delivery_concurrency));
        let stop = stop.clone();
        async move {
            if let Some(d) = deliverer {
                d.run(stop).await;
            }
        }
    };
    let worker = {
        let mut stop = stop.clone();
        let queued = app.ops.signals().reports_queued.clone();
        async move {
            loop {
                let clock = app.ops.clock().clone();
                if let Err(e) = reports::run_queued(&app.store, move || clock.now()).await {
                    tracing::error!(error = %e, "report worker failed; retrying");
                }
                tokio::select! {
                    _ = queued.notified() => {}
                    _ = tokio::time::sleep(Duration::from_secs(2)) => {}
                    _ = stop.wait_for(|s| *s) => return,
                }
            }
        }
    };
    tokio::join!(scheduler, worker, deliveries);
}

/// Makes every webhook delivery attempt due at the clock's time, and waits for them
/// (tests call this after moving the clock, as the worker would).
pub async fn deliver_due(app: &Arc<AppState>) -> Result<usize> {
    deliveries::Deliverer::new(app.clone(), app.outbound.clone(), deliveries::CONCURRENCY).run_due().await
}
