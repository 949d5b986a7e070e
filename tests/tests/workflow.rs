//! State machines through `POST /v1/{resource}/{id}/{action}`.

use gable::domain::workflow::MACHINES;
use gable_tests::{both, world, TestApp};
use serde_json::{json, Value};

/// A body for actions that need one.
fn params(action: &gable::domain::workflow::Action) -> Option<Value> {
    use gable::domain::workflow::Input;
    match action.input {
        Input::Fields { required, .. } if !required.is_empty() => Some(json!({ "result": "clear" })),
        Input::NewRecord(_) => Some(json!({ "start_date": "2027-03-01" })),
        _ => None,
    }
}

async fn every_machine_allows_and_refuses_as_declared(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    // The world's payment is refunded, which blocks its reversal: use a fresh one.
    let fresh_payment = app.create(&t.test_key, "payments", json!({ "amount": 10, "currency": "USD" })).await["id"].as_str().unwrap().to_string();
    for m in MACHINES {
        let id = if m.collection == "payments" { fresh_payment.as_str() } else { w.id(m.collection) };
        let path = |a: &str| format!("/v1/{}/{id}/{a}", m.collection);
        let rec = app.call(&t.test_key, "GET", &format!("/v1/{}/{id}", m.collection), None).await;
        let initial = rec.body["data"]["status"].as_str().unwrap().to_string();
        let allowed = m.allowed(&initial);
        if let Some(refused) = m.actions.iter().find(|a| !a.from.contains(&initial.as_str())) {
            let r = app.call(&t.test_key, "POST", &path(refused.name), params(refused)).await;
            r.assert_error(409, "invalid_state_transition");
            assert_eq!(r.body["error"]["details"]["current_status"], json!(initial), "{}", m.collection);
            assert_eq!(r.body["error"]["details"]["allowed_actions"], json!(allowed), "{}", m.collection);
        }
        let go = m.actions.iter().find(|a| a.from.contains(&initial.as_str())).expect("some action leaves the initial state");
        let r = app.call(&t.test_key, "POST", &path(go.name), params(go)).await;
        assert_eq!(r.status, 200, "{}.{}: {}", m.collection, go.name, r.text);
        assert_eq!(r.body["data"]["status"], json!(go.to));
        if let Some(stamp) = go.stamp {
            assert!(r.body["data"][stamp].is_string(), "{}.{} sets {stamp}", m.collection, go.name);
        }
    }
}
both!(every_machine_allows_and_refuses_as_declared);

async fn actions_are_checked_like_writes(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    let lease = w.id("leases");
    let send = format!("/v1/leases/{lease}/send");
    // Names that are not actions, and collections without actions.
    app.call(&t.test_key, "POST", &format!("/v1/leases/{lease}/fly"), None).await.assert_error(404, "not_found");
    app.call(&t.test_key, "POST", &format!("/v1/units/{}/send", w.id("units")), None).await.assert_error(404, "not_found");
    app.call(&t.test_key, "GET", &send, None).await.assert_error(405, "method_not_allowed");
    app.call(&t.test_key, "POST", &format!("/v1/leases/not-a-uuid/send"), None).await.assert_error(400, "invalid_parameter");
    // Scopes, tenants and bodies.
    let reader = app.key(t.id, false, &["leases:read"], None).await;
    app.call(&reader, "POST", &send, None).await.assert_error(403, "insufficient_scope");
    let other = app.tenant("B").await;
    app.call(&other.test_key, "POST", &send, None).await.assert_error(404, "not_found");
    let r = app.call(&t.test_key, "POST", &send, Some(json!({ "status": "active" }))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "status");
    let still = app.call(&t.test_key, "GET", &format!("/v1/leases/{lease}"), None).await;
    assert_eq!(still.body["data"]["status"], "draft", "a refused action changed the lease");
    // The lease moves, once.
    let r = app.call(&t.test_key, "POST", &send, None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["status"], "sent");
    let r = app.call(&t.test_key, "POST", &send, None).await;
    r.assert_error(409, "invalid_state_transition");
    assert_eq!(r.body["error"]["details"]["allowed_actions"], json!(["cancel"]));
    assert!(r.body["error"]["message"].as_str().unwrap().contains("sent"));
}
both!(actions_are_checked_like_writes);

async fn a_work_order_runs_its_course(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    let wo = w.id("workorders");
    let step = |a: &'static str| {
        let key = t.test_key.clone();
        let path = format!("/v1/workorders/{wo}/{a}");
        async move { app.call(&key, "POST", &path, None).await }
    };
    for (action, status) in [("assign", "assigned"), ("start", "in_progress"), ("hold", "on_hold"), ("start", "in_progress")] {
        let r = step(action).await;
        assert_eq!(r.body["data"]["status"], status, "{action}: {}", r.text);
        assert!(r.body["data"]["completed_at"].is_null());
    }
    let done = step("complete").await;
    assert_eq!(done.body["data"]["status"], "completed");
    assert!(done.body["data"]["completed_at"].is_string());
    let r = step("cancel").await;
    r.assert_error(409, "invalid_state_transition");
    assert_eq!(r.body["error"]["details"]["allowed_actions"], json!([]));
    // Screening needs its result, from the declared values only.
    let s = format!("/v1/screening/{}/complete", w.id("screening"));
    let r = app.call(&t.test_key, "POST", &s, None).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "result");
    app.call(&t.test_key, "POST", &s, Some(json!({ "result": "maybe" }))).await.assert_error(400, "validation_failed");
    let r = app.call(&t.test_key, "POST", &s, Some(json!({ "result": "consider" }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["result"], "consider");
    assert!(r.body["data"]["completed_at"].is_string());
}
both!(a_work_order_runs_its_course);
