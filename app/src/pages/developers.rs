//! The Developers area's own pages, beside the request log's, the events' and the
//! deliveries' lists and record pages (`records`): a call's panel on its record page
//! (bodies pretty-printed, the call as `curl`, its events and their deliveries), an
//! event's resend on its record page, the errors overview, the live tail, and finding a
//! call by its request id.
//!
//! Everything reads before the WebAssembly loads; with it, the tail adds calls as they
//! come (server-sent events from `/console/developers/tail/stream`).

use leptos::prelude::*;
use leptos_router::components::{Redirect, A};
use leptos_router::hooks::use_query_map;

use super::components::{err_text, me, CopyButton, Deliveries, FormError, ManagersOnly};
use crate::api::*;
use crate::service::{CallView, ErrorsView, TailLine};

/// The Developers area's links, above its pages and the request log's list.
#[component]
pub fn DevelopersNav(current: &'static str) -> impl IntoView {
    let me = me();
    // Only what the role may open (the server refuses the rest anyway).
    let links = [
        ("/console/request-logs", "Logs", "logs", "request-logs"),
        ("/console/developers/tail", "Live tail", "tail", "request-logs"),
        ("/console/developers/errors", "Errors", "errors", "request-logs"),
        ("/console/events", "Events", "events", "events"),
        ("/console/webhook-deliveries", "Webhook deliveries", "deliveries", "webhook-deliveries"),
    ];
    view! {
        <nav class="tabs" aria-label="Developers" id="developers-nav">
            // Plain links (the router follows them): the current one is marked here, not by `A`.
            {links.into_iter().filter(|l| me.can_read(l.3)).map(|(href, text, key, _)| {
                let here = (key == current).then_some("page");
                view! { <a href=href aria-current=here>{text}</a> }
            }).collect_view()}
        </nav>
    }
}

/// Finds a call by the request id a client got (`Request-Id`, `error.request_id`):
/// every console page has the box (`ConsoleLayout`).
#[component]
pub fn FindRequest() -> impl IntoView {
    view! {
        <form method="get" action="/console/developers/find" class="find-request" role="search" id="find-request">
            <label for="find-request-id">"Request id"</label>
            <input type="search" id="find-request-id" name="id" placeholder="Paste a Request-Id" maxlength="60" autocomplete="off"/>
            <button type="submit">"Find"</button>
        </form>
    }
}

/// `/console/developers/find?id=…`: straight to the call's page, or why not.
#[component]
pub fn FindPage() -> impl IntoView {
    let query = use_query_map();
    let id = move || query.read().get("id").unwrap_or_default().trim().to_string();
    view! {
        {move || {
            let id = id();
            if is_request_id(&id) {
                view! { <Redirect path=format!("/console/request-logs/{}", id.to_ascii_lowercase())/> }.into_any()
            } else {
                view! {
                    <DevelopersNav current="logs"/>
                    <h1>"Find an API call"</h1>
                    <p class="form-error" role="alert" id="find-problem">
                        {if id.is_empty() { "Paste the request id a call was answered with (its Request-Id header, or error.request_id).".to_string() }
                         else { format!("\"{id}\" is not a request id: a request id looks like 01a2496c-56cf-7096-98cf-9f017b38dd85.") }}
                    </p>
                    <FindRequest/>
                }.into_any()
            }
        }}
    }
}

/// A request id: a UUID, hyphenated.
fn is_request_id(s: &str) -> bool {
    s.len() == 36 && s.char_indices().all(|(i, c)| if matches!(i, 8 | 13 | 18 | 23) { c == '-' } else { c.is_ascii_hexdigit() })
}

/// A call's page beyond its fields: what it sent and got, as `curl`, and what it caused.
#[component]
pub fn CallPanel(c: CallView) -> impl IntoView {
    let CallView { line, status, curl, request_body, response_body, events, events_note, .. } = c;
    let class = format!("{}xx", status / 100);
    view! {
        <section class="card" aria-labelledby="call-title" id="call">
            <h2 id="call-title"><code>{line}</code>" "<span class=format!("badge status-{class}") id="call-status">{status}</span></h2>
            <div class="two-col">
                <div>
                    <h3>"Request body"</h3>
                    {match request_body {
                        Some(b) => view! { <pre class="body" id="call-request" tabindex="0">{b}</pre> }.into_any(),
                        None => view! { <p class="muted" id="call-request">"No body."</p> }.into_any(),
                    }}
                </div>
                <div>
                    <h3>"Response body"</h3>
                    {match response_body {
                        Some(b) => view! { <pre class="body" id="call-response" tabindex="0">{b}</pre> }.into_any(),
                        None => view! { <p class="muted" id="call-response">"No body."</p> }.into_any(),
                    }}
                </div>
            </div>
            <h3>"Run it again"</h3>
            <p class="muted small">"The call as a curl command. Set GABLE_KEY to a key of this environment first: the key it was made with is never kept, and what was redacted stays [redacted]."</p>
            <pre class="body" id="call-curl" tabindex="0">{curl.clone()}</pre>
            <p><CopyButton text=curl id="copy-curl" label="Copy as curl"/></p>
        </section>
        <section class="card" aria-labelledby="call-events-title" id="call-events">
            <h2 id="call-events-title">"Events this call caused"</h2>
            {events_note.map(|n| view! { <p class="muted">{n}</p> })}
            {if events.is_empty() {
                view! { <p class="muted small">"None: only a change causes events."</p> }.into_any()
            } else {
                view! {
                    <ol class="history">
                        {events.into_iter().map(|i| view! {
                            <li data-event=i.event_id.clone()>
                                <A href=format!("/console/events/{}", i.event_id)><code>{i.event_type.clone()}</code></A>
                                " "<span class="muted">{i.at.clone()}</span>
                                {if i.deliveries.is_empty() {
                                    view! { <p class="muted small">"Not delivered: no webhook subscription takes it."</p> }.into_any()
                                } else {
                                    view! { <Deliveries list=i.deliveries/> }.into_any()
                                }}
                            </li>
                        }).collect_view()}
                    </ol>
                }.into_any()
            }}
        </section>
    }
}

/// An event's resend, on its record page: the event again to every enabled subscription
/// that takes it, each a new attempt signed afresh (one subscription alone: replay one of
/// its deliveries). Owners and admins only, as every change to deliveries.
#[component]
pub fn EventResend(id: String) -> impl IntoView {
    let me = me();
    let resend = ServerAction::<ResendEvent>::new();
    view! {
        <section class="card" aria-labelledby="resend-title" id="event-resend">
            <h2 id="resend-title">"Resend"</h2>
            <p class="muted small">"Delivers this event again now to every enabled webhook subscription that takes it, as a new attempt with a fresh timestamp and signature. To send it to one subscription only, open one of its deliveries below and replay it."</p>
            <ManagersOnly can_manage=me.can_manage what="resend events"/>
            {me.can_manage.then(|| view! {
                <ActionForm action=resend attr:class="inline" attr:id="resend-form">
                    <input type="hidden" name="csrf" value=me.csrf.clone()/>
                    <input type="hidden" name="id" value=id.clone()/>
                    <button type="submit" class="primary" id="resend-event" disabled=move || resend.pending().get()>"Resend to its subscriptions"</button>
                </ActionForm>
                <FormError value=resend.value()/>
                {move || resend.value().get().and_then(|r| r.ok()).map(|queued| {
                    if queued.is_empty() {
                        return view! { <p class="notice" role="status" id="resent">"No enabled subscription takes this event now: nothing was sent."</p> }.into_any();
                    }
                    let list: Vec<(String, String, String)> = queued
                        .iter()
                        .map(|d| (d.status.clone(), d.url.clone(), d.href()))
                        .collect();
                    view! {
                        <div role="status" id="resent">
                            <p class="ok">{format!("Queued {} new attempt(s).", queued.len())}</p>
                            <Deliveries list/>
                        </div>
                    }.into_any()
                })}
            })}
        </section>
    }
}

/// `/console/developers/errors?window=24h|7d`: errors grouped by code and route.
#[component]
pub fn ErrorsPage() -> impl IntoView {
    let query = use_query_map();
    let window = move || query.read().get("window").filter(|w| w == "7d").unwrap_or_else(|| "24h".to_string());
    let errors = Resource::new(window, api_errors);
    view! {
        <DevelopersNav current="errors"/>
        <h1>"Errors"</h1>
        <p class="lede">"The error answers your integrations got, by error code and route: what keeps failing, and the calls behind it."</p>
        <nav class="tabs small" aria-label="How far back">
            {move || {
                let w = window();
                [("24h", "Last 24 hours"), ("7d", "Last 7 days")].into_iter().map(|(key, text)| {
                    let here = (key == w).then_some("page");
                    view! { <a href=format!("/console/developers/errors?window={key}") aria-current=here id=format!("window-{key}")>{text}</a> }
                }).collect_view()
            }}
        </nav>
        <Transition fallback=|| view! { <p aria-busy="true">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match errors.await {
                    Ok(v) => view! { <ErrorsBody v/> }.into_any(),
                    Err(e) => view! { <p class="form-error" role="alert" id="errors-error">{err_text(&e)}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn ErrorsBody(v: ErrorsView) -> impl IntoView {
    let ErrorsView { groups, calls, errors, .. } = v;
    let share = if calls == 0 { 0.0 } else { errors as f64 * 100.0 / calls as f64 };
    view! {
        <p id="errors-summary">{format!("{calls} call(s), {errors} error(s) ({share:.1} %).")}</p>
        {if groups.is_empty() {
            view! { <div class="empty" id="no-errors"><h2>"No errors in this window."</h2></div> }.into_any()
        } else {
            view! {
                <div class="table-wrap">
                    <table class="records" id="error-groups">
                        <caption class="visually-hidden">"Errors by code and route"</caption>
                        <thead><tr>
                            <th scope="col">"Error code"</th><th scope="col">"Route"</th><th scope="col">"Status"</th>
                            <th scope="col">"Count"</th><th scope="col">"Last seen"</th><th scope="col">"Calls"</th>
                        </tr></thead>
                        <tbody>
                            {groups.into_iter().map(|g| view! {
                                <tr data-code=g.code.clone()>
                                    <th scope="row"><code>{g.code.clone()}</code></th>
                                    <td><code>{g.route.clone()}</code></td>
                                    <td>{g.status}</td>
                                    <td class="count">{g.count}</td>
                                    <td><A href=g.last_href>{g.last_seen}</A></td>
                                    <td><A href=g.logs_href attr:class="see-calls">{format!("See the {} call(s)", g.count)}</A></td>
                                </tr>
                            }).collect_view()}
                        </tbody>
                    </table>
                </div>
            }.into_any()
        }}
    }
}

/// `/console/developers/tail`: the newest calls, and with WebAssembly every new one as it
/// comes (server-sent events), newest on top.
#[component]
pub fn TailPage() -> impl IntoView {
    let first = Resource::new(|| (), |_| newest_calls());
    view! {
        <DevelopersNav current="tail"/>
        <h1>"Live tail"</h1>
        <p class="lede">"Every call of the API in this environment, as it is answered. Calls show up here within about a second."</p>
        <Transition fallback=|| view! { <p aria-busy="true">"Loading…"</p> }>
            {move || Suspend::new(async move {
                match first.await {
                    Ok(lines) => view! { <TailBody first=lines/> }.into_any(),
                    Err(e) => view! { <p class="form-error" role="alert" id="tail-error">{err_text(&e)}</p> }.into_any(),
                }
            })}
        </Transition>
    }
}

#[component]
fn TailBody(first: Vec<TailLine>) -> impl IntoView {
    // Newest on top.
    let lines = RwSignal::new(first.into_iter().rev().collect::<Vec<_>>());
    let state = RwSignal::new("Waiting for the live connection… (without JavaScript, reload the page)".to_string());
    follow(lines, state);
    view! {
        <p class="muted small" id="tail-state" role="status" aria-live="polite">{move || state.get()}</p>
        <div class="table-wrap">
            <table class="records compact" id="tail">
                <caption class="visually-hidden">"The newest calls"</caption>
                <thead><tr>
                    <th scope="col">"Time (UTC)"</th><th scope="col">"Method"</th><th scope="col">"Path"</th>
                    <th scope="col">"Status"</th><th scope="col">"Duration"</th>
                </tr></thead>
                <tbody>
                    <For each=move || lines.get() key=|l| l.id.clone() let:l>
                        <tr data-id=l.id.clone()>
                            <td>{l.at.clone()}</td>
                            <td><code>{l.method.clone()}</code></td>
                            <th scope="row"><A href=l.href.clone()><code>{l.path.clone()}</code></A></th>
                            <td><span class=format!("badge status-{}", l.class)>{l.status}</span></td>
                            <td>{l.duration.clone()}</td>
                        </tr>
                    </For>
                </tbody>
            </table>
        </div>
    }
}

/// Most lines the tail keeps on the page.
#[cfg(feature = "hydrate")]
const TAIL_KEPT: usize = 200;

/// Opens the tail's stream and puts each call on top (in the browser only).
#[cfg(feature = "hydrate")]
fn follow(lines: RwSignal<Vec<TailLine>>, state: RwSignal<String>) {
    use wasm_bindgen::closure::Closure;
    use wasm_bindgen::JsCast;

    Effect::new(move |_| {
        let Ok(source) = web_sys::EventSource::new(TAIL_STREAM) else {
            state.set("The live connection could not be opened; reload the page to see new calls.".into());
            return;
        };
        let on_call = Closure::<dyn FnMut(web_sys::MessageEvent)>::new(move |e: web_sys::MessageEvent| {
            let Some(text) = e.data().as_string() else { return };
            let Ok(line) = serde_json::from_str::<TailLine>(&text) else { return };
            lines.update(|ls| {
                if !ls.iter().any(|l| l.id == line.id) {
                    ls.insert(0, line);
                    ls.truncate(TAIL_KEPT);
                }
            });
        });
        let _ = source.add_event_listener_with_callback("call", on_call.as_ref().unchecked_ref());
        on_call.forget();
        let on_open = Closure::<dyn FnMut()>::new(move || state.set("Live: new calls appear at the top.".into()));
        source.set_onopen(Some(on_open.as_ref().unchecked_ref()));
        on_open.forget();
        let on_error = Closure::<dyn FnMut()>::new(move || state.set("Reconnecting…".into()));
        source.set_onerror(Some(on_error.as_ref().unchecked_ref()));
        on_error.forget();
        // The page is left (or the effect runs again): the stream ends with it.
        let source = send_wrapper::SendWrapper::new(source);
        on_cleanup(move || source.close());
    });
}

#[cfg(not(feature = "hydrate"))]
fn follow(_: RwSignal<Vec<TailLine>>, _: RwSignal<String>) {}

#[cfg(test)]
mod tests {
    #[test]
    fn request_ids_are_uuids() {
        assert!(super::is_request_id("01a2496c-56cf-7096-98cf-9f017b38dd85"));
        assert!(!super::is_request_id("01a2496c56cf709698cf9f017b38dd85"));
        assert!(!super::is_request_id("not-a-request-id"));
    }
}
