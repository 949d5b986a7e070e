//! `rental-application`: the listing's summary, six steps (applicant, household, income
//! and employment, references, consent, review) and the submit, which creates and submits
//! the application (`POST /v1/flow/applications`).

use leptos::prelude::*;

use crate::fresh::IntoFresh;
use crate::json::Value;
use leptos::task::spawn_local;

use crate::api::{self, ApiError};
use crate::dates;
use crate::env;
use crate::money;
use crate::rules::{Keys, Rule};
use crate::ui::{self, rx, s, Alert, Field, Opts};

const STEPS: &[&str] = &["Applicant", "Household", "Income and employment", "References", "Consent", "Review"];
const REVIEW: usize = 5;
const MAX_REFERENCES: usize = 5;

const EMPLOYMENT: &[(&str, &str)] = &[
    ("employed", "Employed"),
    ("self_employed", "Self-employed"),
    ("student", "Student"),
    ("retired", "Retired"),
    ("unemployed", "Unemployed"),
    ("other", "Other"),
];

/// A person who can vouch for the applicant.
#[derive(Clone, Copy)]
struct Reference {
    key: u32,
    name: Field,
    relationship: Field,
    email: Field,
    phone: Field,
}

impl Reference {
    fn new(key: u32) -> Reference {
        let id = |what: &str| format!("reference-{key}-{what}");
        Reference {
            key,
            name: Field::dynamic(id("name"), "Name", Rule::Required),
            relationship: Field::dynamic(id("relationship"), "Relationship", Rule::Optional),
            email: Field::dynamic(id("email"), "Email", Rule::Email { required: false }),
            phone: Field::dynamic(id("phone"), "Phone", Rule::Phone),
        }
    }

    fn fields(self) -> [Field; 4] {
        [self.name, self.relationship, self.email, self.phone]
    }
}

/// Everything the applicant enters.
#[derive(Clone, Copy)]
struct Form {
    name: Field,
    email: Field,
    phone: Field,
    adults: Field,
    children: Field,
    pets: Field,
    move_in: Field,
    status: Field,
    employer: Field,
    job_title: Field,
    since: Field,
    income: Field,
    references: RwSignal<Vec<Reference>>,
    next_key: StoredValue<u32>,
    /// The form's reactive owner: a reference added on the References step must outlive
    /// that step's view (the Review reads it), so its signals are made here.
    owner: StoredValue<Option<Owner>>,
    screening: Field,
    terms: Field,
    signature: Field,
    decimals: u32,
}

impl Form {
    fn new(decimals: u32) -> Form {
        Form {
            name: Field::new("applicant-name", "Full name", Rule::Required, ""),
            email: Field::new("applicant-email", "Email", Rule::Email { required: true }, ""),
            phone: Field::new("applicant-phone", "Phone", Rule::Phone, ""),
            adults: Field::new("adults", "Adults", Rule::Count { min: 1, max: 20 }, "1"),
            children: Field::new("children", "Children", Rule::Count { min: 0, max: 20 }, "0"),
            pets: Field::new("pets", "Pets", Rule::Optional, ""),
            move_in: Field::new("desired-move-in", "Desired move-in date", Rule::Date { required: false }, ""),
            status: Field::new("employment-status", "Employment status", Rule::Required, "employed"),
            employer: Field::new("employer", "Employer", Rule::Optional, ""),
            job_title: Field::new("job-title", "Job title", Rule::Optional, ""),
            since: Field::new("employed-since", "Employed since", Rule::Date { required: false }, ""),
            income: Field::new("monthly-income", "Monthly income", Rule::Amount { decimals }, ""),
            references: RwSignal::new(vec![]),
            next_key: StoredValue::new(1),
            owner: StoredValue::new(Owner::current()),
            screening: Field::new("consent-screening", "I consent to a background and credit screening", Rule::Consent, ""),
            terms: Field::new("consent-terms", "I agree to the terms of this application", Rule::Consent, ""),
            signature: Field::new("consent-signature", "Signature (type your full name)", Rule::Required, ""),
            decimals,
        }
    }

    /// The fields of a step, in the order they are shown.
    fn step_fields(self, step: usize) -> Vec<Field> {
        match step {
            0 => vec![self.name, self.email, self.phone],
            1 => vec![self.adults, self.children, self.pets, self.move_in],
            2 => vec![self.status, self.employer, self.job_title, self.since, self.income],
            3 => self.references.get_untracked().iter().flat_map(|r| r.fields()).collect(),
            4 => vec![self.screening, self.terms, self.signature],
            _ => vec![],
        }
    }

    /// The field the API's `param` names, and its step.
    fn field_for(self, param: &str) -> Option<(usize, Field)> {
        let simple = match param {
            "applicants" | "applicants[0]" | "applicants[0].name" => Some((0, self.name)),
            "applicants[0].email" => Some((0, self.email)),
            "applicants[0].phone" => Some((0, self.phone)),
            "adults" => Some((1, self.adults)),
            "children" => Some((1, self.children)),
            "pets" => Some((1, self.pets)),
            "desired_move_in" => Some((1, self.move_in)),
            "employment_status" => Some((2, self.status)),
            "employer" => Some((2, self.employer)),
            "job_title" => Some((2, self.job_title)),
            "employed_since" => Some((2, self.since)),
            "monthly_income" | "currency" => Some((2, self.income)),
            "consent" | "consent.screening" => Some((4, self.screening)),
            "consent.terms" => Some((4, self.terms)),
            "consent.signature" => Some((4, self.signature)),
            _ => None,
        };
        if simple.is_some() {
            return simple;
        }
        // references[2].email
        let rest = param.strip_prefix("references[")?;
        let (index, tail) = rest.split_once(']')?;
        let r = *self.references.get_untracked().get(index.parse::<usize>().ok()?)?;
        let field = match tail.trim_start_matches('.') {
            "relationship" => r.relationship,
            "email" => r.email,
            "phone" => r.phone,
            _ => r.name,
        };
        Some((3, field))
    }

    fn add_reference(self) {
        let key = self.next_key.get_value();
        self.next_key.set_value(key + 1);
        let r = match self.owner.get_value() {
            Some(owner) => owner.with(|| Reference::new(key)),
            None => Reference::new(key),
        };
        self.references.update(|v| v.push(r));
        r.name.focus();
    }

    /// The body of `POST /v1/flow/applications`: empty optional fields left out.
    fn body(self) -> Value {
        fn put(m: &mut Value, key: &str, f: Field) {
            let v = f.get();
            if !v.is_empty() {
                m.insert(key, Value::String(v));
            }
        }
        let mut applicant = Value::Object(vec![]);
        put(&mut applicant, "name", self.name);
        put(&mut applicant, "email", self.email);
        put(&mut applicant, "phone", self.phone);
        let references: Vec<Value> = self
            .references
            .get_untracked()
            .iter()
            .map(|r| {
                let mut m = Value::Object(vec![]);
                put(&mut m, "name", r.name);
                put(&mut m, "relationship", r.relationship);
                put(&mut m, "email", r.email);
                put(&mut m, "phone", r.phone);
                m
            })
            .collect();
        let count = |f: Field| f.get().parse::<i64>().map(Value::from).unwrap_or(Value::Null);
        let income = money::parse_input(&self.income.get(), self.decimals).unwrap_or_else(|_| self.income.get());
        let mut body =
            Value::obj([("applicants", Value::Array(vec![applicant])), ("adults", count(self.adults)), ("children", count(self.children))]);
        put(&mut body, "pets", self.pets);
        put(&mut body, "desired_move_in", self.move_in);
        put(&mut body, "employment_status", self.status);
        put(&mut body, "employer", self.employer);
        put(&mut body, "job_title", self.job_title);
        put(&mut body, "employed_since", self.since);
        body.insert("monthly_income", Value::String(income));
        body.insert("references", Value::Array(references));
        body.insert(
            "consent",
            Value::obj([("screening", true.into()), ("terms", true.into()), ("signature", self.signature.get().into())]),
        );
        body
    }
}

/// The flow's view: the listing and the steps, or the submitted application.
pub fn view(data: RwSignal<Value>) -> AnyView {
    let d = data.get_untracked();
    let listing = d["listing"].clone();
    let currency = s(&listing, "currency");
    let form = Form::new(money::decimals_of(&s(&listing, "rent")));
    let done = RwSignal::new(d["completed"]["id"].as_str().map(str::to_string));
    let title = s(&listing, "title");
    view! {
        {move || match done.get() {
            Some(id) => done_view(&title, id).fresh(),
            None => form_view(form, data, done, listing_header(&d), currency.clone()).fresh(),
        }}
    }
    .fresh()
}

/// The listing the application is for.
fn listing_header(d: &Value) -> AnyView {
    let l = &d["listing"];
    let cur = s(l, "currency");
    let available = match s(l, "available_on") {
        a if a.is_empty() => String::new(),
        a if a <= s(d, "today") => "Now".to_string(),
        a => dates::long(&a),
    };
    let unit = &l["unit"];
    let unit_text =
        [(!s(unit, "number").is_empty()).then(|| format!("Unit {}", s(unit, "number"))), Some(ui::rooms(unit)).filter(|r| !r.is_empty())]
            .into_iter()
            .flatten()
            .collect::<Vec<_>>()
            .join(" · ");
    view! {
        <header class="summary">
            <h1 id="view-heading" tabindex="-1">
                {s(l, "title")}
            </h1>
            <p class="place">{ui::place(&d["property"])}</p>
            <dl class="facts">
                {ui::row("Rent", if s(l, "rent").is_empty() { String::new() } else { format!("{} per month", ui::amount(l, "rent", &cur)) })}
                {ui::row("Deposit", if s(l, "deposit").is_empty() { String::new() } else { ui::amount(l, "deposit", &cur) })}
                {ui::row("Available", available)}
                {ui::row("Home", unit_text)}
            </dl>
        </header>
    }
    .fresh()
}

fn form_view(form: Form, data: RwSignal<Value>, done: RwSignal<Option<String>>, header: AnyView, currency: String) -> impl IntoView {
    let step = RwSignal::new(0usize);
    let alert = RwSignal::new(None::<Alert>);
    let busy = RwSignal::new(false);
    let keys = StoredValue::new(Keys::default());
    let go = move |to: usize| {
        alert.set(None);
        step.set(to);
        env::focus_later("step-heading");
    };
    let fail = move |e: ApiError| {
        ui::report_fatal(&e);
        if e.code == "validation_failed" {
            if let Some((to, field)) = e.param.as_deref().and_then(|p| form.field_for(p)) {
                field.fail(&e.message);
                step.set(to);
                alert.set(Some(Alert::problems(field.problem().into_iter().collect())));
                field.focus();
                return;
            }
        }
        if e.status == 409 && e.code == "conflict" {
            // Already submitted (a second tab, a retry): show what was made.
            spawn_local(async move {
                if let Ok(d) = api::session().await {
                    if let Some(id) = d["completed"]["id"].as_str() {
                        done.set(Some(id.to_string()));
                        env::focus_later("view-heading");
                    }
                    data.set(d);
                }
            });
        }
        alert.set(Some(Alert::api(&e)));
    };
    let submit = move || {
        if busy.get_untracked() {
            return;
        }
        busy.set(true);
        alert.set(None);
        let body = form.body();
        spawn_local(async move {
            let result = api::create("applications", &body, keys).await;
            busy.set(false);
            match result {
                Ok(app) => {
                    let id = s(&app, "id");
                    env::completed("application", &id, &s(&app, "status"));
                    done.set(Some(id));
                    env::focus_later("view-heading");
                }
                Err(e) => fail(e),
            }
        });
    };
    let next = move || {
        let cur = step.get_untracked();
        if cur == REVIEW {
            submit();
        } else if ui::validate_all(&form.step_fields(cur), alert) {
            go(cur + 1);
        }
    };
    view! {
        {header}
        <form
            class="flow-form"
            novalidate
            aria-labelledby="step-heading"
            on:submit=move |ev| {
                ev.prevent_default();
                next();
            }
        >
            {ui::steps(STEPS, step)}
            <p class="required-note">"Fields marked * are required."</p>
            {ui::alert_view(alert, "form-alert")}
            {move || match step.get() {
                0 => applicant(form).fresh(),
                1 => household(form).fresh(),
                2 => income(form, currency.clone()).fresh(),
                3 => references(form).fresh(),
                4 => consent(form).fresh(),
                _ => review(form, currency.clone()).fresh(),
            }}
            <div class="actions">
                {move || {
                    (step.get() > 0)
                        .then(|| {
                            view! {
                                <button type="button" class="secondary" disabled=rx(move || busy.get()) on:click=move |_| go(step.get_untracked() - 1)>
                                    "Back"
                                </button>
                            }
                            .fresh()
                        })
                }}
                <button type="submit" class="primary" disabled=rx(move || busy.get()) aria-busy=rx(move || busy.get().then_some("true"))>
                    {rx(move || if step.get() == REVIEW { "Submit application" } else { "Continue" })}
                </button>
            </div>
            <p class="sending" hidden=rx(move || !busy.get())>
                "Sending your application…"
            </p>
        </form>
    }
}

fn heading(name: &'static str) -> impl IntoView {
    view! {
        <h2 id="step-heading" tabindex="-1">
            {name}
        </h2>
    }
}

fn applicant(f: Form) -> impl IntoView {
    view! {
        <section class="panel">
            {heading("Applicant")}
            {ui::input(f.name, Opts { autocomplete: Some("name"), ..Opts::default() })}
            {ui::input(f.email, Opts { kind: Some("email"), autocomplete: Some("email"), ..Opts::default() })}
            {ui::input(f.phone, Opts { kind: Some("tel"), autocomplete: Some("tel"), ..Opts::default() })}
        </section>
    }
}

fn household(f: Form) -> impl IntoView {
    let number = |min: &str, max: &str| Opts {
        kind: Some("number"),
        inputmode: Some("numeric"),
        min: Some(min.into()),
        max: Some(max.into()),
        ..Opts::default()
    };
    view! {
        <section class="panel">
            {heading("Household")}
            <div class="pair">
                {ui::input(f.adults, Opts { hint: Some("Yourself included.".into()), ..number("1", "20") })}
                {ui::input(f.children, number("0", "20"))}
            </div>
            {ui::input(f.pets, Opts { hint: Some("Kind and number, if any.".into()), ..Opts::default() })}
            {ui::input(f.move_in, Opts { kind: Some("date"), ..Opts::default() })}
        </section>
    }
}

fn income(f: Form, currency: String) -> impl IntoView {
    let hint = if currency.is_empty() { "Before tax.".to_string() } else { format!("Before tax, in {currency}.") };
    view! {
        <section class="panel">
            {heading("Income and employment")}
            {ui::select(f.status, EMPLOYMENT)}
            {ui::input(f.employer, Opts { autocomplete: Some("organization"), ..Opts::default() })}
            {ui::input(f.job_title, Opts { autocomplete: Some("organization-title"), ..Opts::default() })}
            {ui::input(f.since, Opts { kind: Some("date"), ..Opts::default() })}
            {ui::input(f.income, Opts { inputmode: Some("decimal"), hint: Some(hint), ..Opts::default() })}
        </section>
    }
}

fn references(f: Form) -> impl IntoView {
    let count = move || f.references.with(Vec::len);
    view! {
        <section class="panel">
            {heading("References")}
            <p class="hint">"Up to five people who can vouch for you, such as a past landlord or an employer. References are optional."</p>
            {move || {
                f.references
                    .get()
                    .into_iter()
                    .enumerate()
                    .map(|(i, r)| {
                    view! {
                        <fieldset class="reference">
                            <legend>{format!("Reference {}", i + 1)}</legend>
                            {ui::input(r.name, Opts { autocomplete: Some("off"), ..Opts::default() })}
                            {ui::input(r.relationship, Opts { hint: Some("For example: landlord, employer.".into()), ..Opts::default() })}
                            {ui::input(r.email, Opts { kind: Some("email"), autocomplete: Some("off"), ..Opts::default() })}
                            {ui::input(r.phone, Opts { kind: Some("tel"), autocomplete: Some("off"), ..Opts::default() })}
                            <button
                                type="button"
                                class="secondary small"
                                on:click=move |_| {
                                    f.references.update(|v| v.retain(|x| x.key != r.key));
                                    env::focus_later("add-reference");
                                }
                            >
                                "Remove"
                            </button>
                        </fieldset>
                    }
                })
                    .collect_view()
                    .fresh()
            }}
            <button type="button" class="secondary" id="add-reference" disabled=rx(move || count() >= MAX_REFERENCES) on:click=move |_| f.add_reference()>
                "Add a reference"
            </button>
            <p class="hint" hidden=rx(move || count() < MAX_REFERENCES)>
                "You have added the most references an application takes."
            </p>
        </section>
    }
}

fn consent(f: Form) -> impl IntoView {
    view! {
        <section class="panel">
            {heading("Consent")}
            <p>
                "The property manager checks your background and credit before deciding on your application. "
                "Your details are used for this application only."
            </p>
            {ui::checkbox(f.screening)}
            {ui::checkbox(f.terms)}
            {ui::input(f.signature, Opts { autocomplete: Some("name"), hint: Some("Typing your name signs this application.".into()), ..Opts::default() })}
        </section>
    }
}

fn review(f: Form, currency: String) -> impl IntoView {
    let v = |field: Field| field.get();
    let date = |field: Field| dates::long(&field.get());
    let status = EMPLOYMENT.iter().find(|(k, _)| *k == f.status.get()).map(|(_, l)| l.to_string()).unwrap_or_default();
    let income = money::parse_input(&f.income.get(), f.decimals)
        .map(|a| money::display(&money::pad(&a, f.decimals), &currency))
        .unwrap_or_else(|_| f.income.get());
    let refs = f.references.get_untracked();
    view! {
        <section class="panel">
            {heading("Review")}
            <p>"Check your application before you submit it. Use Back to change anything."</p>
            <h3>"Applicant"</h3>
            <dl class="facts">{ui::row("Full name", v(f.name))} {ui::row("Email", v(f.email))} {ui::row("Phone", v(f.phone))}</dl>
            <h3>"Household"</h3>
            <dl class="facts">
                {ui::row("Adults", v(f.adults))} {ui::row("Children", v(f.children))} {ui::row("Pets", v(f.pets))}
                {ui::row("Desired move-in date", date(f.move_in))}
            </dl>
            <h3>"Income and employment"</h3>
            <dl class="facts">
                {ui::row("Employment status", status)} {ui::row("Employer", v(f.employer))} {ui::row("Job title", v(f.job_title))}
                {ui::row("Employed since", date(f.since))} {ui::row("Monthly income", income)}
            </dl>
            <h3>"References"</h3>
            {if refs.is_empty() {
                view! { <p>"None"</p> }.fresh()
            } else {
                view! {
                    <ul class="plain">
                        {refs
                            .iter()
                            .map(|r| {
                                let parts: Vec<String> = [r.name, r.relationship, r.email, r.phone].iter().map(|x| x.get()).filter(|x| !x.is_empty()).collect();
                                view! { <li>{parts.join(" · ")}</li> }
                            })
                            .collect_view()}
                    </ul>
                }
                    .fresh()
            }}
            <h3>"Consent"</h3>
            <dl class="facts">
                {ui::row("Background and credit screening", "Consented".to_string())} {ui::row("Terms", "Agreed".to_string())}
                {ui::row("Signature", v(f.signature))}
            </dl>
        </section>
    }
}

fn done_view(title: &str, id: String) -> impl IntoView {
    let for_what = (!title.is_empty()).then(|| format!("Your application for {title} was sent to the property manager."));
    view! {
        <section class="done">
            <h1 id="view-heading" tabindex="-1">
                "Application submitted"
            </h1>
            <p>{for_what}</p>
            <p>"They will contact you by email about the next steps."</p>
            <dl class="facts">{ui::row("Application id", id)}</dl>
        </section>
    }
}
