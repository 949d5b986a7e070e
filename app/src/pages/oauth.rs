//! "OAuth apps" (the third-party apps this tenant registers: redirect URIs, secret shown
//! once and rotated, delete) and "Connected apps" (what users of this tenant authorized,
//! with scopes and last use; revoke at once). See docs/oauth.md. Owners and admins manage
//! apps and every user's connections; everyone else sees apps and revokes their own.

use leptos::prelude::*;

use super::components::{me, short_time, FormError, ListOrEmpty, SecretOnce};
use crate::api::*;
use crate::service::OAuthAppWithSecret;

/// A client secret, shown once (after registration or a rotation).
#[component]
fn SecretShownOnce(created: OAuthAppWithSecret) -> impl IntoView {
    created.client_secret.map(|secret| {
        let footer = view! {
            <p class="muted small">"The app sends it to "<code>"/oauth/token"</code>" (HTTP Basic or "<code>"client_secret"</code>"); never in a browser."</p>
        }
        .into_any();
        view! {
            <SecretOnce secret code_id="new-client-secret" button_id="copy-client-secret" footer>
                <p class="warning"><strong>"Copy this client secret now."</strong>" You will not be able to see it again; Gable keeps only a fingerprint of it."</p>
            </SecretOnce>
        }
    })
}

#[component]
pub fn OAuthAppsPage() -> impl IntoView {
    let me = me();
    let create = ServerAction::<CreateOauthApp>::new();
    let update = ServerAction::<UpdateOauthApp>::new();
    let rotate = ServerAction::<RotateOauthAppSecret>::new();
    let delete = ServerAction::<DeleteOauthApp>::new();
    let apps = Resource::new(
        move || (create.version().get(), update.version().get(), rotate.version().get(), delete.version().get()),
        |_| list_oauth_apps(),
    );
    let can_manage = me.can_manage;
    let env = if me.livemode { "live data" } else { "test data (the sandbox)" };
    let csrf = me.csrf.clone();
    view! {
        <h1>"OAuth apps"</h1>
        <p class="lede">{format!(
            "Apps your company builds or runs for others: users of any Gable account can authorize them to act in their own account, \
             without sharing a password or an API key. An app registered here acts on {env}."
        )}</p>
        {can_manage.then(|| {
            let csrf = csrf.clone();
            view! {
                <section class="card">
                    <h2>"Register an app"</h2>
                    <ActionForm action=create attr:class="form" attr:id="create-oauth-app-form">
                        <input type="hidden" name="csrf" value=csrf/>
                        <label>"App name"<input type="text" name="name" required maxlength="100" placeholder="e.g. Ledger Sync"/></label>
                        <label>"Redirect URIs"
                            <textarea name="redirect_uris" rows="3" required placeholder="https://app.example.com/oauth/callback"></textarea>
                            <span class="hint">"One per line, matched exactly: https, or http on 127.0.0.1 or localhost."</span></label>
                        <label class="check"><input type="checkbox" name="public" value="on"/>" Public client (a mobile, desktop or single-page app that cannot keep a secret: PKCE alone)"</label>
                        <FormError value=create.value()/>
                        <button type="submit" class="primary" disabled=move || create.pending().get()>"Register app"</button>
                    </ActionForm>
                    {move || create.value().get().and_then(|r| r.ok()).map(|created| view! {
                        <p>"Registered "<strong>{created.app.name.clone()}</strong>". Its client ID: "<code id="new-client-id">{created.app.client_id.clone()}</code></p>
                        <SecretShownOnce created/>
                    })}
                </section>
            }
        })}
        {move || rotate.value().get().and_then(|r| r.ok()).map(|created| view! {
            <section class="card"><h2>{format!("New secret for {}", created.app.name)}</h2><SecretShownOnce created/></section>
        })}
        <FormError value=update.value()/>
        <FormError value=rotate.value()/>
        <FormError value=delete.value()/>
        <ListOrEmpty
            items=apps
            id="oauth-apps"
            empty_title="No apps yet"
            empty_text="Register an app to let other Gable users connect it to their accounts."
            row=move |app| {
                let uris = app.redirect_uris.join("\n");
                let kind = if app.public { "Public client" } else { "Confidential client" };
                let (c1, c2, c3) = (csrf.clone(), csrf.clone(), csrf.clone());
                let (id1, id2, id3) = (app.id.clone(), app.id.clone(), app.id.clone());
                let uris_label = format!("Redirect URIs of {}", app.name);
                let rotate_label = format!("Rotate the secret of {}", app.name);
                let delete_label = format!("Delete {}", app.name);
                let (public, listed) = (app.public, app.redirect_uris.join(", "));
                view! {
                    <li class="list-item oauth-app">
                        <strong>{app.name.clone()}</strong>
                        <span class="muted">{kind}" · "{if app.livemode { "live" } else { "test" }}" · registered "{short_time(&app.created_at)}</span>
                        <p>"Client ID: "<code>{app.client_id.clone()}</code></p>
                        {can_manage.then(|| view! {
                            <ActionForm action=update attr:class="form inline">
                                <input type="hidden" name="csrf" value=c1/>
                                <input type="hidden" name="id" value=id1/>
                                <label>{uris_label}<textarea name="redirect_uris" rows="2" required>{uris}</textarea></label>
                                <button type="submit">"Save redirect URIs"</button>
                            </ActionForm>
                            {(!public).then(|| view! {
                                <ActionForm action=rotate attr:class="inline">
                                    <input type="hidden" name="csrf" value=c2/>
                                    <input type="hidden" name="id" value=id2/>
                                    <button type="submit">{rotate_label}</button>
                                </ActionForm>
                            })}
                            <ActionForm action=delete attr:class="inline">
                                <input type="hidden" name="csrf" value=c3/>
                                <input type="hidden" name="id" value=id3/>
                                <button type="submit" class="danger">{delete_label}</button>
                            </ActionForm>
                        })}
                        {(!can_manage).then(|| view! { <p class="muted">"Redirect URIs: "{listed}</p> })}
                    </li>
                }
            }
        />
    }
}

#[component]
pub fn ConnectedAppsPage() -> impl IntoView {
    let me = me();
    let revoke = ServerAction::<RevokeConnectedApp>::new();
    let connected = Resource::new(move || revoke.version().get(), |_| list_connected_apps());
    let csrf = me.csrf.clone();
    let whose = if me.can_manage { "the people of your account have" } else { "you have" };
    view! {
        <h1>"Connected apps"</h1>
        <p class="lede">{format!("The apps {whose} authorized to act in this account. Revoking one stops its access at once.")}</p>
        <FormError value=revoke.value()/>
        <ListOrEmpty
            items=connected
            id="connected-apps"
            empty_title="No connected apps"
            empty_text="When someone authorizes an app, it is listed here."
            row=move |g| {
                let csrf = csrf.clone();
                let last = g.last_used_at.as_deref().map(short_time).unwrap_or_else(|| "never".into());
                view! {
                    <li class="list-item connected-app">
                        <strong>{g.app_name.clone()}</strong>
                        <span class="muted">{format!("authorized by {} · {} · last used {}", g.user_email, if g.livemode { "live" } else { "test" }, last)}</span>
                        <p>{g.scopes.iter().map(|s| view! { <code class="scope">{s.clone()}</code>" " }).collect_view()}</p>
                        <ActionForm action=revoke attr:class="inline">
                            <input type="hidden" name="csrf" value=csrf/>
                            <input type="hidden" name="id" value=g.id.clone()/>
                            <button type="submit" class="danger">{format!("Revoke {}", g.app_name)}</button>
                        </ActionForm>
                    </li>
                }
            }
        />
    }
}
