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

async fn actions_are_checked_like_writes(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    let lease = w.id("leases");
    let send = format!("/v1/leases/{lease}/send");
    // Names that are not actions, and collections without actions.
    app.call(&t.test_key, "POST", &format!("/v1/leases/{lease}/fly"), None).await.assert_error(404, "not_found");
    app.call(&t.test_key, "POST", &format!("/v1/units/{}/send", w.id("units")), None).await.assert_error(404, "not_found");
    app.call(&t.test_key, "GET", &send, None).await.assert_error(405, "method_not_allowed");
    app.call(&t.test_key, "POST", "/v1/leases/not-a-uuid/send", None).await.assert_error(400, "invalid_parameter");
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

/// A fresh record of a machine's collection in its initial state, with what its actions
/// need from other records (a sent lease for a signature, a succeeded payment for a refund).
/// Payments are live ones (`key` is then a live key): only live mode keeps a payment
/// `pending` for its actions, the sandbox runs a test payment's scenario at once.
async fn fresh(app: &TestApp, key: &str, w: &world::World, collection: &str) -> String {
    let id = |c: &str| w.id(c).to_string();
    let body = match collection {
        "listings" => json!({ "unit_id": id("units"), "title": "T", "rent": 10, "currency": "USD" }),
        "leads" => json!({ "listing_id": id("listings"), "name": "L" }),
        "viewings" => json!({ "listing_id": id("listings"), "starts_at": "2027-01-01T10:00:00Z" }),
        "applications" => json!({ "listing_id": id("listings"), "applicants": [{ "name": "A" }] }),
        "screening" => json!({ "application_id": id("applications") }),
        "leases" => json!({ "unit_id": id("units"), "start_date": "2027-01-01", "rent": 10, "currency": "USD" }),
        "signatures" => {
            let lease = app
                .create(key, "leases", json!({ "unit_id": id("units"), "start_date": "2027-01-01", "rent": 10, "currency": "USD" }))
                .await;
            let lease = lease["id"].as_str().unwrap();
            assert_eq!(app.call(key, "POST", &format!("/v1/leases/{lease}/send"), None).await.status, 200);
            json!({ "lease_id": lease, "signer_name": "S", "signer_email": "s@example.com" })
        }
        "tenancies" => json!({ "lease_id": id("leases"), "unit_id": id("units") }),
        "bookings" => json!({ "unit_id": id("units"), "check_in": "2027-02-01", "check_out": "2027-02-03" }),
        "guests" => json!({ "name": "G" }),
        "charges" => json!({ "lease_id": id("leases"), "kind": "fee", "amount": 1, "currency": "USD", "due_date": "2027-01-01" }),
        "invoices" => json!({ "lease_id": id("leases"), "amount_due": 1, "currency": "USD", "due_date": "2027-01-01" }),
        "payments" => {
            let r = app.call_on(true, key, "POST", "/v1/payments", Some(json!({ "amount": 1, "currency": "USD", "method": "cash" }))).await;
            assert_eq!(r.status, 201, "a live payment: {}", r.text);
            assert_eq!(r.body["data"]["status"], "pending");
            return r.body["data"]["id"].as_str().unwrap().to_string();
        }
        "refunds" => {
            let payment = app.create(key, "payments", json!({ "amount": 1, "currency": "USD", "scenario": "succeeded" })).await;
            assert_eq!(payment["status"], "succeeded");
            json!({ "payment_id": payment["id"], "amount": 1, "currency": "USD" })
        }
        "workorders" => json!({ "property_id": id("properties"), "title": "W" }),
        "inspections" => json!({ "unit_id": id("units"), "kind": "routine" }),
        "purchase-orders" => {
            json!({ "vendor_id": id("vendors"), "lines": [{ "description": "x", "quantity": 1, "unit_amount": 1 }], "currency": "USD" })
        }
        "tasks" => json!({ "title": "T" }),
        "flow-tokens" => json!({ "flow": "payment", "origin": "https://www.example.com", "invoice_id": id("invoices") }),
        // An import is made by uploading its file: it is `validated` once the upload answers.
        "imports" => {
            let file = format!("external_id,name\nSM-{},Machine Owner\n", uuid::Uuid::now_v7());
            let r = crate::api::imports::upload(app, key, "collection=owners", "text/csv", file).await;
            assert_eq!(r.status, 201, "an upload: {}", r.text);
            return r.body["data"]["id"].as_str().unwrap().to_string();
        }
        other => panic!("no fresh {other}"),
    };
    app.create(key, collection, body).await["id"].as_str().unwrap().to_string()
}

/// Every action of every machine, from every state reachable by actions: allowed where
/// declared (reaching its target state), refused everywhere else with the current state
/// and the allowed actions, changing nothing.
async fn every_transition_from_every_state(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = &world::build(app, t.id, &t.test_key).await;
    for m in MACHINES {
        // Payments' actions run on live payments (see `fresh`); every other machine in the sandbox.
        let live = m.collection == "payments";
        let key = if live { t.live_key.as_str() } else { t.test_key.as_str() };
        let post = |id: String, a: &'static gable::domain::workflow::Action| async move {
            app.call_on(live, key, "POST", &format!("/v1/{}/{id}/{}", m.collection, a.name), params(a)).await
        };
        // A record in a state: a fresh one, moved along the path that reaches the state.
        let reach = |path: Vec<&'static gable::domain::workflow::Action>| async move {
            let id = fresh(app, key, w, m.collection).await;
            for a in path {
                let r = post(id.clone(), a).await;
                assert_eq!(r.status, 200, "{}.{}: {}", m.collection, a.name, r.text);
            }
            id
        };
        let first = fresh(app, key, w, m.collection).await;
        let initial = app.call_on(live, key, "GET", &format!("/v1/{}/{first}", m.collection), None).await.body["data"]["status"]
            .as_str()
            .unwrap()
            .to_string();
        // Breadth-first over the states the actions reach.
        let mut paths: Vec<(String, Vec<&'static gable::domain::workflow::Action>)> = vec![(initial, vec![])];
        let mut i = 0;
        while i < paths.len() {
            let (state, path) = paths[i].clone();
            i += 1;
            let allowed = m.allowed(&state);
            let id = reach(path.clone()).await;
            for a in m.actions.iter().filter(|a| !a.from.contains(&state.as_str())) {
                let r = post(id.clone(), a).await;
                r.assert_error(409, "invalid_state_transition");
                assert_eq!(r.body["error"]["details"]["current_status"], json!(state), "{}.{}", m.collection, a.name);
                assert_eq!(r.body["error"]["details"]["allowed_actions"], json!(allowed), "{}.{} from {state}", m.collection, a.name);
            }
            let now = app.call_on(live, key, "GET", &format!("/v1/{}/{id}", m.collection), None).await;
            assert_eq!(now.body["data"]["status"], json!(state), "{}: refused actions changed nothing", m.collection);
            for a in m.actions.iter().filter(|a| a.from.contains(&state.as_str())) {
                let id = reach(path.clone()).await;
                let r = post(id, a).await;
                assert_eq!(r.status, 200, "{}.{} from {state}: {}", m.collection, a.name, r.text);
                assert_eq!(r.body["data"]["status"], json!(a.to), "{}.{} from {state}", m.collection, a.name);
                if let Some(stamp) = a.stamp {
                    assert!(r.body["data"][stamp].is_string(), "{}.{} sets {stamp}", m.collection, a.name);
                }
                // An importing import is moved on by the import worker of the test's server, not by
                // actions: what is refused there is not a state one can hold it in (api::imports).
                let moved_on_by_a_worker = (m.collection, a.to) == ("imports", "importing");
                if !moved_on_by_a_worker && !paths.iter().any(|(s, _)| s == a.to) {
                    let mut next = path.clone();
                    next.push(a);
                    paths.push((a.to.to_string(), next));
                }
            }
        }
    }
}
both!(every_transition_from_every_state);
