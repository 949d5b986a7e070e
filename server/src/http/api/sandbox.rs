//! The sandbox clock (like Stripe's test clocks): `GET /v1/sandbox/clock` and
//! `POST /v1/sandbox/clock/advance {"to": <RFC 3339 date-time>}`, on the sandbox
//! listener only (`404` on production: live data never sees it). Per tenant, forward
//! only; advancing runs what time causes in the sandbox, day by day (`ops::time::sandbox`).

use axum::extract::{Request, State};
use axum::http::StatusCode;
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;
use chrono::{DateTime, Utc};
use serde_json::json;

use super::resources::action_body;
use crate::domain::value::parse_datetime;
use crate::error::{Error, Result};
use crate::http::auth::Principal;
use crate::http::envelope;
use crate::http::state::ApiState;
use crate::ops::time::sandbox;

pub fn router() -> Router<ApiState> {
    Router::new().route("/v1/sandbox/clock", get(clock)).route("/v1/sandbox/clock/advance", post(advance))
}

/// The clock is the sandbox's: on production it does not exist.
fn sandbox_only(cred: &Principal) -> Result<()> {
    if cred.actor.scope.livemode {
        return Err(Error::NotFound {
            message: "the sandbox clock exists on the sandbox address only; live data runs on real time".into(),
            param: None,
        });
    }
    Ok(())
}

fn clock_body(now: DateTime<Utc>) -> serde_json::Value {
    json!({ "object": "sandbox_clock", "now": now.to_rfc3339_opts(chrono::SecondsFormat::Millis, true) })
}

/// `200` with the sandbox's time now. Any sandbox key may read it.
async fn clock(State(st): State<ApiState>, cred: Principal) -> Result<Response> {
    sandbox_only(&cred)?;
    let now = sandbox::now(&st.app.ops, cred.actor.scope.tenant).await?;
    Ok(envelope::single(StatusCode::OK, "sandbox_clock", clock_body(now)))
}

/// `200` with the sandbox's new time and what happened on the way. Needs the scope `*`:
/// it bills rent, fires events and ends leases across the sandbox.
async fn advance(State(st): State<ApiState>, cred: Principal, req: Request) -> Result<Response> {
    sandbox_only(&cred)?;
    if crate::domain::scopes::missing(&cred.actor.grants, &["*".to_string()]).is_some() {
        return Err(Error::insufficient_scope("*"));
    }
    let body = action_body(req).await?;
    if let Some(k) = body.keys().find(|k| k.as_str() != "to") {
        return Err(Error::validation(k.as_str(), "is not a parameter of this operation; it takes `to`"));
    }
    let to = match body.get("to") {
        None => return Err(Error::validation("to", "is required: the RFC 3339 date-time to move the sandbox to")),
        Some(v) => v.as_str().and_then(parse_datetime).ok_or_else(|| Error::validation("to", "must be an RFC 3339 date-time"))?,
    };
    let round = sandbox::advance(&st.app.ops, cred.actor.scope.tenant, to).await?;
    let mut data = clock_body(to);
    data["advanced"] = json!({
        "rent_billed": round.rent_billed,
        "leases_ended": round.leases_ended,
        "events_fired": round.events_fired,
    });
    Ok(envelope::single(StatusCode::OK, "sandbox_clock", data))
}
