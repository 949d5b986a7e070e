//! API access: service accounts, and each one's keys (created with a secret shown once,
//! revoked). Owners and admins manage; the server refuses the rest.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::use_params_map;

use super::components::{err_text, me, short_time, Badge, FormError, ListOrEmpty, ManagersOnly, SecretOnce};
use crate::api::*;
use crate::service::{ApiKeyView, CreatedKey};

#[component]
pub fn ServiceAccountsPage() -> impl IntoView {
    let me = me();
    let create = ServerAction::<CreateServiceAccount>::new();
    let accounts = Resource::new(move || create.version().get(), |_| list_service_accounts());
    let can_manage = me.can_manage;
    view! {
        <h1>"API access"</h1>
        <p class="lede">"A service account stands for one website or integration. Its keys let it call the Gable API."</p>
        {can_manage.then(|| view! {
            <ActionForm action=create attr:class="card form row-form">
                <input type="hidden" name="csrf" value=me.csrf.clone()/>
                <label>"New service account"<input type="text" name="name" placeholder="e.g. Company website" required maxlength="100"/></label>
                <button type="submit" class="primary" disabled=move || create.pending().get()>"Create"</button>
                <FormError value=create.value()/>
            </ActionForm>
        })}
        <ManagersOnly can_manage what="create service accounts and keys"/>
        <ListOrEmpty
            items=accounts
            id="service-accounts"
            empty_title="No service accounts yet"
            empty_text="Create one for your website or property software, then create a key for it."
            row=|sa| {
                let href = format!("/console/service-accounts/{}", sa.id);
                view! {
                    <li class="list-item">
                        <A href=href attr:class="strong">{sa.name.clone()}</A>
                        <Badge value=sa.status.clone()/>
                        <span class="muted">{format!("{} active key(s)", sa.active_keys)}</span>
                    </li>
                }
            }
        />
    }
}

#[component]
pub fn ServiceAccountPage() -> impl IntoView {
    let me = me();
    let params = use_params_map();
    let id = move || params.read().get("id").unwrap_or_default();
    let rename = ServerAction::<RenameServiceAccount>::new();
    let toggle = ServerAction::<SetServiceAccountActive>::new();
    let delete = ServerAction::<DeleteServiceAccount>::new();
    let create_key = ServerAction::<CreateKey>::new();
    let revoke = ServerAction::<RevokeKey>::new();
    let account = Resource::new(move || (id(), rename.version().get(), toggle.version().get()), |(id, _, _)| get_service_account(id));
    let keys = Resource::new(
        move || (id(), create_key.version().get(), revoke.version().get(), toggle.version().get()),
        |(id, _, _, _)| list_keys(id),
    );
    let can_manage = me.can_manage;
    let csrf = me.csrf.clone();
    let csrf_keys = me.csrf.clone();
    view! {
        <p><A href="/console/service-accounts">"← API access"</A></p>
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                    match account.await {
                        Ok(sa) => view! { <AccountHeader sa csrf can_manage rename toggle delete/> }.into_any(),
                        Err(e) => view! { <p class="form-error">{err_text(&e)}</p> }.into_any(),
                    }
                })
            }}
        </Transition>
        {can_manage.then(|| view! { <CreateKeyForm csrf=me.csrf.clone() service_account_id=id() livemode=me.livemode action=create_key/> })}
        <section class="card">
            <h2>"Keys"</h2>
            <Transition fallback=|| view! { <p>"Loading…"</p> }>
                {move || {
                    let csrf = csrf_keys.clone();
                    Suspend::new(async move {
                        match keys.await {
                            Ok(list) if list.is_empty() => view! { <p class="empty">"No keys yet. Create one above; it is shown only once."</p> }.into_any(),
                            Ok(list) => view! { <KeyTable keys=list csrf revoke can_manage/> }.into_any(),
                            Err(e) => view! { <p class="form-error">{err_text(&e)}</p> }.into_any(),
                        }
                    })
                }}
            </Transition>
            <FormError value=revoke.value()/>
        </section>
    }
}

#[component]
fn AccountHeader(
    sa: crate::service::ServiceAccount,
    csrf: String,
    can_manage: bool,
    rename: ServerAction<RenameServiceAccount>,
    toggle: ServerAction<SetServiceAccountActive>,
    delete: ServerAction<DeleteServiceAccount>,
) -> impl IntoView {
    let active = sa.status == "active";
    let (c1, c2, c3) = (csrf.clone(), csrf.clone(), csrf);
    let (i1, i2, i3) = (sa.id.clone(), sa.id.clone(), sa.id.clone());
    let name = sa.name.clone();
    view! {
        <h1 id="service-account-name">{sa.name.clone()}</h1>
        <p><Badge value=sa.status.clone()/>
            {(!active).then_some(" Its keys are refused until you enable it again.")}</p>
        {can_manage.then(move || view! {
            <div class="card form-grid">
                <ActionForm action=rename attr:class="row-form">
                    <input type="hidden" name="csrf" value=c1/>
                    <input type="hidden" name="id" value=i1/>
                    <label>"Name"<input type="text" name="name" value=name required maxlength="100"/></label>
                    <button type="submit">"Rename"</button>
                </ActionForm>
                <ActionForm action=toggle attr:class="inline">
                    <input type="hidden" name="csrf" value=c2/>
                    <input type="hidden" name="id" value=i2/>
                    <input type="hidden" name="active" value=(!active).to_string()/>
                    <button type="submit" id="toggle-account">{if active { "Disable" } else { "Enable" }}</button>
                </ActionForm>
                <ActionForm action=delete attr:class="inline">
                    <input type="hidden" name="csrf" value=c3/>
                    <input type="hidden" name="id" value=i3/>
                    <label class="check"><input type="checkbox" required/>" I understand its keys stop working"</label>
                    <button type="submit" class="danger">"Delete"</button>
                </ActionForm>
                <FormError value=rename.value()/>
                <FormError value=toggle.value()/>
                <FormError value=delete.value()/>
            </div>
        })}
    }
}

#[component]
fn CreateKeyForm(csrf: String, service_account_id: String, livemode: bool, action: ServerAction<CreateKey>) -> impl IntoView {
    let collections = Resource::new(|| (), |_| collection_names());
    view! {
        <section class="card">
            <h2>"Create a key"</h2>
            <ActionForm action=action attr:class="form" attr:id="create-key-form">
                <input type="hidden" name="csrf" value=csrf/>
                <input type="hidden" name="service_account_id" value=service_account_id/>
                <fieldset><legend>"Environment"</legend>
                    <label class="check"><input type="radio" name="environment" value="test" checked=!livemode/>" Test (sandbox)"</label>
                    <label class="check"><input type="radio" name="environment" value="live" checked=livemode/>" Live"</label>
                </fieldset>
                <fieldset><legend>"Access"</legend>
                    <label class="check"><input type="radio" name="access" value="full" checked=true/>" Everything (*)"</label>
                    <label class="check"><input type="radio" name="access" value="read"/>" Read everything (*:read)"</label>
                    <label class="check"><input type="radio" name="access" value="custom"/>" Only what I tick below"</label>
                </fieldset>
                <details><summary>"Choose collections"</summary>
                    <Suspense fallback=|| ()>
                        {move || Suspend::new(async move {
                            let names = collections.await.unwrap_or_default();
                            view! {
                                <table class="scopes"><thead><tr><th>"Collection"</th><th>"Read"</th><th>"Write"</th></tr></thead><tbody>
                                    {names.into_iter().map(|n| view! {
                                        <tr><td>{n.clone()}</td>
                                            <td><input type="checkbox" name=format!("scopes[{n}:read]") value="on" aria-label=format!("{n} read")/></td>
                                            <td><input type="checkbox" name=format!("scopes[{n}:write]") value="on" aria-label=format!("{n} write")/></td></tr>
                                    }).collect_view()}
                                </tbody></table>
                            }
                        })}
                    </Suspense>
                </details>
                <label>"Limit to properties (optional)"<input type="text" name="properties" placeholder="property ids, separated by commas"/></label>
                <FormError value=action.value()/>
                <button type="submit" class="primary" disabled=move || action.pending().get()>"Create key"</button>
            </ActionForm>
            {move || action.value().get().and_then(|r| r.ok()).map(|created| view! { <NewSecret created/> })}
        </section>
    }
}

/// The once-shown secret of a new key.
#[component]
fn NewSecret(created: CreatedKey) -> impl IntoView {
    let details = format!("{} key · {}", created.key.environment, created.key.scopes.join(", "));
    let footer = view! { <p class="muted small">{details}</p> }.into_any();
    view! {
        <SecretOnce secret=created.secret code_id="new-key-secret" button_id="copy-key" footer>
            <p class="warning"><strong>"Copy this key now."</strong>" You will not be able to see it again; Gable keeps only a fingerprint of it."</p>
        </SecretOnce>
    }
}

#[component]
fn KeyTable(keys: Vec<ApiKeyView>, csrf: String, revoke: ServerAction<RevokeKey>, can_manage: bool) -> impl IntoView {
    view! {
        <div class="table-wrap">
            <table class="keys" id="keys">
                <thead><tr><th>"Key"</th><th>"Environment"</th><th>"Access"</th><th>"Created"</th><th>"Last used"</th><th>"Status"</th><th></th></tr></thead>
                <tbody>
                    {keys.into_iter().map(|k| {
                        let revoked = k.revoked_at.is_some();
                        let csrf = csrf.clone();
                        view! {
                            <tr class:revoked=revoked>
                                <td><code>{format!("{}…", k.prefix)}</code></td>
                                <td><Badge value=k.environment.clone()/></td>
                                <td>{k.scopes.join(", ")}{k.property_ids.as_ref().map(|p| format!(" · {} propert{}", p.len(), if p.len() == 1 { "y" } else { "ies" }))}</td>
                                <td>{short_time(&k.created_at)}</td>
                                <td>{k.last_used_at.as_deref().map(short_time).unwrap_or_else(|| "never".into())}</td>
                                <td>{if revoked { "revoked" } else { "active" }}</td>
                                <td>{(can_manage && !revoked).then(|| view! {
                                    <ActionForm action=revoke attr:class="inline">
                                        <input type="hidden" name="csrf" value=csrf.clone()/>
                                        <input type="hidden" name="key_id" value=k.id.clone()/>
                                        <button type="submit" class="danger small">"Revoke"</button>
                                    </ActionForm>
                                })}</td>
                            </tr>
                        }
                    }).collect_view()}
                </tbody>
            </table>
        </div>
    }
}
