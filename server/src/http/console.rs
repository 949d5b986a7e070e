//! The signed-in console: Leptos routes and server functions, with the console's
//! services (a `Console`: one per area) in context, behind a cross-site request check
//! and security headers.

use axum::extract::Request;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::Router;
use gable_app::api::{Collections, ConsoleConfig};
use gable_app::service::Console;
use leptos::prelude::{provide_context, LeptosOptions};
use leptos_axum::{generate_route_list, LeptosRoutes};

use crate::domain::collections::COLLECTIONS;

pub fn router(options: LeptosOptions, console: Console, config: ConsoleConfig) -> Router {
    let https = config.secure_cookies;
    let routes = generate_route_list(gable_app::App);
    let names = Collections(COLLECTIONS.iter().map(|c| c.name.to_string()).collect());
    let context = move || {
        provide_context(console.clone());
        provide_context(config.clone());
        provide_context(names.clone());
    };
    Router::new()
        .leptos_routes_with_context(&options, routes, context, {
            let options = options.clone();
            move || gable_app::shell(options.clone())
        })
        .fallback(leptos_axum::file_and_error_handler(gable_app::shell))
        .with_state(options)
        .layer(middleware::from_fn(same_origin_writes))
        .layer(middleware::from_fn(move |req, next| security_headers(https, req, next)))
}

/// Refuses a state-changing request that a browser says came from another site. With
/// SameSite=Lax cookies and per-session CSRF tokens in every form, this is the third wall.
async fn same_origin_writes(req: Request, next: Next) -> Response {
    if matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS) {
        return next.run(req).await;
    }
    let cross_site = crate::http::caller::cross_site(req.headers());
    if cross_site {
        tracing::warn!("refused a cross-site console request");
        return (StatusCode::FORBIDDEN, "Cross-site requests are refused. Open the console directly and try again.").into_response();
    }
    next.run(req).await
}

/// Never framed, never sniffed, no referrer to other sites; and over https (a public
/// https address, or a trusted proxy that received https), HSTS: a browser that once
/// reached the console securely never again sends its session cookie in the clear.
async fn security_headers(https_address: bool, req: Request, next: Next) -> Response {
    let https = https_address || req.extensions().get::<gable_app::api::Caller>().is_some_and(|c| c.https);
    let mut resp = next.run(req).await;
    let h = resp.headers_mut();
    if https {
        h.insert("strict-transport-security", HeaderValue::from_static("max-age=31536000"));
    }
    h.insert("x-frame-options", HeaderValue::from_static("DENY"));
    h.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    h.insert("referrer-policy", HeaderValue::from_static("same-origin"));
    h.insert("content-security-policy", HeaderValue::from_static("frame-ancestors 'none'"));
    resp
}
