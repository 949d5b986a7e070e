//! Background work started beside the listeners: the scheduler (recurring rent, leases
//! reaching their end, timed events, and the retention of events, deliveries and
//! idempotency keys), the report worker, and the webhook delivery worker. All work
//! through the database, so any number of processes may run them side by side.

pub mod deliveries;
pub mod leases;
pub mod reports;
pub mod scheduler;

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use sea_query::SimpleExpr;
use tokio::sync::watch;
use uuid::Uuid;

use crate::error::{Error, Result};
use crate::state::AppState;
use crate::store::{sandbox, Dialect, Intent};

/// Whose rows a round of time-driven work reaches: everything that runs on real time
/// (live data, and sandboxes without a clock of their own), or one tenant's sandbox on
/// its sandbox clock (`store::sandbox`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reach {
    RealTime,
    Sandbox(Uuid),
}

impl Reach {
    /// The conditions that select its rows in a scan over table alias `r`.
    pub fn conditions(self, d: Dialect) -> Vec<SimpleExpr> {
        match self {
            Reach::RealTime => vec![sandbox::on_real_time()],
            Reach::Sandbox(tenant) => sandbox::of_sandbox(d, tenant),
        }
    }
}

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
}

impl Round {
    /// Adds what another round's time-driven work did (a sandbox's, a day's).
    fn absorb(&mut self, r: Round) {
        self.rent_billed += r.rent_billed;
        self.leases_ended += r.leases_ended;
        self.events_fired += r.events_fired;
        self.rent_due_fired += r.rent_due_fired;
    }
}

/// One round of everything, at the application clock's time (tests call this after
/// moving the clock).
pub async fn run_once(app: &AppState) -> Result<Round> {
    let mut round = scheduler_round(app).await?;
    let clock = app.ops.clock().clone();
    round.reports_completed = reports::run_queued(&app.store, move || clock.now()).await?;
    Ok(round)
}

/// What time causes, for everything on real time and for each sandbox on its own clock
/// at that clock's time; then what is past its retention purged.
async fn scheduler_round(app: &AppState) -> Result<Round> {
    let now = app.ops.clock().now();
    let mut round = time_passes(app, now, Reach::RealTime).await?;
    let clocked = {
        let mut tx = app.store.begin_system(Intent::Read).await?;
        let c = sandbox::clocked(&mut tx).await?;
        tx.commit().await?;
        c
    };
    for (tenant, offset) in clocked {
        round.absorb(time_passes(app, now + offset, Reach::Sandbox(tenant)).await?);
    }
    round.events_purged = scheduler::purge_old_events(&app.store, now).await?;
    Ok(round)
}

/// In order, as time causes them at `now`, among the rows `reach` selects: rent billed
/// (so that `rent.due` fires for it the same round), leases past their end ended, the
/// scheduled events due fired.
async fn time_passes(app: &AppState, now: DateTime<Utc>, reach: Reach) -> Result<Round> {
    let rent_billed = leases::bill_rent(&app.ops, now, reach).await?;
    let leases_ended = leases::end_leases(&app.ops, now, reach).await?;
    let fired = scheduler::tick(&app.store, now, reach).await?;
    if fired.total > 0 {
        // Their deliveries were written with them; this process's worker starts now.
        app.ops.signals().deliveries_due.notify_one();
    }
    Ok(Round { rent_billed, leases_ended, events_fired: fired.total, rent_due_fired: fired.rent_due, ..Round::default() })
}

/// The longest a sandbox clock moves in one advance (each day on the way is a scheduler
/// round for the sandbox).
pub const MAX_ADVANCE: chrono::Duration = chrono::Duration::days(731);

/// Moves a tenant's sandbox clock forward to `to`, running on the way, day by day and in
/// order, everything time causes in that sandbox (`time_passes`): a round at the
/// sandbox's time now (what is due already), one at the start (UTC) of each day on the
/// way, and a last one at `to`. Returns what the rounds did.
/// The clock moves forward only; `to` at or before the sandbox's time is refused.
pub async fn advance_sandbox(app: &AppState, tenant: Uuid, to: DateTime<Utc>) -> Result<Round> {
    let from = sandbox_now(app, tenant).await?;
    if to <= from {
        return Err(Error::validation(
            "to",
            format!("must be later than the sandbox's time, {}; the clock moves forward only", from.to_rfc3339()),
        ));
    }
    if to - from > MAX_ADVANCE {
        return Err(Error::validation("to", "must be at most two years after the sandbox's time; advance in steps"));
    }
    let mut steps: Vec<DateTime<Utc>> = vec![from];
    let mut day = from.date_naive().succ_opt();
    while let Some(d) = day.filter(|d| *d <= to.date_naive()) {
        if let Some(start) = d.and_hms_opt(0, 0, 0) {
            steps.push(start.and_utc());
        }
        day = d.succ_opt();
    }
    steps.push(to);
    let mut total = Round::default();
    for at in steps {
        // Set the clock first, so that what the round writes carries the sandbox's time.
        let mut tx = app.store.begin_tenant(tenant, false, Intent::Write).await?;
        sandbox::advance(&mut tx, tenant, at - app.ops.clock().now(), app.ops.clock().now()).await?;
        tx.commit().await?;
        total.absorb(time_passes(app, at, Reach::Sandbox(tenant)).await?);
    }
    Ok(total)
}

/// A tenant's sandbox time now: real time plus how far its clock was advanced.
pub async fn sandbox_now(app: &AppState, tenant: Uuid) -> Result<DateTime<Utc>> {
    let mut tx = app.store.begin_tenant(tenant, false, Intent::Read).await?;
    let o = sandbox::offset(&mut tx, tenant).await?;
    tx.commit().await?;
    Ok(app.ops.clock().now() + o)
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
