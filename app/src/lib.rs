//! Gable's Leptos application, shared by the server (`ssr`) and the browser (`hydrate`).
//!
//! The dependency trap: `server` depends on `app`, so server functions here cannot call
//! into `server`. Server functions therefore talk to small service traits that `app`
//! defines under `ssr` and that `server` provides through Leptos context
//! (see `docs/architecture.md`).
#![recursion_limit = "256"] // deeply nested view types of the console pages

use leptos::prelude::*;
use leptos_meta::{provide_meta_context, MetaTags, Stylesheet, Title};
use leptos_router::{
    components::{ParentRoute, Route, Router, Routes},
    path, SsrMode,
};

pub mod api;
mod pages;
pub mod service;

/// The HTML document around every console page.
pub fn shell(options: LeptosOptions) -> impl IntoView {
    view! {
        <!DOCTYPE html>
        <html lang="en">
            <head>
                <meta charset="utf-8"/>
                <meta name="viewport" content="width=device-width, initial-scale=1"/>
                <link rel="icon" href="/favicon.svg" type="image/svg+xml"/>
                <AutoReload options=options.clone()/>
                <HydrationScripts options/>
                <MetaTags/>
            </head>
            <body>
                <App/>
            </body>
        </html>
    }
}

#[component]
pub fn App() -> impl IntoView {
    provide_meta_context();
    view! {
        <Stylesheet id="gable" href="/pkg/gable.css"/>
        <Title text="Gable"/>
        <Router>
            <Routes fallback=pages::NotFound>
                <Route path=path!("/") view=pages::sign_in::Landing/>
                <Route path=path!("/sign-in") view=pages::sign_in::SignInPage/>
                <Route path=path!("/sign-up") view=pages::sign_in::SignUpPage/>
                // Async: the console's HTML arrives complete, not streamed into templates
                // that need a script to be shown.
                <ParentRoute path=path!("/console") view=pages::console::ConsoleLayout ssr=SsrMode::Async>
                    <Route path=path!("") view=pages::console::Overview/>
                    <Route path=path!("service-accounts") view=pages::service_accounts::ServiceAccountsPage/>
                    <Route path=path!("service-accounts/:id") view=pages::service_accounts::ServiceAccountPage/>
                    <Route path=path!("webhooks") view=pages::webhooks::WebhooksPage/>
                    <Route path=path!("webhooks/:id") view=pages::webhooks::WebhookPage/>
                    <Route path=path!("webhooks/:id/deliveries/:delivery") view=pages::webhooks::DeliveryPage/>
                    <Route path=path!("oauth-apps") view=pages::oauth::OAuthAppsPage/>
                    <Route path=path!("connected-apps") view=pages::oauth::ConnectedAppsPage/>
                    <Route path=path!("sandbox") view=pages::sandbox::SandboxPage/>
                    <Route path=path!("team") view=pages::team::TeamPage/>
                    <Route path=path!("developers/errors") view=pages::developers::ErrorsPage/>
                    <Route path=path!("developers/tail") view=pages::developers::TailPage/>
                    <Route path=path!("developers/find") view=pages::developers::FindPage/>
                    // Imports are a collection shown on pages of their own (before the portfolio's).
                    <Route path=path!("imports") view=pages::imports::ImportsPage/>
                    <Route path=path!("imports/new") view=pages::imports::NewImportPage/>
                    <Route path=path!("imports/:id") view=pages::imports::ImportPage/>
                    // The portfolio: every collection of the areas, after the pages above,
                    // whose names are no collection's (`accounts::records::ELSEWHERE`).
                    <Route path=path!(":collection") view=pages::records::ListPage/>
                    <Route path=path!(":collection/new") view=pages::record_form::NewRecordPage/>
                    <Route path=path!(":collection/:id") view=pages::records::RecordPage/>
                    <Route path=path!(":collection/:id/edit") view=pages::record_form::EditRecordPage/>
                </ParentRoute>
            </Routes>
        </Router>
    }
}
