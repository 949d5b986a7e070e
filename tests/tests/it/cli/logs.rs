//! `gable logs tail`: the calls of the key's environment, one line each as the request log
//! records them, narrowed by status, path and method on the server; refused with the API's
//! words to a key that may not read the log.

use std::time::Duration;

use gable_tests::cli::Cli;
use gable_tests::{both, TestApp};
use serde_json::{json, Value};

/// Calls are written by the log's lowest-priority writer: seconds, on a busy machine.
const WAIT: Duration = Duration::from_secs(15);

fn request_id(r: &gable_tests::Res) -> String {
    r.headers.get("request-id").and_then(|v| v.to_str().ok()).expect("Request-Id").to_string()
}

async fn the_tail_shows_each_call_as_it_is_recorded(app: &TestApp) {
    let t = app.tenant("Tail CLI").await;
    let cli = Cli::new(&app.sandbox, &t.test_key);
    let mut tail = cli.spawn(&["logs", "tail", "--status", "4xx", "--path", "/v1/properties"]);
    let said = tail.told("Tailing the request log of", WAIT).await;
    assert!(said.contains("the sandbox (test mode)"), "{said}");
    tail.told("Ready", WAIT).await;
    let ok = app.call(&t.test_key, "GET", "/v1/properties", None).await;
    assert_eq!(ok.status, 200);
    app.call(&t.test_key, "GET", "/v1/units/nope", None).await;
    let refused = app.call(&t.test_key, "POST", "/v1/properties", Some(json!({ "name": "No kind" }))).await;
    assert_eq!(refused.status, 400);
    let line = tail.line(WAIT).await.expect("the refused call's line");
    assert!(
        line.contains("POST   /v1/properties  400 validation_failed") && line.ends_with(&request_id(&refused)),
        "method, path, status, error code, request id: {line}"
    );
    assert!(tail.line(Duration::from_millis(1500)).await.is_none(), "a 200, and another path, are not shown");
    drop(tail);

    // An exact status, as JSON lines: the call as the API shows it.
    let mut tail = cli.spawn(&["logs", "tail", "--status", "404", "--format", "json"]);
    tail.told("Ready", WAIT).await;
    app.call(&t.test_key, "POST", "/v1/properties", Some(json!({ "name": "No kind" }))).await;
    let missing = app.call(&t.test_key, "GET", &format!("/v1/properties/{}", uuid::Uuid::now_v7()), None).await;
    assert_eq!(missing.status, 404);
    let call: Value = serde_json::from_str(&tail.line(WAIT).await.expect("the 404")).expect("a JSON line");
    assert_eq!(call["id"], request_id(&missing).as_str(), "only the 404, not the 400");
    let shown = app.call(&t.test_key, "GET", &format!("/v1/request-logs/{}", request_id(&missing)), None).await;
    assert_eq!(shown.body["data"], call);
    drop(tail);

    // Bad input is refused before anything is read.
    let bad = cli.run(&["logs", "tail", "--status", "4x"]).await;
    assert!(!bad.success && bad.stderr.contains("is not a status or a class"), "{bad:?}");
    let bad = cli.run(&["logs", "tail", "--method", "FETCH"]).await;
    assert!(!bad.success && bad.stderr.contains("400 invalid_parameter") && bad.stderr.contains("filter[method]"), "{bad:?}");

    // A key that may not read the request log is told so by the server.
    let narrow = app.key(t.id, false, &["properties:read"], None).await;
    let out = Cli::new(&app.sandbox, &narrow).run(&["logs", "tail"]).await;
    assert!(!out.success && out.stderr.contains("403 insufficient_scope"), "{out:?}");
}
both!(the_tail_shows_each_call_as_it_is_recorded);
