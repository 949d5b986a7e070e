//! Console pages. The signed-in console (accounts, service accounts, keys) arrives with
//! its own issue; until then the root tells a newcomer where the API lives.

use leptos::prelude::*;

#[component]
pub fn Home() -> impl IntoView {
    view! {
        <main class="page">
            <header class="brand">
                <span class="logo" aria-hidden="true">"▲"</span>
                <h1>"Gable"</h1>
            </header>
            <p class="lede">"Property operations: leasing, short stays, money and maintenance, in one API."</p>
            <section class="card">
                <h2>"Start here"</h2>
                <ul>
                    <li><a href="/v1/openapi.json">"API description (OpenAPI 3.1)"</a></li>
                    <li>"Every call carries "<code>"Authorization: Bearer gbl_…"</code>"; the first run printed a sandbox key."</li>
                </ul>
            </section>
        </main>
    }
}

#[component]
pub fn NotFound() -> impl IntoView {
    view! {
        <main class="page">
            <h1>"Page not found"</h1>
            <p><a href="/">"Back to the start"</a></p>
        </main>
    }
}
