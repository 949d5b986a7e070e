//! Bulk import from the attacker's side: an upload needs `imports:write` and the write of
//! every collection its file holds rows of (a bundle's found as its lines are read, the
//! refused upload leaving nothing); a commit needs them again, whoever uploaded; a key
//! limited to some properties cannot import a portfolio; another tenant's import cannot
//! be read, listed for errors, committed or cancelled.

use gable_tests::{both, TestApp};
use serde_json::json;

use crate::api::imports::upload;

async fn an_import_reaches_only_what_its_credential_may_write(app: &TestApp) {
    let t = app.tenant("Import walls").await;
    let p = app.property(&t.test_key).await;
    let csv = "external_id,property_id,number\nU-1,{P},1A\n".replace("{P}", p["id"].as_str().unwrap());

    // Without imports:write; with it but without the rows' collection's write.
    let units_only = app.key(t.id, false, &["units:write", "units:read"], None).await;
    let res = upload(app, &units_only, "collection=units", "text/csv", csv.clone()).await;
    res.assert_error(403, "insufficient_scope");
    assert!(res.text.contains("imports:write"), "{}", res.text);
    let imports_only = app.key(t.id, false, &["imports:write", "imports:read"], None).await;
    let res = upload(app, &imports_only, "collection=units", "text/csv", csv.clone()).await;
    res.assert_error(403, "insufficient_scope");
    assert!(res.text.contains("units:write"), "{}", res.text);

    // A bundle whose later line is of a collection the key may not write: refused whole.
    let narrow = app.key(t.id, false, &["imports:write", "imports:read", "units:write"], None).await;
    let bundle = format!(
        "{}\n{}\n",
        json!({ "collection": "units", "external_id": "U-9", "property_id": p["id"], "number": "9" }),
        json!({ "collection": "properties", "external_id": "P-9", "name": "Sneaky", "kind": "residential",
                "address": { "line1": "9 St", "city": "X", "country": "US" } })
    );
    let res = upload(app, &narrow, "", "application/x-ndjson", bundle).await;
    res.assert_error(403, "insufficient_scope");
    assert!(res.text.contains("properties:write"), "{}", res.text);
    assert_eq!((app.count_rows("imports").await, app.count_rows("import_rows").await), (0, 0));

    // A key limited to some properties: no import.
    let limited = app.key(t.id, false, &["*"], Some(vec![p["id"].as_str().unwrap().parse().unwrap()])).await;
    upload(app, &limited, "collection=units", "text/csv", csv.clone()).await.assert_error(403, "property_forbidden");

    // Uploaded by a full key; committed by one that may not write units: refused, unchanged.
    let up = upload(app, &t.test_key, "collection=units", "text/csv", csv.clone()).await;
    assert_eq!(up.status, 201, "{}", up.text);
    let id = up.body["data"]["id"].as_str().unwrap().to_string();
    let res = app.call(&imports_only, "POST", &format!("/v1/imports/{id}/commit"), Some(json!({}))).await;
    res.assert_error(403, "insufficient_scope");
    assert!(res.text.contains("units:write"), "{}", res.text);
    let reader = app.key(t.id, false, &["imports:read"], None).await;
    app.call(&reader, "POST", &format!("/v1/imports/{id}/commit"), Some(json!({}))).await.assert_error(403, "insufficient_scope");
    assert_eq!(app.call(&reader, "GET", &format!("/v1/imports/{id}/errors"), None).await.status, 200);
    let none = app.key(t.id, false, &["units:read"], None).await;
    app.call(&none, "GET", &format!("/v1/imports/{id}/errors"), None).await.assert_error(403, "insufficient_scope");
    app.run_jobs().await;
    assert_eq!(app.count_rows("units").await, 0);
    let read = app.call(&reader, "GET", &format!("/v1/imports/{id}"), None).await;
    assert_eq!(read.body["data"]["status"], "validated");

    // Another tenant, and the other environment, see none of it.
    let other = app.tenant("Import thief").await;
    for key in [&other.test_key, &t.live_key] {
        let live = key.starts_with("gbl_live_");
        app.call_on(live, key, "GET", &format!("/v1/imports/{id}"), None).await.assert_error(404, "not_found");
        app.call_on(live, key, "GET", &format!("/v1/imports/{id}/errors"), None).await.assert_error(404, "not_found");
        app.call_on(live, key, "POST", &format!("/v1/imports/{id}/commit"), Some(json!({}))).await.assert_error(404, "not_found");
        app.call_on(live, key, "POST", &format!("/v1/imports/{id}/cancel"), Some(json!({}))).await.assert_error(404, "not_found");
        let list = app.call_on(live, key, "GET", "/v1/imports", None).await;
        assert_eq!(list.body["data"], json!([]), "{}", list.text);
    }
    app.run_jobs().await;
    assert_eq!(app.count_rows("units").await, 0);
}
both!(an_import_reaches_only_what_its_credential_may_write);
