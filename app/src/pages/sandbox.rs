//! The Sandbox page: what the sandbox is, and its reset (owners and admins).
//!
//! The reset takes two steps, both working with or without WebAssembly: "Reset sandbox"
//! is a GET form that opens the confirmation step (`?step=confirm`, the demo choice
//! in the URL), where the person types `reset` and presses "Yes, delete all sandbox data"
//! (an `ActionForm`). The server function then sends the browser back to the page with
//! what happened in the query (`?reset=done&deleted=N&demo=…`), which the page shows.

use leptos::prelude::*;
use leptos_router::components::{Form, A};
use leptos_router::hooks::use_query_map;

use super::components::{me, FormError, ManagersOnly};
use crate::api::{ResetSandbox, RESET_WORD};

const PAGE: &str = "/console/sandbox";

#[component]
pub fn SandboxPage() -> impl IntoView {
    let me = me();
    let query = use_query_map();
    let q = move |k: &str| query.read().get(k).unwrap_or_default();
    let can_manage = me.can_manage;
    let (csrf, tenant) = (me.csrf.clone(), me.tenant_name.clone());
    let viewing = if me.livemode {
        "The console is showing live data now; the sandbox is the test data you see after \"Switch to test\"."
    } else {
        "The console is showing it now."
    };
    view! {
        <h1>"Sandbox"</h1>
        <p class="lede">
            "Your sandbox is your test data: what test keys (" <code>"gbl_test_…"</code>
            ") create through the sandbox API, with its own clock. It never touches real residents or money. "
            {viewing}
        </p>
        {move || (q("reset") == "done").then(|| view! { <ResetDone deleted=q("deleted") demo=q("demo") == "true"/> })}
        <section class="card" id="sandbox-reset">
            <h2>"Reset the sandbox"</h2>
            <p id="reset-explained">
                "A reset deletes every record in your sandbox (properties, leases, payments, events, webhook deliveries: all of it) \
                 and puts the sandbox clock back on real time. It never touches live data, and never API keys, service accounts or your team."
            </p>
            {can_manage.then_some(move || {
                if q("step") == "confirm" {
                    view! { <ConfirmReset csrf=csrf.clone() tenant=tenant.clone() demo=q("demo") == "true"/> }.into_any()
                } else {
                    view! { <StartReset/> }.into_any()
                }
            })}
            <ManagersOnly can_manage what="reset the sandbox"/>
        </section>
    }
}

/// The first step: the demo choice and a button that only opens the confirmation.
#[component]
fn StartReset() -> impl IntoView {
    view! {
        // A GET form: it changes nothing, it opens the second step (a client-side navigation
        // when hydrated, a plain page load without WebAssembly).
        <Form method="get" action=PAGE attr:class="form" attr:id="reset-sandbox-form">
            <input type="hidden" name="step" value="confirm"/>
            <label class="check">
                <input type="checkbox" name="demo" value="true" id="reset-demo"/>
                " Then add the demo portfolio: a property with three units, a published listing and an active lease whose rent is invoiced"
            </label>
            <div class="actions">
                <button type="submit" class="danger" id="reset-sandbox">"Reset sandbox"</button>
            </div>
        </Form>
    }
}

/// The second step: type the word, then press the explicit button (or cancel).
#[component]
fn ConfirmReset(csrf: String, tenant: String, demo: bool) -> impl IntoView {
    // Made with the step, so that reopening it does not show the error of an earlier try.
    let action = ServerAction::<ResetSandbox>::new();
    let then = if demo { "Then the demo portfolio is added." } else { "The sandbox is empty afterwards." };
    view! {
        <div class="confirm" id="confirm-reset" role="group" aria-labelledby="confirm-reset-title">
            <p class="warning" id="confirm-reset-title">
                <strong>{format!("Delete all sandbox data of {tenant}?")}</strong>
                {format!(" Every sandbox record goes, and the sandbox clock with it; this cannot be undone. {then}")}
            </p>
            <ActionForm action=action attr:class="form" attr:id="confirm-reset-form">
                <input type="hidden" name="csrf" value=csrf/>
                <input type="hidden" name="demo" value=demo.to_string()/>
                <label>{format!("Type {RESET_WORD} to confirm")}
                    <input type="text" name="confirm" id="confirm-word" required autocomplete="off" spellcheck="false" autocapitalize="off"/>
                </label>
                <FormError value=action.value()/>
                <div class="actions">
                    <button type="submit" class="danger solid" id="confirm-reset-button" disabled=move || action.pending().get()>
                        "Yes, delete all sandbox data"
                    </button>
                    <A href=PAGE attr:class="button" attr:id="cancel-reset">"Cancel"</A>
                </div>
            </ActionForm>
        </div>
    }
}

/// What the reset did, from the query the server function redirected to.
#[component]
fn ResetDone(deleted: String, demo: bool) -> impl IntoView {
    let deleted = match deleted.parse::<u64>() {
        Ok(1) => "1 row of sandbox data was deleted".to_string(),
        Ok(n) => format!("{n} rows of sandbox data were deleted"),
        Err(_) => "The sandbox data was deleted".to_string(),
    };
    let demo = if demo {
        " The demo portfolio was added: Maple Court, with three units, a published listing and a lease whose rent is invoiced."
    } else {
        " The sandbox is empty."
    };
    view! {
        <p class="ok" role="status" id="reset-result">
            <strong>"Sandbox reset. "</strong>{format!("{deleted}, and the sandbox clock is back on real time.{demo}")}
        </p>
    }
}
