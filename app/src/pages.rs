//! Console pages: rendered completely on the server (console routes use `SsrMode::Async`)
//! and hydrated by the `frontend` WASM. Forms are `ActionForm`s posting to server
//! functions; without WASM they fall back to a plain POST that redirects back, which
//! loses only what a response shows once (a new key's secret: see docs/console.md).
//!
//! One module per area of the console; `components` holds what they share.

use leptos::prelude::*;
use leptos_router::components::A;

pub mod components;
pub mod console;
pub mod developers;
pub mod imports;
pub mod oauth;
pub mod record_form;
pub mod records;
pub mod sandbox;
pub mod service_accounts;
pub mod sign_in;
pub mod team;
pub mod webhooks;

#[component]
pub fn NotFound() -> impl IntoView {
    view! {
        <main class="page narrow">
            <h1>"Page not found"</h1>
            <p><A href="/">"Back to the start"</A></p>
        </main>
    }
}
