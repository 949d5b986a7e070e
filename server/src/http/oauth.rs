//! The authorization server's endpoints on the production listener (`{auth_url}` is its
//! base address; `docs/oauth.md`): `POST /oauth/token`, `POST /oauth/revoke`,
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

use crate::oauth::{self, ClientAuth, TokenError};
use crate::state::ApiState;
use crate::store::oauth::Issued;

pub fn router() -> Router<ApiState> {
    Router::new()
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
