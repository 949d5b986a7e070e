//! Every collection: create, read, list, update, delete as `docs/api.md` ("Records", "Writes") says, and the
//! isolation of tenants and environments for every one of them.

use gable::domain::collections::COLLECTIONS;
use gable::domain::registry::Writes;
use gable_tests::{both, world, TestApp};
use serde_json::{json, Value};

async fn every_collection_reads_its_records(app: &TestApp) {
    let t = app.tenant("Acme").await;
    let w = world::build(app, t.id, &t.test_key).await;
    for c in COLLECTIONS {
        let id = w.id(c.name);
        let r = app.call(&t.test_key, "GET", &format!("/v1/{}/{id}", c.name), None).await;
        assert_eq!(r.status, 200, "{}: {}", c.name, r.text);
        assert_eq!(r.body["object"], json!(c.object));
        assert_eq!(r.body["data"]["id"], json!(id));
        assert_eq!(r.body["data"]["object"], json!(c.object));
        assert_eq!(r.body["data"]["livemode"], json!(false));
        // The request log fills with this loop's own calls, newer than the world's record.
        let only = if c.name == "request-logs" { format!("?filter[id]={id}") } else { String::new() };
        let list = app.call(&t.test_key, "GET", &format!("/v1/{}{only}", c.name), None).await;
        assert_eq!(list.status, 200, "{}: {}", c.name, list.text);
        assert_eq!(list.body["object"], json!("list"));
        let ids: Vec<&str> = list.body["data"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert!(ids.contains(&id), "{} list lacks its record", c.name);
        assert!(list.body["meta"]["request_id"].is_string());
    }
}
both!(every_collection_reads_its_records);

async fn writes_follow_each_collections_rules(app: &TestApp) {
    let t = app.tenant("Acme").await;
    let w = world::build(app, t.id, &t.test_key).await;
    for c in COLLECTIONS {
        let path = format!("/v1/{}/{}", c.name, w.id(c.name));
        let patch = app.call(&t.test_key, "PATCH", &path, Some(json!({ "metadata": { "batch": "7" } }))).await;
        match c.writes {
            Writes::None => {
                patch.assert_error(405, "method_not_allowed");
                app.call(&t.test_key, "POST", &format!("/v1/{}", c.name), Some(json!({}))).await.assert_error(405, "method_not_allowed");
                app.call(&t.test_key, "DELETE", &path, None).await.assert_error(405, "method_not_allowed");
            }
            Writes::CreateOnly => {
                patch.assert_error(409, "immutable_resource");
                app.call(&t.test_key, "DELETE", &path, None).await.assert_error(409, "immutable_resource");
            }
            Writes::NoDelete | Writes::Full => {
                if c.metadata {
                    assert_eq!(patch.status, 200, "{}: {}", c.name, patch.text);
                    assert_eq!(patch.body["data"]["metadata"], json!({ "batch": "7" }));
                }
                if c.writes == Writes::NoDelete {
                    app.call(&t.test_key, "DELETE", &path, None).await.assert_error(409, "immutable_resource");
                }
            }
        }
    }
    // Leaves delete; parents still referenced refuse with 409 and stay.
    let bed = format!("/v1/beds/{}", w.id("beds"));
    let del = app.call(&t.test_key, "DELETE", &bed, None).await;
    assert_eq!(del.status, 200, "{}", del.text);
    assert_eq!(del.body["data"]["deleted"], json!(true));
    app.call(&t.test_key, "GET", &bed, None).await.assert_error(404, "not_found");
    let unit = format!("/v1/units/{}", w.id("units"));
    app.call(&t.test_key, "DELETE", &unit, None).await.assert_error(409, "conflict");
    assert_eq!(app.call(&t.test_key, "GET", &unit, None).await.status, 200);
}
both!(writes_follow_each_collections_rules);

async fn tenants_never_see_each_other(app: &TestApp) {
    let a = app.tenant("A").await;
    let b = app.tenant("B").await;
    let wa = world::build(app, a.id, &a.test_key).await;
    for c in COLLECTIONS {
        let path = format!("/v1/{}/{}", c.name, wa.id(c.name));
        app.call(&b.test_key, "GET", &path, None).await.assert_error(404, "not_found");
        let list = app.call(&b.test_key, "GET", &format!("/v1/{}", c.name), None).await;
        assert_eq!(list.status, 200);
        if c.name == "request-logs" {
            // B's log holds B's own calls (this loop's): all of them, and none of A's.
            let calls = list.body["data"].as_array().unwrap();
            assert!(calls.iter().all(|r| r["key_prefix"] == json!(&b.test_key[..13])), "A's calls leak into B's request log");
        } else {
            assert_eq!(list.body["data"], json!([]), "{} leaks into another tenant's list", c.name);
        }
        if matches!(c.writes, Writes::Full | Writes::NoDelete) {
            app.call(&b.test_key, "PATCH", &path, Some(json!({ "metadata": { "x": "y" } }))).await.assert_error(404, "not_found");
        }
        if c.writes == Writes::Full {
            app.call(&b.test_key, "DELETE", &path, None).await.assert_error(404, "not_found");
        }
        // Still there, unchanged, for its owner.
        let own = app.call(&a.test_key, "GET", &path, None).await;
        assert_eq!(own.status, 200, "{}", c.name);
        if c.metadata {
            assert_eq!(own.body["data"]["metadata"], json!({}), "{} was changed by another tenant", c.name);
        }
    }
    // A reference to another tenant's record is "not found", naming the field.
    let r = app
        .call(
            &b.test_key,
            "POST",
            "/v1/leases",
            Some(json!({ "unit_id": wa.id("units"), "start_date": "2027-01-01", "rent": 1000, "currency": "USD" })),
        )
        .await;
    r.assert_error(404, "not_found");
    assert_eq!(r.param(), "unit_id");
    assert_eq!(app.count_rows("leases").await, 1);
}
both!(tenants_never_see_each_other);

async fn environments_never_mix(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    for c in COLLECTIONS {
        let path = format!("/v1/{}/{}", c.name, w.id(c.name));
        app.call_on(true, &t.live_key, "GET", &path, None).await.assert_error(404, "not_found");
        let list = app.call_on(true, &t.live_key, "GET", &format!("/v1/{}", c.name), None).await;
        if c.name == "request-logs" {
            // The live log holds this loop's live calls, and no sandbox call.
            let calls = list.body["data"].as_array().unwrap();
            assert!(calls.iter().all(|r| r["livemode"] == json!(true)), "sandbox calls show in the live request log");
        } else {
            assert_eq!(list.body["data"], json!([]), "{} sandbox data shows in live", c.name);
        }
    }
    // Keys work only on their own environment's address.
    app.call_on(true, &t.test_key, "GET", "/v1/units", None).await.assert_error(401, "key_environment_mismatch");
    app.call_on(false, &t.live_key, "GET", "/v1/units", None).await.assert_error(401, "key_environment_mismatch");
    let live = app.call_on(true, &t.live_key, "POST", "/v1/vendors", Some(json!({ "name": "Live vendor" }))).await;
    assert_eq!(live.status, 201);
    assert_eq!(live.body["data"]["livemode"], json!(true));
}
both!(environments_never_mix);

async fn fields_are_typed_and_money_is_exact(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    let unit = w.id("units");
    // Derived property, exact money, defaults.
    let lease = app
        .create(
            &t.test_key,
            "leases",
            json!({ "unit_id": unit, "start_date": "2027-03-01", "rent": "1234.56", "deposit": 0.1, "currency": "USD" }),
        )
        .await;
    assert_eq!(lease["rent"], json!(1234.56));
    assert_eq!(lease["deposit"], json!(0.1));
    assert_eq!(lease["status"], json!("draft"));
    assert_eq!(lease["rent_due_day"], json!(1));
    assert_eq!(lease["property_id"], json!(w.id("properties")));
    // Zero-decimal and three-decimal currencies (a charge is in its lease's currency).
    let in_currency = |cur: &str| json!({ "unit_id": unit, "start_date": "2027-03-01", "rent": 1000, "currency": cur });
    let yen_lease = app.create(&t.test_key, "leases", in_currency("JPY")).await;
    let dinar_lease = app.create(&t.test_key, "leases", in_currency("KWD")).await;
    let fee = |lease: &Value, amount: Value, cur: &str| {
        json!({ "lease_id": lease["id"], "kind": "fee", "amount": amount, "currency": cur,
                "due_date": "2027-03-01" })
    };
    let jpy = app.create(&t.test_key, "charges", fee(&yen_lease, json!(5000), "JPY")).await;
    assert_eq!(jpy["amount"], json!(5000));
    let r = app.call(&t.test_key, "POST", "/v1/charges", Some(fee(&yen_lease, json!(50.5), "JPY"))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "amount");
    let r = app.call(&t.test_key, "POST", "/v1/charges", Some(fee(&lease, json!(5000), "JPY"))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "currency", "a charge is in its lease's currency");
    let kwd = app.create(&t.test_key, "charges", fee(&dinar_lease, json!("1.005"), "KWD")).await;
    assert_eq!(kwd["amount"], json!(1.005));
    // Metadata merges; an empty value removes a key.
    let id = lease["id"].as_str().unwrap();
    let p = app.call(&t.test_key, "PATCH", &format!("/v1/leases/{id}"), Some(json!({ "metadata": { "a": "1", "b": "2" } }))).await;
    assert_eq!(p.body["data"]["metadata"], json!({ "a": "1", "b": "2" }));
    let p = app.call(&t.test_key, "PATCH", &format!("/v1/leases/{id}"), Some(json!({ "metadata": { "a": "" }, "rent": 1300 }))).await;
    assert_eq!(p.status, 200, "{}", p.text);
    assert_eq!(p.body["data"]["metadata"], json!({ "b": "2" }));
    assert_eq!(p.body["data"]["rent"], json!(1300));
    assert!(p.body["data"]["updated_at"].as_str() > lease["updated_at"].as_str());
    // A building of another property cannot hold this unit.
    let other = app
        .create(
            &t.test_key,
            "properties",
            json!({ "name": "Other", "kind": "commercial", "address": { "line1": "2 Elm", "city": "Austin", "country": "US" } }),
        )
        .await;
    let b2 = app.create(&t.test_key, "buildings", json!({ "property_id": other["id"], "name": "B" })).await;
    let r = app
        .call(&t.test_key, "POST", "/v1/units", Some(json!({ "property_id": w.id("properties"), "building_id": b2["id"], "number": "9Z" })))
        .await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "building_id");
    // A flow token is shown once, then never again.
    let ft = app
        .create(
            &t.test_key,
            "flow-tokens",
            json!({ "flow": "payment", "origin": "https://pay.example.com", "invoice_id": w.id("invoices") }),
        )
        .await;
    assert!(ft["token"].as_str().unwrap().starts_with("gft_"));
    assert!(ft["expires_at"].is_string());
    let again = app.call(&t.test_key, "GET", &format!("/v1/flow-tokens/{}", ft["id"].as_str().unwrap()), None).await;
    assert!(again.body["data"].get("token").is_none());
    // A journal entry of these lines, in USD on 2027-01-01.
    let entry = |lines: Value| json!({ "lines": lines, "currency": "USD", "posted_on": "2027-01-01" });
    let post_entry = async |lines: Value| app.call(&t.test_key, "POST", "/v1/accounting-entries", Some(entry(lines))).await;
    // Unbalanced journal entries are refused.
    let r =
        post_entry(json!([{ "account": "cash", "debit": 10, "credit": 0 }, { "account": "rent_income", "debit": 0, "credit": 9 }])).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "lines");
    // Accounts come from the chart; amounts may be decimal strings and are checked like numbers.
    let r =
        post_entry(json!([{ "account": "not_an_account", "debit": "999", "credit": 0 }, { "account": "cash", "debit": 0, "credit": "1" }]))
            .await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "lines[0].account");
    let r =
        post_entry(json!([{ "account": "deposits_held", "debit": "999", "credit": 0 }, { "account": "cash", "debit": 0, "credit": "1" }]))
            .await;
    r.assert_error(400, "validation_failed");
    let lines = json!([{ "account": "cash", "debit": "12.50", "credit": 0 }, { "account": "fee_income", "debit": 0, "credit": 12.5 }]);
    let ok = app.create(&t.test_key, "accounting-entries", entry(lines)).await;
    assert_eq!(ok["lines"][0]["debit"], json!(12.5));
    assert_eq!(ok["lines"][0]["credit"], json!(0));
}
both!(fields_are_typed_and_money_is_exact);

async fn concurrent_writes_all_succeed(app: &TestApp) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    let before = app.count_rows("units").await;
    // Creates read (reference checks) before they write, while other writes commit.
    let writes = (0..60).map(|i| {
        let key = if i % 2 == 0 { t.test_key.clone() } else { t.live_key.clone() };
        let p = w.id("properties").to_string();
        let u = w.id("units").to_string();
        let test_key = t.test_key.clone();
        async move {
            if i % 2 == 0 {
                app.call(&key, "POST", "/v1/units", Some(json!({ "property_id": p, "number": format!("C{i}") }))).await
            } else {
                // Live-key calls land on the sandbox: refused, but they still touch the key.
                let _ = app.call(&key, "GET", "/v1/units", None).await;
                app.call(&test_key, "PATCH", &format!("/v1/units/{u}"), Some(json!({ "floor": i }))).await
            }
        }
    });
    let results = futures::future::join_all(writes).await;
    for r in &results {
        assert!(r.status == 200 || r.status == 201, "a concurrent write failed: {}", r.text);
    }
    assert_eq!(app.count_rows("units").await, before + 30);
}
both!(concurrent_writes_all_succeed);
