//! The pages before signing in: the start page, sign-in and sign-up.

use leptos::prelude::*;
use leptos_router::components::{Redirect, A};

use super::components::FormError;
use crate::api::*;

#[component]
pub fn Landing() -> impl IntoView {
    let me = Resource::new(|| (), |_| get_me());
    view! {
        <Suspense fallback=|| ()>
            {move || Suspend::new(async move {
                if let Ok(Some(_)) = me.await {
                    return view! { <Redirect path="/console"/> }.into_any();
                }
                view! {
                    <main class="page narrow">
                        <header class="brand"><span class="logo" aria-hidden="true">"▲"</span><h1>"Gable"</h1></header>
                        <p class="lede">"Leasing, short stays, money and maintenance for property managers, in one place."</p>
                        <div class="actions">
                            <A href="/sign-up" attr:class="button primary">"Create an account"</A>
                            <A href="/sign-in" attr:class="button">"Sign in"</A>
                        </div>
                        <p class="muted small">"Developers: the API is described at "<a href="/v1/openapi.json">"/v1/openapi.json"</a>"."</p>
                    </main>
                }
                .into_any()
            })}
        </Suspense>
    }
}

#[component]
pub fn SignInPage() -> impl IntoView {
    let action = ServerAction::<SignIn>::new();
    // An OAuth authorization request (or a console page) sends the user here and back.
    let next = leptos_router::hooks::use_query_map().with_untracked(|q| q.get("next")).filter(|n| crate::api::is_return_path(n));
    // The OAuth authorization request is a page the server renders, not a route of the
    // console's router: after signing in, the browser loads it anew.
    #[cfg(feature = "hydrate")]
    {
        let next = next.clone().filter(|n| n.starts_with("/oauth/"));
        Effect::new(move |_| {
            if let (Some(Ok(())), Some(n)) = (action.value().get(), next.as_ref()) {
                let _ = window().location().set_href(n);
            }
        });
    }
    view! {
        <main class="page narrow">
            <header class="brand"><span class="logo" aria-hidden="true">"▲"</span><h1>"Sign in to Gable"</h1></header>
            <ActionForm action=action attr:class="card form">
                <label>"Email"<input type="email" name="email" autocomplete="username" required/></label>
                <label>"Password"<input type="password" name="password" autocomplete="current-password" required/></label>
                {next.map(|n| view! { <input type="hidden" name="next" value=n/> })}
                <FormError value=action.value()/>
                <button type="submit" class="primary" disabled=move || action.pending().get()>"Sign in"</button>
            </ActionForm>
            <p class="muted">"New to Gable? "<A href="/sign-up">"Create an account"</A></p>
        </main>
    }
}

#[component]
pub fn SignUpPage() -> impl IntoView {
    let action = ServerAction::<SignUp>::new();
    view! {
        <main class="page narrow">
            <header class="brand"><span class="logo" aria-hidden="true">"▲"</span><h1>"Create your Gable account"</h1></header>
            <ActionForm action=action attr:class="card form">
                <label>"Company"<input type="text" name="company" autocomplete="organization" required maxlength="200"/></label>
                <label>"Your name"<input type="text" name="name" autocomplete="name" required maxlength="200"/></label>
                <label>"Work email"<input type="email" name="email" autocomplete="email" required/></label>
                <label>"Password"<input type="password" name="password" autocomplete="new-password" required minlength="12" maxlength="128"/>
                    <span class="hint">"At least 12 characters."</span></label>
                <FormError value=action.value()/>
                <button type="submit" class="primary" disabled=move || action.pending().get()>"Create account"</button>
            </ActionForm>
            <p class="muted">"Already have an account? "<A href="/sign-in">"Sign in"</A></p>
        </main>
    }
}
