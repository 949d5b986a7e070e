//! Prometheus metrics: every metric's name in one place, and the recorder that renders
//! them. Code records with the `metrics` macros (`metrics::counter!(REQUESTS, …)`); while
//! no recorder is installed (no `metrics_addr` is set) those calls cost nearly nothing.
//! `gable_*` gauges that describe shared state (the delivery backlog, the pool) are
//! sampled when scraped, not kept up to date on every change.

use std::sync::OnceLock;

use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};
use metrics_util::MetricKindMask;

/// Requests answered, by `listener` (`live`, `sandbox`), `method` (HTTP's nine methods,
/// or `OTHER`), `route` (the route's template, `/v1/{resource}/{id}`, or `<unmatched>`)
/// and `status`.
pub const REQUESTS: &str = "gable_http_requests_total";
/// Seconds to the response head, by `listener`, `method` and `route` (a histogram).
pub const REQUEST_DURATION: &str = "gable_http_request_duration_seconds";
/// Requests refused `429` by a credential's rate limit, by `listener`.
pub const RATE_LIMITED: &str = "gable_rate_limited_total";
/// `POST`s answered from a stored answer of the same `Idempotency-Key`, by `listener`.
pub const IDEMPOTENT_REPLAYS: &str = "gable_idempotent_replays_total";
/// Webhook delivery attempts made, by `outcome`: `delivered` (a 2xx), `failed` (another
/// answer), `no_response` (refused by the SSRF guard, unreachable, or timed out).
pub const DELIVERY_ATTEMPTS: &str = "gable_webhook_attempts_total";
/// Delivery attempts due now or overdue and not yet made (every process's).
pub const DELIVERY_BACKLOG: &str = "gable_webhook_backlog";
/// Seconds the oldest due attempt has waited past its time (0 when none is waiting).
pub const DELIVERY_OLDEST_DUE: &str = "gable_webhook_oldest_due_age_seconds";
/// Seconds since this process's scheduler last finished a round.
pub const SCHEDULER_LAG: &str = "gable_scheduler_last_round_age_seconds";
/// Seconds a scheduler round took (a histogram).
pub const SCHEDULER_ROUND: &str = "gable_scheduler_round_duration_seconds";
/// Panics of a background loop, by `job` (each was restarted).
pub const BACKGROUND_PANICS: &str = "gable_background_panics_total";
/// Database connections of this process's pools, by `state` (`idle`, `in_use`) and the
/// pool's `max`.
pub const DB_CONNECTIONS: &str = "gable_db_connections";
pub const DB_CONNECTIONS_MAX: &str = "gable_db_connections_max";
/// 1 when readiness holds, else 0.
pub const READY: &str = "gable_ready";
/// SQLite reads that ran past the inline budget and were moved to the blocking pool
/// (`store::readers::inline`): a steady rise means scans that an index could serve.
pub const SQLITE_READS_MOVED: &str = "gable_sqlite_reads_moved_total";

/// Calls of the API the request log dropped because its queue was full (`ops::request_log`):
/// a steady rise means the writer cannot keep up with the traffic.
pub const REQUEST_LOG_DROPPED: &str = "gable_request_log_dropped_total";
/// Calls the request log wrote.
pub const REQUEST_LOG_WRITTEN: &str = "gable_request_log_written_total";

/// The `listener` label: `live` (production) or `sandbox`.
pub fn listener(livemode: bool) -> &'static str {
    if livemode {
        "live"
    } else {
        "sandbox"
    }
}

/// Whether a recorder is installed: code that would build labels for nothing asks first.
pub fn enabled() -> bool {
    HANDLE.get().is_some()
}

/// Request latency buckets, in seconds: from a cached read to the request timeout.
const LATENCY_BUCKETS: &[f64] = &[0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0];

/// A counter or histogram series that has not moved for this long leaves the scrape until
/// it moves again (pruned when a scrape renders): series of routes nobody calls any more
/// do not pile up. Gauges are sampled at every scrape and never expire.
pub const IDLE_EXPIRY: std::time::Duration = std::time::Duration::from_secs(3600);

static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();

/// Installs the process's recorder (once; later calls return the same handle). Only the
/// process that serves metrics calls it.
pub fn install() -> anyhow::Result<PrometheusHandle> {
    if let Some(h) = HANDLE.get() {
        return Ok(h.clone());
    }
    let recorder = PrometheusBuilder::new()
        .set_buckets_for_metric(Matcher::Suffix("_seconds".into()), LATENCY_BUCKETS)?
        .idle_timeout(MetricKindMask::COUNTER | MetricKindMask::HISTOGRAM, Some(IDLE_EXPIRY))
        .build_recorder();
    let handle = recorder.handle();
    // Another thread may have won the race; then its recorder is the one installed.
    if metrics::set_global_recorder(recorder).is_ok() {
        describe();
        upkeep(handle.clone())?;
        let _ = HANDLE.set(handle);
    }
    HANDLE.get().cloned().ok_or_else(|| anyhow::anyhow!("another metrics recorder is installed"))
}

/// Histogram samples wait in buckets until upkeep folds them into the histograms; the
/// exporter's own listener would run it, and this recorder without one must (else its
/// memory grows with every request until a scrape: the soak benchmark saw it).
const UPKEEP_EVERY: std::time::Duration = std::time::Duration::from_secs(5);

fn upkeep(handle: PrometheusHandle) -> anyhow::Result<()> {
    std::thread::Builder::new().name("metrics-upkeep".into()).spawn(move || loop {
        std::thread::sleep(UPKEEP_EVERY);
        handle.run_upkeep();
    })?;
    Ok(())
}

/// Counts an SQLite read moved off the calling task (`SQLITE_READS_MOVED`).
pub fn sqlite_read_moved() {
    metrics::counter!(SQLITE_READS_MOVED).increment(1);
}

/// The installed recorder's handle, if any.
pub fn handle() -> Option<PrometheusHandle> {
    HANDLE.get().cloned()
}

fn describe() {
    use metrics::{describe_counter, describe_gauge, describe_histogram, Unit};
    describe_counter!(REQUESTS, "Requests answered, by listener, method, route template and status.");
    describe_histogram!(REQUEST_DURATION, Unit::Seconds, "Time to the response head, by listener, method and route template.");
    describe_counter!(RATE_LIMITED, "Requests refused 429 by a credential's rate limit.");
    describe_counter!(IDEMPOTENT_REPLAYS, "POSTs answered from the stored answer of the same Idempotency-Key.");
    describe_counter!(DELIVERY_ATTEMPTS, "Webhook delivery attempts made by this process, by outcome.");
    describe_gauge!(DELIVERY_BACKLOG, "Webhook delivery attempts due and not yet made (all processes').");
    describe_gauge!(DELIVERY_OLDEST_DUE, Unit::Seconds, "How long the oldest due delivery attempt has waited past its time.");
    describe_gauge!(SCHEDULER_LAG, Unit::Seconds, "Seconds since this process's scheduler last finished a round.");
    describe_histogram!(SCHEDULER_ROUND, Unit::Seconds, "Time a scheduler round took.");
    describe_counter!(BACKGROUND_PANICS, "Panics of a background loop (each was restarted).");
    describe_gauge!(DB_CONNECTIONS, "Database connections of this process, by state.");
    describe_gauge!(DB_CONNECTIONS_MAX, "The most database connections this process opens.");
    describe_gauge!(READY, "1 when readiness holds (GET /readyz answers 200), else 0.");
    describe_counter!(SQLITE_READS_MOVED, "SQLite reads that ran past the inline budget and were run again on the blocking pool.");
}
