//! Service accounts and their API keys, and the collection names the key scopes picker offers.

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;

#[cfg(feature = "ssr")]
use super::ssr;

use crate::service::{ApiKeyView, CreatedKey, ServiceAccount};

#[server(endpoint = "list_service_accounts")]
pub async fn list_service_accounts() -> Result<Vec<ServiceAccount>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.service_accounts.service_accounts(&me).await.map_err(ssr::error)
}

#[server(endpoint = "get_service_account")]
pub async fn get_service_account(id: String) -> Result<ServiceAccount, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.service_accounts.service_account(&me, &id).await.map_err(ssr::error)
}

#[server(endpoint = "create_service_account")]
pub async fn create_service_account(csrf: String, name: String) -> Result<ServiceAccount, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.service_accounts.create_service_account(&me, name.trim()).await.map_err(ssr::error)
}

#[server(endpoint = "rename_service_account")]
pub async fn rename_service_account(csrf: String, id: String, name: String) -> Result<ServiceAccount, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.service_accounts.rename_service_account(&me, &id, name.trim()).await.map_err(ssr::error)
}

#[server(endpoint = "set_service_account_active")]
pub async fn set_service_account_active(csrf: String, id: String, active: bool) -> Result<ServiceAccount, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.service_accounts.set_service_account_active(&me, &id, active).await.map_err(ssr::error)
}

#[server(endpoint = "delete_service_account")]
pub async fn delete_service_account(csrf: String, id: String) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.service_accounts.delete_service_account(&me, &id).await.map_err(ssr::error)?;
    leptos_axum::redirect("/console/service-accounts");
    Ok(())
}

#[server(endpoint = "list_keys")]
pub async fn list_keys(service_account_id: String) -> Result<Vec<ApiKeyView>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.service_accounts.keys(&me, &service_account_id).await.map_err(ssr::error)
}

/// Creates a key. `access` is `full`, `read` or `custom`; with `custom`, `scopes` holds
/// the chosen `{collection}:read|write` boxes. `properties` is an optional comma list.
#[server(endpoint = "create_key")]
pub async fn create_key(
    csrf: String,
    service_account_id: String,
    environment: String,
    access: String,
    #[server(default)] scopes: std::collections::BTreeMap<String, String>,
    #[server(default)] properties: String,
) -> Result<CreatedKey, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    let scopes: Vec<String> = match access.as_str() {
        "full" => vec!["*".into()],
        "read" => vec!["*:read".into()],
        _ => scopes.into_keys().collect(),
    };
    let property_ids: Vec<String> = properties.split([',', ' ', '\n']).map(str::trim).filter(|s| !s.is_empty()).map(String::from).collect();
    let key = crate::service::NewKey {
        service_account_id,
        livemode: environment == "live",
        scopes,
        property_ids: (!property_ids.is_empty()).then_some(property_ids),
    };
    console.service_accounts.create_key(&me, key).await.map_err(ssr::error)
}

#[server(endpoint = "revoke_key")]
pub async fn revoke_key(csrf: String, key_id: String) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.service_accounts.revoke_key(&me, &key_id).await.map_err(ssr::error)
}

/// The collection names, for the key scopes picker.
#[server(endpoint = "collection_names")]
pub async fn collection_names() -> Result<Vec<String>, ServerFnError> {
    Ok(use_context::<Collections>().map(|c| c.0).unwrap_or_default())
}

/// Provided by the server: every collection's path segment.
#[derive(Clone, Debug)]
pub struct Collections(pub Vec<String>);
