//! `external_id` (docs/api.md, "External ids"): a client's own id for a record, on every
//! collection a client writes. It is kept as given, found by `filter[external_id]`, and
//! unique among a collection's records of one tenant and environment (a second holder is
//! `409`, even when two writes race); other collections, environments and tenants are
//! apart. A value that is empty, padded or holds control characters is refused, naming it.

use gable_tests::{both, TestApp};
use serde_json::{json, Value};

fn unit(property: &Value, number: &str, external_id: Value) -> Value {
    json!({ "property_id": property["id"], "number": number, "external_id": external_id })
}

async fn an_external_id_is_kept_found_and_unique(app: &TestApp) {
    let t = app.tenant("External").await;
    let key = &t.test_key;
    let property = app
        .create(
            key,
            "properties",
            json!({ "name": "Ext Court", "kind": "residential",
        "address": { "line1": "1 Ext St", "city": "Leeds", "country": "GB" }, "external_id": "P-1" }),
        )
        .await;
    assert_eq!(property["external_id"], "P-1");
    let a = app.create(key, "units", unit(&property, "1A", json!("U-1"))).await;
    assert_eq!(a["external_id"], "U-1");
    // Another collection may use the same value: uniqueness is per collection.
    let same_elsewhere = app.create(key, "owners", json!({ "name": "Ann Owner", "external_id": "U-1" })).await;
    assert_eq!(same_elsewhere["external_id"], "U-1");

    let found = app.call(key, "GET", "/v1/units?filter[external_id]=U-1", None).await;
    assert_eq!(found.status, 200, "{}", found.text);
    let ids: Vec<&Value> = found.body["data"].as_array().unwrap().iter().map(|u| &u["id"]).collect();
    assert_eq!(ids, [&a["id"]]);

    // A second unit with the same external_id: 409, and nothing written.
    let before = app.count_rows("units").await;
    let taken = app.call(key, "POST", "/v1/units", Some(unit(&property, "1B", json!("U-1")))).await;
    taken.assert_error(409, "conflict");
    assert!(taken.body["error"]["message"].as_str().unwrap().contains("external_id"), "{}", taken.text);
    assert_eq!(app.count_rows("units").await, before);

    // PATCH: into a taken value is 409; to null frees it for another record.
    let b = app.create(key, "units", unit(&property, "1B", json!("U-2"))).await;
    let patch = |id: &Value, v: Value| {
        let path = format!("/v1/units/{}", id.as_str().unwrap());
        async move { app.call(key, "PATCH", &path, Some(json!({ "external_id": v }))).await }
    };
    patch(&b["id"], json!("U-1")).await.assert_error(409, "conflict");
    let freed = patch(&a["id"], Value::Null).await;
    assert_eq!((freed.status, &freed.body["data"]["external_id"]), (200, &Value::Null), "{}", freed.text);
    let moved = patch(&b["id"], json!("U-1")).await;
    assert_eq!(moved.status, 200, "{}", moved.text);
    // Many records may have none.
    app.create(key, "units", unit(&property, "1C", Value::Null)).await;
    app.create(key, "units", json!({ "property_id": property["id"], "number": "1D" })).await;

    // Another environment and another tenant are apart.
    let live_property = app
        .call_on(
            true,
            &t.live_key,
            "POST",
            "/v1/properties",
            Some(json!({ "name": "Live Court", "kind": "residential",
        "address": { "line1": "1 Live St", "city": "Leeds", "country": "GB" }, "external_id": "P-1" })),
        )
        .await;
    assert_eq!(live_property.status, 201, "{}", live_property.text);
    let other = app.tenant("Elsewhere").await;
    let theirs = app.property(&other.test_key).await;
    let their_unit = app.call(&other.test_key, "POST", "/v1/units", Some(unit(&theirs, "1A", json!("U-1")))).await;
    assert_eq!(their_unit.status, 201, "{}", their_unit.text);
    let mine = app.call(key, "GET", "/v1/units?filter[external_id]=U-1", None).await;
    assert_eq!(mine.body["data"].as_array().unwrap().len(), 1, "another tenant's U-1 is not found here");
}
both!(an_external_id_is_kept_found_and_unique);

async fn a_bad_external_id_is_refused_naming_it(app: &TestApp) {
    let t = app.tenant("Bad external").await;
    let property = app.property(&t.test_key).await;
    let long = "x".repeat(256);
    for bad in [json!(""), json!(" U-1"), json!("U-1 "), json!("U\u{1}1"), json!(long), json!(12)] {
        let r = app.call(&t.test_key, "POST", "/v1/units", Some(unit(&property, "9Z", bad.clone()))).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.param(), "external_id", "{bad}: {}", r.text);
    }
    let edge = app.create(&t.test_key, "units", unit(&property, "9Z", json!("x".repeat(255)))).await;
    assert_eq!(edge["external_id"].as_str().map(str::len), Some(255));
    let spaced = app.create(&t.test_key, "units", unit(&property, "9Y", json!("Unit 9 Y / Block é"))).await;
    assert_eq!(spaced["external_id"], "Unit 9 Y / Block é");
}
both!(a_bad_external_id_is_refused_naming_it);

/// Two creates with one external_id at once: exactly one is made.
async fn racing_writers_make_one_holder(app: &TestApp) {
    let t = app.tenant("Racing external").await;
    let property = app.property(&t.test_key).await;
    let tries: Vec<_> =
        (0..6).map(|n| app.call(&t.test_key, "POST", "/v1/units", Some(unit(&property, &format!("R{n}"), json!("RACE"))))).collect();
    let statuses: Vec<u16> = futures::future::join_all(tries).await.iter().map(|r| r.status).collect();
    assert_eq!(statuses.iter().filter(|s| **s == 201).count(), 1, "{statuses:?}");
    assert!(statuses.iter().all(|s| *s == 201 || *s == 409), "{statuses:?}");
    let found = app.call(&t.test_key, "GET", "/v1/units?filter[external_id]=RACE", None).await;
    assert_eq!(found.body["data"].as_array().unwrap().len(), 1);
}
both!(racing_writers_make_one_holder);
