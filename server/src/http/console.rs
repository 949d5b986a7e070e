//! The signed-in console: Leptos routes and server functions, with the console's
//! services (a `Console`: one per area) in context, behind a cross-site request check
//! and security headers; and the live tail's stream of calls (server-sent events), which
//! is no page.

use std::collections::VecDeque;

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
    let tail = {
        let console = console.clone();
        move |headers: axum::http::HeaderMap| tail_stream(console.clone(), headers)
    };
    let context = move || {
        provide_context(console.clone());
        provide_context(config.clone());
        provide_context(names.clone());
    };
    Router::new()
        .route(gable_app::api::TAIL_STREAM, axum::routing::get(tail))
        .leptos_routes_with_context(&options, routes, context, {
            let options = options.clone();
            move || gable_app::shell(options.clone())
        })
        .fallback(leptos_axum::file_and_error_handler(gable_app::shell))
        .with_state(options)
        .layer(middleware::from_fn(same_origin_writes))
        .layer(middleware::from_fn(move |req, next| security_headers(https, req, next)))
}

/// How often the live tail looks for new calls (the writer writes at least every 250 ms).
const TAIL_EVERY: std::time::Duration = std::time::Duration::from_millis(500);
/// Calls the tail remembers having sent, so none is sent twice.
const TAIL_SEEN: usize = 1_000;

/// The live tail's stream (`/console/developers/tail/stream`): server-sent events, one
/// `call` event per new call of the request log, for the signed-in user. The session is
/// checked again at every look, so a user signed out, disabled or demoted below
/// `request-logs:read` gets no further line: the stream ends with an `end` event that
/// says why. Calls are found by their id among the newest, so a slow call that is
/// answered after a quicker, later one still comes.
async fn tail_stream(console: Console, headers: axum::http::HeaderMap) -> Response {
    use axum::response::sse::{Event, KeepAlive, Sse};
    use futures_util::{stream, StreamExt};

    let Some(token) = gable_app::api::session_token_in(&headers) else {
        return (StatusCode::UNAUTHORIZED, "Sign in to follow the calls.").into_response();
    };
    // Refused at once, as a page would be, when the user may not read the log now.
    let Ok(Some(me)) = console.sessions.session(&token).await else {
        return (StatusCode::UNAUTHORIZED, "Sign in to follow the calls.").into_response();
    };
    let first = match console.developers.tail(&me, None).await {
        Ok(lines) => lines,
        Err(e) => return (StatusCode::FORBIDDEN, e.to_string()).into_response(),
    };
    // What the page shows already is not sent again.
    let seen: VecDeque<String> = first.into_iter().map(|l| l.id).collect();
    let looks = stream::unfold(Some((console, token, seen)), |state| async move {
        let (console, token, mut seen) = state?;
        loop {
            tokio::time::sleep(TAIL_EVERY).await;
            let end = |why: String| Some((vec![Event::default().event("end").data(why)], None));
            let Ok(Some(me)) = console.sessions.session(&token).await else {
                return end("The session has ended; sign in again.".into());
            };
            let lines = match console.developers.tail(&me, None).await {
                Ok(lines) => lines,
                Err(e) => return end(e.to_string()),
            };
            let mut events = vec![];
            let new: Vec<_> = lines.into_iter().filter(|l| !seen.contains(&l.id)).collect();
            for l in new {
                if let Ok(json) = serde_json::to_string(&l) {
                    events.push(Event::default().event("call").id(l.id.clone()).data(json));
                }
                seen.push_back(l.id);
            }
            while seen.len() > TAIL_SEEN {
                seen.pop_front();
            }
            if !events.is_empty() {
                return Some((events, Some((console, token, seen))));
            }
        }
    });
    // One event per call: the page adds each as it comes.
    let events = looks.flat_map(|batch| stream::iter(batch.into_iter().map(Ok::<_, std::convert::Infallible>)));
    Sse::new(events).keep_alive(KeepAlive::default()).into_response()
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
