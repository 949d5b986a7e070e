//! Console pages: rendered completely on the server (console routes use `SsrMode::Async`)
//! and hydrated by the `frontend` WASM. Forms are `ActionForm`s posting to server
//! functions; without WASM they fall back to a plain POST that redirects back, which
//! loses only what a response shows once (a new key's secret: see docs/console.md).

use leptos::prelude::*;
use leptos::server_fn::ServerFnError;
use leptos_router::components::{Outlet, Redirect, A};
use leptos_router::hooks::use_params_map;

use crate::api::*;
use crate::service::{ApiKeyView, CreatedKey, Me};

pub mod oauth;
pub mod sandbox;
pub mod webhooks;

/// A server function's error in words (without the framework's prefix).
pub(crate) fn err_text(e: &ServerFnError) -> String {
    match e {
        ServerFnError::ServerError(m) => m.clone(),
        other => other.to_string(),
    }
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
fn FormError<T: Clone + Send + Sync + 'static>(value: MappedSignal<Option<Result<T, ServerFnError>>>) -> impl IntoView {
    move || value.get().and_then(|r| r.err()).map(|e| view! { <p class="form-error" role="alert">{err_text(&e)}</p> })
}

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
                            {me.can_read("users").then(|| view! { <A href="/console/team">"Team"</A> })}
                        </nav>
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
                    <main class="page">
                        <Outlet/>
                    </main>
                }
                .into_any()
            })}
        </Suspense>
    }
}

pub(crate) fn me() -> Me {
    expect_context::<Me>()
}

#[component]
pub fn Overview() -> impl IntoView {
    let me = me();
    let (see_keys, see_webhooks, see_team) = (me.can_read_all(), me.can_read("webhooks"), me.can_read("users"));
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
        <section class="card">
            <h2>"Webhooks"</h2>
            <p>"Have Gable tell your software when something happens: a lease signed, a payment received, a work order completed."</p>
            <A href="/console/webhooks" attr:class="button">"Webhooks"</A>
        </section>
        })}
        {see_team.then(|| view! {
        <section class="card">
            <h2>"Your team"</h2>
            <p>"Owners and admins manage API access; read-only staff can look but not change."</p>
            <A href="/console/team" attr:class="button">"See your team"</A>
        </section>
        })}
    }
}

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
        {(!can_manage).then(|| view! { <p class="notice">"Only owners and admins can create service accounts and keys."</p> })}
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
                        <span class=format!("badge {}", sa.status)>{sa.status.clone()}</span>
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
        <p><span class=format!("badge {}", sa.status)>{sa.status.clone()}</span>
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
    let copied = RwSignal::new(false);
    let copy = {
        let secret = secret.clone();
        move |_| {
            let secret = secret.clone();
            #[cfg(feature = "hydrate")]
            {
                if let Some(w) = web_sys::window() {
                    let promise = w.navigator().clipboard().write_text(&secret);
                    wasm_bindgen_futures::spawn_local(async move {
                        if wasm_bindgen_futures::JsFuture::from(promise).await.is_ok() {
                            copied.set(true);
                        }
                    });
                }
            }
            #[cfg(not(feature = "hydrate"))]
            let _ = secret;
        }
    };
    view! {
        <div class="secret" role="status">
            {children()}
            <div class="secret-row">
                <code id=code_id>{secret}</code>
                <button type="button" id=button_id on:click=copy>{move || if copied.get() { "Copied" } else { "Copy" }}</button>
            </div>
            {footer}
        </div>
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
                                <td><span class=format!("badge {}", k.environment)>{k.environment.clone()}</span></td>
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

/// `2026-11-22T10:15:00.123456Z` → `2026-11-22 10:15 UTC`.
pub(crate) fn short_time(t: &str) -> String {
    match (t.get(..10), t.get(11..16)) {
        (Some(d), Some(hm)) => format!("{d} {hm} UTC"),
        _ => t.to_string(),
    }
}

#[component]
pub fn TeamPage() -> impl IntoView {
    let me = me();
    let add = ServerAction::<CreateUser>::new();
    let users = Resource::new(move || add.version().get(), |_| list_users());
    let roles = Resource::new(|| (), |_| list_roles());
    view! {
        <h1>"Team"</h1>
        <Transition fallback=|| view! { <p>"Loading…"</p> }>
            {move || Suspend::new(async move {
                match users.await {
                    Ok(list) => view! {
                        <ul class="list" id="users">
                            {list.into_iter().map(|u| view! {
                                <li class="list-item">
                                    <span class="strong">{u.name.clone()}</span>
                                    <span class="muted">{u.email.clone()}</span>
                                    <span class="badge">{u.role.clone().unwrap_or_else(|| "no role".into())}</span>
                                </li>
                            }).collect_view()}
                        </ul>
                    }.into_any(),
                    Err(e) => view! { <p class="form-error">{err_text(&e)}</p> }.into_any(),
                }
            })}
        </Transition>
        {me.can_manage.then(|| view! {
            <section class="card">
                <h2>"Add a teammate"</h2>
                <ActionForm action=add attr:class="form">
                    <input type="hidden" name="csrf" value=me.csrf.clone()/>
                    <label>"Name"<input type="text" name="name" required maxlength="200"/></label>
                    <label>"Email"<input type="email" name="email" required/></label>
                    <label>"Role"
                        <select name="role_id" required>
                            <Suspense fallback=|| ()>
                                {move || Suspend::new(async move {
                                    roles.await.unwrap_or_default().into_iter().map(|r| view! {
                                        <option value=r.id.clone()>{r.name.clone()}</option>
                                    }).collect_view()
                                })}
                            </Suspense>
                        </select>
                    </label>
                    <label>"First password"<input type="password" name="password" autocomplete="new-password" required minlength="12"/>
                        <span class="hint">"Share it safely; they can sign in with it at once."</span></label>
                    <FormError value=add.value()/>
                    <button type="submit" class="primary" disabled=move || add.pending().get()>"Add"</button>
                </ActionForm>
            </section>
        })}
    }
}

#[component]
pub fn NotFound() -> impl IntoView {
    view! {
        <main class="page narrow">
            <h1>"Page not found"</h1>
            <p><A href="/">"Back to the start"</A></p>
        </main>
    }
}
