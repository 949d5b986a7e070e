//! The team: the tenant's console users and their roles; owners and admins add people.

use leptos::prelude::*;

use super::components::{err_text, me, FormError};
use crate::api::*;

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
