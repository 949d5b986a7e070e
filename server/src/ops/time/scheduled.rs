//! Scheduled events: `rent.due`, `lease.expiring` (60 and 30 days before the end) and
//! `document.expiring` (30 days before). Each tick finds, across all tenants, the
//! records whose moment has come and that have no event for that occurrence yet, and
//! writes the events. The unique index on (tenant, environment, type, record,
//! occurrence) makes each fire once, also when several processes tick at once.
//!
//! Windows: a rent charge fires from its due date up to 7 days later (a scheduler that
//! was stopped catches up that far); the 60-day lease notice fires while the lease
//! ends in 31–60 days, the 30-day one while it ends in 1–30 days; a document fires
//! while it expires within 30 days. Dates are UTC calendar dates. Every window is
//! shorter than the 30 days events are kept (`jobs::retention`): the event row that marks
//! an occurrence as fired is never purged while the occurrence could fire again.

use std::ops::Bound;

use chrono::{DateTime, Duration, Utc};
use serde_json::{json, Map};

use crate::domain::collections::collection;
use crate::domain::events;
use crate::domain::value::Val;
use crate::error::Result;
use crate::ops::outbox::{self, NewEvent};
use crate::store::background::{self, Due, Occurrence};
use crate::store::{Intent, Store};

use crate::domain::reach::Reach;

/// How many candidates one transaction handles.
const BATCH: u64 = 200;
/// How late a rent charge's `rent.due` may still fire.
const RENT_CATCH_UP_DAYS: i64 = 7;

/// One kind of scheduled occurrence.
#[derive(Clone, Copy)]
enum Rule {
    RentDue,
    /// `lease.expiring`, this many days before the end.
    LeaseExpiring(i64),
    DocumentExpiring,
}

const RULES: &[Rule] = &[Rule::RentDue, Rule::LeaseExpiring(60), Rule::LeaseExpiring(30), Rule::DocumentExpiring];

impl Rule {
    /// The notice period, for `data.days_before`.
    fn days_before(self) -> Option<i64> {
        match self {
            Rule::RentDue => None,
            Rule::LeaseExpiring(n) => Some(n),
            Rule::DocumentExpiring => Some(30),
        }
    }

    /// Which records are due at `now`, and not fired yet.
    fn due(self, now: DateTime<Utc>) -> Due {
        let today = now.date_naive();
        let named = |name| collection(name).expect("scheduled rules name real collections");
        match self {
            Rule::RentDue => Due {
                event: "rent.due",
                collection: named("charges"),
                equals: &[("kind", "rent"), ("status", "posted")],
                field: "due_date",
                from: Bound::Included(Val::Date(today - Duration::days(RENT_CATCH_UP_DAYS))),
                to: Bound::Included(Val::Date(today)),
                occurrence: Occurrence::Once("due"),
            },
            Rule::LeaseExpiring(n) => {
                // The 60-day notice stops where the 30-day one takes over; the 30-day one
                // stops the day before the end. Each window is shorter than the 30 days
                // events are kept, so the event that marks an occurrence as fired outlives it.
                let until = if n == 60 { today + Duration::days(30) } else { today };
                Due {
                    event: "lease.expiring",
                    collection: named("leases"),
                    equals: &[("status", "active")],
                    field: "end_date",
                    from: Bound::Excluded(Val::Date(until)),
                    to: Bound::Included(Val::Date(today + Duration::days(n))),
                    occurrence: Occurrence::DaysBefore(n),
                }
            }
            Rule::DocumentExpiring => Due {
                event: "document.expiring",
                collection: named("documents"),
                equals: &[],
                field: "expires_at",
                from: Bound::Excluded(Val::DateTime(now)),
                to: Bound::Included(Val::DateTime(now + Duration::days(30))),
                occurrence: Occurrence::DaysBefore(30),
            },
        }
    }
}

/// What a tick fired.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Fired {
    pub total: usize,
    /// Of which `rent.due`.
    pub rent_due: usize,
}

/// Fires every scheduled event due at `now` among the rows `reach` selects; returns
/// what it wrote.
pub async fn tick(store: &Store, now: DateTime<Utc>, reach: Reach) -> Result<Fired> {
    let mut fired = Fired::default();
    for rule in RULES {
        let due = rule.due(now);
        loop {
            // Found with a read (on SQLite, without the write lock); written in a write
            // transaction only when there is something to fire.
            let batch = store.in_system(Intent::Read, async |read| background::due(read, &due, reach, BATCH).await).await?;
            if batch.is_empty() {
                break;
            }
            let mut tx = store.begin_system(Intent::Write).await?;
            for (tenant, rec) in &batch {
                let extra: Vec<(&str, serde_json::Value)> = rule.days_before().map(|n| ("days_before", json!(n))).into_iter().collect();
                let occurrence = due.occurrence_of(rec);
                let e = NewEvent {
                    tenant: *tenant,
                    livemode: rec.livemode,
                    kind: due.event,
                    data: events::data(rec.to_json(due.collection, None), Map::new(), &extra),
                    related: rec.id,
                    property: rec.property_id(due.collection),
                    occurrence: Some(&occurrence),
                    at: now,
                    // A sandbox clock moved by a request: the request caused them.
                    request: crate::observe::request_id::current(),
                };
                if outbox::write(&mut tx, e).await?.is_some() {
                    fired.total += 1;
                    if matches!(rule, Rule::RentDue) {
                        fired.rent_due += 1;
                    }
                }
            }
            tx.commit().await?;
            if (batch.len() as u64) < BATCH {
                break;
            }
        }
    }
    Ok(fired)
}
