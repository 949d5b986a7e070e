//! The page's one view: loading, the flow, or why the flow cannot be shown.

use leptos::prelude::*;

use crate::fresh::IntoFresh;
use crate::json::Value;
use leptos::task::spawn_local;

use crate::api::{self, ApiError};
use crate::{application, booking, env, payment, portal, rules};

#[derive(Clone, PartialEq)]
enum Phase {
    Loading,
    Failed(ApiError),
    Ready,
}

/// Loads the flow's session and shows its flow.
pub fn app() -> impl IntoView {
    let data = RwSignal::new(Value::Null);
    let phase = RwSignal::new(Phase::Loading);
    spawn_local(async move {
        let result = api::session().await.and_then(|d| {
            // The page may be framed by the origin its address claims (frame-ancestors makes
            // that so); the flow is shown only if that is the origin its token was made for.
            let origin = d["origin"].as_str().unwrap_or_default();
            if !rules::origin_matches(origin, &env::ctx().parent_origin) {
                return Err(ApiError {
                    status: 403,
                    code: "origin_mismatch".into(),
                    message: "this form's token was made for another website, so it is not shown on this page".into(),
                    param: None,
                });
            }
            let meant = &env::ctx().flow;
            let flow = d["flow"].as_str().unwrap_or_default();
            if !meant.is_empty() && flow != meant {
                return Err(ApiError {
                    status: 400,
                    code: "flow_mismatch".into(),
                    message: format!("this page is for the {meant} flow, but its token is for the {flow} flow"),
                    param: None,
                });
            }
            Ok(d)
        });
        match result {
            Ok(d) => {
                data.set(d);
                phase.set(Phase::Ready);
                // Once the view has rendered the first step with its data.
                set_timeout(env::ready, std::time::Duration::ZERO);
            }
            Err(e) => {
                phase.set(Phase::Failed(e.clone()));
                set_timeout(move || env::error(&e.code, &e.message), std::time::Duration::ZERO);
            }
        }
    });
    move || match phase.get() {
        Phase::Loading => view! { <p class="loading" role="status">"Loading…"</p> }.fresh(),
        Phase::Failed(e) => cannot_show(&e).fresh(),
        Phase::Ready => match data.with_untracked(|d| d["flow"].as_str().unwrap_or_default().to_string()).as_str() {
            "rental-application" => application::view(data),
            "booking" => booking::view(data),
            "payment" => payment::flow(data),
            "tenant-portal" => portal::view(data),
            other => cannot_show(&ApiError {
                status: 400,
                code: "unknown_flow".into(),
                message: format!("there is no flow named {other}"),
                param: None,
            })
            .fresh(),
        },
    }
}

fn cannot_show(e: &ApiError) -> impl IntoView {
    let friendly = rules::cannot_show(&e.code, &e.message);
    let detail = (friendly != e.message && !e.message.is_empty()).then(|| crate::ui::upper_first(&e.message));
    view! {
        <div class="cannot" role="alert">
            <h1>"This form can't be shown"</h1>
            <p>{friendly}</p>
            {detail.map(|d| view! { <p class="detail">{d}</p> })}
        </div>
    }
}
