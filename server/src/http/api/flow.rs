//! The flow API (`docs/embed.md`): what the embeddable flows' pages call with their flow
//! token. `GET /v1/flow` reads the flow's session; `POST /v1/flow/{collection}` makes the
//! flow's record through `ops::flows`. Only Gable's own flow pages may call it: a browser
//! request from any other page is refused (`origin_forbidden`), and no CORS headers are
//! ever sent.

use axum::extract::FromRequest;
use axum::extract::{Path, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::Response;
use axum::routing::{get, post};
use axum::Router;

use crate::domain::flows::{FlowWrite, Grant};
use crate::error::{Error, Result};
use crate::http::auth::Principal;
use crate::http::body::JsonBody;
use crate::http::caller::cross_site;
use crate::http::envelope;
use crate::http::idempotency::Idem;
use crate::http::state::ApiState;
use crate::ops::flows;

pub fn router() -> Router<ApiState> {
    Router::new().route("/v1/flow", get(session)).route("/v1/flow/{write}", post(write)).route_layer(middleware::from_fn(own_pages_only))
}

/// A browser marks where a request comes from; the flow API answers its own pages only.
/// (Servers calling without those headers are not browsers a page could drive.)
async fn own_pages_only(req: Request, next: Next) -> Result<Response> {
    if cross_site(req.headers()) {
        return Err(Error::OriginForbidden("the flow API answers Gable's own flow pages only".into()));
    }
    Ok(next.run(req).await)
}

/// The flow token's grant; any other credential lacks the flow API's scope.
fn grant(cred: &Principal) -> Result<&Grant> {
    cred.flow.as_deref().ok_or_else(|| Error::InsufficientScope {
        message: "the flow API takes a flow token (`gft_…`), made with POST /v1/flow-tokens".into(),
        scope: "flow".into(),
        param: None,
    })
}

async fn session(State(st): State<ApiState>, cred: Principal) -> Result<Response> {
    let g = grant(&cred)?;
    let data = flows::session(&st.app.ops, cred.actor.scope.tenant, cred.actor.scope.livemode, g).await?;
    Ok(envelope::single(StatusCode::OK, "flow_session", data))
}

async fn write(State(st): State<ApiState>, cred: Principal, idem: Idem, Path(segment): Path<String>, req: Request) -> Result<Response> {
    let g = grant(&cred)?;
    let write = FlowWrite::parse(&segment)
        .ok_or_else(|| Error::NotFound { message: format!("the flow API makes no `{segment}`; see docs/embed.md"), param: None })?;
    let JsonBody(body) = JsonBody::from_request(req, &()).await?;
    let mut work = flows::begin(&st.app.ops, cred.actor.scope.tenant, cred.actor.scope.livemode, g, write).await?;
    let (object, data) = flows::write(&mut work, g, write, &body).await?;
    idem.commit(work, StatusCode::CREATED, &envelope::single_value(object, data)).await
}
