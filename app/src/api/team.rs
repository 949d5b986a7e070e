//! The tenant's console users and roles.

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;

#[cfg(feature = "ssr")]
use super::ssr;

use crate::service::{RoleView, UserView};

#[server(endpoint = "list_users")]
pub async fn list_users() -> Result<Vec<UserView>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.team.users(&me).await.map_err(ssr::error)
}

#[server(endpoint = "list_roles")]
pub async fn list_roles() -> Result<Vec<RoleView>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.team.roles(&me).await.map_err(ssr::error)
}

#[server(endpoint = "create_user")]
pub async fn create_user(csrf: String, email: String, name: String, role_id: String, password: String) -> Result<UserView, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    let user = crate::service::NewUser { email, name, role_id, password };
    console.team.create_user(&me, user).await.map_err(ssr::error)
}
