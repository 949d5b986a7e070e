//! What time causes, at a given moment, among the rows a [`Reach`] selects: rent billed
//! (`leases`), leases past their end ended (`leases`), the scheduled events due fired
//! (`scheduled`). The background scheduler runs it each round, on real time and on each
//! sandbox's clock (`jobs`); advancing a sandbox's clock runs it day by day (`sandbox`).

pub mod leases;
pub mod sandbox;
pub mod scheduled;

use chrono::{DateTime, Utc};

use super::Operations;
use crate::domain::reach::Reach;
use crate::error::Result;

/// What time caused, in one pass or several.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Passed {
    /// Rent periods billed (a charge and its invoice each).
    pub rent_billed: usize,
    /// Leases ended on reaching their end date.
    pub leases_ended: usize,
    pub events_fired: usize,
    /// Of which `rent.due`.
    pub rent_due_fired: usize,
}

impl Passed {
    /// Adds what another pass did (a sandbox's, a day's).
    pub fn absorb(&mut self, p: Passed) {
        self.rent_billed += p.rent_billed;
        self.leases_ended += p.leases_ended;
        self.events_fired += p.events_fired;
        self.rent_due_fired += p.rent_due_fired;
    }
}

/// In order, as time causes them at `now`, among the rows `reach` selects: rent billed
/// (so that `rent.due` fires for it the same round), leases past their end ended, the
/// scheduled events due fired.
pub async fn passes(ops: &Operations, now: DateTime<Utc>, reach: Reach) -> Result<Passed> {
    let rent_billed = leases::bill_rent(ops, now, reach).await?;
    let leases_ended = leases::end_leases(ops, now, reach).await?;
    let fired = scheduled::tick(ops.store(), now, reach).await?;
    if fired.total > 0 {
        // Their deliveries were written with them; this process's worker starts now.
        ops.signals().deliveries_due.notify_one();
    }
    Ok(Passed { rent_billed, leases_ended, events_fired: fired.total, rent_due_fired: fired.rent_due })
}
