//! The webhooks pages: subscriptions (create, edit, enable/disable, rotate, delete, test
//! sends) and each subscription's delivery register with the detail of every attempt.
//! Owners and admins manage; everyone signed in sees (the server refuses the rest).

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::components::{err_text, me, short_time, Badge, FormError, ListOrEmpty, ManagersOnly, SecretOnce};
use crate::api::*;
use crate::service::{DeliveryView, WebhookView, WebhookWithSecret};

const STATUSES: [&str; 4] = ["pending", "succeeded", "retrying", "failed"];
const TRIGGERS: [&str; 5] = ["event", "retry", "replay", "recovery", "test"];

fn events_summary(events: &[String]) -> String {
    match events {
        [one] if one == "*" => "All events".into(),
        [one] => one.clone(),
        many => format!("{} event types", many.len()),
    }
}

/// The signing secret, shown once (after creation or a rotation).
#[component]
fn ShownOnce(created: WebhookWithSecret, #[prop(into)] note: String) -> impl IntoView {
    let footer =
        view! { <p class="muted small">"Verify the "<code>"Gable-Signature"</code>" header of every delivery with it (see the README)."</p> }
            .into_any();
    view! {
        <SecretOnce secret=created.secret code_id="new-webhook-secret" button_id="copy-secret" footer>
            <p class="warning"><strong>"Copy this signing secret now."</strong>" You will not be able to see it again. "{note}</p>
        </SecretOnce>
    }
}

/// "All events" or a ticked list of the event types.
#[component]
fn EventsPicker(types: Vec<String>, chosen: Vec<String>) -> impl IntoView {
    let all = chosen.is_empty() || chosen.iter().any(|e| e == "*");
    view! {
        <fieldset class="events"><legend>"Events"</legend>
            <label class="check"><input type="radio" name="which" value="all" checked=all/>" All events, also types added later"</label>
            <label class="check"><input type="radio" name="which" value="some" checked=!all/>" Only the types ticked below"</label>
            <div class="event-grid">
                {types.into_iter().map(|t| {
                    let on = chosen.contains(&t);
                    view! {
                        <label class="check"><input type="checkbox" name=format!("events[{t}]") value="on" checked=on/>" "<code>{t.clone()}</code></label>
                    }
                }).collect_view()}
            </div>
        </fieldset>
    }
}

#[component]
pub fn WebhooksPage() -> impl IntoView {
    let me = me();
    let create = ServerAction::<CreateWebhook>::new();
    let hooks = Resource::new(move || create.version().get(), |_| list_webhooks());
    let types = Resource::new(|| (), |_| webhook_event_types());
    let can_manage = me.can_manage;
    let (env, scheme) = if me.livemode { ("live", "https") } else { ("test", "http or https") };
    view! {
        <h1>"Webhooks"</h1>
        <p class="lede">{format!(
            "Gable POSTs the events of your {env} data to the endpoints below, signed with each endpoint's secret, and retries for up to a day and a half when they fail."
        )}</p>
        {can_manage.then(|| view! {
            <section class="card">
                <h2>"Add an endpoint"</h2>
                <ActionForm action=create attr:class="form" attr:id="create-webhook-form">
                    <input type="hidden" name="csrf" value=me.csrf.clone()/>
                    <label>"Endpoint URL"<input type="text" name="url" inputmode="url" required maxlength="2048" placeholder="https://example.com/webhooks/gable"/>
                        <span class="hint">{format!("{scheme}; public addresses only.")}</span></label>
                    <label>"Description (optional)"<input type="text" name="description" maxlength="500" placeholder="e.g. Accounting sync"/></label>
                    <Suspense fallback=|| view! { <p>"Loading…"</p> }>
                        {move || Suspend::new(async move {
                            view! { <EventsPicker types=types.await.unwrap_or_default() chosen=vec![]/> }
                        })}
                    </Suspense>
                    <FormError value=create.value()/>
                    <button type="submit" class="primary" disabled=move || create.pending().get()>"Add endpoint"</button>
                </ActionForm>
                {move || create.value().get().and_then(|r| r.ok()).map(|created| {
                    let href = format!("/console/webhooks/{}", created.webhook.id);
                    view! {
                        <ShownOnce created note="Gable keeps it sealed and never shows it again; rotate it if it is lost."/>
                        <p><A href=href attr:id="open-new-webhook">"Open the endpoint"</A></p>
                    }
                })}
            </section>
        })}
        <ManagersOnly can_manage what="add and change webhook endpoints"/>
        <ListOrEmpty
            items=hooks
            id="webhooks"
            empty_title="No endpoints yet"
            empty_text="Add the URL of your receiver; every event it takes arrives there, signed."
            row=|h| {
                let href = format!("/console/webhooks/{}", h.id);
                view! {
                    <li class="list-item">
                        <A href=href attr:class="strong url">{h.url.clone()}</A>
                        <Badge value=h.status.clone()/>
                        <span class="muted">{events_summary(&h.events)}</span>
                        {h.description.clone().map(|d| view! { <span class="muted">{d}</span> })}
                    </li>
                }
            }
        />
    }
}

#[component]
pub fn WebhookPage() -> impl IntoView {
    let me = me();
    let params = use_params_map();
    let query = use_query_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let filter = move |k: &str| query.read().get(k).unwrap_or_default();
    let update = ServerAction::<UpdateWebhook>::new();
    let toggle = ServerAction::<SetWebhookEnabled>::new();
    let rotate = ServerAction::<RotateWebhookSecret>::new();
    let delete = ServerAction::<DeleteWebhook>::new();
    let test = ServerAction::<SendTestWebhook>::new();
    let hook = Resource::new(
        move || (id(), update.version().get(), toggle.version().get(), rotate.version().get()),
        |(id, _, _, _)| get_webhook(id),
    );
    let deliveries = Resource::new(
        move || (id(), filter("status"), filter("event_type"), filter("trigger"), test.version().get()),
        |(id, status, event_type, trigger, _)| list_webhook_deliveries(id, status, event_type, trigger),
    );
    let types = Resource::new(|| (), |_| webhook_event_types());
    let can_manage = me.can_manage;
    let csrf = me.csrf.clone();
    view! {
        <p><A href="/console/webhooks">"← Webhooks"</A></p>
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                    match (hook.await, types.await) {
                        (Ok(h), Ok(types)) => view! {
                            <WebhookHeader h=h.clone()/>
                            {can_manage.then(|| view! { <ManageWebhook h types csrf update toggle rotate delete test/> })}
                        }.into_any(),
                        (Err(e), _) | (_, Err(e)) => view! { <p class="form-error">{err_text(&e)}</p> }.into_any(),
                    }
                })
            }}
        </Transition>
        <ManagersOnly can_manage what="change this endpoint, send test events and replay deliveries"/>
        <section class="card">
            <h2>"Deliveries"</h2>
            <p class="muted small">"Every attempt to deliver an event, newest first (the latest 50 that match). Attempts are kept 30 days."</p>
            <form method="get" class="row-form filters" id="delivery-filters">
                <label>"Status"<select name="status">
                    <option value="">"Any"</option>
                    {STATUSES.into_iter().map(|s| view! { <option value=s selected=move || filter("status") == s>{s}</option> }).collect_view()}
                </select></label>
                <label>"Event type"<select name="event_type">
                    <option value="">"Any"</option>
                    <Suspense fallback=|| ()>
                        {move || Suspend::new(async move {
                            types.await.unwrap_or_default().into_iter().map(|t| {
                                let selected = filter("event_type") == t;
                                view! { <option value=t.clone() selected=selected>{t.clone()}</option> }
                            }).collect_view()
                        })}
                    </Suspense>
                </select></label>
                <label>"Trigger"<select name="trigger">
                    <option value="">"Any"</option>
                    {TRIGGERS.into_iter().map(|s| view! { <option value=s selected=move || filter("trigger") == s>{s}</option> }).collect_view()}
                </select></label>
                <button type="submit">"Filter"</button>
                <a class="button" href=move || format!("/console/webhooks/{}", id()) id="refresh-deliveries">"Clear and refresh"</a>
            </form>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match deliveries.await {
                        Ok(list) if list.is_empty() => view! { <p class="empty" id="no-deliveries">"No deliveries match."</p> }.into_any(),
                        Ok(list) => view! { <DeliveryTable list/> }.into_any(),
                        Err(e) => view! { <p class="form-error">{err_text(&e)}</p> }.into_any(),
                    }
                })}
            </Transition>
        </section>
    }
}

#[component]
fn WebhookHeader(h: WebhookView) -> impl IntoView {
    let enabled = h.status == "enabled";
    view! {
        <h1 id="webhook-url" class="url">{h.url.clone()}</h1>
        <p>
            <Badge value=h.status.clone() id="webhook-status"/>
            " "<span class="muted">{events_summary(&h.events)}" · created "{short_time(&h.created_at)}</span>
        </p>
        {h.description.clone().map(|d| view! { <p id="webhook-description">{d}</p> })}
        {h.disabled_reason.clone().map(|r| view! { <p class="notice" id="disabled-reason">"Gable disabled this endpoint: "{r}" Enable it again once it answers."</p> })}
        {(!enabled && h.disabled_reason.is_none()).then(|| view! { <p class="muted">"Disabled: no events are sent to it until it is enabled."</p> })}
        {h.failing_since.clone().map(|t| view! { <p class="notice">{format!("Every delivery has failed since {}.", short_time(&t))}</p> })}
        {(!h.events.iter().any(|e| e == "*")).then(|| view! {
            <p class="small">"Takes: "{h.events.iter().map(|e| view! { <code>{e.clone()}</code>" " }).collect_view()}</p>
        })}
    }
}

#[component]
fn ManageWebhook(
    h: WebhookView,
    types: Vec<String>,
    csrf: String,
    update: ServerAction<UpdateWebhook>,
    toggle: ServerAction<SetWebhookEnabled>,
    rotate: ServerAction<RotateWebhookSecret>,
    delete: ServerAction<DeleteWebhook>,
    test: ServerAction<SendTestWebhook>,
) -> impl IntoView {
    let enabled = h.status == "enabled";
    let (c1, c2, c3, c4, c5) = (csrf.clone(), csrf.clone(), csrf.clone(), csrf.clone(), csrf);
    let (i1, i2, i3, i4, i5) = (h.id.clone(), h.id.clone(), h.id.clone(), h.id.clone(), h.id.clone());
    let test_types = types.clone();
    view! {
        <div class="card form-grid" id="manage-webhook">
            <div class="inline">
                <ActionForm action=toggle attr:class="inline">
                    <input type="hidden" name="csrf" value=c2/>
                    <input type="hidden" name="id" value=i2/>
                    <input type="hidden" name="enabled" value=(!enabled).to_string()/>
                    <button type="submit" id="toggle-webhook">{if enabled { "Disable" } else { "Enable" }}</button>
                </ActionForm>
                <ActionForm action=rotate attr:class="inline">
                    <input type="hidden" name="csrf" value=c3/>
                    <input type="hidden" name="id" value=i3/>
                    <button type="submit" id="rotate-secret">"Rotate secret"</button>
                </ActionForm>
            </div>
            <FormError value=toggle.value()/>
            <FormError value=rotate.value()/>
            {move || rotate.value().get().and_then(|r| r.ok()).map(|created| view! {
                <ShownOnce created note="The previous secret keeps signing beside it for 24 hours, so receivers can switch over."/>
            })}
            <ActionForm action=test attr:class="row-form" attr:id="test-webhook-form">
                <input type="hidden" name="csrf" value=c4/>
                <input type="hidden" name="id" value=i4/>
                <label>"Send a test event"<select name="event_type" required>
                    {test_types.into_iter().map(|t| view! { <option value=t.clone()>{t.clone()}</option> }).collect_view()}
                </select></label>
                <button type="submit" id="send-test" disabled=move || test.pending().get()>"Send test event"</button>
            </ActionForm>
            <FormError value=test.value()/>
            {move || test.value().get().and_then(|r| r.ok()).map(|d| view! {
                <p class="ok" role="status" id="test-queued">{format!("A sample {} event (marked \"test\": true) is on its way.", d.event_type)}</p>
            })}
        </div>
        // A section, not a <details>: the page re-renders after every change, which would close it.
        <section class="card" id="edit-webhook">
            <h2>"Edit the endpoint"</h2>
            <ActionForm action=update attr:class="form" attr:id="edit-webhook-form">
                <input type="hidden" name="csrf" value=c1/>
                <input type="hidden" name="id" value=i1/>
                <label>"Endpoint URL"<input type="text" name="url" inputmode="url" required maxlength="2048" value=h.url.clone()/></label>
                <label>"Description (optional)"<input type="text" name="description" maxlength="500" value=h.description.clone().unwrap_or_default()/></label>
                <EventsPicker types chosen=h.events.clone()/>
                <FormError value=update.value()/>
                <button type="submit" class="primary" disabled=move || update.pending().get()>"Save"</button>
            </ActionForm>
        </section>
        <div class="card">
            <ActionForm action=delete attr:class="inline" attr:id="delete-webhook-form">
                <input type="hidden" name="csrf" value=c5/>
                <input type="hidden" name="id" value=i5/>
                <label class="check"><input type="checkbox" required id="confirm-delete"/>" I understand Gable stops sending to this endpoint"</label>
                <button type="submit" class="danger" id="delete-webhook">"Delete endpoint"</button>
            </ActionForm>
            <FormError value=delete.value()/>
        </div>
    }
}

fn response_cell(d: &DeliveryView) -> String {
    match (d.response_status, &d.error) {
        (Some(s), _) => s.to_string(),
        (None, Some(_)) => "no response".into(),
        (None, None) => "—".into(),
    }
}

#[component]
fn DeliveryTable(list: Vec<DeliveryView>) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table id="deliveries">
                <thead><tr><th>"Sent"</th><th>"Event"</th><th>"Trigger"</th><th>"Attempt"</th><th>"Status"</th><th>"Response"</th><th>"Latency"</th><th>"Next retry"</th><th></th></tr></thead>
                <tbody>
                    {list.into_iter().map(|d| {
                        let href = d.href();
                        let next = (d.status == "retrying" || d.status == "pending").then(|| d.next_attempt_at.as_deref().map(short_time)).flatten();
                        view! {
                            <tr id=format!("delivery-{}", d.id) data-status=d.status.clone()>
                                <td>{short_time(&d.created_at)}</td>
                                <td><code>{d.event_type.clone()}</code></td>
                                <td>{d.trigger.clone()}</td>
                                <td>{d.attempt}</td>
                                <td><Badge value=d.status.clone()/></td>
                                <td>{response_cell(&d)}</td>
                                <td>{d.latency_ms.map(|l| format!("{l} ms")).unwrap_or_default()}</td>
                                <td>{next.unwrap_or_default()}</td>
                                <td><A href=href attr:class="details-link">"Details"</A></td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}

/// `(name, value)` pairs as a two-column table.
#[component]
fn HeaderTable(rows: Vec<(String, String)>, #[prop(into)] id: String) -> impl IntoView {
    if rows.is_empty() {
        return view! { <p class="muted" id=id>"None recorded."</p> }.into_any();
    }
    view! {
        <div class="table-wrap">
            <table class="headers" id=id>
                <tbody>
                    {rows.into_iter().map(|(k, v)| view! { <tr><th scope="row">{k}</th><td><code>{v}</code></td></tr> }).collect_view()}
                </tbody>
            </table>
        </div>
    }
    .into_any()
}

#[component]
pub fn DeliveryPage() -> impl IntoView {
    let me = me();
    let params = use_params_map();
    let hook_id = move || params.read().get("id").unwrap_or_default();
    let delivery_id = move || params.read().get("delivery").unwrap_or_default();
    let replay = ServerAction::<ReplayWebhookDelivery>::new();
    let detail = Resource::new(delivery_id, get_webhook_delivery);
    let can_manage = me.can_manage;
    let csrf = me.csrf.clone();
    view! {
        <p><A href=move || format!("/console/webhooks/{}", hook_id())>"← The endpoint's deliveries"</A></p>
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                    let dd = match detail.await {
                        Ok(dd) => dd,
                        Err(e) => return view! { <p class="form-error">{err_text(&e)}</p> }.into_any(),
                    };
                    let d = dd.delivery.clone();
                    let replay_id = d.id.clone();
                    view! {
                        <h1>"Delivery of "<code>{d.event_type.clone()}</code></h1>
                        <p><Badge value=d.status.clone() id="delivery-status"/>
                            " "<span class="muted">{format!("attempt {} · {}", d.attempt, d.trigger)}</span></p>
                        {can_manage.then(|| view! {
                            <ActionForm action=replay attr:class="inline" attr:id="replay-form">
                                <input type="hidden" name="csrf" value=csrf.clone()/>
                                <input type="hidden" name="id" value=replay_id.clone()/>
                                <button type="submit" class="primary" id="replay" disabled=move || replay.pending().get()>"Replay"</button>
                                <span class="muted small">"Sends it again now, with a fresh timestamp and signature, as a new attempt."</span>
                            </ActionForm>
                            <FormError value=replay.value()/>
                            {move || replay.value().get().and_then(|r| r.ok()).map(|n| {
                                let href = n.href();
                                view! { <p class="ok" role="status" id="replayed">{format!("Queued as attempt {}. ", n.attempt)}<A href=href>"See the new attempt"</A></p> }
                            })}
                        })}
                        <section class="card">
                            <h2>"Summary"</h2>
                            <dl class="facts" id="delivery-facts">
                                <dt>"Event"</dt><dd>{match d.event_id.clone() {
                                    Some(e) => view! { <code>{e}</code> }.into_any(),
                                    None => view! { <span>"a test event (not stored as an event)"</span> }.into_any(),
                                }}</dd>
                                <dt>"Event created"</dt><dd>{short_time(&d.event_created_at)}</dd>
                                <dt>"URL"</dt><dd><code>{d.url.clone()}</code></dd>
                                <dt>"Attempted"</dt><dd>{short_time(&d.created_at)}</dd>
                                <dt>"Response status"</dt><dd id="response-status">{d.response_status.map(|s| s.to_string()).unwrap_or_else(|| "none".into())}</dd>
                                <dt>"Latency"</dt><dd id="latency">{d.latency_ms.map(|l| format!("{l} ms")).unwrap_or_else(|| "—".into())}</dd>
                                <dt>"Error"</dt><dd id="delivery-error">{d.error.clone().unwrap_or_else(|| "none".into())}</dd>
                                <dt>"Next retry"</dt><dd id="next-retry">{match (d.status.as_str(), d.next_attempt_at.as_deref()) {
                                    ("retrying" | "pending", Some(t)) => short_time(t),
                                    ("failed", _) => "none: retries are over (replay it)".into(),
                                    _ => "none".into(),
                                }}</dd>
                            </dl>
                        </section>
                        <section class="card">
                            <h2>"Request"</h2>
                            <h3>"Headers"</h3>
                            <HeaderTable rows=dd.request_headers.clone() id="request-headers"/>
                            <h3>"Body"</h3>
                            {match (dd.request_body.clone(), dd.request_body_note.clone()) {
                                (Some(b), _) => view! { <pre class="body" id="request-body">{b}</pre> }.into_any(),
                                (None, note) => view! { <p class="muted" id="request-body">{note.unwrap_or_default()}</p> }.into_any(),
                            }}
                        </section>
                        <section class="card">
                            <h2>"Response"</h2>
                            <h3>"Headers"</h3>
                            <HeaderTable rows=dd.response_headers.clone() id="response-headers"/>
                            <h3>"Body (first 4 KB)"</h3>
                            {match (dd.response_excerpt.clone(), dd.response_note.clone()) {
                                (_, Some(note)) => view! { <p class="muted" id="response-body">{note}</p> }.into_any(),
                                (Some(b), None) if !b.is_empty() => view! { <pre class="body" id="response-body">{b}</pre> }.into_any(),
                                _ => view! { <p class="muted" id="response-body">"Empty."</p> }.into_any(),
                            }}
                        </section>
                    }
                    .into_any()
                })
            }}
        </Transition>
    }
}
