//! The request log's writer: takes the calls the HTTP layer queued (`ops::request_log`)
//! and writes them in batches, a batch as soon as one is waiting and whatever is queued
//! at least every [`TICK`], so a call is readable (and in the console's live tail) well
//! within a second or two. It keeps to a share of the time (`WRITER_SHARE`), resting
//! after each batch: requests come first, and what it cannot write in its share
//! overflows the queue and is dropped, counted. On shutdown it writes
//! what is queued before it stops; the application writes what the last requests queued
//! after the listeners have drained.

use std::time::Duration;

use tokio::sync::watch;

use crate::observe::Health;
use crate::ops::request_log::{RequestLog, BATCH, WRITER_SHARE};
use crate::ops::Operations;

/// The loop's name, as logs, metrics and readiness show it.
pub const REQUEST_LOG: &str = "request-log";
/// The longest a queued call waits for the writer.
pub const TICK: Duration = Duration::from_millis(250);

/// Writes queued calls until `stop` turns true, then what is left.
pub async fn run(ops: Operations, mut stop: watch::Receiver<bool>, health: Health) {
    let log: RequestLog = ops.request_log().clone();
    loop {
        let stopping = tokio::select! {
            _ = log.batch_ready() => false,
            _ = tokio::time::sleep(TICK) => false,
            _ = stop.wait_for(|s| *s) => true,
        };
        loop {
            let batch = log.take(BATCH);
            if batch.is_empty() {
                break;
            }
            let n = batch.len();
            let began = std::time::Instant::now();
            match RequestLog::write(ops.store(), batch).await {
                Ok(_) => health.succeeded(REQUEST_LOG),
                Err(e) => {
                    // The batch is lost, not retried: a database that refuses it now would
                    // make the queue, and the memory it holds, grow.
                    health.failed(REQUEST_LOG, &e.to_string());
                    tracing::error!(error = %e, calls = n, "the request log could not write a batch; it was dropped");
                    metrics::counter!(crate::observe::metrics::REQUEST_LOG_DROPPED).increment(n as u64);
                }
            }
            // Requests first: after each batch the writer rests long enough to keep to its
            // share of the time, whatever the load. Its batches cost the database what
            // they take (on a busy database, longer), so the rule holds its cost there
            // too; a quick batch rests a few milliseconds. The rest is at most a tick, so
            // that a slow batch never keeps the next calls from being read within about a
            // second (a batch of 100 ms once rested 1.9 s on a loaded CI machine).
            if !stopping {
                let rest = began.elapsed().mul_f64((1.0 - WRITER_SHARE) / WRITER_SHARE).min(TICK);
                tokio::select! {
                    _ = tokio::time::sleep(rest) => {}
                    _ = stop.wait_for(|s| *s) => {}
                }
            }
        }
        if stopping {
            return;
        }
    }
}
