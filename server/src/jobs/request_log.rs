//! The request log's writer: takes the calls the HTTP layer queued (`ops::request_log`)
//! and writes them in batches, a batch as soon as one is waiting and whatever is queued
//! at least every [`TICK`], so a call is readable (and in the console's live tail) well
//! within a second or two. Requests come first, twice over: the writer runs on a thread of
//! its own at the lowest priority (`jobs::lowest_priority`), so it has only the CPU time
//! requests leave, and it keeps to a share of the time ([`WRITER_SHARE`]), resting after
//! each batch, so that what it costs beside them (the calls it makes the HTTP layer take,
//! the caches and memory bandwidth it uses) stays bounded whatever the load. What it
//! cannot write overflows the queue and is dropped, counted. On shutdown it writes what
//! is queued before it stops; the application writes what the last requests queued after
//! the listeners have drained.

use std::time::Duration;

use tokio::sync::watch;

use super::lowest_priority;
use crate::observe::Health;
use crate::ops::request_log::{RequestLog, BATCH, WRITER_SHARE};
use crate::ops::Operations;

/// The loop's name, as logs, metrics and readiness show it.
pub const REQUEST_LOG: &str = "request-log";
/// The writer's thread's name, as `top -H` and profiles show it.
pub const THREAD: &str = "gable-log-write";
/// The longest a queued call waits for the writer while it has CPU time.
pub const TICK: Duration = Duration::from_millis(250);

/// Writes queued calls until `stop` turns true, then what is left, on the writer's thread.
pub async fn run(ops: Operations, stop: watch::Receiver<bool>, health: Health) {
    lowest_priority::run(THREAD, write(ops, stop, health)).await
}

async fn write(ops: Operations, mut stop: watch::Receiver<bool>, health: Health) {
    let log: RequestLog = ops.request_log().clone();
    // How long a batch should take: with the rest after it, a tick. The next batch is
    // sized from the last one's pace, so large answers or a busy machine make batches
    // smaller rather than the rests longer (a rest is at most a tick).
    let aim = TICK.mul_f64(WRITER_SHARE);
    let mut size = BATCH;
    loop {
        let stopping = tokio::select! {
            _ = log.batch_ready() => false,
            _ = tokio::time::sleep(TICK) => false,
            _ = stop.wait_for(|s| *s) => true,
        };
        loop {
            let batch = log.take(size);
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
                    log.count_dropped(n as u64);
                }
            }
            let took = began.elapsed();
            size = next_size(aim, took, n);
            // The rest keeps the writer to its share of the time: its batches cost what
            // they take (on a busy machine, longer), so the rule holds its cost there too.
            // It is at most a tick, so that a batch slowed by a loaded machine never keeps
            // the next calls from being read within about a second.
            if !stopping {
                let rest = took.mul_f64((1.0 - WRITER_SHARE) / WRITER_SHARE).min(TICK);
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

/// The calls the next batch takes: as many as the last batch's pace (`n` calls in `took`)
/// writes in `aim`, between 1 and [`BATCH`].
fn next_size(aim: Duration, took: Duration, n: usize) -> usize {
    let per_call = took.as_secs_f64() / n.max(1) as f64;
    if per_call <= 0.0 {
        return BATCH;
    }
    ((aim.as_secs_f64() / per_call) as usize).clamp(1, BATCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batches_are_sized_to_take_about_the_aim() {
        let aim = Duration::from_millis(12);
        assert_eq!(next_size(aim, Duration::from_millis(6), 100), BATCH, "fast calls: a whole batch");
        assert_eq!(next_size(aim, Duration::from_millis(60), 100), 20, "slow calls: fewer");
        assert_eq!(next_size(aim, Duration::from_millis(500), 2), 1, "never none");
        assert_eq!(next_size(aim, Duration::ZERO, 5), BATCH);
    }
}
