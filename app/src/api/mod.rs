//! The console's server functions: thin wrappers over the `Console` service that handle
//! the session cookie, the CSRF token and error wording. They run on the server; the
//! browser calls them by POST (`/api/…`), with or without WebAssembly.
//!
//! One file per area of the console, as the pages are (`pages/`); this one holds the helpers
//! they share on the server (`ssr`) and what the server provides (`ConsoleConfig`,
//! `Caller`).

mod developers;
mod imports;
mod oauth;
mod records;
mod sandbox;
mod service_accounts;
mod sessions;
mod team;
mod webhooks;

pub use developers::*;
pub use imports::*;
pub use oauth::*;
pub use records::*;
pub use sandbox::*;
pub use service_accounts::*;
pub use sessions::*;
pub use team::*;
pub use webhooks::*;

#[cfg(feature = "ssr")]
pub use ssr::{session_token_in, Caller, ConsoleConfig};

/// The CSRF check of a form that is not a server function's (the import upload).
#[cfg(feature = "ssr")]
pub fn csrf_matches(me: &crate::service::Me, csrf: &str) -> bool {
    use subtle::ConstantTimeEq;
    bool::from(me.csrf.as_bytes().ct_eq(csrf.as_bytes()))
}

/// Sets the field a form's refusal names apart from its message (`ssr::form_error`).
pub const FIELD_MARK: char = '\u{1}';

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
    pub struct Caller {
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

    fn caller() -> Option<Caller> {
        parts().and_then(|p| p.extensions.get::<Caller>().cloned())
    }

    /// The client's address, for sign-in and sign-up throttling ("unknown", one shared
    /// bucket, if the HTTP layer did not say).
    pub fn client_address() -> String {
        caller().and_then(|c| c.address).map_or_else(|| "unknown".into(), |a| a.to_string())
    }

    pub fn error(e: ConsoleError) -> ServerFnError {
        ServerFnError::ServerError(e.to_string())
    }

    /// Like `error`, keeping the field a refusal names, so a form shows the message next
    /// to it (`pages::components::field_error` reads it back).
    pub fn form_error(e: ConsoleError) -> ServerFnError {
        match e {
            ConsoleError::Invalid { field, message } if !field.is_empty() => {
                ServerFnError::ServerError(format!("{}{field}{}{message}", super::FIELD_MARK, super::FIELD_MARK))
            }
            other => error(other),
        }
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
        if !super::csrf_matches(&me, csrf) {
            return Err(ServerFnError::ServerError("This form has expired. Reload the page and try again.".into()));
        }
        Ok((console, me))
    }

    fn cookie(value: &str, max_age: u64) -> String {
        // Over https: by the public URL, or as a trusted TLS-terminating proxy says.
        let secure = use_context::<ConsoleConfig>().is_some_and(|c| c.secure_cookies) || caller().is_some_and(|c| c.https);
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
