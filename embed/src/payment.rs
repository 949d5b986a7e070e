//! `payment` (and paying an invoice in the tenant portal): the invoice, what is due and
//! what it is for; in the sandbox a scenario and the pay button (`POST /v1/flow/payments`),
//! in live mode the property's payment instructions.

use leptos::prelude::*;

use crate::fresh::IntoFresh;
use crate::json::Value;
use leptos::task::spawn_local;

use crate::api::{self, ApiError};
use crate::rules::Keys;
use crate::ui::{self, rx, s, Alert};
use crate::{dates, env, money};

const SCENARIOS: &[(&str, &str)] = &[("succeeded", "Succeeds"), ("failed", "Is declined"), ("reversed", "Succeeds, then is reversed")];

/// The payment flow: its token's invoice.
pub fn flow(data: RwSignal<Value>) -> AnyView {
    let invoice = Signal::derive(move || data.with(|d| d["invoice"].clone()));
    view(data, invoice, None)
}

/// The invoice and how to pay it. `back` (the tenant portal) returns to the portal's home;
/// the portal's payments name their invoice.
pub fn view(data: RwSignal<Value>, invoice: Signal<Value>, back: Option<Callback<()>>) -> AnyView {
    let scenario = RwSignal::new("succeeded".to_string());
    let busy = RwSignal::new(false);
    let result = RwSignal::new(None::<Value>);
    let alert = RwSignal::new(None::<Alert>);
    let keys = StoredValue::new(Keys::default());

    let fail = move |e: ApiError| {
        ui::report_fatal(&e);
        alert.set(Some(Alert::api(&e)));
        if e.status == 409 {
            // Paid meanwhile (another tab): show the invoice as it is now.
            api::refresh(data);
        }
    };
    let pay = move || {
        if busy.get_untracked() {
            return;
        }
        let mut body = Value::obj([("scenario", scenario.get_untracked().into())]);
        if back.is_some() {
            body["invoice_id"] = Value::String(invoice.with_untracked(|i| s(i, "id")));
        }
        busy.set(true);
        alert.set(None);
        spawn_local(async move {
            let r = api::create("payments", &body, keys).await;
            busy.set(false);
            match r {
                Ok(p) => {
                    let (id, status) = (s(&p, "id"), s(&p, "status"));
                    match status.as_str() {
                        "failed" => {
                            let code = Some(s(&p, "failure_code")).filter(|c| !c.is_empty()).unwrap_or_else(|| "card_declined".into());
                            let message =
                                Some(s(&p, "failure_message")).filter(|c| !c.is_empty()).unwrap_or_else(|| "The card was declined.".into());
                            env::error(&code, &message);
                        }
                        _ => env::completed("payment", &id, &status),
                    }
                    result.set(Some(p));
                    env::focus_later("view-heading");
                    api::refresh(data);
                }
                Err(e) => fail(e),
            }
        });
    };
    let again = move || {
        // A new attempt: the key of the declined one is spent (rules::Keys).
        result.set(None);
        alert.set(None);
        env::focus_later("view-heading");
    };
    let back_button = move || {
        back.map(|cb| {
            view! {
                <button type="button" class="secondary" on:click=move |_| cb.run(())>
                    "Back to your home"
                </button>
            }
            .fresh()
        })
    };
    view! {
        {move || match result.get() {
            Some(p) => outcome(p, again).fresh(),
            None => invoice_view(data, invoice, scenario, busy, alert, pay).fresh(),
        }}
        <div class="actions">{back_button}</div>
    }
    .fresh()
}

fn invoice_view(
    data: RwSignal<Value>,
    invoice: Signal<Value>,
    scenario: RwSignal<String>,
    busy: RwSignal<bool>,
    alert: RwSignal<Option<Alert>>,
    pay: impl Fn() + Copy + Send + Sync + 'static,
) -> impl IntoView {
    move || {
        let inv = invoice.get();
        let d = data.get_untracked();
        let cur = s(&inv, "currency");
        let status = s(&inv, "status");
        let remaining = s(&inv, "amount_remaining");
        let due = dates::long(&s(&inv, "due_date"));
        let payable = status == "open" && money::is_positive(&remaining);
        let sandbox: Vec<&(&str, &str)> = match d["scenarios"].as_array() {
            Some(list) => SCENARIOS.iter().filter(|(v, _)| list.iter().any(|x| x.as_str() == Some(v))).collect(),
            None => vec![],
        };
        let live = d["scenarios"].is_null();
        let instructions = d["payment_instructions"]
            .as_str()
            .map(str::to_string)
            .unwrap_or_else(|| "Contact your property manager to pay this invoice.".into());
        let lines = inv["lines"].as_array().cloned().unwrap_or_default();
        let what_for: Vec<String> = lines
            .iter()
            .map(|l| if s(l, "description").is_empty() { crate::rules::humanize(&s(l, "kind")) } else { s(l, "description") })
            .collect();
        let unit = &d["unit"];
        let place = [
            (!s(unit, "number").is_empty()).then(|| format!("Unit {}", s(unit, "number"))),
            Some(ui::place(&d["property"])).filter(|p| !p.is_empty()),
        ]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(", ");
        let pay_label = format!("Pay {}", money::display(&remaining, &cur));
        let action = if status == "paid" || (status == "open" && !payable) {
            view! { <p class="paid">"This invoice is paid"</p> }.fresh()
        } else if !payable {
            view! { <p class="paid">{format!("This invoice is {}; there is nothing to pay.", status.replace('_', " "))}</p> }.fresh()
        } else if !live && !sandbox.is_empty() {
            view! {
                <form
                    class="flow-form pay"
                    novalidate
                    on:submit=move |ev| {
                        ev.prevent_default();
                        pay();
                    }
                >
                    <fieldset class="scenarios">
                        <legend>"Test scenario"</legend>
                        <p class="hint">"This is the sandbox: no money moves. Choose what the test payment does."</p>
                        {sandbox
                            .into_iter()
                            .map(|(v, label)| {
                                let v: &'static str = v;
                                let id = format!("scenario-{v}");
                                view! {
                                    <div class="field check">
                                        <input
                                            type="radio"
                                            name="scenario"
                                            id=id.clone()
                                            value=v
                                            prop:checked=rx(move || scenario.with(|x| x == v))
                                            on:change=move |_| scenario.set(v.to_string())
                                        />
                                        <label for=id>{*label}</label>
                                    </div>
                                }
                            })
                            .collect_view()}
                    </fieldset>
                    {ui::alert_view(alert, "pay-alert")}
                    <div class="actions">
                        <button type="submit" class="primary" disabled=rx(move || busy.get()) aria-busy=rx(move || busy.get().then_some("true"))>
                            {pay_label}
                        </button>
                    </div>
                    <p class="sending" hidden=rx(move || !busy.get())>
                        "Paying…"
                    </p>
                </form>
            }
            .fresh()
        } else {
            view! {
                <section class="how" aria-labelledby="how-heading">
                    <h2 id="how-heading">"How to pay"</h2>
                    <p class="instructions">{instructions}</p>
                </section>
            }
            .fresh()
        };
        view! {
            <header class="summary">
                <h1 id="view-heading" tabindex="-1">
                    {if due.is_empty() { "Invoice".to_string() } else { format!("Invoice due {due}") }}
                    {inv["overdue"].as_bool().unwrap_or(false).then(|| view! { " " <span class="badge badge-overdue">"Overdue"</span> })}
                </h1>
                {(!place.is_empty()).then(|| view! { <p class="place">{place}</p> })}
                {(!what_for.is_empty()).then(|| view! { <p class="for">{format!("For {}", what_for.join(", "))}</p> })}
            </header>
            {(!lines.is_empty())
                .then(|| {
                    view! {
                        <ul class="lines">
                            {lines
                                .iter()
                                .map(|l| {
                                    let what = if s(l, "description").is_empty() { crate::rules::humanize(&s(l, "kind")) } else { s(l, "description") };
                                    view! {
                                        <li>
                                            <span>{what}</span>
                                            <span class="amount">{ui::amount(l, "amount", &cur)}</span>
                                        </li>
                                    }
                                })
                                .collect_view()}
                        </ul>
                    }
                })}
            <dl class="facts totals">
                {ui::row("Amount due", ui::amount(&inv, "amount_due", &cur))} {ui::row("Paid", ui::amount(&inv, "amount_paid", &cur))}
                {ui::row("Remaining", ui::amount(&inv, "amount_remaining", &cur))} {ui::row("Due date", due.clone())}
            </dl>
            {action}
        }
        .fresh()
    }
}

fn outcome(p: Value, again: impl Fn() + Copy + Send + Sync + 'static) -> impl IntoView {
    let amount = ui::amount(&p, "amount", &s(&p, "currency"));
    let id = s(&p, "id");
    match s(&p, "status").as_str() {
        "failed" => {
            let message = Some(s(&p, "failure_message")).filter(|m| !m.is_empty()).unwrap_or_else(|| "The card was declined.".into());
            view! {
                <section class="done declined">
                    <h1 id="view-heading" tabindex="-1">
                        "Payment declined"
                    </h1>
                    <div class="alert" role="alert">
                        <p class="alert-title">{ui::upper_first(&message)}</p>
                        <p>"Nothing was charged. You can try again."</p>
                    </div>
                    <div class="actions">
                        <button type="button" class="primary" on:click=move |_| again()>
                            "Try again"
                        </button>
                    </div>
                </section>
            }
            .fresh()
        }
        "reversed" => view! {
            <section class="done">
                <h1 id="view-heading" tabindex="-1">
                    "Payment reversed"
                </h1>
                <p>{format!("The payment of {amount} went through and was then reversed, so the invoice is open again.")}</p>
                <dl class="facts">{ui::row("Payment id", id)}</dl>
                <div class="actions">
                    <button type="button" class="secondary" on:click=move |_| again()>
                        "Back to the invoice"
                    </button>
                </div>
            </section>
        }
        .fresh(),
        "succeeded" => view! {
            <section class="done">
                <h1 id="view-heading" tabindex="-1">
                    "Payment succeeded"
                </h1>
                <p>{format!("Thank you: {amount} was paid.")}</p>
                <dl class="facts">{ui::row("Payment id", id)}</dl>
            </section>
        }
        .fresh(),
        other => {
            let title = format!("Payment {}", other.replace('_', " "));
            view! {
                <section class="done">
                    <h1 id="view-heading" tabindex="-1">
                        {title}
                    </h1>
                    <dl class="facts">{ui::row("Amount", amount)} {ui::row("Payment id", id)}</dl>
                </section>
            }
            .fresh()
        }
    }
}
