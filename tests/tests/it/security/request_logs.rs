//! The request log from the attacker's side: another tenant, the other
//! environment, a weaker key and a property-limited key read none of a tenant's calls;
//! and no secret a call carried (API keys, webhook secrets, OAuth codes, tokens and
//! client secrets, passwords, flow tokens), in its body, headers or query, nor in its
//! answer, is ever in the store. A demoted user's OAuth app is `security::oauth`.

use gable_tests::{Res, TestApp};
use serde_json::{json, Value};
use uuid::Uuid;

use crate::api::request_logs::{logged, request_id};

fn refused(r: &Res, scope: &str) {
    r.assert_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required_scope"], scope, "{}", r.text);
}

async fn only_the_tenant_and_environment_and_scope_read_the_log(app: &TestApp) {
    let a = app.tenant("A").await;
    let b = app.tenant("B").await;
    let call = app.call(&a.test_key, "GET", "/v1/properties", None).await;
    let id = request_id(&call);
    logged(app, false, &a.test_key, &id).await;
    let own = app.call(&b.test_key, "GET", "/v1/units", None).await;
    logged(app, false, &b.test_key, &request_id(&own)).await;
    let path = format!("/v1/request-logs/{id}");

    // Another tenant: no such record, none in its list.
    app.call(&b.test_key, "GET", &path, None).await.assert_error(404, "not_found");
    let theirs = app.all_pages(&b.test_key, "/v1/request-logs?limit=100").await;
    assert!(theirs.iter().all(|l| l["id"] != json!(id)), "B's log holds only B's calls");
    assert!(!theirs.is_empty(), "B's own calls are in B's log");

    // The other environment: the live key of the same tenant sees no sandbox call.
    app.call_on(true, &a.live_key, "GET", &path, None).await.assert_error(404, "not_found");
    let live = app.all_pages(&a.live_key, "/v1/request-logs?limit=100").await;
    assert!(live.iter().all(|l| l["livemode"] == json!(true)), "live lists live calls only");

    // A weaker key: every read of the log refused, naming the scope.
    let weak = app.key(a.id, false, &["properties:read", "events:read"], None).await;
    refused(&app.call(&weak, "GET", &path, None).await, "request-logs:read");
    refused(&app.call(&weak, "GET", "/v1/request-logs", None).await, "request-logs:read");

    // A property-limited key cannot hold the scope at all; one with `*:read` sees nothing.
    let p = app.property(&a.test_key).await;
    let property: Uuid = p["id"].as_str().unwrap().parse().unwrap();
    let sa = app.store.service_account(a.id, "limited").await.unwrap();
    for scopes in [vec!["request-logs:read".to_string()], vec!["properties:read".to_string(), "request-logs:write".to_string()]] {
        let err = app.store.create_key(a.id, sa, false, scopes.clone(), Some(vec![property])).await.expect_err("refused");
        assert!(err.to_string().contains("request-logs"), "{scopes:?}: {err}");
    }
    let limited = app.key(a.id, false, &["*:read"], Some(vec![property])).await;
    app.call(&limited, "GET", &path, None).await.assert_error(404, "not_found");
    let r = app.call(&limited, "GET", "/v1/request-logs", None).await;
    assert_eq!(r.body["data"], json!([]), "{}", r.text);
}
gable_tests::both!(only_the_tenant_and_environment_and_scope_read_the_log);

/// A secret of Gable's form that is no real credential: what a client might paste anywhere.
fn fake(prefix: &str) -> String {
    format!("{prefix}{}", Uuid::new_v4().simple())
}

/// Every kind of secret, in every place a call can carry one, and in answers: none is
/// found in any column of the request log afterwards.
async fn no_secret_a_call_carried_is_ever_stored(app: &TestApp) {
    let t = app.tenant("Secretive").await;
    let key = &t.test_key;
    let other_key = app.key(t.id, false, &["properties:read"], None).await;
    let password = format!("hunter2-{}", Uuid::new_v4().simple());
    // Secrets of Gable's forms, anywhere: in bodies (as values, and under secret names),
    // headers and queries, on a write and a read, and kept in a record that is answered back.
    let mut secrets: Vec<String> =
        vec![other_key.clone(), key.clone(), fake("whsec_"), fake("gac_"), fake("gat_"), fake("grt_"), fake("gcs_"), fake("gft_")];
    let mut marked = None;
    for s in secrets.clone() {
        let body = json!({
            "name": "S", "kind": "residential", "address": { "line1": "1", "city": "X", "country": "US" },
            "metadata": { "note": format!("pasted {s}") },
            "client_secret": s, "refresh_token": s,
        });
        let r = app
            .raw(
                app.client
                    .post(format!("{}/v1/properties?token={s}&note=x{s}", app.sandbox))
                    .bearer_auth(key)
                    .header("X-Api-Key", &s)
                    .header("X-Note", format!("see {s}"))
                    .header("Cookie", format!("session={s}"))
                    .json(&body),
            )
            .await;
        assert_eq!(r.status, 400, "unknown fields are refused: {}", r.text);
        marked.get_or_insert_with(|| request_id(&r));
        let r = app
            .raw(app.client.get(format!("{}/v1/properties?q={s}", app.sandbox)).bearer_auth(key).header("User-Agent", format!("ua {s}")))
            .await;
        assert_eq!(r.status, 400, "{}", r.text);
        let r = app
            .call(
                key,
                "POST",
                "/v1/properties",
                Some(json!({
                    "name": "S", "kind": "residential", "address": { "line1": "1", "city": "X", "country": "US" },
                    "metadata": { "note": format!("pasted {s}") },
                })),
            )
            .await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
    // A password has no form of its own: it is known by its name, in a body, a query, a header.
    let r = app
        .raw(
            app.client
                .post(format!("{}/v1/users?password={password}", app.sandbox))
                .bearer_auth(key)
                .header("X-Password", &password)
                .json(&json!({ "email": "u@maple.example", "name": "U", "password": password, "new_password": password })),
        )
        .await;
    assert_eq!(r.status, 400, "{}", r.text);
    let with_password = request_id(&r);
    secrets.push(password);
    // Secrets Gable makes: a webhook's (answered by create and rotation), a flow token
    // (answered once, then used as a credential).
    let hook = app.call(key, "POST", "/v1/webhooks", Some(json!({ "url": "http://127.0.0.1:9/hook", "events": ["*"] }))).await;
    assert_eq!(hook.status, 201, "{}", hook.text);
    secrets.push(hook.body["data"]["secret"].as_str().unwrap().to_string());
    let rotated =
        app.call(key, "POST", &format!("/v1/webhooks/{}/rotate_secret", hook.body["data"]["id"].as_str().unwrap()), Some(json!({}))).await;
    assert_eq!(rotated.status, 200, "{}", rotated.text);
    secrets.push(rotated.body["data"]["secret"].as_str().unwrap().to_string());
    let p = app.property(key).await;
    let unit = app.create(key, "units", json!({ "property_id": p["id"], "number": "1" })).await;
    let listing = app.create(key, "listings", json!({ "unit_id": unit["id"], "title": "Flat", "rent": "900.00", "currency": "USD" })).await;
    let published = app.call(key, "POST", &format!("/v1/listings/{}/publish", listing["id"].as_str().unwrap()), Some(json!({}))).await;
    assert_eq!(published.status, 200, "{}", published.text);
    let origin = "https://www.maple.example";
    let minted = app
        .call(key, "POST", "/v1/flow-tokens", Some(json!({ "flow": "rental-application", "origin": origin, "listing_id": listing["id"] })))
        .await;
    assert_eq!(minted.status, 201, "{}", minted.text);
    let flow_token = minted.body["data"]["token"].as_str().unwrap().to_string();
    secrets.push(flow_token.clone());
    let used =
        app.raw(app.client.get(format!("{}/v1/flow", app.sandbox)).bearer_auth(&flow_token).header("Sec-Fetch-Site", "same-origin")).await;
    assert_eq!(used.status, 200, "{}", used.text);
    let used_log = logged(app, false, key, &request_id(&used)).await;
    assert_eq!(used_log["credential_type"], "flow_token");
    assert_eq!(used_log["credential_id"], minted.body["data"]["id"]);

    // Every call is recorded. A call is queued for the writer as its answer ends, so one
    // answered just before the last may be written just after it: wait for all, a while.
    let last = app.call(key, "GET", "/v1/properties?limit=1", None).await;
    logged(app, false, key, &request_id(&last)).await;
    let started = std::time::Instant::now();
    let mut records = 0;
    while started.elapsed() < std::time::Duration::from_secs(30) {
        records = app.count_where("request_logs", &format!("tenant_id = '{}'", t.id)).await;
        if records > 40 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(records > 40, "every call was recorded ({records})");
    let stored = "COALESCE(path, '') || COALESCE(query, '') || COALESCE(CAST(request_headers AS TEXT), '') || COALESCE(request_body, '') \
                  || COALESCE(response_body, '') || COALESCE(user_agent, '') || COALESCE(idempotency_key, '') || COALESCE(key_prefix, '') \
                  || COALESCE(error_code, '') || COALESCE(route, '')";
    for s in &secrets {
        // Beyond a key's first characters (which the console shows too), nothing of it.
        let secret_part = if s.starts_with("gbl_") { &s[13..] } else { s.as_str() };
        let found = app.count_where("request_logs", &format!("{stored} LIKE '%{secret_part}%'")).await;
        assert_eq!(found, 0, "{s} is stored in the request log");
    }
    // What was redacted says so, and the rest is kept.
    let l = logged(app, false, key, &marked.unwrap()).await;
    assert_eq!(l["request_headers"]["x-api-key"], "[redacted]");
    assert_eq!(l["request_headers"]["cookie"], "[redacted]");
    assert_eq!(l["request_headers"]["authorization"], "[redacted]");
    assert!(l["query"].as_str().unwrap().starts_with("token=[redacted]&note=[redacted]"), "{}", l["query"]);
    let body: Value = serde_json::from_str(l["request_body"].as_str().unwrap()).unwrap();
    assert_eq!(body["client_secret"], "[redacted]");
    assert_eq!(body["name"], "S", "what is no secret stays");
    assert_eq!(body["metadata"]["note"], "pasted gbl_test_[redacted]");
    let l = logged(app, false, key, &with_password).await;
    let body: Value = serde_json::from_str(l["request_body"].as_str().unwrap()).unwrap();
    assert_eq!(
        (&body["password"], &body["new_password"], &body["email"]),
        (&json!("[redacted]"), &json!("[redacted]"), &json!("u@maple.example"))
    );
    assert_eq!(l["request_headers"]["x-password"], "[redacted]");
    assert_eq!(l["query"], "password=[redacted]");
}
gable_tests::both!(no_secret_a_call_carried_is_ever_stored, |b| b.local_webhooks());
