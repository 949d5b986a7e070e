//! The webhook endpoints beyond the collection's own: rotating a secret, test sends,
//! recovery after an outage, and replays (`docs/api.md`, "Webhooks"). Each is one operation, like
//! every write (`ops::behaviour::webhooks`).

use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::post;
use axum::Router;
use serde_json::json;

use super::query;
use super::resources::action_body;
use crate::domain::collections::named;
use crate::error::{Error, Result};
use crate::http::auth::Principal;
use crate::http::envelope;
use crate::http::idempotency::Idem;
use crate::http::state::ApiState;

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/v1/webhooks/{id}/rotate_secret", post(rotate_secret))
        .route("/v1/webhooks/{id}/test", post(test))
        .route("/v1/webhooks/{id}/recover", post(recover))
        .route("/v1/webhook-deliveries/{id}/replay", post(replay_delivery))
        .route("/v1/events/{id}/replay", post(replay_event))
}

fn rendered(name: &str, rec: &crate::domain::record::Record) -> Result<serde_json::Value> {
    Ok(rec.to_json(named(name)?, None))
}

/// `200` with the webhook and its new `secret` (shown this once).
async fn rotate_secret(State(st): State<ApiState>, cred: Principal, idem: Idem, Path(id): Path<String>, req: Request) -> Result<Response> {
    let id = query::record_id(&id)?;
    let body = action_body(req).await?;
    if let Some(k) = body.keys().next() {
        return Err(Error::validation(k.as_str(), "is not a parameter of this action; it takes no body"));
    }
    let mut w = st.app.ops.begin(&cred.actor).await?;
    let (hook, secret) = w.rotate_webhook_secret(id).await?;
    let mut data = rendered("webhooks", &hook)?;
    data["secret"] = json!(secret);
    idem.commit(w, StatusCode::OK, &envelope::single_value("webhook", data)).await
}

/// `201` with the attempt written for the sample event.
async fn test(State(st): State<ApiState>, cred: Principal, idem: Idem, Path(id): Path<String>, req: Request) -> Result<Response> {
    let id = query::record_id(&id)?;
    let body = action_body(req).await?;
    let mut w = st.app.ops.begin(&cred.actor).await?;
    let attempt = w.send_test_event(id, &body).await?;
    let data = rendered("webhook-deliveries", &attempt)?;
    idem.commit(w, StatusCode::CREATED, &envelope::single_value("webhook_delivery", data)).await
}

/// `200` with how many events were queued again.
async fn recover(State(st): State<ApiState>, cred: Principal, idem: Idem, Path(id): Path<String>, req: Request) -> Result<Response> {
    let id = query::record_id(&id)?;
    let body = action_body(req).await?;
    let mut w = st.app.ops.begin(&cred.actor).await?;
    let n = w.recover_webhook(id, &body).await?;
    let data = json!({ "object": "webhook_recovery", "webhook_id": id, "since": body.get("since"), "deliveries_queued": n });
    idem.commit(w, StatusCode::OK, &envelope::single_value("webhook_recovery", data)).await
}

/// `201` with the new attempt.
async fn replay_delivery(
    State(st): State<ApiState>,
    cred: Principal,
    idem: Idem,
    Path(id): Path<String>,
    req: Request,
) -> Result<Response> {
    let id = query::record_id(&id)?;
    let body = action_body(req).await?;
    if let Some(k) = body.keys().next() {
        return Err(Error::validation(k.as_str(), "is not a parameter of this action; it takes no body"));
    }
    let mut w = st.app.ops.begin(&cred.actor).await?;
    let attempt = w.replay_delivery(id).await?;
    let data = rendered("webhook-deliveries", &attempt)?;
    idem.commit(w, StatusCode::CREATED, &envelope::single_value("webhook_delivery", data)).await
}

/// `201` with the attempts written (one per subscription).
async fn replay_event(State(st): State<ApiState>, cred: Principal, idem: Idem, Path(id): Path<String>, req: Request) -> Result<Response> {
    let id = query::record_id(&id)?;
    let body = action_body(req).await?;
    let mut w = st.app.ops.begin(&cred.actor).await?;
    let attempts = w.replay_event(id, &body).await?;
    let c = named("webhook-deliveries")?;
    let data: Vec<_> = attempts.iter().map(|r| r.view(c, None)).collect();
    let bytes = envelope::list_bytes(&data, None, false).map_err(Error::internal)?;
    idem.commit_bytes(w, StatusCode::CREATED, bytes).await
}
