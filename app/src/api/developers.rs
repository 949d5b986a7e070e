//! The Developers area: an API call as a person reads it, the errors overview, the
//! newest calls (the live tail's first lines, and its page without WebAssembly).

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;

#[cfg(feature = "ssr")]
use super::ssr;

use crate::service::{CallView, ErrorsView, RecordView, TailLine};

/// Where the live tail's stream is served (server-sent events; `server/src/http/console.rs`).
pub const TAIL_STREAM: &str = "/console/developers/tail/stream";

#[server(endpoint = "api_call")]
pub async fn api_call(id: String) -> Result<CallView, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.developers.call(&me, &id).await.map_err(ssr::error)
}

/// A call's page: its record (as every record page shows one) and the call as people read
/// it, in one server function (a resource that called two would lose its context after
/// the first).
#[server(endpoint = "api_call_page")]
pub async fn api_call_page(id: String) -> Result<(RecordView, CallView), ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    let record = console.records.record(&me, "request-logs", &id).await.map_err(ssr::error)?;
    let call = console.developers.call(&me, &id).await.map_err(ssr::error)?;
    Ok((record, call))
}

/// Errors of the last `window` (`24h` or `7d`), grouped by code and route.
#[server(endpoint = "api_errors")]
pub async fn api_errors(window: String) -> Result<ErrorsView, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.developers.errors(&me, &window).await.map_err(ssr::error)
}

/// The newest calls, oldest first.
#[server(endpoint = "newest_calls")]
pub async fn newest_calls() -> Result<Vec<TailLine>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.developers.tail(&me, None).await.map_err(ssr::error)
}
