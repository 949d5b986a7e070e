//! Bulk import: the imports list, the upload form's target and column matching, an
//! import's page, commit and cancel. The file itself is not sent to a server function:
//! the form posts it to [`IMPORT_UPLOAD`] (`server/src/http/console.rs`), which reads it as
//! a stream.

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;

#[cfg(feature = "ssr")]
use super::ssr;

use crate::service::{ImportTarget, ImportView, ImportsView};

/// Where the upload form posts its file (multipart; answered with a redirect).
pub const IMPORT_UPLOAD: &str = "/console/imports/upload";

#[server(endpoint = "list_imports")]
pub async fn list_imports() -> Result<ImportsView, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.imports.imports(&me).await.map_err(ssr::error)
}

/// What a file of `collection` can hold, with its template.
#[server(endpoint = "describe_import")]
pub async fn describe_import(collection: String) -> Result<ImportTarget, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.imports.target(&me, &collection).map_err(ssr::error)
}

/// The column each of a file's headers most likely means.
#[server(endpoint = "match_import_columns")]
pub async fn match_import_columns(collection: String, headers: Vec<String>) -> Result<Vec<Option<String>>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.imports.match_columns(&me, &collection, &headers).map_err(ssr::error)
}

#[server(endpoint = "get_import")]
pub async fn get_import(id: String, #[server(default)] errors_after: u64) -> Result<ImportView, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.imports.import(&me, &id, errors_after).await.map_err(ssr::error)
}

/// Starts writing an import; `skip_invalid` is the form's checkbox (`on` when ticked).
#[server(endpoint = "commit_import")]
pub async fn commit_import(
    csrf: String,
    id: String,
    once: String,
    #[server(default)] skip_invalid: Option<String>,
) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.imports.commit(&me, &id, skip_invalid.is_some(), &once).await.map_err(ssr::form_error)?;
    leptos_axum::redirect(&format!("/console/imports/{id}"));
    Ok(())
}

#[server(endpoint = "cancel_import")]
pub async fn cancel_import(csrf: String, id: String, once: String) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.imports.cancel(&me, &id, &once).await.map_err(ssr::form_error)?;
    leptos_axum::redirect(&format!("/console/imports/{id}"));
    Ok(())
}
