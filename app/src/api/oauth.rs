//! OAuth apps and connected apps (docs/oauth.md).

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;

#[cfg(feature = "ssr")]
use super::ssr;

#[server(endpoint = "list_oauth_apps")]
pub async fn list_oauth_apps() -> Result<Vec<crate::service::OAuthAppView>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.oauth_apps.oauth_apps(&me).await.map_err(ssr::error)
}

#[server(endpoint = "create_oauth_app")]
pub async fn create_oauth_app(
    csrf: String,
    name: String,
    redirect_uris: String,
    #[server(default)] public: String,
) -> Result<crate::service::OAuthAppWithSecret, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    let form = crate::service::OAuthAppForm { name, redirect_uris, public: public == "on" };
    console.oauth_apps.create_oauth_app(&me, form).await.map_err(ssr::error)
}

#[server(endpoint = "update_oauth_app")]
pub async fn update_oauth_app(csrf: String, id: String, redirect_uris: String) -> Result<crate::service::OAuthAppView, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.oauth_apps.update_oauth_app(&me, &id, &redirect_uris).await.map_err(ssr::error)
}

#[server(endpoint = "rotate_oauth_app_secret")]
pub async fn rotate_oauth_app_secret(csrf: String, id: String) -> Result<crate::service::OAuthAppWithSecret, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.oauth_apps.rotate_oauth_app_secret(&me, &id).await.map_err(ssr::error)
}

#[server(endpoint = "delete_oauth_app")]
pub async fn delete_oauth_app(csrf: String, id: String) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.oauth_apps.delete_oauth_app(&me, &id).await.map_err(ssr::error)
}

#[server(endpoint = "list_connected_apps")]
pub async fn list_connected_apps() -> Result<Vec<crate::service::ConnectedAppView>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.oauth_apps.connected_apps(&me).await.map_err(ssr::error)
}

#[server(endpoint = "revoke_connected_app")]
pub async fn revoke_connected_app(csrf: String, id: String) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.oauth_apps.revoke_connected_app(&me, &id).await.map_err(ssr::error)
}
