//! The console's server functions: thin wrappers over the `Console` service that handle
//! the session cookie, the CSRF token and error wording. They run on the server; the
//! browser calls them by POST (`/api/…`), with or without WebAssembly.

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;

use crate::service::{
    ApiKeyView, CreatedKey, DeliveryDetail, DeliveryView, Me, RoleView, SandboxReset, ServiceAccount, UserView, WebhookView,
    WebhookWithSecret,
};

#[cfg(feature = "ssr")]
pub use ssr::{session_token_in, ClientInfo, ConsoleConfig};

#[cfg(feature = "ssr")]
mod ssr {
    use leptos::prelude::*;
    use leptos::server_fn::ServerFnError;

    use crate::service::{Console, ConsoleError, Me};

    pub const SESSION_COOKIE: &str = "gable_session";

    /// How the console's cookies are set; provided by the server.
    #[derive(Clone, Debug)]
    pub struct ConsoleConfig {
        /// Served over https: cookies get `Secure`.
        pub secure_cookies: bool,
        /// Seconds a session cookie lives at most (the session's absolute lifetime).
        pub session_max_age_secs: u64,
    }

    /// Who sent the request and how: worked out once per request by the server's HTTP
    /// layer (`server/src/http/client.rs`, which believes forwarding headers only from
    /// trusted proxies) and left in the request's extensions.
    #[derive(Clone, Debug, PartialEq, Eq)]
    pub struct ClientInfo {
        /// The client's address: the peer's, or the one a trusted proxy forwarded.
        pub address: Option<std::net::IpAddr>,
        /// A trusted proxy says the client reached it over https.
        pub https: bool,
    }

    pub fn console() -> Result<Console, ServerFnError> {
        use_context::<Console>().ok_or_else(|| ServerFnError::new("the console service is not available"))
    }

    fn parts() -> Option<http::request::Parts> {
        use_context::<http::request::Parts>()
    }

    /// The session token from the request's cookie, if any.
    pub fn session_token() -> Option<String> {
        session_token_in(&parts()?.headers)
    }

    /// The session token in these request headers' cookies, if any (the console's server
    /// functions, and the OAuth consent page outside them).
    pub fn session_token_in(headers: &http::HeaderMap) -> Option<String> {
        headers.get_all(http::header::COOKIE).iter().filter_map(|v| v.to_str().ok()).find_map(|header| {
            header.split(';').map(str::trim).find_map(|pair| {
                let (name, value) = pair.split_once('=')?;
                (name == SESSION_COOKIE && !value.is_empty()).then(|| value.to_string())
            })
        })
    }

    fn client() -> Option<ClientInfo> {
        parts().and_then(|p| p.extensions.get::<ClientInfo>().cloned())
    }

    /// The client's address, for sign-in and sign-up throttling ("unknown", one shared
    /// bucket, if the HTTP layer did not say).
    pub fn client_address() -> String {
        client().and_then(|c| c.address).map_or_else(|| "unknown".into(), |a| a.to_string())
    }

    pub fn error(e: ConsoleError) -> ServerFnError {
        ServerFnError::ServerError(e.to_string())
    }

    /// The signed-in user, or an error that sends the browser to sign in.
    pub async fn signed_in() -> Result<(Console, Me), ServerFnError> {
        let console = console()?;
        let token = session_token().ok_or_else(|| error(ConsoleError::NotSignedIn))?;
        let me = console.sessions.session(&token).await.map_err(error)?.ok_or_else(|| error(ConsoleError::NotSignedIn))?;
        Ok((console, me))
    }

    /// Like `signed_in`, and the form's CSRF token must be the session's.
    pub async fn signed_in_with(csrf: &str) -> Result<(Console, Me), ServerFnError> {
        let (console, me) = signed_in().await?;
        use subtle::ConstantTimeEq;
        if !bool::from(me.csrf.as_bytes().ct_eq(csrf.as_bytes())) {
            return Err(ServerFnError::ServerError("This form has expired. Reload the page and try again.".into()));
        }
        Ok((console, me))
    }

    fn cookie(value: &str, max_age: u64) -> String {
        // Over https: by the public URL, or as a trusted TLS-terminating proxy says.
        let secure = use_context::<ConsoleConfig>().is_some_and(|c| c.secure_cookies) || client().is_some_and(|c| c.https);
        format!("{SESSION_COOKIE}={value}; Path=/; HttpOnly; SameSite=Lax; Max-Age={max_age}{}", if secure { "; Secure" } else { "" })
    }

    pub fn set_session_cookie(token: &str) {
        let max_age = use_context::<ConsoleConfig>().map_or(12 * 3600, |c| c.session_max_age_secs);
        set_cookie_header(cookie(token, max_age));
    }

    pub fn clear_session_cookie() {
        set_cookie_header(cookie("", 0));
    }

    fn set_cookie_header(value: String) {
        if let (Some(res), Ok(v)) = (use_context::<leptos_axum::ResponseOptions>(), http::HeaderValue::from_str(&value)) {
            res.append_header(http::header::SET_COOKIE, v);
        }
    }
}

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

/// The event types a subscription can take, for the events picker and the test sender.
#[server(endpoint = "webhook_event_types")]
pub async fn webhook_event_types() -> Result<Vec<String>, ServerFnError> {
    let (console, _) = ssr::signed_in().await?;
    Ok(console.webhooks.webhook_event_types())
}

#[server(endpoint = "list_webhooks")]
pub async fn list_webhooks() -> Result<Vec<WebhookView>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.webhooks.webhooks(&me).await.map_err(ssr::error)
}

#[server(endpoint = "get_webhook")]
pub async fn get_webhook(id: String) -> Result<WebhookView, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.webhooks.webhook(&me, &id).await.map_err(ssr::error)
}

/// The events of a webhook form: `which` is `all` (every event type, `*`) or `some`, with
/// the ticked `events[<type>]` boxes.
#[cfg(feature = "ssr")]
fn webhook_form(
    url: String,
    which: &str,
    events: std::collections::BTreeMap<String, String>,
    description: String,
) -> crate::service::WebhookForm {
    let events = if which == "all" { vec!["*".to_string()] } else { events.into_keys().collect() };
    crate::service::WebhookForm { url, events, description }
}

#[server(endpoint = "create_webhook")]
pub async fn create_webhook(
    csrf: String,
    url: String,
    which: String,
    #[server(default)] events: std::collections::BTreeMap<String, String>,
    #[server(default)] description: String,
) -> Result<WebhookWithSecret, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.create_webhook(&me, webhook_form(url, &which, events, description)).await.map_err(ssr::error)
}

#[server(endpoint = "update_webhook")]
pub async fn update_webhook(
    csrf: String,
    id: String,
    url: String,
    which: String,
    #[server(default)] events: std::collections::BTreeMap<String, String>,
    #[server(default)] description: String,
) -> Result<WebhookView, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.update_webhook(&me, &id, webhook_form(url, &which, events, description)).await.map_err(ssr::error)
}

#[server(endpoint = "set_webhook_enabled")]
pub async fn set_webhook_enabled(csrf: String, id: String, enabled: bool) -> Result<WebhookView, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.set_webhook_enabled(&me, &id, enabled).await.map_err(ssr::error)
}

#[server(endpoint = "rotate_webhook_secret")]
pub async fn rotate_webhook_secret(csrf: String, id: String) -> Result<WebhookWithSecret, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.rotate_webhook_secret(&me, &id).await.map_err(ssr::error)
}

#[server(endpoint = "delete_webhook")]
pub async fn delete_webhook(csrf: String, id: String) -> Result<(), ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.delete_webhook(&me, &id).await.map_err(ssr::error)?;
    leptos_axum::redirect("/console/webhooks");
    Ok(())
}

#[server(endpoint = "send_test_webhook")]
pub async fn send_test_webhook(csrf: String, id: String, event_type: String) -> Result<DeliveryView, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.send_test_webhook(&me, &id, &event_type).await.map_err(ssr::error)
}

/// A subscription's register; empty filters mean any.
#[server(endpoint = "list_webhook_deliveries")]
pub async fn list_webhook_deliveries(
    webhook_id: String,
    #[server(default)] status: String,
    #[server(default)] event_type: String,
    #[server(default)] trigger: String,
) -> Result<Vec<DeliveryView>, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    let some = |v: String| (!v.trim().is_empty()).then_some(v);
    let filter = crate::service::DeliveryFilter { status: some(status), event_type: some(event_type), trigger: some(trigger) };
    console.webhooks.webhook_deliveries(&me, &webhook_id, filter).await.map_err(ssr::error)
}

#[server(endpoint = "get_webhook_delivery")]
pub async fn get_webhook_delivery(id: String) -> Result<DeliveryDetail, ServerFnError> {
    let (console, me) = ssr::signed_in().await?;
    console.webhooks.webhook_delivery(&me, &id).await.map_err(ssr::error)
}

#[server(endpoint = "replay_webhook_delivery")]
pub async fn replay_webhook_delivery(csrf: String, id: String) -> Result<DeliveryView, ServerFnError> {
    let (console, me) = ssr::signed_in_with(&csrf).await?;
    console.webhooks.replay_webhook_delivery(&me, &id).await.map_err(ssr::error)
}

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

/// The collection names, for the key scopes picker.
#[server(endpoint = "collection_names")]
pub async fn collection_names() -> Result<Vec<String>, ServerFnError> {
    Ok(use_context::<Collections>().map(|c| c.0).unwrap_or_default())
}

/// Provided by the server: every collection's path segment.
#[derive(Clone, Debug)]
pub struct Collections(pub Vec<String>);

// ---- OAuth apps and connected apps (docs/oauth.md) -------------------------------------

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
