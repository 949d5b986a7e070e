//! The tenant's sandbox as a whole: its reset.

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;

#[cfg(feature = "ssr")]
use super::ssr;

use crate::service::SandboxReset;

/// The word a person types to confirm a sandbox reset.
pub const RESET_WORD: &str = "reset";

/// Resets the sandbox (owners and admins), once `confirm` is the word `reset`: the second
/// step of the Sandbox page. Then goes back to the page with what happened in its query
/// (`?reset=done&deleted=N&demo=…`), which shows it with or without WebAssembly and closes
/// the confirmation step.
#[server(endpoint = "reset_sandbox")]
pub async fn reset_sandbox(csrf: String, demo: bool, #[server(default)] confirm: String) -> Result<SandboxReset, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    if !confirm.trim().eq_ignore_ascii_case(RESET_WORD) {
        return Err(ssr::error(crate::service::ConsoleError::Invalid {
            field: "confirm".into(),
            message: format!("Type {RESET_WORD} in the box to confirm; nothing was deleted."),
        }));
    }
    let done = console.sandbox.reset_sandbox(&me, demo).await.map_err(ssr::error)?;
    leptos_axum::redirect(&format!("/console/sandbox?reset=done&deleted={}&demo={}", done.rows_deleted, done.demo));
    Ok(done)
}
