//! The delivery register's storage (`webhook_deliveries`): one row per attempt.
//!
//! A `pending` row is an attempt to make. The first attempts of an event are written in
//! the event's own transaction (`enqueue_for_event`), so what is to be delivered is as
//! durable as the event, whatever order events commit in across processes. Workers
//! claim due rows (`claim`: `FOR UPDATE SKIP LOCKED` on PostgreSQL, SQLite's one writer
//! otherwise) by setting `claimed_until`; a claim that lapses (the process died
//! mid-attempt) is claimed again, so every attempt is made at least once. `finish_all`
//! records outcomes only while their rows are still pending, so an attempt is recorded
//! once even if two processes made it.
//!
//! A file each: writing attempts (`enqueue.rs`), the workers' claims and what they read
//! (`claim.rs`), recording outcomes and the subscriptions' health (`finish.rs`), and
//! what replay and recovery read and change (`replay.rs`); this one holds what they
//! share, and the register's retention. The subscriptions' signing secrets, kept in
//! `webhooks`, are in `secrets.rs`.

mod claim;
mod enqueue;
mod finish;
mod replay;
pub mod secrets;

use chrono::{DateTime, Utc};
use sea_query::{Cond, Expr};
use uuid::Uuid;

use super::sql::{a, col};
use crate::error::{Error, Result};
use crate::store::Tx;

pub use claim::{backlog, claim, events_of, next_due, Claimed};
pub use enqueue::{enabled_subscriptions, enqueue_for_event, insert, NewAttempt, Subscription};
pub use finish::{finish_all, Outcome};
pub use replay::{expedite, last_attempt, payload_of, undelivered_events};

/// PostgreSQL channel that wakes every process's delivery worker when attempts are due.
pub const CHANNEL: &str = "gable_deliveries";

/// Why an attempt is made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    Event,
    Retry,
    Replay,
    Recovery,
    Test,
}

impl Trigger {
    fn parse(s: &str) -> Trigger {
        match s {
            "retry" => Trigger::Retry,
            "replay" => Trigger::Replay,
            "recovery" => Trigger::Recovery,
            "test" => Trigger::Test,
            _ => Trigger::Event,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Trigger::Event => "event",
            Trigger::Retry => "retry",
            Trigger::Replay => "replay",
            Trigger::Recovery => "recovery",
            Trigger::Test => "test",
        }
    }
}

fn required<T>(v: Result<Option<T>>) -> Result<T> {
    v?.ok_or_else(|| Error::internal(anyhow::anyhow!("a required column of the register is empty")))
}

/// Deletes at most `limit` attempts older than `before` (the register keeps 30 days).
pub async fn delete_before(tx: &mut Tx, before: DateTime<Utc>, limit: u64) -> Result<u64> {
    super::sql::delete_some(tx, "webhook_deliveries", &["tenant_id", "livemode", "id"], col("created_at").lt(Expr::val(before)), limit)
        .await
}

/// The key of one row of a tenant table.
fn row_key(tenant: Uuid, livemode: bool, id: Uuid) -> Cond {
    Cond::all().add(col("tenant_id").eq(tenant)).add(col("livemode").eq(livemode)).add(col("id").eq(id))
}
