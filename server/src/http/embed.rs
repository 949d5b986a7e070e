//! What a website embeds (`docs/embed.md`): the loader `GET /embed.js`, each flow's page
//! `GET /embed/{flow}` (framable only by its host page's origin, which the flow checks is
//! its token's), and the flows' WebAssembly bundle `GET /embed/assets/{version}/{file}`,
//! on both listeners.
//!
//! The bundle is built by `embed/build.sh` into `{site root}/embed/` and read into memory
//! at start-up (`asset::Assets`); its version is a hash of its files, so its URLs can be
//! cached forever. The loader is compiled into the binary: a page can always load it.

use std::collections::HashMap;

use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::Router;

use crate::domain::flows::{self, Flow};
use crate::http::state::ApiState;

pub fn router() -> Router<ApiState> {
    Router::new().route("/embed.js", get(loader)).route("/embed/{flow}", get(page)).route("/embed/assets/{version}/{file}", get(asset))
}

async fn loader(State(st): State<ApiState>, headers: HeaderMap) -> Response {
    // Short-lived but revalidated by ETag: pages keep `<script src=".../embed.js">`
    // unversioned, so a fixed loader must reach them within minutes.
    st.app.embed.loader.respond(&headers, "public, max-age=300, stale-while-revalidate=86400")
}

async fn asset(State(st): State<ApiState>, Path((version, file)): Path<(String, String)>, headers: HeaderMap) -> Response {
    match st.app.embed.bundle.get(file.as_str()).filter(|_| version == st.app.embed.version) {
        Some(a) => a.respond(&headers, "public, max-age=31536000, immutable"),
        None => (StatusCode::NOT_FOUND, [(header::CACHE_CONTROL, "no-store")], "no such file").into_response(),
    }
}

/// The page of one flow: a static shell that starts the WebAssembly, which takes the
/// token from the address's fragment (never sent to a server, so no proxy or CDN logs it)
/// and the rest from the `<meta>` tags.
///
/// The page is framable by the origin the loader says its host page is on (`origin`), and
/// nothing here depends on the token: the flow compares that origin with its token's once
/// `GET /v1/flow` answers, and shows nothing when they differ. `frame-ancestors` makes the
/// claim true: a page on any other origin cannot frame this one at all.
async fn page(State(st): State<ApiState>, Path(flow): Path<String>, RawQuery(raw): RawQuery) -> Response {
    let Some(flow) = Flow::parse(&flow) else {
        return (StatusCode::NOT_FOUND, [(header::CACHE_CONTROL, "no-store")], "there is no such flow").into_response();
    };
    let q: HashMap<String, String> = raw.map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default();
    let parent = q.get("origin").filter(|o| flows::is_origin(o)).cloned();
    let frame: String = q
        .get("frame")
        .map(|f| f.chars().filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_').take(64).collect())
        .unwrap_or_default();
    let ancestors = parent.clone().unwrap_or_else(|| "'none'".into());
    let csp = format!(
        "default-src 'none'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; img-src 'self' data:; connect-src 'self'; \
         base-uri 'none'; form-action 'none'; frame-ancestors {ancestors}"
    );
    let v = &st.app.embed.version;
    let html = format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
         <title>{title}</title>\
         <meta name=\"gable:flow\" content=\"{flow}\">\
         <meta name=\"gable:parent-origin\" content=\"{parent}\">\
         <meta name=\"gable:frame\" content=\"{frame}\">\
         <link rel=\"stylesheet\" href=\"/embed/assets/{v}/embed.css\">\
         <script type=\"module\" src=\"/embed/assets/{v}/boot.js\"></script>\
         </head><body><main id=\"gable-flow\"><p class=\"gable-loading\" role=\"status\">Loading…</p></main></body></html>\n",
        title = flow.title(),
        flow = flow.name(),
        parent = html_attr(parent.as_deref().unwrap_or("")),
    );
    let mut h = HeaderMap::new();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/html; charset=utf-8"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    match HeaderValue::from_str(&csp) {
        Ok(v) => h.insert(header::CONTENT_SECURITY_POLICY, v),
        Err(_) => h.insert(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static("default-src 'none'; frame-ancestors 'none'")),
    };
    (StatusCode::OK, h, html).into_response()
}

/// An attribute value, escaped (an origin has no such characters; the escape is a wall).
fn html_attr(s: &str) -> String {
    s.replace('&', "&amp;").replace('"', "&quot;").replace('<', "&lt;").replace('>', "&gt;")
}
