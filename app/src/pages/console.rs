//! The signed-in frame (navigation, environment switch, sign-out) and the overview.

use leptos::prelude::*;
use leptos_router::components::{Outlet, Redirect, A};

use super::components::{err_text, me};
use super::developers::FindRequest;
use crate::api::*;

/// The signed-in frame: navigation, environment switch, and the page.
#[component]
pub fn ConsoleLayout() -> impl IntoView {
    let set_env = ServerAction::<SetEnvironment>::new();
    let sign_out = ServerAction::<SignOut>::new();
    let me = Resource::new(move || set_env.version().get(), |_| get_me());
    view! {
        <Suspense fallback=|| view! { <p class="page">"Loading…"</p> }>
            {move || Suspend::new(async move {
                let Ok(Some(me)) = me.await else {
                    return view! { <Redirect path="/sign-in"/> }.into_any();
                };
                provide_context(me.clone());
                let (csrf_env, csrf_out) = (me.csrf.clone(), me.csrf.clone());
                let env_class = if me.livemode { "env-banner live" } else { "env-banner test" };
                view! {
                    <a class="skip" href="#main">"Skip to the page"</a>
                    <div class=env_class>
                        {if me.livemode { "Live data" } else { "Test data: nothing here touches real residents or money" }}
                    </div>
                    <header class="topbar">
                        <A href="/console" attr:class="brand-link"><span class="logo" aria-hidden="true">"▲"</span>" Gable"</A>
                        <nav class="mainnav" aria-label="Console">
                            <A href="/console" exact=true>"Overview"</A>
                            // Only what the role may open (the server refuses the rest anyway).
                            {me.can_read_all().then(|| view! { <A href="/console/service-accounts">"API access"</A> })}
                            {me.can_read("webhooks").then(|| view! { <A href="/console/webhooks">"Webhooks"</A> })}
                            {me.can_read_all().then(|| view! { <A href="/console/oauth-apps">"OAuth apps"</A> })}
                            <A href="/console/connected-apps">"Connected apps"</A>
                            <A href="/console/sandbox">"Sandbox"</A>
                            {me.can_read("imports").then(|| view! { <A href="/console/imports">"Imports"</A> })}
                            {me.can_read("users").then(|| view! { <A href="/console/team">"Team"</A> })}
                        </nav>
                        {me.can_read("request-logs").then(|| view! { <FindRequest/> })}
                        <div class="session">
                            <ActionForm action=set_env attr:class="env-switch">
                                <input type="hidden" name="csrf" value=csrf_env/>
                                <input type="hidden" name="live" value=(!me.livemode).to_string()/>
                                <button type="submit" title="Switch between test and live data">
                                    {if me.livemode { "Switch to test" } else { "Switch to live" }}
                                </button>
                            </ActionForm>
                            <span class="who">{me.name.clone()}" · "{me.tenant_name.clone()}</span>
                            <ActionForm action=sign_out attr:class="inline">
                                <input type="hidden" name="csrf" value=csrf_out/>
                                <button type="submit" class="link">"Sign out"</button>
                            </ActionForm>
                        </div>
                    </header>
                    <div class="console-body">
                        <AreasNav/>
                        <main class="page" id="main">
                            <Outlet/>
                        </main>
                    </div>
                }
                .into_any()
            })}
        </Suspense>
    }
}

/// The portfolio's navigation: each area with the collections the role may read.
#[component]
fn AreasNav() -> impl IntoView {
    let areas = Resource::new(|| (), |_| console_areas());
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                let areas = areas.await.unwrap_or_default();
                (!areas.is_empty()).then(|| view! {
                    <nav class="sidebar" aria-label="Portfolio" id="areas-nav">
                        {areas.into_iter().map(|a| {
                            let heading = format!("area-{}", a.name.to_lowercase());
                            view! {
                                <section aria-labelledby=heading.clone()>
                                    <h2 id=heading.clone()>{a.name.clone()}</h2>
                                    <ul>
                                        {a.collections.into_iter().map(|c| view! {
                                            <li><A href=format!("/console/{}", c.name)>{c.label}</A></li>
                                        }).collect_view()}
                                    </ul>
                                </section>
                            }
                        }).collect_view()}
                    </nav>
                })
            })}
        </Suspense>
    }
}

#[component]
pub fn Overview() -> impl IntoView {
    let me = me();
    let (see_keys, see_webhooks, see_team) = (me.can_read_all(), me.can_read("webhooks"), me.can_read("users"));
    let import = me.can_write("imports");
    let accounts = Resource::new(|| (), |_| list_service_accounts());
    let env = if me.livemode { "live" } else { "test" };
    view! {
        <h1>"Welcome, "{me.name.clone()}</h1>
        <p class="lede">{format!("You are viewing {env} data for {}. Your role: {}.", me.tenant_name, me.role)}</p>
        {see_keys.then(|| view! {
        <section class="card">
            <h2>"Connect your website or software"</h2>
            <Suspense fallback=|| view! { <p>"Loading…"</p> }>
                {move || Suspend::new(async move {
                    match accounts.await {
                        Ok(list) if list.is_empty() => view! {
                            <p>"Nothing is connected yet. Create a service account for each website or integration, then give it an API key."</p>
                            <A href="/console/service-accounts" attr:class="button primary">"Set up API access"</A>
                        }.into_any(),
                        Ok(list) => view! {
                            <p>{format!("{} service account(s) can reach the API.", list.len())}</p>
                            <A href="/console/service-accounts" attr:class="button">"Manage API access"</A>
                        }.into_any(),
                        Err(e) => view! { <p class="form-error">{err_text(&e)}</p> }.into_any(),
                    }
                })}
            </Suspense>
        </section>
        })}
        {see_webhooks.then(|| view! {
            <LinkCard
                title="Webhooks"
                text="Have Gable tell your software when something happens: a lease signed, a payment received, a work order completed."
                href="/console/webhooks"
                link="Webhooks"
            />
        })}
        {import.then(|| view! {
            <LinkCard
                title="Bring your portfolio in"
                text="Import properties, units, leases and more from spreadsheets or another system's export: every row is checked before anything is written."
                href="/console/imports/new"
                link="Import a file"
            />
        })}
        {see_team.then(|| view! {
            <LinkCard
                title="Your team"
                text="Owners and admins manage API access; read-only staff can look but not change."
                href="/console/team"
                link="See your team"
            />
        })}
    }
}

/// A card of the overview that says what a page is for and links to it.
#[component]
fn LinkCard(title: &'static str, text: &'static str, href: &'static str, link: &'static str) -> impl IntoView {
    view! {
        <section class="card">
            <h2>{title}</h2>
            <p>{text}</p>
            <A href=href attr:class="button">{link}</A>
        </section>
    }
}
