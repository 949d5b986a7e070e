//! Forms drawn from a collection's description, as the API takes its bodies: a create
//! form, an edit form (the fields an edit may change), and the inputs of a workflow
//! action. Every input is labelled and keyboard-usable; choices are selects; references
//! are pickers over the tenant's records; the API's refusal is shown next to the field it
//! names.

use leptos::prelude::*;
use leptos_router::components::A;
use leptos_router::hooks::{use_params_map, use_query_map};

use super::components::{err_text, field_error, me};
use crate::api::*;
use crate::service::{Choice, FieldAccess, FieldInfo, FieldKind, ADDRESS_PARTS};

/// `rent_due_day` → `Rent due day`: a name for people where no description gives one.
pub(crate) fn label_of(name: &str) -> String {
    let base = name.strip_suffix("_id").unwrap_or(name).replace('_', " ");
    let mut c = base.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The inputs of `fields`, named `values[<field>]`, starting from `values`; `error` is the
/// field the last refusal named, with its message.
#[component]
pub(crate) fn FormFields(
    fields: Vec<FieldInfo>,
    values: Vec<(String, String)>,
    #[prop(into)] error: Signal<Option<(String, String)>>,
) -> impl IntoView {
    fields
        .into_iter()
        .map(|f| {
            if f.kind == FieldKind::Address {
                let parts = values.iter().filter(|(k, _)| k.split_once('.').is_some_and(|(b, _)| b == f.name)).cloned().collect();
                return view! { <AddressInput f parts error/> }.into_any();
            }
            let value = values.iter().find(|(k, _)| *k == f.name).map(|(_, v)| v.clone()).unwrap_or_default();
            view! { <Input f value error/> }.into_any()
        })
        .collect_view()
}

/// An address, part by part (the API's `line1`, `city`, `country` … as one object).
#[component]
fn AddressInput(f: FieldInfo, parts: Vec<(String, String)>, error: Signal<Option<(String, String)>>) -> impl IntoView {
    let field = f.name.clone();
    let error_id = format!("field-{}-error", f.name);
    let message = move || error.get().filter(|(name, _)| *name == field).map(|(_, m)| m);
    let invalid = {
        let message = message.clone();
        move || message().is_some().then_some("true")
    };
    let required = f.required;
    view! {
        <fieldset class="address field" id=format!("field-{}", f.name) data-field=f.name.clone() aria-describedby=error_id.clone() aria-invalid=invalid.clone()>
            <legend>{f.label.clone()}{required.then(|| view! { <span class="req" aria-hidden="true">" *"</span> })}</legend>
            {ADDRESS_PARTS.iter().map(|(part, label)| {
                let id = format!("field-{}-{part}", f.name);
                let value = parts.iter().find(|(k, _)| k.ends_with(&format!(".{part}"))).map(|(_, v)| v.clone()).unwrap_or_default();
                // The API requires these three of an address it is given.
                let needed = required && matches!(*part, "line1" | "city" | "country");
                let (hint, max) = if *part == "country" { ("Two letters, e.g. US", "2") } else { ("", "500") };
                view! {
                    <label for=id.clone() class=format!("part {part}")>{*label}
                        <input type="text" id=id.clone() name=format!("values[{}.{part}]", f.name) value=value required=needed maxlength=max
                            placeholder=hint autocomplete=address_autocomplete(part)/>
                    </label>
                }
            }).collect_view()}
            <p class="field-error" id=error_id.clone() role="alert">{message}</p>
        </fieldset>
    }
}

/// What a browser may fill an address part from.
fn address_autocomplete(part: &str) -> &'static str {
    match part {
        "line1" => "address-line1",
        "line2" => "address-line2",
        "city" => "address-level2",
        "region" => "address-level1",
        "postal_code" => "postal-code",
        _ => "country",
    }
}

#[component]
fn Input(f: FieldInfo, value: String, error: Signal<Option<(String, String)>>) -> impl IntoView {
    let input_id = format!("field-{}", f.name);
    let error_id = format!("{input_id}-error");
    let hint_id = format!("{input_id}-hint");
    let name = format!("values[{}]", f.name);
    let field = f.name.clone();
    let message = move || error.get().filter(|(name, _)| *name == field).map(|(_, m)| m);
    let invalid = {
        let message = message.clone();
        move || message().is_some().then_some("true")
    };
    let required = f.required;
    let hint = match (&f.default, f.hint.is_empty()) {
        (Some(d), true) => format!("Empty: {d}."),
        (Some(d), false) => format!("{} Empty: {d}.", f.hint),
        (None, _) => f.hint.clone(),
    };
    let hint = match f.kind {
        FieldKind::DateTime => format!("{hint} In UTC.").trim().to_string(),
        FieldKind::Structured | FieldKind::Metadata => format!("{hint} As JSON.").trim().to_string(),
        FieldKind::List | FieldKind::References => format!("{hint} One per line.").trim().to_string(),
        _ => hint,
    };
    let described = if hint.is_empty() { error_id.clone() } else { format!("{hint_id} {error_id}") };
    let control = match f.kind.clone() {
        FieldKind::LongText | FieldKind::Structured | FieldKind::Metadata | FieldKind::List | FieldKind::References => view! {
            <textarea id=input_id.clone() name=name rows="4" required=required aria-describedby=described aria-invalid=invalid>{value}</textarea>
        }
        .into_any(),
        FieldKind::Choice | FieldKind::Currency => {
            let options = f.options.clone();
            view! {
                <select id=input_id.clone() name=name required=required aria-describedby=described aria-invalid=invalid>
                    <option value="" selected=value.is_empty()>{if required { "Choose…" } else { "—" }}</option>
                    {options.into_iter().map(|o| {
                        let selected = o == value;
                        view! { <option value=o.clone() selected=selected>{o.replace('_', " ")}</option> }
                    }).collect_view()}
                </select>
            }
            .into_any()
        }
        FieldKind::YesNo => view! {
            <select id=input_id.clone() name=name aria-describedby=described aria-invalid=invalid>
                <option value="" selected=value.is_empty()>"—"</option>
                <option value="true" selected=value == "true">"Yes"</option>
                <option value="false" selected=value == "false">"No"</option>
            </select>
        }
        .into_any(),
        FieldKind::Reference => {
            let target = f.target.clone().unwrap_or_default();
            view! { <Picker id=input_id.clone() name target value required described invalid=Signal::derive(invalid)/> }.into_any()
        }
        kind => {
            let (ty, mode, step, min, max, maxlength) = match kind {
                FieldKind::Text { max } => ("text", None, None, None, None, Some(max.to_string())),
                FieldKind::Email => ("email", None, None, None, None, None),
                FieldKind::Url => ("url", None, None, None, None, None),
                FieldKind::Integer { min, max } => ("number", None, Some("1".to_string()), Some(min.to_string()), Some(max.to_string()), None),
                FieldKind::Number { min, max } => ("number", None, Some("any".to_string()), Some(min.to_string()), Some(max.to_string()), None),
                FieldKind::Money => ("text", Some("decimal"), None, None, None, None),
                FieldKind::Date => ("date", None, None, None, None, None),
                FieldKind::DateTime => ("datetime-local", None, None, None, None, None),
                _ => ("text", None, None, None, None, None),
            };
            view! {
                <input type=ty id=input_id.clone() name=name value=value required=required inputmode=mode step=step min=min max=max
                    maxlength=maxlength aria-describedby=described aria-invalid=invalid/>
            }
            .into_any()
        }
    };
    view! {
        <div class="field" data-field=f.name.clone()>
            <label for=input_id>{f.label.clone()}{required.then(|| view! { <span class="req" aria-hidden="true">" *"</span> })}</label>
            {(!hint.is_empty()).then(|| view! { <p class="hint" id=hint_id>{hint}</p> })}
            {control}
            <p class="field-error" id=error_id role="alert">{message}</p>
        </div>
    }
}

/// A reference: the record's id, picked among the tenant's records of `target` by name
/// (a list the browser offers as one types, asked of the server for what was typed).
/// Before the WebAssembly loads it is a plain field for the id; the pages' links to a
/// new record fill their references in (`?unit_id=…`).
#[component]
fn Picker(
    id: String,
    name: String,
    target: String,
    value: String,
    required: bool,
    described: String,
    invalid: Signal<Option<&'static str>>,
) -> impl IntoView {
    let list_id = format!("{id}-choices");
    let search = RwSignal::new(String::new());
    // Asked for in the browser only: the page renders (and hydrates) without waiting for
    // the tenant's records, and every keystroke asks again.
    let choices = RwSignal::new(Vec::<Choice>::new());
    Effect::new(move |_| {
        let (t, s) = (target.clone(), search.get());
        leptos::task::spawn_local(async move {
            if let Ok(list) = record_choices(t, s).await {
                choices.set(list);
            }
        });
    });
    let on_input = move |ev: leptos::ev::Event| {
        let typed = event_target_value(&ev);
        // An id picked from the list is not a search.
        if typed.len() != 36 {
            search.set(typed);
        }
    };
    view! {
        <input type="text" id=id name=name value=value required=required list=list_id.clone() autocomplete="off" spellcheck="false"
            placeholder="Type a name, pick from the list" aria-describedby=described aria-invalid=move || invalid.get() on:input=on_input/>
        <datalist id=list_id>
            {move || choices.get().into_iter().map(|c| view! { <option value=c.id.clone() label=c.title.clone()>{c.title.clone()}</option> }).collect_view()}
        </datalist>
    }
}

/// A fresh form's values from the address (`/console/refunds/new?payment_id=…` starts a
/// refund of that payment).
fn prefill(fields: &[FieldInfo], query: &leptos_router::params::ParamsMap) -> Vec<(String, String)> {
    fields.iter().filter(|f| f.kind != FieldKind::Address).filter_map(|f| query.get(&f.name).map(|v| (f.name.clone(), v))).collect()
}

#[component]
pub fn NewRecordPage() -> impl IntoView {
    let params = use_params_map();
    let query = use_query_map();
    let name = move || params.read().get("collection").unwrap_or_default();
    let info = Resource::new(name, describe_collection);
    let create = ServerAction::<CreateRecord>::new();
    let error = Signal::derive(move || create.value().get().and_then(|r| r.err()).and_then(|e| field_error(&e)));
    let csrf = me().csrf;
    view! {
        <Transition fallback=|| view! { <p aria-busy="true">"Loading…"</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                    match info.await {
                        Ok(info) if info.can_create => {
                            let fields: Vec<FieldInfo> = info.fields.iter().filter(|f| f.access != FieldAccess::ReadOnly).cloned().collect();
                            let values = prefill(&fields, &query.read_untracked());
                            let back = format!("/console/{}", info.name);
                            view! {
                                <p><A href=back.clone()>{format!("← {}", info.label)}</A></p>
                                <h1 id="form-title">{format!("New {}", info.singular)}</h1>
                                <p class="muted small">"Fields marked * are required. Gable checks the rest as the API does."</p>
                                <ActionForm action=create attr:class="form record-form" attr:id="record-form">
                                    <input type="hidden" name="csrf" value=csrf/>
                                    <input type="hidden" name="collection" value=info.name.clone()/>
                                    <input type="hidden" name="once" value=info.once.clone()/>
                                    <FormProblem value=create.value() fields=fields.iter().map(|f| f.name.clone()).collect()/>
                                    <FormFields fields values error/>
                                    <div class="actions">
                                        <button type="submit" class="primary" id="save-record" disabled=move || create.pending().get()>
                                            {format!("Create {}", info.singular)}
                                        </button>
                                        <A href=back attr:class="button">"Cancel"</A>
                                    </div>
                                </ActionForm>
                            }.into_any()
                        }
                        Ok(info) => view! {
                            <h1>{format!("New {}", info.singular)}</h1>
                            <p class="form-error" role="alert">{format!("Your role does not allow creating {} (it needs the permission `{}:write`).", info.label.to_lowercase(), info.name)}</p>
                        }.into_any(),
                        Err(e) => view! { <p class="form-error" role="alert">{err_text(&e)}</p> }.into_any(),
                    }
                })
            }}
        </Transition>
    }
}

#[component]
pub fn EditRecordPage() -> impl IntoView {
    let params = use_params_map();
    let name = move || params.read().get("collection").unwrap_or_default();
    let id = move || params.read().get("id").unwrap_or_default();
    let record = Resource::new(move || (name(), id()), |(c, id)| get_record(c, id));
    let update = ServerAction::<UpdateRecord>::new();
    let error = Signal::derive(move || update.value().get().and_then(|r| r.err()).and_then(|e| field_error(&e)));
    let csrf = me().csrf;
    view! {
        <Transition fallback=|| view! { <p aria-busy="true">"Loading…"</p> }>
            {move || {
                let csrf = csrf.clone();
                Suspend::new(async move {
                    match record.await {
                        Ok(r) if r.info.can_edit => {
                            let fields: Vec<FieldInfo> = r.info.fields.iter().filter(|f| f.access == FieldAccess::Write).cloned().collect();
                            let back = format!("/console/{}/{}", r.info.name, r.id);
                            view! {
                                <p><A href=back.clone()>{format!("← {}", r.title)}</A></p>
                                <h1 id="form-title">{format!("Edit {}", r.title)}</h1>
                                <p class="muted small">"Only what you change is sent. Fields set when the record was made cannot be changed here."</p>
                                <ActionForm action=update attr:class="form record-form" attr:id="record-form">
                                    <input type="hidden" name="csrf" value=csrf/>
                                    <input type="hidden" name="collection" value=r.info.name.clone()/>
                                    <input type="hidden" name="id" value=r.id.clone()/>
                                    <input type="hidden" name="once" value=r.once.clone()/>
                                    <FormProblem value=update.value() fields=fields.iter().map(|f| f.name.clone()).collect()/>
                                    <FormFields fields values=r.form.clone() error/>
                                    <div class="actions">
                                        <button type="submit" class="primary" id="save-record" disabled=move || update.pending().get()>"Save changes"</button>
                                        <A href=back attr:class="button">"Cancel"</A>
                                    </div>
                                </ActionForm>
                            }.into_any()
                        }
                        Ok(r) => view! {
                            <h1>{format!("Edit {}", r.title)}</h1>
                            <p class="form-error" role="alert">{format!("Your role does not allow changing {} (it needs the permission `{}:write`).", r.info.label.to_lowercase(), r.info.name)}</p>
                        }.into_any(),
                        Err(e) => view! { <p class="form-error" role="alert">{err_text(&e)}</p> }.into_any(),
                    }
                })
            }}
        </Transition>
    }
}

/// A refusal that names no field of the form (a conflict, a missing permission), or one
/// the form does not show.
#[component]
pub(crate) fn FormProblem<T: Clone + Send + Sync + 'static>(
    value: MappedSignal<Option<Result<T, leptos::server_fn::ServerFnError>>>,
    fields: Vec<String>,
) -> impl IntoView {
    move || {
        value
            .get()
            .and_then(|r| r.err())
            .filter(|e| field_error(e).is_none_or(|(f, _)| !fields.contains(&f)))
            .map(|e| view! { <p class="form-error" role="alert" id="form-problem">{err_text(&e)}</p> })
    }
}
