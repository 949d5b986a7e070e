//! The portfolio: lists, records, pickers, and the writes staff make (create, edit,
//! workflow actions, delete). Each write carries the form's CSRF token and the key it
//! was drawn with (`once`), so a double submit writes once.

use std::collections::BTreeMap;

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;

#[cfg(feature = "ssr")]
use super::ssr;

use crate::service::{Area, Choice, CollectionInfo, ListView, RecordView};

#[cfg(feature = "ssr")]
fn form(values: BTreeMap<String, String>, once: String) -> crate::service::RecordForm {
    crate::service::RecordForm { values: values.into_iter().collect(), once }
}

/// The navigation's areas, with the collections the role may read.
#[server(endpoint = "console_areas")]
pub async fn console_areas() -> Result<Vec<Area>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    Ok(console.records.areas(&me))
}

#[server(endpoint = "describe_collection")]
pub async fn describe_collection(collection: String) -> Result<CollectionInfo, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.records.collection_info(&me, &collection).map_err(ssr::error)
}

/// A page of a list; `query` is the page's query string.
#[server(endpoint = "list_records")]
pub async fn list_records(collection: String, #[server(default)] query: String) -> Result<ListView, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.records.list_records(&me, &collection, &query).await.map_err(ssr::error)
}

#[server(endpoint = "get_record")]
pub async fn get_record(collection: String, id: String) -> Result<RecordView, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.records.record(&me, &collection, &id).await.map_err(ssr::error)
}

/// Records a reference picker offers: those whose name holds `search` (or the one with
/// that id).
#[server(endpoint = "record_choices")]
pub async fn record_choices(collection: String, #[server(default)] search: String) -> Result<Vec<Choice>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.records.choices(&me, &collection, &search).await.map_err(ssr::error)
}

/// Creates a record and opens its page.
#[server(endpoint = "create_record")]
pub async fn create_record(
    csrf: String,
    collection: String,
    once: String,
    #[server(default)] values: BTreeMap<String, String>,
) -> Result<String, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    let id = console.records.create_record(&me, &collection, form(values, once)).await.map_err(ssr::form_error)?;
    leptos_axum::redirect(&format!("/console/{collection}/{id}"));
    Ok(id)
}

#[server(endpoint = "update_record")]
pub async fn update_record(
    csrf: String,
    collection: String,
    id: String,
    once: String,
    #[server(default)] values: BTreeMap<String, String>,
) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.records.update_record(&me, &collection, &id, form(values, once)).await.map_err(ssr::form_error)?;
    leptos_axum::redirect(&format!("/console/{collection}/{id}"));
    Ok(())
}

/// Runs a workflow action (`send`, `approve`, `void` …) with what it takes.
#[server(endpoint = "act_on_record")]
pub async fn act_on_record(
    csrf: String,
    collection: String,
    id: String,
    action: String,
    once: String,
    #[server(default)] values: BTreeMap<String, String>,
) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.records.act_on_record(&me, &collection, &id, &action, form(values, once)).await.map_err(ssr::form_error)
}

#[server(endpoint = "delete_record")]
pub async fn delete_record(csrf: String, collection: String, id: String) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.records.delete_record(&me, &collection, &id).await.map_err(ssr::error)?;
    leptos_axum::redirect(&format!("/console/{collection}"));
    Ok(())
}
