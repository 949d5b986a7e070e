//! The authorization server's endpoints on the production listener (`{auth_url}` is its
//! base address; `docs/oauth.md`): `GET /oauth/authorize` with its consent page (a page
//! of the console, for the signed-in user; `POST` is the user's answer),
//! `POST /oauth/token`, `POST /oauth/revoke`,
//! `POST /oauth/introspect` and RFC 8414 metadata at
//! `/.well-known/oauth-authorization-server`. Requests are form-encoded; answers and
//! errors are JSON as RFC 6749 §5 says, never cached.

use std::collections::HashMap;

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use serde_json::{json, Value};

use crate::domain::oauth as rules;
use crate::http::state::ApiState;
use crate::ops::oauth::{self, ClientAuth, TokenError};
use crate::store::oauth::Issued;

pub fn router() -> Router<ApiState> {
    Router::new()
        .route("/oauth/authorize", get(authorize).post(consent))
        .route("/oauth/token", post(token))
        .route("/oauth/revoke", post(revoke))
        .route("/oauth/introspect", post(introspect))
        .route("/.well-known/oauth-authorization-server", get(metadata))
}

fn no_store(status: StatusCode, body: Value) -> Response {
    let mut resp = (status, axum::Json(body)).into_response();
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    resp.headers_mut().insert(header::PRAGMA, HeaderValue::from_static("no-cache"));
    resp
}

impl IntoResponse for TokenError {
    fn into_response(self) -> Response {
        if let TokenError::Server(e) = &self {
            tracing::error!(error = %e, "oauth endpoint failed");
        }
        let status = match &self {
            TokenError::InvalidClient { basic: true, .. } => StatusCode::UNAUTHORIZED,
            TokenError::Server(_) => StatusCode::INTERNAL_SERVER_ERROR,
            _ => StatusCode::BAD_REQUEST,
        };
        let mut resp = no_store(status, json!({ "error": self.code(), "error_description": self.description() }));
        if status == StatusCode::UNAUTHORIZED {
            resp.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static(r#"Basic realm="gable""#));
        }
        resp
    }
}

/// The form's parameters; each at most once (RFC 6749 §3.2), as form-encoded text.
fn form(headers: &HeaderMap, body: &Bytes) -> Result<HashMap<String, String>, TokenError> {
    let ct = headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("");
    if !ct.split(';').next().unwrap_or("").trim().eq_ignore_ascii_case("application/x-www-form-urlencoded") {
        return Err(TokenError::InvalidRequest("send the parameters as application/x-www-form-urlencoded".into()));
    }
    let mut out = HashMap::new();
    for (k, v) in url::form_urlencoded::parse(body) {
        if out.insert(k.to_string(), v.to_string()).is_some() {
            return Err(TokenError::InvalidRequest(format!("`{k}` is given more than once")));
        }
    }
    Ok(out)
}

/// How the client authenticates: HTTP Basic (`client_secret_basic`, its parts
/// form-encoded per RFC 6749 §2.3.1) or `client_id` (+ `client_secret`) in the body.
fn client_auth(headers: &HeaderMap, f: &HashMap<String, String>) -> Result<ClientAuth, TokenError> {
    if let Some(h) = headers.get(header::AUTHORIZATION) {
        let bad = || TokenError::InvalidClient { message: "the Authorization header is not valid HTTP Basic".into(), basic: true };
        let h = h.to_str().map_err(|_| bad())?;
        let encoded = h.strip_prefix("Basic ").or_else(|| h.strip_prefix("basic ")).ok_or_else(bad)?;
        let decoded = String::from_utf8(STANDARD.decode(encoded.trim()).map_err(|_| bad())?).map_err(|_| bad())?;
        let (id, secret) = decoded.split_once(':').ok_or_else(bad)?;
        let unescape =
            |s: &str| url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().map(|(_, v)| v.to_string()).unwrap_or_default();
        if f.contains_key("client_secret") {
            return Err(TokenError::InvalidRequest("authenticate one way: HTTP Basic or client_secret, not both".into()));
        }
        return Ok(ClientAuth { client_id: unescape(id), secret: Some(unescape(secret)), basic: true });
    }
    let client_id = f
        .get("client_id")
        .filter(|c| !c.is_empty())
        .ok_or_else(|| TokenError::InvalidClient { message: "client_id is required (or HTTP Basic)".into(), basic: false })?;
    Ok(ClientAuth { client_id: client_id.clone(), secret: f.get("client_secret").cloned(), basic: false })
}

fn required<'a>(f: &'a HashMap<String, String>, name: &str) -> Result<&'a str, TokenError> {
    f.get(name).map(String::as_str).filter(|v| !v.is_empty()).ok_or_else(|| TokenError::InvalidRequest(format!("`{name}` is required")))
}

fn issued(i: Issued) -> Response {
    no_store(
        StatusCode::OK,
        json!({
            "access_token": i.access_token,
            "token_type": "Bearer",
            "expires_in": crate::domain::oauth::ACCESS_LIFETIME.num_seconds(),
            "refresh_token": i.refresh_token,
            "scope": i.scopes.join(" "),
        }),
    )
}

async fn token(State(st): State<ApiState>, headers: HeaderMap, body: Bytes) -> Result<Response, TokenError> {
    let f = form(&headers, &body)?;
    let client = oauth::authenticate_client(&st.app.store, &client_auth(&headers, &f)?).await?;
    let now = st.app.ops.clock().now();
    match required(&f, "grant_type")? {
        "authorization_code" => {
            let (code, redirect_uri) = (required(&f, "code")?, required(&f, "redirect_uri")?);
            let verifier =
                required(&f, "code_verifier").map_err(|_| TokenError::InvalidRequest("`code_verifier` is required (PKCE)".into()))?;
            Ok(issued(oauth::exchange_code(&st.app.store, &client, code, redirect_uri, verifier, now).await?))
        }
        "refresh_token" => {
            let token = required(&f, "refresh_token")?;
            Ok(issued(oauth::refresh(&st.app.store, &client, token, f.get("scope").map(String::as_str), now).await?))
        }
        other => Err(TokenError::UnsupportedGrantType(format!("`{other}` is not supported; use authorization_code or refresh_token"))),
    }
}

async fn revoke(State(st): State<ApiState>, headers: HeaderMap, body: Bytes) -> Result<Response, TokenError> {
    let f = form(&headers, &body)?;
    let client = oauth::authenticate_client(&st.app.store, &client_auth(&headers, &f)?).await?;
    oauth::revoke(&st.app.store, &client, required(&f, "token")?, st.app.ops.clock().now()).await?;
    Ok(no_store(StatusCode::OK, json!({})))
}

async fn introspect(State(st): State<ApiState>, headers: HeaderMap, body: Bytes) -> Result<Response, TokenError> {
    let f = form(&headers, &body)?;
    let client = oauth::authenticate_client(&st.app.store, &client_auth(&headers, &f)?).await?;
    let answer = oauth::introspect(&st.app.store, &client, required(&f, "token")?, st.app.ops.clock().now()).await?;
    Ok(no_store(StatusCode::OK, answer))
}

/// RFC 8414: where everything is and what is supported.
async fn metadata(State(st): State<ApiState>) -> Response {
    let issuer = st.app.settings.public_url.trim_end_matches('/').to_string();
    let body = json!({
        "issuer": issuer,
        "authorization_endpoint": format!("{issuer}/oauth/authorize"),
        "token_endpoint": format!("{issuer}/oauth/token"),
        "revocation_endpoint": format!("{issuer}/oauth/revoke"),
        "introspection_endpoint": format!("{issuer}/oauth/introspect"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "revocation_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post", "none"],
        "introspection_endpoint_auth_methods_supported": ["client_secret_basic", "client_secret_post"],
        "scopes_supported": crate::domain::scopes::all(),
        "authorization_response_iss_parameter_supported": true,
        "service_documentation": format!("{issuer}/v1/openapi.json"),
    });
    let mut resp = axum::Json(body).into_response();
    resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=3600"));
    resp
}

// ---- the authorization endpoint and its consent page ------------------------------------

/// The parameters of an authorization request (query or consent form); each at most once,
/// but `grant` (the scopes the user ticked) may repeat.
struct AuthzParams(HashMap<String, String>, Vec<String>);

impl AuthzParams {
    fn parse(raw: &[u8]) -> Result<AuthzParams, String> {
        let (mut one, mut granted) = (HashMap::new(), vec![]);
        for (k, v) in url::form_urlencoded::parse(raw) {
            if k == "grant" {
                granted.push(v.to_string());
            } else if one.insert(k.to_string(), v.to_string()).is_some() {
                return Err(format!("`{k}` is given more than once"));
            }
        }
        Ok(AuthzParams(one, granted))
    }

    fn get(&self, k: &str) -> Option<&str> {
        self.0.get(k).map(String::as_str).filter(|v| !v.is_empty())
    }
}

/// A request whose app or redirect URI cannot be trusted: shown here, never redirected
/// (redirecting would make Gable an open redirector).
fn error_page(status: StatusCode, message: &str) -> Response {
    page(
        status,
        "This app's request can't be handled",
        &format!("<p>{}</p><p class=\"muted\">Go back to the app and try again, or tell its developer.</p>", esc(message)),
        None,
    )
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;").replace('\'', "&#39;")
}

/// A console-styled page: no script, framed by nobody, forms post to Gable and (by the
/// redirect that answers them) to the app's redirect URI only.
fn page(status: StatusCode, title: &str, body: &str, redirect_origin: Option<&str>) -> Response {
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{t} · Gable</title><link rel=\"stylesheet\" href=\"/pkg/gable.css\"></head><body><main class=\"page narrow\">\
         <header class=\"brand\"><span class=\"logo\" aria-hidden=\"true\">▲</span><h1>{t}</h1></header>{body}</main></body></html>\n",
        t = esc(title)
    );
    let csp = format!(
        "default-src 'none'; style-src 'self'; img-src 'self' data:; base-uri 'none'; frame-ancestors 'none'; form-action 'self'{}",
        redirect_origin.map(|o| format!(" {o}")).unwrap_or_default()
    );
    let mut resp = (status, [(header::CONTENT_TYPE, "text/html; charset=utf-8")], html).into_response();
    let h = resp.headers_mut();
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    // same-origin, not no-referrer: with no-referrer Chromium posts the consent form with
    // `Origin: null`; the app's site still gets no Referer.
    h.insert("referrer-policy", HeaderValue::from_static("same-origin"));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    if let Ok(v) = HeaderValue::from_str(&csp) {
        h.insert(header::CONTENT_SECURITY_POLICY, v);
    }
    resp
}

fn see_other(location: &str) -> Response {
    match HeaderValue::from_str(location) {
        Ok(v) => {
            let mut resp = StatusCode::SEE_OTHER.into_response();
            resp.headers_mut().insert(header::LOCATION, v);
            resp.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
            resp
        }
        Err(_) => error_page(StatusCode::BAD_REQUEST, "the redirect URI cannot be used"),
    }
}

/// The issuer (RFC 9207 `iss`): the production base address.
fn issuer(st: &ApiState) -> String {
    st.app.settings.public_url.trim_end_matches('/').to_string()
}

/// The checked request: its app, where to answer, and what it asks.
struct Checked {
    client: crate::store::oauth::OAuthClient,
    redirect_uri: String,
    state: Option<String>,
    challenge: String,
    scopes: Vec<String>,
}

/// A refused authorization request, shown on Gable's own page.
struct Shown(StatusCode, String);

impl IntoResponse for Shown {
    fn into_response(self) -> Response {
        error_page(self.0, &self.1)
    }
}

/// Checks an authorization request (the query, or the consent form that repeats it).
/// Every refusal is shown on Gable's own page, never redirected to the app: before a
/// signed-in user has decided, a redirect would let anyone who registers an app use
/// Gable's address to bounce people to any site (RFC 9700 §4.11.2). Only the user's
/// answer on the consent page goes back to the app.
async fn check(st: &ApiState, p: &AuthzParams) -> Result<Checked, Shown> {
    let shown = |m: &str| Err(Shown(StatusCode::BAD_REQUEST, m.to_string()));
    let Some(client_id) = p.get("client_id") else { return shown("client_id is missing") };
    let client = match st.app.store.oauth_client(client_id).await {
        Ok(Some(c)) => c,
        Ok(None) => return shown("there is no app with this client_id"),
        Err(e) => {
            tracing::error!(error = %e, "oauth: reading a client failed");
            return Err(Shown(StatusCode::INTERNAL_SERVER_ERROR, "something went wrong on our side; try again".into()));
        }
    };
    let Some(redirect_uri) = p.get("redirect_uri") else { return shown("redirect_uri is missing") };
    if !rules::redirect_matches(&client.redirect_uris, redirect_uri) {
        return shown("redirect_uri is not one this app registered");
    }
    // The app's own mistakes, named as RFC 6749 §4.1.2.1 names them, for its developer.
    let invalid = |error: &str, description: &str| shown(&format!("The app's request is not valid ({error}): {description}."));
    if p.get("response_type") != Some("code") {
        return invalid("unsupported_response_type", "response_type must be code");
    }
    if let Err(e) = rules::check_challenge(p.get("code_challenge"), p.get("code_challenge_method")) {
        return invalid("invalid_request", &e.describe());
    }
    let scopes = match rules::parse_scope(p.get("scope").unwrap_or("")) {
        Ok(s) => s,
        Err(m) => return invalid("invalid_scope", &m),
    };
    Ok(Checked {
        redirect_uri: redirect_uri.to_string(),
        state: p.get("state").map(str::to_string),
        challenge: p.get("code_challenge").unwrap_or_default().to_string(),
        scopes,
        client,
    })
}

async fn signed_in(st: &ApiState, headers: &HeaderMap) -> Result<Option<crate::store::accounts::sessions::StoredSession>, Response> {
    let Some(token) = gable_app::api::session_token_in(headers) else { return Ok(None) };
    match st.app.ops.session(&token).await {
        Ok(found) => Ok(found.map(|s| s.session)),
        Err(e) => {
            tracing::error!(error = %e, "oauth: reading the console session failed");
            Err(error_page(StatusCode::INTERNAL_SERVER_ERROR, "something went wrong on our side; try again"))
        }
    }
}

fn origin_of(uri: &str) -> Option<String> {
    url::Url::parse(uri).ok().map(|u| u.origin().ascii_serialization())
}

/// The parameters of an authorization request and the request checked.
async fn checked(st: &ApiState, raw: &[u8]) -> Result<(AuthzParams, Checked), Response> {
    let p = AuthzParams::parse(raw).map_err(|m| error_page(StatusCode::BAD_REQUEST, &m))?;
    let c = check(st, &p).await.map_err(IntoResponse::into_response)?;
    Ok((p, c))
}

/// `GET /oauth/authorize`: checks the request, sends a signed-out user to sign in (and
/// back), and shows the consent page.
async fn authorize(State(st): State<ApiState>, headers: HeaderMap, axum::extract::RawQuery(raw): axum::extract::RawQuery) -> Response {
    let raw = raw.unwrap_or_default();
    let c = match checked(&st, raw.as_bytes()).await {
        Ok((_, c)) => c,
        Err(resp) => return resp,
    };
    let s = match signed_in(&st, &headers).await {
        Ok(Some(s)) => s,
        Ok(None) => {
            let back = format!("/oauth/authorize?{raw}");
            let next: String = url::form_urlencoded::byte_serialize(back.as_bytes()).collect();
            return see_other(&format!("/sign-in?next={next}"));
        }
        Err(resp) => return resp,
    };
    let (grantable, refused) = rules::grantable(&c.scopes, &s.permissions);
    let env = if c.client.livemode { "live data" } else { "test data (the sandbox)" };
    let mut body = format!(
        "<form method=\"post\" action=\"/oauth/authorize\" class=\"card form\">\
         <p><strong>{app}</strong> asks to act for you in <strong>{tenant}</strong>, on {env}. You are signed in as {email}.</p>",
        app = esc(&c.client.name),
        tenant = esc(&s.tenant_name),
        email = esc(&s.email),
    );
    if grantable.is_empty() {
        body.push_str("<p role=\"alert\">Your role allows none of what this app asks for. You can only deny it.</p>");
    } else {
        body.push_str("<fieldset><legend>Allow the app to:</legend>");
        for (i, scope) in grantable.iter().enumerate() {
            body.push_str(&format!(
                "<label class=\"check\" for=\"grant-{i}\"><input type=\"checkbox\" id=\"grant-{i}\" name=\"grant\" value=\"{v}\" checked> {w} <code>{v}</code></label>",
                v = esc(scope),
                w = esc(&rules::describe_scope(scope)),
            ));
        }
        body.push_str("</fieldset>");
    }
    if !refused.is_empty() {
        body.push_str("<p>Your role does not allow, so the app will not get:</p><ul>");
        for scope in &refused {
            body.push_str(&format!("<li>{} <code>{}</code></li>", esc(&rules::describe_scope(scope)), esc(scope)));
        }
        body.push_str("</ul>");
    }
    for (k, v) in [
        ("csrf", s.csrf.as_str()),
        ("client_id", c.client.client_id.as_str()),
        ("redirect_uri", c.redirect_uri.as_str()),
        ("response_type", "code"),
        ("scope", &c.scopes.join(" ")),
        ("state", c.state.as_deref().unwrap_or("")),
        ("code_challenge", c.challenge.as_str()),
        ("code_challenge_method", "S256"),
    ] {
        body.push_str(&format!("<input type=\"hidden\" name=\"{k}\" value=\"{}\">", esc(v)));
    }
    if !grantable.is_empty() {
        body.push_str("<button type=\"submit\" name=\"decision\" value=\"allow\" class=\"primary\">Allow</button> ");
    }
    body.push_str("<button type=\"submit\" name=\"decision\" value=\"deny\">Deny</button></form>");
    body.push_str(&format!(
        "<p class=\"muted\">You will be sent back to {}. You can disconnect the app at any time in the console.</p>",
        esc(&origin_of(&c.redirect_uri).unwrap_or_default())
    ));
    page(StatusCode::OK, &format!("Connect {}", c.client.name), &body, origin_of(&c.redirect_uri).as_deref())
}

/// `POST /oauth/authorize`: the user's answer, from the consent page (same origin, with
/// the session's CSRF token). Allow issues a code for what the user ticked and may grant.
async fn consent(State(st): State<ApiState>, headers: HeaderMap, body: Bytes) -> Response {
    if crate::http::caller::cross_site(&headers) {
        return error_page(StatusCode::FORBIDDEN, "the answer must come from Gable's consent page");
    }
    let (p, c) = match checked(&st, &body).await {
        Ok(pc) => pc,
        Err(resp) => return resp,
    };
    let s = match signed_in(&st, &headers).await {
        Ok(Some(s)) => s,
        Ok(None) => return error_page(StatusCode::UNAUTHORIZED, "you are signed out; go back to the app and start again"),
        Err(resp) => return resp,
    };
    let csrf_ok = p.get("csrf").is_some_and(|given| bool::from(subtle::ConstantTimeEq::ct_eq(given.as_bytes(), s.csrf.as_bytes())));
    if !csrf_ok {
        return error_page(StatusCode::FORBIDDEN, "the consent form has expired; go back to the app and start again");
    }
    let iss = issuer(&st);
    let answer = |q: &mut Vec<(&str, String)>| {
        q.push(("iss", iss.clone()));
        if let Some(state) = &c.state {
            q.push(("state", state.clone()));
        }
        let pairs: Vec<(&str, &str)> = q.iter().map(|(k, v)| (*k, v.as_str())).collect();
        see_other(&rules::redirect_with(&c.redirect_uri, &pairs).unwrap_or_default())
    };
    let (grantable, _) = rules::grantable(&c.scopes, &s.permissions);
    let granted: Vec<String> = grantable.into_iter().filter(|g| p.1.contains(g)).collect();
    if p.get("decision") != Some("allow") || granted.is_empty() {
        return answer(&mut vec![("error", "access_denied".into()), ("error_description", "the user denied the request".into())]);
    }
    let now = st.app.ops.clock().now();
    match st.app.store.oauth_issue_code(&c.client, s.tenant_id, s.user_id, &granted, &c.redirect_uri, &c.challenge, now).await {
        Ok(code) => answer(&mut vec![("code", code)]),
        Err(e) => {
            tracing::error!(error = %e, "oauth: issuing a code failed");
            answer(&mut vec![("error", "server_error".into()), ("error_description", "the authorization server failed; try again".into())])
        }
    }
}
