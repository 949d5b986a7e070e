//! What the console's pages share: error words, lists with an empty state, form errors,
//! once-shown secrets, times, and the signed-in user.

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;
use leptos_router::components::A;

use crate::service::Me;

/// A server function's error in words (without the framework's prefix, or the field a
/// form's refusal names).
pub(crate) fn err_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(m) => field_error(e).map_or_else(|| m.clone(), |(_, message)| message),
        other => other.to_string(),
    }
}

/// The field a form's refusal names, and its message (`api::ssr::form_error`).
pub(crate) fn field_error(e: &ServerFnError) -> Option<(String, String)> {
    let ServerFnError::ServerError(m) = e else { return None };
    let rest = m.strip_prefix(crate::api::FIELD_MARK)?;
    let (field, message) = rest.split_once(crate::api::FIELD_MARK)?;
    Some((field.to_string(), message.to_string()))
}

/// A resource's list: "Loading…" while it loads (the old list stays shown while it
/// reloads), an empty state (`empty_title`, `empty_text`) when there is nothing,
/// `<ul class="list" id=id>` with one `row` (an `<li>`) per item, or the error.
#[component]
pub(crate) fn ListOrEmpty<T, F, IV>(
    items: Resource<Result<Vec<T>, ServerFnError>>,
    id: &'static str,
    empty_title: &'static str,
    empty_text: &'static str,
    row: F,
) -> impl IntoView
where
    T: Clone + Send + Sync + 'static,
    F: Fn(T) -> IV + Clone + Send + Sync + 'static,
    IV: IntoView + 'static,
{
    view! {
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                let row = row.clone();
                Suspend::new(async move {
                    match items.await {
                        Ok(list) if list.is_empty() => view! {
                            <div class="empty"><h2>{empty_title}</h2><p>{empty_text}</p></div>
                        }.into_any(),
                        Ok(list) => view! { <ul class="list" id=id>{list.into_iter().map(row).collect_view()}</ul> }.into_any(),
                        Err(e) => view! { <p class="form-error">{err_text(&e)}</p> }.into_any(),
                    }
                })
            }}
        </Transition>
    }
}

/// Shows an action's error, if its last run failed.
#[component]
pub(crate) fn FormError<T: Clone + Send + Sync + 'static>(value: MappedSignal<Option<Result<T, ServerFnError>>>) -> impl IntoView {
    move || value.get().and_then(|r| r.err()).map(|e| view! { <p class="form-error" role="alert">{err_text(&e)}</p> })
}

/// A secret shown this once (a key, a signing secret) with a copy button; `children` is
/// the warning above it, `footer` what follows it. Keys and webhook secrets share it.
#[component]
pub(crate) fn SecretOnce(
    secret: String,
    code_id: &'static str,
    button_id: &'static str,
    footer: AnyView,
    children: Children,
) -> impl IntoView {
    view! {
        <div class="secret" role="status">
            {children()}
            <div class="secret-row">
                <code id=code_id>{secret.clone()}</code>
                <CopyButton text=secret id=button_id/>
            </div>
            {footer}
        </div>
    }
}

/// A button that copies `text` to the clipboard and says so (with WebAssembly; the text
/// is on the page to select without it).
#[component]
pub(crate) fn CopyButton(text: String, id: &'static str, #[prop(optional)] label: Option<&'static str>) -> impl IntoView {
    let copied = RwSignal::new(false);
    let label = label.unwrap_or("Copy");
    let copy = move |_| {
        let text = text.clone();
        #[cfg(feature = "hydrate")]
        {
            if let Some(w) = web_sys::window() {
                let promise = w.navigator().clipboard().write_text(&text);
                wasm_bindgen_futures::spawn_local(async move {
                    if wasm_bindgen_futures::JsFuture::from(promise).await.is_ok() {
                        copied.set(true);
                    }
                });
            }
        }
        #[cfg(not(feature = "hydrate"))]
        let _ = text;
    };
    view! { <button type="button" id=id on:click=copy>{move || if copied.get() { "Copied" } else { label }}</button> }
}

/// A status (or an environment) as a label; the value is also its style's class.
#[component]
pub(crate) fn Badge(#[prop(into)] value: String, #[prop(optional)] id: Option<&'static str>) -> impl IntoView {
    let class = format!("badge {value}");
    view! { <span class=class id=id>{value}</span> }
}

/// Tells everyone but owners and admins that only they may do `what` (the server refuses
/// it anyway).
#[component]
pub(crate) fn ManagersOnly(can_manage: bool, what: &'static str) -> impl IntoView {
    (!can_manage).then(|| view! { <p class="notice">{format!("Only owners and admins can {what}.")}</p> })
}

/// `2026-11-22T10:15:00.123456Z` → `2026-11-22 10:15 UTC`.
pub(crate) fn short_time(t: &str) -> String {
    match (t.get(..10), t.get(11..16)) {
        (Some(d), Some(hm)) => format!("{d} {hm} UTC"),
        _ => t.to_string(),
    }
}

/// The signed-in user, which the console's frame provides to every page inside it.
pub(crate) fn me() -> Me {
    expect_context::<Me>()
}

/// Where an event was delivered: each attempt's status and subscription, linked to the
/// attempt's page.
#[component]
pub(crate) fn Deliveries(list: Vec<(String, String, String)>) -> impl IntoView {
    view! {
        <ul class="deliveries">
            {list.into_iter().map(|(status, url, href)| view! {
                <li><Badge value=status/>" "<A href=href attr:class="url">{url}</A></li>
            }).collect_view()}
        </ul>
    }
}
