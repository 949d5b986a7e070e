//! Flow tokens are bounded by their creator. A flow token hands a web
//! page what its flow reads and writes, so only a credential that may do all of that
//! itself can mint one: `flow-tokens:write` alone must not make a `tenant-portal` token
//! that reads a lease's residents, invoices and payments, nor a `payment` token that pays.
//! A key limited to some properties mints for their records only. A token can be revoked,
//! and is refused from its next request on. The flow page never reads a token from its
//! query string (the loader hands it over in the fragment, which no server or proxy sees).

use gable_tests::{both, Res, TestApp};
use serde_json::{json, Value};
use uuid::Uuid;

const ORIGIN: &str = "https://www.example.com";

/// What each flow exercises: the scopes a key needs, besides `flow-tokens:write`, to mint
/// its token (docs/embed.md, "Who may mint a token"). Written out here, not read from
/// Gable, so that a change of the list is a change of this test too.
const NEEDS: &[(&str, &[&str])] = &[
    ("rental-application", &["listings:read", "units:read", "properties:read", "applications:write"]),
    ("booking", &["listings:read", "units:read", "properties:read", "guests:write", "bookings:write"]),
    ("payment", &["invoices:read", "charges:read", "units:read", "properties:read", "payments:write"]),
    (
        "tenant-portal",
        &[
            "leases:read",
            "units:read",
            "properties:read",
            "signatures:read",
            "tenancies:read",
            "invoices:read",
            "charges:read",
            "payments:write",
            "workorders:write",
        ],
    ),
];

fn needs(flow: &str) -> Vec<&'static str> {
    NEEDS.iter().find(|(f, _)| *f == flow).map(|(_, s)| s.to_vec()).expect("a flow")
}

fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

/// A property with a unit let by the night, a published listing, and a lease with a
/// resident and an open invoice: every flow's subject, in the sandbox.
struct Site {
    property: String,
    unit: String,
    listing: String,
    lease: String,
    invoice: String,
}

impl Site {
    fn subject(&self, flow: &str) -> (&'static str, String) {
        match flow {
            "rental-application" => ("listing_id", self.listing.clone()),
            "booking" => ("unit_id", self.unit.clone()),
            "payment" => ("invoice_id", self.invoice.clone()),
            _ => ("lease_id", self.lease.clone()),
        }
    }

    fn token_body(&self, flow: &str) -> Value {
        let (field, subject) = self.subject(flow);
        json!({ "flow": flow, "origin": ORIGIN, field: subject })
    }
}

async fn site(app: &TestApp, key: &str, name: &str) -> Site {
    let act = |path: String| async move {
        let r = app.call(key, "POST", &path, None).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
    };
    let address = json!({ "line1": "1 Maple St", "city": "Portland", "country": "US" });
    let property = id(&app.create(key, "properties", json!({ "name": name, "kind": "residential", "address": address })).await);
    let unit = id(&app
        .create(key, "units", json!({ "property_id": property, "number": "1A", "nightly_rate": "120.00", "currency": "USD" }))
        .await);
    let listing = id(&app.create(key, "listings", json!({ "unit_id": unit, "title": "Flat", "rent": 1450, "currency": "USD" })).await);
    act(format!("/v1/listings/{listing}/publish")).await;
    let lease =
        id(&app.create(key, "leases", json!({ "unit_id": unit, "start_date": "2027-01-01", "rent": 1450, "currency": "USD" })).await);
    app.create(key, "signatures", json!({ "lease_id": lease, "signer_name": "Tess Tenant", "signer_email": "tess@example.com" })).await;
    act(format!("/v1/leases/{lease}/send")).await;
    let charge = id(&app
        .create(key, "charges", json!({ "lease_id": lease, "kind": "rent", "amount": 1450, "currency": "USD", "due_date": "2027-01-01" }))
        .await);
    let invoice = id(&app
        .create(
            key,
            "invoices",
            json!({ "lease_id": lease, "charge_ids": [charge], "amount_due": 1450, "currency": "USD", "due_date": "2027-01-01" }),
        )
        .await);
    act(format!("/v1/invoices/{invoice}/open")).await;
    Site { property, unit, listing, lease, invoice }
}

/// A flow API call as the flow's own page makes it (same origin, a fresh idempotency key).
async fn flow_call(app: &TestApp, token: &str, method: &str, path: &str, body: Option<Value>) -> Res {
    let base = app.base(false).to_string();
    let mut req = app.client.request(method.parse().expect("method"), format!("{base}{path}")).bearer_auth(token);
    req = req.header("Sec-Fetch-Site", "same-origin");
    if method == "POST" {
        req = req.header("Idempotency-Key", Uuid::new_v4().to_string()).header("Origin", base);
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    app.raw(req).await
}

fn refused(r: &Res, missing: &str) {
    r.assert_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required_scope"], json!(missing), "{}", r.text);
    assert!(r.body["error"]["message"].as_str().unwrap_or_default().contains(missing), "the message names {missing}: {}", r.text);
}

/// A key with `flow-tokens:write` and these scopes.
async fn key_with(app: &TestApp, tenant: Uuid, scopes: &[&str], properties: Option<Vec<Uuid>>) -> String {
    let mut all = vec!["flow-tokens:write"];
    all.extend_from_slice(scopes);
    app.key(tenant, false, &all, properties).await
}

async fn flow_tokens_write_alone_cannot_mint_a_payment_token(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, &t.test_key, "Maple Court").await;
    let minter = key_with(app, t.id, &[], None).await;
    let before = (app.count_rows("flow_tokens").await, app.count_rows("payments").await);
    let r = app.call(&minter, "POST", "/v1/flow-tokens", Some(s.token_body("payment"))).await;
    refused(&r, "invoices:read");
    // Reading the invoice is not enough either: paying it needs `payments:write`.
    let reader = key_with(app, t.id, &["*:read"], None).await;
    let r = app.call(&reader, "POST", "/v1/flow-tokens", Some(s.token_body("payment"))).await;
    refused(&r, "payments:write");
    assert_eq!((app.count_rows("flow_tokens").await, app.count_rows("payments").await), before, "nothing written");
    let invoice = app.call(&t.test_key, "GET", &format!("/v1/invoices/{}", s.invoice), None).await;
    assert_eq!(invoice.body["data"]["status"], json!("open"), "the invoice is still unpaid");

    // With what the flow exercises, the key mints, and the token pays.
    let payer = key_with(app, t.id, &needs("payment"), None).await;
    let r = app.call(&payer, "POST", "/v1/flow-tokens", Some(s.token_body("payment"))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let token = r.body["data"]["token"].as_str().expect("token").to_string();
    let r = flow_call(app, &token, "POST", "/v1/flow/payments", Some(json!({ "scenario": "succeeded" }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
}
both!(flow_tokens_write_alone_cannot_mint_a_payment_token);

async fn flow_tokens_write_alone_cannot_mint_a_tenant_portal_token(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, &t.test_key, "Maple Court").await;
    let minter = key_with(app, t.id, &[], None).await;
    let before = app.count_rows("flow_tokens").await;
    let r = app.call(&minter, "POST", "/v1/flow-tokens", Some(s.token_body("tenant-portal"))).await;
    refused(&r, "leases:read");
    // A key that may read the lease but not write payments and work orders.
    let reader = key_with(app, t.id, &["*:read"], None).await;
    let r = app.call(&reader, "POST", "/v1/flow-tokens", Some(s.token_body("tenant-portal"))).await;
    refused(&r, "payments:write");
    assert_eq!(app.count_rows("flow_tokens").await, before, "nothing written");

    let portal = key_with(app, t.id, &needs("tenant-portal"), None).await;
    let r = app.call(&portal, "POST", "/v1/flow-tokens", Some(s.token_body("tenant-portal"))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let token = r.body["data"]["token"].as_str().expect("token").to_string();
    let r = flow_call(app, &token, "GET", "/v1/flow", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["residents"], json!([{ "name": "Tess Tenant" }]));
}
both!(flow_tokens_write_alone_cannot_mint_a_tenant_portal_token);

/// Every flow, every scope it exercises: a key holding all of them but one is refused,
/// naming that one, and writes nothing; all of them mint the token.
async fn minting_a_flow_token_needs_every_scope_its_flow_exercises(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, &t.test_key, "Maple Court").await;
    let before = app.count_rows("flow_tokens").await;
    for (flow, scopes) in NEEDS {
        for missing in scopes.iter() {
            let rest: Vec<&str> = scopes.iter().copied().filter(|s| s != missing).collect();
            let key = key_with(app, t.id, &rest, None).await;
            let r = app.call(&key, "POST", "/v1/flow-tokens", Some(s.token_body(flow))).await;
            refused(&r, missing);
        }
        // The scopes without `flow-tokens:write` itself.
        let key = app.key(t.id, false, scopes, None).await;
        refused(&app.call(&key, "POST", "/v1/flow-tokens", Some(s.token_body(flow))).await, "flow-tokens:write");
    }
    assert_eq!(app.count_rows("flow_tokens").await, before, "a refused mint leaves nothing behind");
    for (flow, scopes) in NEEDS {
        let key = key_with(app, t.id, scopes, None).await;
        let r = app.call(&key, "POST", "/v1/flow-tokens", Some(s.token_body(flow))).await;
        assert_eq!(r.status, 201, "{flow} with {scopes:?}: {}", r.text);
    }
    assert_eq!(app.count_rows("flow_tokens").await, before + NEEDS.len() as i64);
}
both!(minting_a_flow_token_needs_every_scope_its_flow_exercises);

async fn a_property_limited_key_cannot_mint_a_token_for_another_property(app: &TestApp) {
    let t = app.tenant("A").await;
    let mine = site(app, &t.test_key, "Maple Court").await;
    let theirs = site(app, &t.test_key, "Oak House").await;
    let mut before = app.count_rows("flow_tokens").await;
    for (flow, scopes) in NEEDS {
        let property: Uuid = mine.property.parse().expect("uuid");
        let key = key_with(app, t.id, scopes, Some(vec![property])).await;
        // Another property's subject is as good as missing to this key.
        let r = app.call(&key, "POST", "/v1/flow-tokens", Some(theirs.token_body(flow))).await;
        r.assert_error(404, "not_found");
        assert_eq!(r.param(), theirs.subject(flow).0, "{flow}: {}", r.text);
        // A booking of the other property's listing too.
        if *flow == "booking" {
            let body = json!({ "flow": flow, "origin": ORIGIN, "listing_id": theirs.listing });
            app.call(&key, "POST", "/v1/flow-tokens", Some(body)).await.assert_error(404, "not_found");
        }
        assert_eq!(app.count_rows("flow_tokens").await, before, "{flow}: nothing written");
        // Its own property's subject: minted, on that property.
        let r = app.call(&key, "POST", "/v1/flow-tokens", Some(mine.token_body(flow))).await;
        assert_eq!(r.status, 201, "{flow}: {}", r.text);
        assert_eq!(r.body["data"]["property_id"], json!(mine.property));
        before += 1;
    }
}
both!(a_property_limited_key_cannot_mint_a_token_for_another_property);

async fn a_revoked_flow_token_is_refused_at_once(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, &t.test_key, "Maple Court").await;
    let r = app.call(&t.test_key, "POST", "/v1/flow-tokens", Some(s.token_body("tenant-portal"))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let token_id = id(&r.body["data"]);
    assert_eq!(r.body["data"]["status"], json!("active"));
    let token = r.body["data"]["token"].as_str().expect("token").to_string();
    // In use: its session is open.
    assert_eq!(flow_call(app, &token, "GET", "/v1/flow", None).await.status, 200);

    // Revoking needs `flow-tokens:write`, and the token within the key's properties.
    let revoke = format!("/v1/flow-tokens/{token_id}/revoke");
    let reader = app.key(t.id, false, &["flow-tokens:read"], None).await;
    refused(&app.call(&reader, "POST", &revoke, None).await, "flow-tokens:write");
    let other = site(app, &t.test_key, "Oak House").await;
    let elsewhere = app.key(t.id, false, &["flow-tokens:write"], Some(vec![other.property.parse().expect("uuid")])).await;
    app.call(&elsewhere, "POST", &revoke, None).await.assert_error(404, "not_found");
    assert_eq!(flow_call(app, &token, "GET", "/v1/flow", None).await.status, 200, "refused revocations change nothing");

    let revoker = app.key(t.id, false, &["flow-tokens:write"], None).await;
    let r = app.call(&revoker, "POST", &revoke, None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["status"], json!("revoked"));
    assert!(r.body["data"]["revoked_at"].is_string(), "{}", r.text);
    assert!(r.body["data"].get("token").is_none(), "the secret is never shown again");

    // The very next request, a read or a write: 401, saying why; nothing written.
    let before = (app.count_rows("payments").await, app.count_rows("workorders").await);
    let r = flow_call(app, &token, "GET", "/v1/flow", None).await;
    r.assert_error(401, "unauthenticated");
    assert!(r.body["error"]["message"].as_str().unwrap_or_default().contains("revoked"), "{}", r.text);
    let r = flow_call(app, &token, "POST", "/v1/flow/payments", Some(json!({ "scenario": "succeeded", "invoice_id": s.invoice }))).await;
    r.assert_error(401, "unauthenticated");
    let r = flow_call(app, &token, "POST", "/v1/flow/workorders", Some(json!({ "title": "Dripping tap" }))).await;
    r.assert_error(401, "unauthenticated");
    assert_eq!((app.count_rows("payments").await, app.count_rows("workorders").await), before, "nothing written");
    let invoice = app.call(&t.test_key, "GET", &format!("/v1/invoices/{}", s.invoice), None).await;
    assert_eq!(invoice.body["data"]["status"], json!("open"));

    // Revoked once and for all: again is a state error, and its fields stay immutable.
    app.call(&revoker, "POST", &revoke, None).await.assert_error(409, "invalid_state_transition");
    let r = app.call(&t.test_key, "PATCH", &format!("/v1/flow-tokens/{token_id}"), Some(json!({ "origin": "https://x.example" }))).await;
    r.assert_error(409, "immutable_resource");
    let listed = app.call(&t.test_key, "GET", "/v1/flow-tokens?filter[status]=revoked", None).await;
    assert_eq!(listed.body["data"].as_array().map(|a| a.len()), Some(1), "{}", listed.text);
}
both!(a_revoked_flow_token_is_refused_at_once);

/// A flow token reads through the flow API only: an expansion on the collection
/// endpoints is refused like any read there, and the flow API's answer is the same
/// whatever its query asks.
async fn a_flow_token_expands_nothing(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, &t.test_key, "Maple Court").await;
    let r = app.call(&t.test_key, "POST", "/v1/flow-tokens", Some(s.token_body("payment"))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let token = r.body["data"]["token"].as_str().expect("token").to_string();
    for path in [format!("/v1/invoices/{}?expand[]=lease", s.invoice), "/v1/invoices?expand[]=lease.unit".to_string()] {
        flow_call(app, &token, "GET", &path, None).await.assert_error(403, "insufficient_scope");
    }
    let plain = flow_call(app, &token, "GET", "/v1/flow", None).await;
    let asked = flow_call(app, &token, "GET", "/v1/flow?expand[]=lease&expand[]=lease.unit.property", None).await;
    assert_eq!(plain.status, 200, "{}", plain.text);
    assert_eq!(plain.body["data"], asked.body["data"], "the flow API's answer is its own, whatever the query");
}
both!(a_flow_token_expands_nothing);

async fn the_flow_page_does_not_read_a_token_from_its_query(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, &t.test_key, "Maple Court").await;
    let r = app.call(&t.test_key, "POST", "/v1/flow-tokens", Some(s.token_body("payment"))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let token = r.body["data"]["token"].as_str().expect("token").to_string();
    let page = |query: String| async move { app.raw(app.client.get(format!("{}/embed/payment?{query}", app.base(false)))).await };
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    for claimed in [ORIGIN, "https://evil.example"] {
        let without = page(format!("origin={}&frame=f1", enc(claimed))).await;
        let with = page(format!("token={token}&origin={}&frame=f1", enc(claimed))).await;
        assert_eq!((without.status, with.status), (200, 200));
        let csp = |r: &Res| r.headers.get("content-security-policy").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        // The page is the same whether a token is in its query or not: nothing of it
        // comes from the token (the flow checks its token's origin in the browser).
        assert_eq!(csp(&with), csp(&without), "the CSP must not depend on a token query parameter");
        assert!(csp(&with).ends_with(&format!("frame-ancestors {claimed}")), "{}", csp(&with));
        assert_eq!(with.text, without.text, "the HTML must not depend on a token query parameter");
        assert!(!with.text.contains(&token), "the page never copies a token");
        assert!(with.text.contains(&format!(r#"<meta name="gable:parent-origin" content="{claimed}">"#)), "{}", with.text);
    }
    // The loader hands the token over in the fragment, never in the query.
    let loader = app.raw(app.client.get(format!("{}/embed.js", app.base(false)))).await;
    assert_eq!(loader.status, 200);
    let query = loader.text.lines().find(|l| l.contains("var q = new URLSearchParams(")).expect("the loader builds the iframe's query");
    assert!(!query.contains("token"), "the loader must not put the token in the iframe's query: {query}");
    assert!(loader.text.contains("'#' + new URLSearchParams({ token: token })"), "the loader hands the token over in the fragment");
}
both!(the_flow_page_does_not_read_a_token_from_its_query);
