//! Health checks, on every listener, for load balancers and orchestrators:
//! - `GET /healthz`: the process is up and serving (it never touches the database);
//! - `GET /readyz`: the database answers, this build's migrations are all applied, and no
//!   background loop is failing (`observe::health`); `503` with the failing checks
//!   otherwise. On the public listeners each check says only whether it holds; why one
//!   fails (a database error, a panic's message) is shown on the metrics listener only,
//!   since such text can name hosts, users and internals.
//!
//! And Prometheus metrics, `GET /metrics`, only on the metrics listener (`metrics_addr`,
//! unset by default), never on the public ones. Gauges of shared state (the database
//! connections, the delivery backlog, the scheduler's last round, readiness) are sampled
//! at each scrape.

use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use metrics_exporter_prometheus::PrometheusHandle;
use serde_json::{json, Value};

use crate::http::state::AppState;
use crate::observe::metrics as m;
use crate::store::{deliveries, Intent};

/// How long readiness waits for the database before calling it unreachable.
const DATABASE_CHECK: Duration = Duration::from_secs(2);

/// `/healthz` and `/readyz`, for the public listeners.
pub fn router(app: Arc<AppState>) -> Router {
    Router::new().route("/healthz", get(healthz)).route("/readyz", get(public_readyz)).with_state(app)
}

/// The metrics listener's routes: `/metrics` beside the health checks.
pub fn metrics_router(app: Arc<AppState>, handle: PrometheusHandle) -> Router {
    let metrics = get(move |State(app): State<Arc<AppState>>| {
        let handle = handle.clone();
        async move { render(&app, &handle).await }
    });
    Router::new().route("/metrics", metrics).route("/healthz", get(healthz)).route("/readyz", get(readyz)).with_state(app)
}

async fn healthz() -> Json<Value> {
    Json(json!({ "status": "ok" }))
}

async fn readyz(State(app): State<Arc<AppState>>) -> (StatusCode, Json<Value>) {
    let (ready, checks) = readiness(&app).await;
    answer(ready, checks)
}

/// `/readyz` without the failures' text.
async fn public_readyz(State(app): State<Arc<AppState>>) -> (StatusCode, Json<Value>) {
    let (ready, mut checks) = readiness(&app).await;
    without_reasons(&mut checks);
    answer(ready, checks)
}

fn answer(ready: bool, checks: Value) -> (StatusCode, Json<Value>) {
    let status = if ready { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    (status, Json(json!({ "status": if ready { "ready" } else { "not_ready" }, "checks": checks })))
}

/// Drops every `error` and `last_error` text, at any depth.
fn without_reasons(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|k, _| k != "error" && k != "last_error");
            map.values_mut().for_each(without_reasons);
        }
        Value::Array(items) => items.iter_mut().for_each(without_reasons),
        _ => {}
    }
}

/// Whether the process is ready, and each check's result.
pub async fn readiness(app: &AppState) -> (bool, Value) {
    let started = Instant::now();
    let database = match tokio::time::timeout(DATABASE_CHECK, app.store.ping()).await {
        Ok(Ok(())) => json!({ "ok": true, "latency_ms": started.elapsed().as_millis() as u64 }),
        Ok(Err(e)) => json!({ "ok": false, "error": e.to_string() }),
        Err(_) => json!({ "ok": false, "error": format!("no answer within {} s", DATABASE_CHECK.as_secs()) }),
    };
    let migrations = if database["ok"] == true {
        match app.store.pending_migrations().await {
            Ok(0) => json!({ "ok": true, "pending": 0 }),
            Ok(n) => {
                json!({ "ok": false, "pending": n, "error": "run `gable migrate` (or start a process of this version, which migrates)" })
            }
            Err(e) => json!({ "ok": false, "error": e.to_string() }),
        }
    } else {
        json!({ "ok": false, "error": "the database is unreachable" })
    };
    let loops = app.health.report();
    let workers = json!({ "ok": loops.iter().all(|l| !l.failing), "loops": loops });
    let ready = [&database, &migrations, &workers].iter().all(|c| c["ok"] == true);
    (ready, json!({ "database": database, "migrations": migrations, "workers": workers }))
}

/// Samples the gauges, then renders every metric in Prometheus' text format.
async fn render(app: &AppState, handle: &PrometheusHandle) -> Response {
    let pool = app.store.connections();
    metrics::gauge!(m::DB_CONNECTIONS, "state" => "in_use").set(pool.in_use as f64);
    metrics::gauge!(m::DB_CONNECTIONS, "state" => "idle").set(pool.idle as f64);
    metrics::gauge!(m::DB_CONNECTIONS, "state" => "listening").set(pool.listening as f64);
    metrics::gauge!(m::DB_CONNECTIONS_MAX).set(pool.max as f64);
    // Counted by the log itself (one atomic add on the request path), read here.
    metrics::counter!(m::REQUEST_LOG_DROPPED).absolute(app.ops.request_log().dropped());
    let now = app.ops.clock().now();
    if let Ok((due, oldest)) = app.store.in_system(Intent::Read, async |tx| deliveries::backlog(tx, now).await).await {
        metrics::gauge!(m::DELIVERY_BACKLOG).set(due as f64);
        let age = oldest.map_or(0.0, |t| (now - t).num_milliseconds().max(0) as f64 / 1000.0);
        metrics::gauge!(m::DELIVERY_OLDEST_DUE).set(age);
    }
    if let Some(age) = app.health.since_success(crate::jobs::SCHEDULER) {
        metrics::gauge!(m::SCHEDULER_LAG).set(age.as_secs_f64());
    }
    let (ready, _) = readiness(app).await;
    metrics::gauge!(m::READY).set(if ready { 1.0 } else { 0.0 });
    ([(header::CONTENT_TYPE, "text/plain; version=0.0.4")], handle.render()).into_response()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::without_reasons;

    #[test]
    fn public_checks_keep_their_verdicts_and_lose_their_reasons() {
        let mut checks = json!({
            "database": { "ok": false, "error": "connection refused: 10.0.0.5:5432 (user gable)" },
            "workers": { "ok": false, "loops": [{ "name": "scheduler", "failing": true, "last_error": "panicked: at src/x.rs:1" }] },
        });
        without_reasons(&mut checks);
        assert_eq!(
            checks,
            json!({ "database": { "ok": false }, "workers": { "ok": false, "loops": [{ "name": "scheduler", "failing": true }] } })
        );
    }
}
