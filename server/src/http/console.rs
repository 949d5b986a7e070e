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
    let upload = {
        let console = console.clone();
        move |headers: axum::http::HeaderMap, form: axum::extract::Multipart| upload_import(console.clone(), headers, form)
    };
    let context = move || {
        provide_context(console.clone());
        provide_context(config.clone());
        provide_context(names.clone());
    };
    Router::new()
        .route(gable_app::api::TAIL_STREAM, axum::routing::get(tail))
        // The file is read as a stream within the import's own limit (`ops::imports`).
        .route(gable_app::api::IMPORT_UPLOAD, axum::routing::post(upload).layer(axum::extract::DefaultBodyLimit::disable()))
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

/// The upload form's post (`/console/imports/upload`, multipart): `csrf`, `collection`
/// (empty for an NDJSON bundle), `columns` (the mapping chosen, as JSON pairs of a
/// column's position and the column it fills or null), then `file`, read as it comes and
/// handed to the engine. Answered with a redirect: to the new import's page, or back to
/// the form with why the file was refused.
async fn upload_import(console: Console, headers: axum::http::HeaderMap, mut form: axum::extract::Multipart) -> Response {
    use axum::response::Redirect;
    use gable_app::service::ImportUpload;

    let Some(me) = signed_in(&console, &headers).await else {
        return Redirect::to("/sign-in").into_response();
    };
    let mut csrf = String::new();
    let mut upload = ImportUpload { collection: None, file_name: String::new(), ndjson: false, columns: vec![] };
    let back = |upload: &ImportUpload, why: &str| {
        let mut to = url::form_urlencoded::Serializer::new(String::new());
        if let Some(c) = &upload.collection {
            to.append_pair("collection", c);
        }
        to.append_pair("refused", why);
        Redirect::to(&format!("/console/imports/new?{}", to.finish())).into_response()
    };
    loop {
        let field = match form.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => return back(&upload, "Choose a file to import."),
            Err(_) => return back(&upload, "The form could not be read; try again."),
        };
        let name = field.name().unwrap_or_default().to_string();
        if name == "file" {
            if !gable_app::api::csrf_matches(&me, &csrf) {
                return back(&upload, "This form has expired. Reload the page and try again.");
            }
            upload.file_name = field.file_name().unwrap_or_default().to_string();
            let lower = upload.file_name.to_ascii_lowercase();
            let content_type = field.content_type().unwrap_or_default().to_ascii_lowercase();
            upload.ndjson = upload.collection.is_none()
                || [".ndjson", ".jsonl"].iter().any(|ext| lower.ends_with(ext))
                || content_type.contains("ndjson");
            if upload.file_name.is_empty() {
                return back(&upload, "Choose a file to import.");
            }
            return match read_into_engine(&console, &me, upload.clone(), field).await {
                Ok(id) => Redirect::to(&format!("/console/imports/{id}")).into_response(),
                Err(e) => back(&upload, &e.to_string()),
            };
        }
        let Some(value) = small_text(field).await else { return back(&upload, "The form could not be read; try again.") };
        match name.as_str() {
            "csrf" => csrf = value,
            "collection" => upload.collection = (!value.trim().is_empty()).then(|| value.trim().to_string()),
            "columns" if !value.trim().is_empty() => match serde_json::from_str::<Vec<(usize, Option<String>)>>(&value) {
                Ok(columns) => upload.columns = columns,
                Err(_) => return back(&upload, "The column mapping could not be read; choose the file again."),
            },
            _ => {}
        }
    }
}

/// The most a form field other than the file may hold (the mapping of 500 columns fits).
const FORM_FIELD_BYTES: usize = 64 << 10;

/// A form field's text, read up to [`FORM_FIELD_BYTES`]; `None` past it or if unreadable.
async fn small_text(mut field: axum::extract::multipart::Field<'_>) -> Option<String> {
    let mut read = Vec::new();
    while let Some(chunk) = field.chunk().await.ok()? {
        if read.len() + chunk.len() > FORM_FIELD_BYTES {
            return None;
        }
        read.extend_from_slice(&chunk);
    }
    String::from_utf8(read).ok()
}

/// Streams a form's file part into the engine: the part is read here, on the request's
/// task, and passed through a small channel to the reader the engine's blocking thread
/// reads.
async fn read_into_engine(
    console: &Console,
    me: &gable_app::service::Me,
    upload: gable_app::service::ImportUpload,
    mut file: axum::extract::multipart::Field<'_>,
) -> Result<String, gable_app::service::ConsoleError> {
    let (tx, mut rx) = tokio::sync::mpsc::channel::<std::io::Result<axum::body::Bytes>>(4);
    let chunks = futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx));
    let reader = tokio_util::io::SyncIoBridge::new(tokio_util::io::StreamReader::new(chunks));
    let pump = async move {
        loop {
            let next = match file.chunk().await {
                Ok(Some(bytes)) => Ok(bytes),
                Ok(None) => break,
                Err(e) => Err(std::io::Error::other(e.to_string())),
            };
            let failed = next.is_err();
            if failed {
                let _ = tx.send(next).await;
                break;
            }
            if tx.send(next).await.is_err() {
                // The engine refused the file and stopped reading: the rest is read and
                // dropped, so the browser, still sending, gets the answer.
                while let Ok(Some(_)) = file.chunk().await {}
                break;
            }
        }
    };
    let (_, made) = futures_util::future::join(pump, console.imports.upload(me, upload, Box::new(reader))).await;
    made
}

/// The signed-in user of a request's session cookie, if any.
async fn signed_in(console: &Console, headers: &axum::http::HeaderMap) -> Option<gable_app::service::Me> {
    let token = gable_app::api::session_token_in(headers)?;
    console.sessions.session(&token).await.ok().flatten()
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
