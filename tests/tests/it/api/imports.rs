//! Bulk import (docs/imports.md): an upload checks every row and writes no record; the
//! error report names each bad row; a commit writes the valid rows in batches through the
//! operations, matching rows to records by `external_id`, so a second import of the same
//! file creates nothing; the records cause no events, the import's end one. A file that is
//! not one is refused whole and leaves nothing behind.

use futures_util::StreamExt;
use gable_tests::{both, Res, TestApp};
use serde_json::{json, Value};

/// Uploads `file` as `content_type` to `POST /v1/imports?{query}`.
pub async fn upload(app: &TestApp, key: &str, query: &str, content_type: &str, file: impl Into<reqwest::Body>) -> Res {
    let req = app
        .client
        .post(format!("{}/v1/imports?{query}", app.base(key.starts_with("gbl_live_"))))
        .bearer_auth(key)
        .header("Content-Type", content_type)
        .body(file);
    app.raw(req).await
}

/// Commits an import (with `body`) and runs the import worker to its end; returns the import.
pub async fn commit(app: &TestApp, key: &str, id: &Value, body: Value) -> Value {
    let path = format!("/v1/imports/{}/commit", id.as_str().unwrap());
    let committed = app.call(key, "POST", &path, Some(body)).await;
    assert_eq!(committed.status, 200, "{}", committed.text);
    assert_eq!(committed.body["data"]["status"], "importing");
    app.run_jobs().await;
    let read = app.call(key, "GET", &format!("/v1/imports/{}", id.as_str().unwrap()), None).await;
    assert_eq!(read.status, 200, "{}", read.text);
    read.body["data"].clone()
}

/// The property the tests' files refer to by the external id `P-1`.
async fn property_p1(app: &TestApp, key: &str, name: &str) {
    app.create(
        key,
        "properties",
        json!({ "name": name, "kind": "residential", "external_id": "P-1",
            "address": { "line1": "1 Main St", "city": "Leeds", "country": "GB" } }),
    )
    .await;
}

fn counts(import: &Value) -> [i64; 4] {
    ["created", "updated", "unchanged", "skipped"].map(|k| import[k].as_i64().unwrap_or(-1))
}

async fn errors_of(app: &TestApp, key: &str, id: &Value) -> Vec<Value> {
    let res = app.call(key, "GET", &format!("/v1/imports/{}/errors", id.as_str().unwrap()), None).await;
    assert_eq!(res.status, 200, "{}", res.text);
    res.body["data"].as_array().unwrap().clone()
}

async fn a_file_is_checked_then_written_and_a_second_import_creates_nothing(app: &TestApp) {
    let t = app.tenant("Importer").await;
    let key = &t.test_key;
    property_p1(app, key, "Elm Court").await;
    let csv = "external_id,property_id.external_id,number,bedrooms\n\
               U-1,P-1,1A,2\n\
               U-2,P-1,1B,abc\n\
               U-3,P-404,1C,1\n\
               U-4,P-1,,1\n";
    let up = upload(app, key, "collection=units&file_name=units.csv", "text/csv", csv).await;
    assert_eq!(up.status, 201, "{}", up.text);
    let import = &up.body["data"];
    assert_eq!((import["object"].as_str(), import["status"].as_str()), (Some("import"), Some("validated")));
    assert_eq!(
        (import["total_rows"].as_i64(), import["valid_rows"].as_i64(), import["invalid_rows"].as_i64()),
        (Some(4), Some(1), Some(3))
    );
    assert_eq!(
        (import["file_name"].as_str(), import["format"].as_str(), import["collection"].as_str()),
        (Some("units.csv"), Some("csv"), Some("units"))
    );
    assert_eq!(app.count_rows("units").await, 0, "an upload writes no record");

    // Every bad row at once, with its line, field, code and the create's own message.
    let errors = errors_of(app, key, &import["id"]).await;
    let seen: Vec<(i64, &str, &str)> =
        errors.iter().map(|e| (e["line"].as_i64().unwrap(), e["field"].as_str().unwrap_or(""), e["code"].as_str().unwrap())).collect();
    assert_eq!(
        seen,
        [(3, "bedrooms", "invalid_value"), (4, "property_id", "missing_reference"), (5, "number", "validation_failed")],
        "{errors:?}"
    );
    assert!(errors[1]["message"].as_str().unwrap().contains("P-404"), "{errors:?}");
    let direct = app.call(key, "POST", "/v1/units", Some(json!({ "property_id": import["id"], "bedrooms": 1 }))).await;
    assert_eq!(errors[2]["message"], direct.body["error"]["message"], "the row's message is the create's");

    // A file with bad rows is committed only when they are to be skipped.
    let path = format!("/v1/imports/{}/commit", import["id"].as_str().unwrap());
    let refused = app.call(key, "POST", &path, Some(json!({}))).await;
    refused.assert_error(409, "invalid_state_transition");
    assert!(refused.body["error"]["message"].as_str().unwrap().contains("3 rows"), "{}", refused.text);
    let done = commit(app, key, &import["id"], json!({ "skip_invalid": true })).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(counts(&done), [1, 0, 0, 3]);
    assert_eq!(app.count_rows("units").await, 1);
    // Its one event.
    let events = app.call(key, "GET", &format!("/v1/events?filter[related_object_id]={}", import["id"].as_str().unwrap()), None).await;
    let types: Vec<&str> = events.body["data"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["import.completed"]);
    assert_eq!(events.body["data"][0]["data"]["object"]["created"], 1);

    // A bundle: a property and its unit (by external id, a line above), a changed unit,
    // and leads, whose creates cause no events when imported.
    let bundle = [
        json!({ "collection": "properties", "external_id": "P-2", "name": "Oak House", "kind": "residential",
                "address": { "line1": "2 Oak St", "city": "York", "country": "GB" } }),
        json!({ "collection": "units", "external_id": "U-5", "property_id": { "external_id": "P-2" }, "number": "G1" }),
        json!({ "collection": "units", "external_id": "U-1", "property_id": { "external_id": "P-1" }, "number": "1A", "bedrooms": 3 }),
        json!({ "collection": "leads", "external_id": "L-1", "name": "Ann Lead", "email": "ann@example.com" }),
    ];
    let ndjson: String = bundle.iter().map(|l| format!("{l}\n")).collect();
    let events_before = app.count_rows("events").await;
    let up = upload(app, key, "", "application/x-ndjson", ndjson.clone()).await;
    assert_eq!(up.status, 201, "{}", up.text);
    let bundled = &up.body["data"];
    assert_eq!(bundled["collections"], json!(["properties", "units", "leads"]));
    assert_eq!(bundled["invalid_rows"], 0, "{}", up.text);
    let done = commit(app, key, &bundled["id"], json!({})).await;
    assert_eq!(counts(&done), [3, 1, 0, 0], "{done}");
    let u1 = app.call(key, "GET", "/v1/units?filter[external_id]=U-1", None).await;
    assert_eq!(u1.body["data"][0]["bedrooms"], 3, "the changed row updated its record");
    let u5 = app.call(key, "GET", "/v1/units?filter[external_id]=U-5", None).await;
    let p2 = app.call(key, "GET", "/v1/properties?filter[external_id]=P-2", None).await;
    assert_eq!(u5.body["data"][0]["property_id"], p2.body["data"][0]["id"], "a row refers to a line above it");
    assert_eq!(app.count_rows("events").await, events_before + 1, "no lead.created: only import.completed");

    // The same file again: every row matched, nothing new.
    let (units, leads, properties) = (app.count_rows("units").await, app.count_rows("leads").await, app.count_rows("properties").await);
    let again = upload(app, key, "", "application/x-ndjson", ndjson).await;
    assert_eq!(again.status, 201, "{}", again.text);
    let done = commit(app, key, &again.body["data"]["id"], json!({})).await;
    assert_eq!(counts(&done), [0, 0, 4, 0], "{done}");
    assert_eq!(
        (app.count_rows("units").await, app.count_rows("leads").await, app.count_rows("properties").await),
        (units, leads, properties)
    );

    // A commit can only happen once; a finished import cannot be cancelled.
    let path = format!("/v1/imports/{}/commit", again.body["data"]["id"].as_str().unwrap());
    app.call(key, "POST", &path, Some(json!({}))).await.assert_error(409, "invalid_state_transition");
    let list = app.call(key, "GET", "/v1/imports?filter[status]=completed", None).await;
    assert_eq!(list.body["data"].as_array().unwrap().len(), 3, "{}", list.text);
}
both!(a_file_is_checked_then_written_and_a_second_import_creates_nothing);

async fn a_file_that_is_not_one_is_refused_whole_and_leaves_nothing(app: &TestApp) {
    let t = app.tenant("Bad files").await;
    let key = &t.test_key;
    let refused = |res: Res, status: u16, code: &str, words: &str| {
        res.assert_error(status, code);
        assert!(res.body["error"]["message"].as_str().unwrap().contains(words), "{}", res.text);
    };
    refused(upload(app, key, "collection=units", "text/csv", "number,colour\n1A,red\n").await, 400, "invalid_request", "line 1");
    let latin1: Vec<u8> = [&b"number,bedrooms\n1A,2\n"[..], b"Caf\xe9,1\n"].concat();
    refused(upload(app, key, "collection=units", "text/csv", latin1).await, 400, "invalid_request", "line 3");
    refused(upload(app, key, "collection=units", "application/json", "{}").await, 415, "unsupported_media_type", "text/csv");
    refused(upload(app, key, "", "text/csv", "number\n1A\n").await, 400, "invalid_parameter", "collection");
    refused(upload(app, key, "collection=events", "text/csv", "type\nx\n").await, 400, "invalid_parameter", "cannot be imported");
    refused(upload(app, key, "collection=units&colour=red", "text/csv", "number\n1A\n").await, 400, "invalid_parameter", "colour");
    // Declared over the limit: refused before the file is read.
    let stream = futures_util::stream::once(async { Ok::<_, std::io::Error>(b"number\n".to_vec()) }).chain(futures_util::stream::pending());
    let req = app
        .client
        .post(format!("{}/v1/imports?collection=units", app.base(false)))
        .bearer_auth(key)
        .header("Content-Type", "text/csv")
        .header("Content-Length", (200u64 << 20).to_string())
        .body(reqwest::Body::wrap_stream(stream));
    refused(app.raw(req).await, 413, "payload_too_large", "bytes");
    assert_eq!((app.count_rows("imports").await, app.count_rows("import_rows").await), (0, 0), "nothing of a refused file stays");
}
both!(a_file_that_is_not_one_is_refused_whole_and_leaves_nothing);

/// `cancel` while the worker writes: it stops between batches, what was written stays, and
/// nothing more is written afterwards (the batches are whole: every record written is
/// counted, and the count does not move).
async fn an_import_cancelled_while_it_writes_stops_between_batches(app: &TestApp) {
    let t = app.tenant("Canceller").await;
    let key = &t.test_key;
    property_p1(app, key, "Ash Court").await;
    // 40 batches: far more than the worker writes in the moment before the cancel.
    let mut csv = String::from("external_id,property_id.external_id,number\n");
    for i in 0..20_000 {
        csv.push_str(&format!("U-{i},P-1,{i}\n"));
    }
    let up = upload(app, key, "collection=units&file_name=many.csv", "text/csv", csv).await;
    assert_eq!(up.status, 201, "{}", up.text);
    let path = format!("/v1/imports/{}", up.body["data"]["id"].as_str().unwrap());
    let committed = app.call(key, "POST", &format!("{path}/commit"), Some(json!({}))).await;
    assert_eq!(committed.status, 200, "{}", committed.text);
    // The worker is woken by the commit; let it write a little.
    for _ in 0..100 {
        let now = app.call(key, "GET", &path, None).await;
        if now.body["data"]["processed_rows"].as_i64().unwrap_or(0) > 0 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let cancelled = app.call(key, "POST", &format!("{path}/cancel"), Some(json!({}))).await;
    assert_eq!(cancelled.status, 200, "{}", cancelled.text);
    assert_eq!(cancelled.body["data"]["status"], "cancelled");
    app.run_jobs().await;
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    let end = app.call(key, "GET", &path, None).await.body["data"].clone();
    assert_eq!(end["status"], "cancelled");
    let written = end["processed_rows"].as_i64().unwrap();
    assert!(written > 0 && written < 20_000 && written % 500 == 0, "stopped between batches: {written}");
    assert_eq!(end["created"].as_i64().unwrap(), written);
    let units = app.all_pages(key, "/v1/units?limit=100").await;
    assert_eq!(units.len() as i64, written, "every record written is counted, and no more come");
}
both!(an_import_cancelled_while_it_writes_stops_between_batches);
