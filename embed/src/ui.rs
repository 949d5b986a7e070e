//! Pieces the four flows share: form fields with their labels, hints and inline errors,
//! the alert of a step's problems, the step indicator, and reading the API's JSON.

use std::sync::Arc;

use leptos::prelude::*;

use crate::fresh::IntoFresh;
use crate::json::Value;

use crate::api::ApiError;
use crate::rules::{self, Rule};
use crate::{env, money};

/// A reactive value for an attribute or a text: the closure behind an `Arc<dyn Fn>`, so the
/// renderer's code is made once per value type rather than once per closure (smaller WASM).
pub type Rx<T> = Arc<dyn Fn() -> T + Send + Sync>;

pub fn rx<T: 'static>(f: impl Fn() -> T + Send + Sync + 'static) -> Rx<T> {
    Arc::new(f)
}

// ---- JSON ------------------------------------------------------------------------------

/// A field of an API object as text ("" when absent; numbers as written).
pub fn s(v: &Value, key: &str) -> String {
    match &v[key] {
        Value::String(t) => t.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

/// An amount of an API object with its currency: "USD 1,450.00".
pub fn amount(v: &Value, key: &str, currency: &str) -> String {
    money::display(&s(v, key), currency)
}

/// "2 bedrooms, 1 bathroom" (a studio has none).
pub fn rooms(unit: &Value) -> String {
    let count = |key: &str, one: &str, many: &str| {
        // 1.0 and 1.50 as people write them: 1 and 1.5.
        let mut n = s(unit, key);
        if n.contains('.') {
            n = n.trim_end_matches('0').trim_end_matches('.').to_string();
        }
        match n.as_str() {
            "" => None,
            "1" => Some(format!("1 {one}")),
            _ => Some(format!("{n} {many}")),
        }
    };
    let beds = if s(unit, "bedrooms").trim_end_matches(['0', '.']).is_empty() && !s(unit, "bedrooms").is_empty() {
        Some("Studio".to_string())
    } else {
        count("bedrooms", "bedroom", "bedrooms")
    };
    [beds, count("bathrooms", "bathroom", "bathrooms")].into_iter().flatten().collect::<Vec<_>>().join(", ")
}

/// "Maple Court, Springfield".
pub fn place(property: &Value) -> String {
    [s(property, "name"), s(&property["address"], "city")].into_iter().filter(|p| !p.is_empty()).collect::<Vec<_>>().join(", ")
}

// ---- fields ----------------------------------------------------------------------------

/// A form field: its value, its rule and the error shown under it. Copy, so views and
/// handlers can hold it freely.
#[derive(Clone, Copy)]
pub struct Field {
    pub id: &'static str,
    pub label: &'static str,
    pub rule: Rule,
    pub value: RwSignal<String>,
    pub error: RwSignal<Option<String>>,
}

impl Field {
    pub fn new(id: &'static str, label: &'static str, rule: Rule, initial: &str) -> Field {
        Field { id, label, rule, value: RwSignal::new(initial.to_string()), error: RwSignal::new(None) }
    }

    /// A field whose id is made at run time (a reference's fields). The id lives as long
    /// as the page: a few bytes per reference added.
    pub fn dynamic(id: String, label: &'static str, rule: Rule) -> Field {
        Field::new(Box::leak(id.into_boxed_str()), label, rule, "")
    }

    /// The value, trimmed.
    pub fn get(self) -> String {
        self.value.with_untracked(|v| v.trim().to_string())
    }

    pub fn set(self, v: &str) {
        self.value.set(v.to_string());
        self.error.set(None);
    }

    /// Checks the value, showing the error (or clearing it); whether it is acceptable.
    pub fn validate(self) -> bool {
        let r = self.value.with_untracked(|v| rules::check(self.rule, v));
        let ok = r.is_ok();
        self.error.set(r.err());
        ok
    }

    /// Shows an error from the server (`param` named this field).
    pub fn fail(self, message: &str) {
        self.error.set(Some(server_message(self.label, message)));
    }

    pub fn focus(self) {
        env::focus_later(self.id);
    }

    /// The line of an alert's list for this field's error.
    pub fn problem(self) -> Option<String> {
        self.error.get_untracked().map(|e| format!("{}: {e}", self.label))
    }
}

/// The API's validation messages are fragments ("is required: …"): with the field's
/// label they read as a sentence.
pub fn server_message(label: &str, message: &str) -> String {
    let starts_lower = message.bytes().next().is_some_and(|c| c.is_ascii_lowercase());
    if starts_lower {
        format!("{label} {message}")
    } else {
        message.to_string()
    }
}

/// Checks the fields, in order; the alert lists the problems and focus goes to the first.
pub fn validate_all(fields: &[Field], alert: RwSignal<Option<Alert>>) -> bool {
    let bad: Vec<Field> = fields.iter().copied().filter(|f| !f.validate()).collect();
    match bad.first() {
        None => {
            alert.set(None);
            true
        }
        Some(first) => {
            alert.set(Some(Alert::problems(bad.iter().filter_map(|f| f.problem()).collect())));
            first.focus();
            false
        }
    }
}

/// What an `<input>` is, beside its field.
#[derive(Default)]
pub struct Opts {
    pub kind: Option<&'static str>,
    pub autocomplete: Option<&'static str>,
    pub inputmode: Option<&'static str>,
    pub hint: Option<String>,
    pub min: Option<String>,
    pub max: Option<String>,
}

fn label_view(f: Field) -> impl IntoView {
    view! {
        <label for=f.id>
            {f.label}
            {f.rule.required().then(|| view! { <span class="req" aria-hidden="true">" *"</span> })}
        </label>
    }
}

fn hint_id(f: Field) -> String {
    format!("{}-hint", f.id)
}

fn error_id(f: Field) -> String {
    format!("{}-error", f.id)
}

/// `aria-describedby`: the hint, and the error while there is one.
fn described(f: Field, has_hint: bool) -> Rx<Option<String>> {
    rx(move || {
        let mut ids = vec![];
        if has_hint {
            ids.push(hint_id(f));
        }
        if f.error.with(Option::is_some) {
            ids.push(error_id(f));
        }
        (!ids.is_empty()).then(|| ids.join(" "))
    })
}

fn invalid(f: Field) -> Rx<Option<&'static str>> {
    rx(move || f.error.with(Option::is_some).then_some("true"))
}

fn error_view(f: Field) -> impl IntoView {
    view! {
        <p class="field-error" id=error_id(f) hidden=rx(move || f.error.with(Option::is_none))>
            {rx(move || f.error.get())}
        </p>
    }
}

fn hint_view(f: Field, hint: Option<String>) -> impl IntoView {
    hint.map(|h| view! { <p class="hint" id=hint_id(f)>{h}</p> })
}

/// Updates the value as it is typed; re-checks it while it shows an error.
fn on_input(f: Field, v: String) {
    f.value.set(v);
    if f.error.with_untracked(Option::is_some) {
        f.validate();
    }
}

/// Checks a field when focus leaves it, once something was typed in it.
fn on_blur(f: Field, touched: StoredValue<bool>) {
    if touched.get_value() || f.error.with_untracked(Option::is_some) {
        f.validate();
    }
}

/// A labelled `<input>` with its hint and error.
pub fn input(f: Field, o: Opts) -> AnyView {
    let has_hint = o.hint.is_some();
    let touched = StoredValue::new(false);
    view! {
        <div class="field">
            {label_view(f)}
            {hint_view(f, o.hint)}
            <input
                id=f.id
                name=f.id
                type=o.kind.unwrap_or("text")
                autocomplete=o.autocomplete
                inputmode=o.inputmode
                min=o.min
                max=o.max
                required=f.rule.required()
                aria-invalid=invalid(f)
                aria-describedby=described(f, has_hint)
                prop:value=rx(move || f.value.get())
                on:input=move |ev| {
                    touched.set_value(true);
                    on_input(f, event_target_value(&ev));
                }
                on:change=move |ev| on_input(f, event_target_value(&ev))
                on:blur=move |_| on_blur(f, touched)
            />
            {error_view(f)}
        </div>
    }
    .fresh()
}

/// A labelled `<textarea>`.
pub fn textarea(f: Field, hint: Option<String>) -> AnyView {
    let has_hint = hint.is_some();
    let touched = StoredValue::new(false);
    view! {
        <div class="field">
            {label_view(f)}
            {hint_view(f, hint)}
            <textarea
                id=f.id
                name=f.id
                rows="4"
                required=f.rule.required()
                aria-invalid=invalid(f)
                aria-describedby=described(f, has_hint)
                prop:value=rx(move || f.value.get())
                on:input=move |ev| {
                    touched.set_value(true);
                    on_input(f, event_target_value(&ev));
                }
                on:blur=move |_| on_blur(f, touched)
            ></textarea>
            {error_view(f)}
        </div>
    }
    .fresh()
}

/// A labelled `<select>` of `(value, label)` options.
pub fn select(f: Field, options: &'static [(&'static str, &'static str)]) -> AnyView {
    view! {
        <div class="field">
            {label_view(f)}
            <select
                id=f.id
                name=f.id
                required=f.rule.required()
                aria-invalid=invalid(f)
                aria-describedby=described(f, false)
                on:change=move |ev| on_input(f, event_target_value(&ev))
            >
                {options
                    .iter()
                    .map(|(v, l)| view! { <option value=*v selected=rx(move || f.value.with(|x| x == v))>{*l}</option> })
                    .collect_view()}
            </select>
            {error_view(f)}
        </div>
    }
    .fresh()
}

/// A checkbox with its label after it; checked is a non-empty value.
pub fn checkbox(f: Field) -> AnyView {
    view! {
        <div class="field check">
            <input
                type="checkbox"
                id=f.id
                name=f.id
                required=f.rule.required()
                aria-invalid=invalid(f)
                aria-describedby=described(f, false)
                prop:checked=rx(move || f.value.with(|v| !v.is_empty()))
                on:change=move |ev| on_input(f, if event_target_checked(&ev) { "yes".into() } else { String::new() })
            />
            {label_view(f)}
            {error_view(f)}
        </div>
    }
    .fresh()
}

// ---- alerts, steps, lists --------------------------------------------------------------

/// What a `role="alert"` box says: a title and, for a step's problems, a list.
#[derive(Clone, Debug, PartialEq)]
pub struct Alert {
    pub title: String,
    pub items: Vec<String>,
}

impl Alert {
    pub fn message(text: impl Into<String>) -> Alert {
        Alert { title: text.into(), items: vec![] }
    }

    pub fn problems(items: Vec<String>) -> Alert {
        let title = if items.len() == 1 { "There is a problem:" } else { "There are some problems:" };
        Alert { title: title.into(), items }
    }

    /// An error of the API, as the page says it.
    pub fn api(e: &ApiError) -> Alert {
        if e.is_fatal() {
            return Alert::message(rules::cannot_show(&e.code, &e.message));
        }
        let text = if e.message.is_empty() { "Something went wrong. Try again in a moment.".to_string() } else { upper_first(&e.message) };
        Alert::message(text)
    }
}

/// The API's messages start in lower case (they are fragments); a page's sentence does not.
pub fn upper_first(s: &str) -> String {
    let mut out = s.to_string();
    if let Some(first) = out.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    out
}

/// The alert box, in the page only while there is something to say (so a page never has
/// an empty alert beside a real one).
pub fn alert_view(alert: RwSignal<Option<Alert>>, id: &'static str) -> impl IntoView {
    move || {
        alert.get().map(|a| {
            view! {
                <div class="alert" role="alert" id=id>
                    <p class="alert-title">{a.title}</p>
                    {(!a.items.is_empty()).then(|| view! { <ul>{a.items.into_iter().map(|i| view! { <li>{i}</li> }).collect_view()}</ul> })}
                </div>
            }
            .fresh()
        })
    }
}

/// A write's error that ends the flow (the token expired) is also told to the host page.
pub fn report_fatal(e: &ApiError) {
    if e.is_fatal() {
        env::error(&e.code, &e.message);
    }
}

/// The step indicator: an ordered list, the current step marked `aria-current="step"`.
pub fn steps(names: &'static [&'static str], current: RwSignal<usize>) -> impl IntoView {
    view! {
        <ol class="steps" aria-label="Steps">
            {names
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    view! {
                        <li
                            aria-current=rx(move || (current.get() == i).then_some("step"))
                            class=rx(move || {
                                let c = current.get();
                                if c == i {
                                    "step current"
                                } else if c > i {
                                    "step done"
                                } else {
                                    "step"
                                }
                            })
                        >
                            <span class="step-number" aria-hidden="true">
                                {i + 1}
                            </span>
                            <span class="step-name">{*name}</span>
                        </li>
                    }
                })
                .collect_view()}
        </ol>
    }
}

/// One row of a description list; nothing when the value is empty.
pub fn row(term: &'static str, value: String) -> impl IntoView {
    (!value.is_empty()).then(|| {
        view! {
            <div class="row">
                <dt>{term}</dt>
                <dd>{value}</dd>
            </div>
        }
    })
}

/// A status as a badge ("In progress").
pub fn badge(status: &str) -> impl IntoView {
    let class = format!("badge badge-{}", status.replace('_', "-"));
    view! { <span class=class>{rules::humanize(status)}</span> }
}
