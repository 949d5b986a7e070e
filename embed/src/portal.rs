//! `tenant-portal`: the resident's home: the lease, the balance, invoices (each open one
//! payable as in the payment flow), payments, and maintenance requests (work orders) with
//! a form to send one (`POST /v1/flow/workorders`).

use leptos::prelude::*;

use crate::fresh::IntoFresh;
use crate::json::Value;
use leptos::task::spawn_local;

use crate::api::{self, ApiError};
use crate::rules::{self, Keys, Rule};
use crate::ui::{self, rx, s, Alert, Field, Opts};
use crate::{dates, env, money, payment};

/// The work orders' `category` and `priority` (server/src/domain/collections.rs).
const CATEGORIES: &[(&str, &str)] = &[
    ("plumbing", "Plumbing"),
    ("electrical", "Electrical"),
    ("hvac", "Heating and cooling"),
    ("appliance", "Appliance"),
    ("structural", "Structural"),
    ("pest", "Pests"),
    ("cleaning", "Cleaning"),
    ("other", "Other"),
];
const PRIORITIES: &[(&str, &str)] = &[("low", "Low"), ("normal", "Normal"), ("high", "High"), ("emergency", "Emergency")];

#[derive(Clone, Copy)]
struct Request {
    title: Field,
    description: Field,
    category: Field,
    priority: Field,
}

pub fn view(data: RwSignal<Value>) -> AnyView {
    let paying = RwSignal::new(None::<String>);
    let req = Request {
        title: Field::new("request-title", "Title", Rule::Required, ""),
        description: Field::new("request-description", "Description", Rule::LongText, ""),
        category: Field::new("request-category", "Category", Rule::Required, "other"),
        priority: Field::new("request-priority", "Priority", Rule::Required, "normal"),
    };
    let alert = RwSignal::new(None::<Alert>);
    let sent = RwSignal::new(None::<String>);
    let busy = RwSignal::new(false);
    let keys = StoredValue::new(Keys::default());
    let back = Callback::new(move |_: ()| {
        paying.set(None);
        env::focus_later("view-heading");
    });
    view! {
        {move || match paying.get() {
            Some(id) => {
                let invoice = Signal::derive(move || {
                    data.with(|d| d["invoices"].as_array().and_then(|a| a.iter().find(|i| i["id"].as_str() == Some(id.as_str())).cloned()).unwrap_or(Value::Null))
                });
                payment::view(data, invoice, Some(back))
            }
            None => home(data, paying, req, alert, sent, busy, keys).fresh(),
        }}
    }
    .fresh()
}

fn home(
    data: RwSignal<Value>,
    paying: RwSignal<Option<String>>,
    req: Request,
    alert: RwSignal<Option<Alert>>,
    sent: RwSignal<Option<String>>,
    busy: RwSignal<bool>,
    keys: StoredValue<Keys>,
) -> impl IntoView {
    let d = data.get_untracked();
    let unit = s(&d["unit"], "number");
    let place = ui::place(&d["property"]);
    let residents: Vec<String> =
        d["residents"].as_array().map(|a| a.iter().map(|r| s(r, "name")).filter(|n| !n.is_empty()).collect()).unwrap_or_default();
    let subtitle = [(!unit.is_empty()).then(|| format!("Unit {unit}")), Some(place).filter(|p| !p.is_empty())]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");

    let fail = move |e: ApiError| {
        ui::report_fatal(&e);
        let field = match e.param.as_deref() {
            Some("title") => Some(req.title),
            Some("description") => Some(req.description),
            Some("category") => Some(req.category),
            Some("priority") => Some(req.priority),
            _ => None,
        };
        match field.filter(|_| e.code == "validation_failed") {
            Some(f) => {
                f.fail(&e.message);
                alert.set(Some(Alert::problems(f.problem().into_iter().collect())));
                f.focus();
            }
            None => alert.set(Some(Alert::api(&e))),
        }
    };
    let send = move || {
        if busy.get_untracked() {
            return;
        }
        sent.set(None);
        if !ui::validate_all(&[req.title, req.description, req.category, req.priority], alert) {
            return;
        }
        let mut body = Value::Object(vec![]);
        for (k, f) in [("title", req.title), ("description", req.description), ("category", req.category), ("priority", req.priority)] {
            if !f.get().is_empty() {
                body.insert(k, Value::String(f.get()));
            }
        }
        busy.set(true);
        spawn_local(async move {
            let r = api::create("workorders", &body, keys).await;
            busy.set(false);
            match r {
                Ok(w) => {
                    env::completed("workorder", &s(&w, "id"), &s(&w, "status"));
                    // Shown at once; the refresh brings the list as Gable has it.
                    data.update(|d| {
                        if let Some(list) = d["workorders"].as_array_mut() {
                            list.insert(0, w.clone());
                        }
                    });
                    req.title.set("");
                    req.description.set("");
                    req.category.set("other");
                    req.priority.set("normal");
                    sent.set(Some("Request sent".into()));
                    api::refresh(data);
                }
                Err(e) => fail(e),
            }
        });
    };

    view! {
        <header class="summary">
            <h1 id="view-heading" tabindex="-1">
                "Your home"
            </h1>
            {(!subtitle.is_empty()).then(|| view! { <p class="place">{subtitle}</p> })}
            {(!residents.is_empty()).then(|| view! { <p class="residents">{format!("Residents: {}", residents.join(", "))}</p> })}
        </header>
        <section aria-labelledby="lease-heading">
            <h2 id="lease-heading">"Lease"</h2>
            {move || lease(&data.get()).fresh()}
        </section>
        <section aria-labelledby="balance-heading">
            <h2 id="balance-heading">"Balance"</h2>
            {move || {
                data.with(|d| {
                    let b = &d["balance"];
                    let amount = s(b, "amount");
                    let due = money::is_positive(&amount);
                    view! {
                        <p class="balance">{money::display(&amount, &s(b, "currency"))}</p>
                        <p class="hint">{if due { "Open invoices, not yet paid." } else { "Nothing is due." }}</p>
                    }
                    .fresh()
                })
            }}
        </section>
        <section aria-labelledby="invoices-heading">
            <h2 id="invoices-heading">"Invoices"</h2>
            {move || invoices(&data.get(), paying)}
        </section>
        <section aria-labelledby="payments-heading">
            <h2 id="payments-heading">"Payments"</h2>
            {move || payments(&data.get())}
        </section>
        <section aria-labelledby="requests-heading">
            <h2 id="requests-heading">"Maintenance requests"</h2>
            {move || workorders(&data.get())}
            <form
                class="flow-form request"
                novalidate
                aria-labelledby="request-heading"
                on:submit=move |ev| {
                    ev.prevent_default();
                    send();
                }
            >
                <h3 id="request-heading">"Ask for a repair"</h3>
                <p class="required-note">"Fields marked * are required."</p>
                {ui::input(req.title, Opts { hint: Some("For example: The kitchen tap drips.".into()), ..Opts::default() })}
                {ui::textarea(req.description, Some("What happened, where, and since when.".into()))}
                <div class="pair">{ui::select(req.category, CATEGORIES)} {ui::select(req.priority, PRIORITIES)}</div>
                {ui::alert_view(alert, "request-alert")}
                <div class="actions">
                    <button type="submit" class="primary" disabled=rx(move || busy.get()) aria-busy=rx(move || busy.get().then_some("true"))>
                        "Send request"
                    </button>
                </div>
                <p class="sent" role="status">
                    {rx(move || sent.get())}
                </p>
            </form>
        </section>
    }
}

fn lease(d: &Value) -> impl IntoView {
    let l = &d["lease"];
    let cur = s(l, "currency");
    let term = match (s(l, "start_date"), s(l, "end_date")) {
        (a, b) if b.is_empty() => format!("From {}, month to month", dates::long(&a)),
        (a, b) => format!("{} to {}", dates::long(&a), dates::long(&b)),
    };
    let rent = match s(l, "rent_due_day") {
        day if day.is_empty() => format!("{} per month", ui::amount(l, "rent", &cur)),
        day => format!("{} per month, due on day {day}", ui::amount(l, "rent", &cur)),
    };
    view! {
        <dl class="facts">
            {ui::row("Unit", s(&d["unit"], "number"))} {ui::row("Property", ui::place(&d["property"]))} {ui::row("Term", term)}
            {ui::row("Rent", rent)} {ui::row("Deposit", if s(l, "deposit").is_empty() { String::new() } else { ui::amount(l, "deposit", &cur) })}
            {ui::row("Status", rules::humanize(&s(l, "status")))}
        </dl>
    }
}

fn invoices(d: &Value, paying: RwSignal<Option<String>>) -> AnyView {
    let list = d["invoices"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return view! { <p>"No invoices yet."</p> }.fresh();
    }
    view! {
        <ul class="items">
            {list
                .into_iter()
                .map(|inv| {
                    let cur = s(&inv, "currency");
                    let due = dates::long(&s(&inv, "due_date"));
                    let id = s(&inv, "id");
                    let payable = s(&inv, "status") == "open" && money::is_positive(&s(&inv, "amount_remaining"));
                    let what: Vec<String> = inv["lines"].as_array().map(|a| a.iter().map(|l| s(l, "description")).filter(|x| !x.is_empty()).collect()).unwrap_or_default();
                    view! {
                        <li class="item">
                            <div class="item-head">
                                <span class="item-title">{format!("Due {due}")}</span>
                                {ui::badge(&s(&inv, "status"))}
                                {inv["overdue"].as_bool().unwrap_or(false).then(|| view! { <span class="badge badge-overdue">"Overdue"</span> })}
                            </div>
                            {(!what.is_empty()).then(|| view! { <p class="item-for">{what.join(", ")}</p> })}
                            <p class="item-amounts">
                                {format!("{} due", ui::amount(&inv, "amount_due", &cur))}
                                {payable.then(|| format!(" · {} remaining", ui::amount(&inv, "amount_remaining", &cur)))}
                            </p>
                            {payable
                                .then(|| {
                                    view! {
                                        <button
                                            type="button"
                                            class="primary small"
                                            on:click=move |_| {
                                                paying.set(Some(id.clone()));
                                                env::focus_later("view-heading");
                                            }
                                        >
                                            {format!("Pay {}", ui::amount(&inv, "amount_remaining", &cur))}
                                            <span class="sr-only">{format!(", the invoice due {due}")}</span>
                                        </button>
                                    }
                                })}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .fresh()
}

fn payments(d: &Value) -> AnyView {
    let list = d["payments"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return view! { <p>"No payments yet."</p> }.fresh();
    }
    view! {
        <ul class="items">
            {list
                .into_iter()
                .map(|p| {
                    let failure = s(&p, "failure_message");
                    view! {
                        <li class="item">
                            <div class="item-head">
                                <span class="item-title">{ui::amount(&p, "amount", &s(&p, "currency"))}</span>
                                {ui::badge(&s(&p, "status"))}
                            </div>
                            <p class="item-for">{dates::long(&s(&p, "created_at"))}</p>
                            {(!failure.is_empty()).then(|| view! { <p class="item-for">{ui::upper_first(&failure)}</p> })}
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .fresh()
}

fn workorders(d: &Value) -> AnyView {
    let list = d["workorders"].as_array().cloned().unwrap_or_default();
    if list.is_empty() {
        return view! { <p>"No requests yet."</p> }.fresh();
    }
    let label = |table: &[(&str, &'static str)], v: &str| {
        table.iter().find(|(k, _)| *k == v).map_or_else(|| rules::humanize(v), |(_, l)| l.to_string())
    };
    view! {
        <ul class="items">
            {list
                .into_iter()
                .map(|w| {
                    let meta = [label(CATEGORIES, &s(&w, "category")), format!("{} priority", label(PRIORITIES, &s(&w, "priority"))), dates::long(&s(&w, "created_at"))]
                        .into_iter()
                        .filter(|x| !x.trim().is_empty() && x != " priority")
                        .collect::<Vec<_>>()
                        .join(" · ");
                    view! {
                        <li class="item">
                            <div class="item-head">
                                <span class="item-title">{s(&w, "title")}</span>
                                {ui::badge(&s(&w, "status"))}
                            </div>
                            <p class="item-for">{meta}</p>
                        </li>
                    }
                })
                .collect_view()}
        </ul>
    }
    .fresh()
}
