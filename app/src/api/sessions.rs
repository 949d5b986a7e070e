//! Signing up, in and out, and the session's user and environment.

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;

#[cfg(feature = "ssr")]
use super::ssr;

use crate::service::Me;

/// The signed-in user, or `None`.
#[server(endpoint = "get_me")]
pub async fn get_me() -> Result<Option<Me>, ServerFnError> {
    let console = ssr::console()?;
    let Some(token) = ssr::session_token() else { return Ok(None) };
    console.sessions.session(&token).await.map_err(ssr::error)
}

#[server(endpoint = "sign_up")]
pub async fn sign_up(company: String, name: String, email: String, password: String) -> Result<(), ServerFnError> {
    let console = ssr::console()?;
    let form = crate::service::SignUp { company, name, email, password };
    let session = console.sessions.sign_up(form, &ssr::client_address()).await.map_err(ssr::error)?;
    ssr::set_session_cookie(&session.token);
    leptos_axum::redirect("/console");
    Ok(())
}

#[server(endpoint = "sign_in")]
pub async fn sign_in(email: String, password: String, next: Option<String>) -> Result<(), ServerFnError> {
    let console = ssr::console()?;
    let previous = ssr::session_token();
    let session = console.sessions.sign_in(&email, &password, &ssr::client_address(), previous.as_deref()).await.map_err(ssr::error)?;
    ssr::set_session_cookie(&session.token);
    leptos_axum::redirect(next.as_deref().filter(|n| is_return_path(n)).unwrap_or("/console"));
    Ok(())
}

/// Where sign-in may send the user back to: Gable's own console pages and the OAuth
/// authorization request that sent them to sign in; never another site.
pub fn is_return_path(path: &str) -> bool {
    (path.starts_with("/oauth/authorize?") || path == "/console" || path.starts_with("/console/")) && !path.contains(['\\', '\r', '\n'])
}

#[server(endpoint = "sign_out")]
pub async fn sign_out(csrf: String) -> Result<(), ServerFnError> {
    let (console, _) = ssr::signed_in_with(&csrf).await?;
    if let Some(token) = ssr::session_token() {
        console.sessions.sign_out(&token).await.map_err(ssr::error)?;
    }
    ssr::clear_session_cookie();
    leptos_axum::redirect("/sign-in");
    Ok(())
}

/// Switches between live and test data.
#[server(endpoint = "set_environment")]
pub async fn set_environment(csrf: String, live: bool) -> Result<(), ServerFnError> {
    let (console, _) = ssr::signed_in_with(&csrf).await?;
    let token = ssr::session_token().unwrap_or_default();
    console.sessions.set_environment(&token, live).await.map_err(ssr::error)?;
    Ok(())
}
