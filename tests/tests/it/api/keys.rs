//! API keys: scopes on every operation, property constraints (`docs/api.md`, "Credentials").

use gable_tests::{both, world, Backend, TestApp};
use serde_json::json;

async fn scopes_are_enforced(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    let units_read = app.key(t.id, false, &["units:read"], None).await;
    assert_eq!(app.call(&units_read, "GET", "/v1/units", None).await.status, 200);
    assert_eq!(app.call(&units_read, "GET", &format!("/v1/units/{}", w.id("units")), None).await.status, 200);
    let r = app.call(&units_read, "POST", "/v1/units", Some(json!({ "property_id": w.id("properties"), "number": "2B" }))).await;
    r.assert_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required_scope"], "units:write");
    let r = app.call(&units_read, "GET", "/v1/leases", None).await;
    r.assert_error(403, "insufficient_scope");
    assert!(r.body["error"]["message"].as_str().unwrap().contains("leases:read"));
    app.call(&units_read, "DELETE", &format!("/v1/units/{}", w.id("units")), None).await.assert_error(403, "insufficient_scope");
    app.call(&units_read, "PATCH", &format!("/v1/units/{}", w.id("units")), Some(json!({ "floor": 2 })))
        .await
        .assert_error(403, "insufficient_scope");

    let read_all = app.key(t.id, false, &["*:read"], None).await;
    assert_eq!(app.call(&read_all, "GET", "/v1/payments", None).await.status, 200);
    app.call(&read_all, "POST", "/v1/vendors", Some(json!({ "name": "V" }))).await.assert_error(403, "insufficient_scope");

    // Write implies read on the same collection; nothing else.
    let leases_write = app.key(t.id, false, &["leases:write"], None).await;
    assert_eq!(app.call(&leases_write, "GET", "/v1/leases", None).await.status, 200);
    app.call(&leases_write, "GET", "/v1/units", None).await.assert_error(403, "insufficient_scope");
    assert_eq!(app.count_rows("units").await, 1);
}
both!(scopes_are_enforced);

async fn property_constraints_hide_and_refuse(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    let p1 = w.id("properties").to_string();
    let p2 = app
        .create(
            &t.test_key,
            "properties",
            json!({ "name": "Elm House", "kind": "student", "address": { "line1": "5 Elm", "city": "Austin", "country": "US" } }),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_string();
    let u2 = app.create(&t.test_key, "units", json!({ "property_id": p2, "number": "E1" })).await;
    let lease2 =
        app.create(&t.test_key, "leases", json!({ "unit_id": u2["id"], "start_date": "2027-01-01", "rent": 900, "currency": "USD" })).await;
    let only_p1 = app.key(t.id, false, &["*"], Some(vec![p1.parse().unwrap()])).await;
    // The tenant-wide key reads the other property's lease first, and a key of that
    // property after: a read's SQL is kept per shape, and a credential limited to
    // properties must never run the shape of one that is not (or of other properties).
    let lease2_path = format!("/v1/leases/{}", lease2["id"].as_str().unwrap());
    assert_eq!(app.call(&t.test_key, "GET", &lease2_path, None).await.status, 200);

    // Sees its property's records, directly or through parents; not the other's.
    let units = app.call(&only_p1, "GET", "/v1/units", None).await;
    let ids: Vec<&str> = units.body["data"].as_array().unwrap().iter().map(|u| u["id"].as_str().unwrap()).collect();
    assert_eq!(ids, [w.id("units")]);
    let leases = app.call(&only_p1, "GET", "/v1/leases", None).await;
    assert_eq!(leases.body["data"].as_array().unwrap().len(), 1);
    app.call(&only_p1, "GET", &format!("/v1/leases/{}", lease2["id"].as_str().unwrap()), None).await.assert_error(404, "not_found");
    app.call(&only_p1, "GET", &format!("/v1/properties/{p2}"), None).await.assert_error(404, "not_found");
    assert_eq!(app.call(&only_p1, "GET", &format!("/v1/properties/{p1}"), None).await.status, 200);
    let only_p2 = app.key(t.id, false, &["*"], Some(vec![p2.parse().unwrap()])).await;
    assert_eq!(app.call(&only_p2, "GET", &lease2_path, None).await.status, 200);
    app.call(&only_p2, "GET", &format!("/v1/properties/{p1}"), None).await.assert_error(404, "not_found");
    app.call(&only_p1, "GET", &lease2_path, None).await.assert_error(404, "not_found");
    let both_properties = app.key(t.id, false, &["*"], Some(vec![p1.parse().unwrap(), p2.parse().unwrap()])).await;
    assert_eq!(app.call(&both_properties, "GET", &lease2_path, None).await.status, 200);
    assert_eq!(app.call(&both_properties, "GET", &format!("/v1/properties/{p1}"), None).await.status, 200);
    // Tenant-wide records are invisible.
    assert_eq!(app.call(&only_p1, "GET", "/v1/vendors", None).await.body["data"], json!([]));
    app.call(&only_p1, "GET", &format!("/v1/vendors/{}", w.id("vendors")), None).await.assert_error(404, "not_found");

    // Writes inside its property work; outside are refused and change nothing.
    assert_eq!(app.call(&only_p1, "POST", "/v1/units", Some(json!({ "property_id": p1, "number": "1C" }))).await.status, 201);
    let r = app.call(&only_p1, "POST", "/v1/units", Some(json!({ "property_id": p2, "number": "E2" }))).await;
    r.assert_error(404, "not_found");
    assert_eq!(r.param(), "property_id");
    app.call(&only_p1, "POST", "/v1/vendors", Some(json!({ "name": "Sneaky" }))).await.assert_error(403, "property_forbidden");
    app.call(
        &only_p1,
        "POST",
        "/v1/properties",
        Some(json!({ "name": "New", "kind": "mixed", "address": { "line1": "x", "city": "y", "country": "US" } })),
    )
    .await
    .assert_error(403, "property_forbidden");
    app.call(&only_p1, "PATCH", &format!("/v1/units/{}", u2["id"].as_str().unwrap()), Some(json!({ "floor": 3 })))
        .await
        .assert_error(404, "not_found");
    app.call(&only_p1, "DELETE", &format!("/v1/leases/{}", lease2["id"].as_str().unwrap()), None).await.assert_error(404, "not_found");
    assert_eq!(app.count_rows("vendors").await, 1);
    assert_eq!(app.count_rows("properties").await, 2);
}
both!(property_constraints_hide_and_refuse);

async fn last_used_at_is_recorded(app: &TestApp) {
    let t = app.tenant("A").await;
    let used = "last_used_at IS NOT NULL";
    assert_eq!(app.count_where("api_keys", used).await, 0);
    assert_eq!(app.call(&t.test_key, "GET", "/v1/units", None).await.status, 200);
    for _ in 0..100 {
        if app.count_where("api_keys", used).await == 1 {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("last_used_at was not recorded");
}
both!(last_used_at_is_recorded);

/// Two nodes share one PostgreSQL: a key revoked through one is refused by the other at
/// once (NOTIFY), well before the key cache would expire on its own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn revocation_reaches_every_node_at_once() {
    let Some(a) = TestApp::builder(Backend::Postgres).try_spawn().await else { return };
    let b = a.second_node().spawn().await;
    let t = a.tenant("A").await;
    let sa = a.store.service_account(t.id, "tests").await.unwrap();
    let key = a.store.create_key(t.id, sa, false, vec!["*".into()], None).await.unwrap();
    // Node B has the key cached now.
    assert_eq!(b.call(&key.secret, "GET", "/v1/units", None).await.status, 200);
    let revoked_at = std::time::Instant::now();
    assert!(a.store.revoke_key(t.id, key.id).await.unwrap());
    loop {
        let r = b.call(&key.secret, "GET", "/v1/units", None).await;
        if r.status == 401 {
            break;
        }
        assert!(revoked_at.elapsed() < gable::store::keys::KEY_CACHE_TTL / 2, "node B still accepts a revoked key");
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    b.stop().await;
    a.stop().await;
}
