//! The embeddable flows' server side (`docs/embed.md`): flow tokens bound to
//! one flow and subject, the flow API each flow's page calls (and nothing else a token
//! can reach), the records and events each flow makes through the same operations as the
//! API, and the pages and loader a website embeds. The flows in a real browser are
//! `tests/browser/embed.test.mjs`.

use chrono::Duration;
use gable_tests::{both, Res, TestApp};
use serde_json::{json, Value};
use uuid::Uuid;

const ORIGIN: &str = "https://www.example.com";

fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

/// A property with a unit, a published listing, a sent lease with an open invoice, in
/// one environment: every flow's subject.
struct Site {
    livemode: bool,
    key: String,
    property: String,
    unit: String,
    listing: String,
    lease: String,
    invoice: String,
}

async fn site(app: &TestApp, livemode: bool, key: &str) -> Site {
    let make = |resource: &'static str, body: Value| async move {
        let r = app.call_on(livemode, key, "POST", &format!("/v1/{resource}"), Some(body)).await;
        assert_eq!(r.status, 201, "{resource}: {}", r.text);
        id(&r.body["data"])
    };
    let act = |path: String| async move {
        let r = app.call_on(livemode, key, "POST", &path, None).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
    };
    let address = json!({ "line1": "1 Maple St", "city": "Portland", "region": "OR", "postal_code": "97201", "country": "US" });
    let property = make(
        "properties",
        json!({ "name": "Maple Court", "kind": "residential", "address": address, "payment_instructions": "Pay by bank transfer to IBAN X." }),
    )
    .await;
    let unit =
        make("units", json!({ "property_id": property, "number": "1A", "bedrooms": 2, "nightly_rate": "120.00", "currency": "USD" })).await;
    let listing = make(
        "listings",
        json!({ "unit_id": unit, "title": "Bright 2-bed", "rent": 1450, "deposit": 1450, "currency": "USD", "nightly_rate": 150 }),
    )
    .await;
    act(format!("/v1/listings/{listing}/publish")).await;
    let lease =
        make("leases", json!({ "unit_id": unit, "start_date": "2027-01-01", "end_date": "2027-12-31", "rent": 1450, "currency": "USD" }))
            .await;
    make("signatures", json!({ "lease_id": lease, "signer_name": "Tess Tenant", "signer_email": "tess@example.com" })).await;
    act(format!("/v1/leases/{lease}/send")).await;
    let charge =
        make("charges", json!({ "lease_id": lease, "kind": "rent", "amount": 1450, "currency": "USD", "due_date": "2027-01-01" })).await;
    let invoice = make(
        "invoices",
        json!({ "lease_id": lease, "charge_ids": [charge], "amount_due": 1450, "currency": "USD", "due_date": "2027-01-01" }),
    )
    .await;
    act(format!("/v1/invoices/{invoice}/open")).await;
    Site { livemode, key: key.to_string(), property, unit, listing, lease, invoice }
}

impl Site {
    /// A flow token (its secret) for `flow` on `subject` = id.
    async fn token(&self, app: &TestApp, flow: &str, subject: (&str, &str)) -> String {
        let r = self.token_res(app, json!({ "flow": flow, "origin": ORIGIN, subject.0: subject.1 })).await;
        assert_eq!(r.status, 201, "{flow} token: {}", r.text);
        r.body["data"]["token"].as_str().expect("token").to_string()
    }

    async fn token_res(&self, app: &TestApp, body: Value) -> Res {
        app.call_on(self.livemode, &self.key, "POST", "/v1/flow-tokens", Some(body)).await
    }

    async fn get(&self, app: &TestApp, resource: &str, id: &str) -> Value {
        let r = app.call_on(self.livemode, &self.key, "GET", &format!("/v1/{resource}/{id}"), None).await;
        assert_eq!(r.status, 200, "{resource}/{id}: {}", r.text);
        r.body["data"].clone()
    }

    /// The events of one type about one record.
    async fn events(&self, app: &TestApp, ty: &str, object_id: &str) -> usize {
        let all = app.all_pages(&self.key, &format!("/v1/events?limit=100&filter[type]={ty}")).await;
        all.iter().filter(|e| e["data"]["object"]["id"] == json!(object_id)).count()
    }
}

/// A flow API call as the flow's page makes it (same origin, a fresh idempotency key).
async fn flow(app: &TestApp, livemode: bool, token: &str, method: &str, path: &str, body: Option<Value>) -> Res {
    let mut req = app.client.request(method.parse().expect("method"), format!("{}{path}", app.base(livemode))).bearer_auth(token);
    req = req.header("Sec-Fetch-Site", "same-origin");
    if method == "POST" {
        req = req.header("Idempotency-Key", Uuid::new_v4().to_string()).header("Origin", app.base(livemode));
    }
    if let Some(b) = body {
        req = req.json(&b);
    }
    app.raw(req).await
}

fn application_body() -> Value {
    json!({
        "applicants": [{ "name": "Ada Applicant", "email": "ada@example.com", "phone": "+1 555 0100" }],
        "adults": 2, "children": 1, "pets": "one cat", "desired_move_in": "2027-01-15",
        "employment_status": "employed", "employer": "Acme", "job_title": "Engineer", "employed_since": "2020-03-01",
        "monthly_income": "6200.00",
        "references": [{ "name": "Rita Ref", "relationship": "former landlord", "email": "rita@example.com" }],
        "consent": { "screening": true, "terms": true, "signature": "Ada Applicant" },
    })
}

async fn tokens_name_one_subject_their_flow_can_serve(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, false, &t.test_key).await;
    let refused = [
        (json!({ "flow": "rental-application", "origin": ORIGIN }), 400, "listing_id"),
        (json!({ "flow": "rental-application", "origin": ORIGIN, "unit_id": s.unit }), 400, "unit_id"),
        (json!({ "flow": "booking", "origin": ORIGIN, "unit_id": s.unit, "listing_id": s.listing }), 400, "unit_id"),
        (json!({ "flow": "payment", "origin": ORIGIN, "lease_id": s.lease }), 400, "lease_id"),
        (json!({ "flow": "tenant-portal", "origin": "https://www.example.com/path", "lease_id": s.lease }), 400, "origin"),
        (json!({ "flow": "checkout", "origin": ORIGIN, "lease_id": s.lease }), 400, "flow"),
    ];
    let before = app.count_rows("flow_tokens").await;
    for (body, status, param) in refused {
        let r = s.token_res(app, body.clone()).await;
        r.assert_error(status, "validation_failed");
        assert_eq!(r.param(), param, "{body}");
    }
    // A subject that does not exist (or is another tenant's) is missing, as on the API.
    let r = s.token_res(app, json!({ "flow": "payment", "origin": ORIGIN, "invoice_id": Uuid::now_v7() })).await;
    r.assert_error(404, "not_found");
    assert_eq!(r.param(), "invoice_id");
    // Subjects in states their flows cannot serve are conflicts.
    let draft = app.create(&t.test_key, "listings", json!({ "unit_id": s.unit, "title": "Draft", "rent": 900, "currency": "USD" })).await;
    let bare = app.create(&t.test_key, "units", json!({ "property_id": s.property, "number": "2B" })).await;
    let draft_lease =
        app.create(&t.test_key, "leases", json!({ "unit_id": s.unit, "start_date": "2028-01-01", "rent": 1, "currency": "USD" })).await;
    for body in [
        json!({ "flow": "rental-application", "origin": ORIGIN, "listing_id": id(&draft) }),
        json!({ "flow": "booking", "origin": ORIGIN, "unit_id": id(&bare) }),
        json!({ "flow": "tenant-portal", "origin": ORIGIN, "lease_id": id(&draft_lease) }),
    ] {
        s.token_res(app, body.clone()).await.assert_error(409, "conflict");
    }
    assert_eq!(app.count_rows("flow_tokens").await, before, "a refused token leaves nothing behind");

    // Each flow with its subject; the secret is shown once and lives 30 minutes.
    for (flow, subject) in [
        ("rental-application", ("listing_id", s.listing.as_str())),
        ("booking", ("listing_id", s.listing.as_str())),
        ("booking", ("unit_id", s.unit.as_str())),
        ("payment", ("invoice_id", s.invoice.as_str())),
        ("tenant-portal", ("lease_id", s.lease.as_str())),
    ] {
        let r = s.token_res(app, json!({ "flow": flow, "origin": "http://127.0.0.1:5173", subject.0: subject.1 })).await;
        assert_eq!(r.status, 201, "{flow}: {}", r.text);
        let d = &r.body["data"];
        assert!(d["token"].as_str().unwrap().starts_with("gft_") && d["token"].as_str().unwrap().len() >= 40);
        let expires = chrono::DateTime::parse_from_rfc3339(d["expires_at"].as_str().unwrap()).unwrap().with_timezone(&chrono::Utc);
        let left = expires - app.clock.now();
        assert!(left <= Duration::minutes(30) && left > Duration::minutes(29), "expires in {left}");
        let again = s.get(app, "flow-tokens", &id(d)).await;
        assert!(again.get("token").is_none(), "shown once: {again}");
    }
}
both!(tokens_name_one_subject_their_flow_can_serve);

async fn a_flow_token_opens_its_own_flow_only(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, false, &t.test_key).await;
    let token = s.token(app, "rental-application", ("listing_id", &s.listing)).await;

    // Nothing of the API but its flow: like a key without scopes.
    let r = app.call(&token, "GET", "/v1/properties", None).await;
    r.assert_error(403, "insufficient_scope");
    let r = app.call(&token, "GET", &format!("/v1/listings/{}", s.listing), None).await;
    r.assert_error(403, "insufficient_scope");
    let r = app.call(&token, "POST", "/v1/flow-tokens", Some(json!({ "flow": "booking", "origin": ORIGIN, "unit_id": s.unit }))).await;
    r.assert_error(403, "insufficient_scope");
    // Writes of another flow, and paths the flow API does not have.
    let r = flow(app, false, &token, "POST", "/v1/flow/bookings", Some(json!({}))).await;
    r.assert_error(403, "insufficient_scope");
    let r = flow(app, false, &token, "POST", "/v1/flow/leases", Some(json!({}))).await;
    r.assert_error(404, "not_found");
    let r = flow(app, false, &token, "DELETE", "/v1/flow", None).await;
    r.assert_error(405, "method_not_allowed");
    // The flow API is for flow tokens only.
    let r = flow(app, false, &t.test_key, "GET", "/v1/flow", None).await;
    r.assert_error(403, "insufficient_scope");
    // The other environment's listener, unknown and malformed tokens.
    let r = flow(app, true, &token, "GET", "/v1/flow", None).await;
    r.assert_error(401, "key_environment_mismatch");
    let r = flow(app, false, "gft_unknownunknownunknownunknownunknown000", "GET", "/v1/flow", None).await;
    r.assert_error(401, "unauthenticated");

    // Browsers on other pages: refused, whatever the token.
    let base = app.base(false).to_string();
    let cross = [("Origin", "https://evil.example"), ("Sec-Fetch-Site", "cross-site"), ("Sec-Fetch-Site", "same-site")];
    for (name, value) in cross {
        let req = app.client.get(format!("{base}/v1/flow")).bearer_auth(&token).header(name, value);
        app.raw(req).await.assert_error(403, "origin_forbidden");
    }
    let before = app.count_rows("applications").await;
    let req = app
        .client
        .post(format!("{base}/v1/flow/applications"))
        .bearer_auth(&token)
        .header("Origin", "https://www.example.com")
        .header("Idempotency-Key", Uuid::new_v4().to_string())
        .json(&application_body());
    app.raw(req).await.assert_error(403, "origin_forbidden");
    assert_eq!(app.count_rows("applications").await, before, "a refused write changes nothing");
    // Its own page (same origin) gets through; no CORS header is ever sent.
    let r = flow(app, false, &token, "GET", "/v1/flow", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.headers.get("access-control-allow-origin").is_none());

    // Expiry follows the environment's clock: the sandbox clock moves past 30 minutes.
    let to = app.clock.now() + Duration::minutes(31);
    let r = app.call(&t.test_key, "POST", "/v1/sandbox/clock/advance", Some(json!({ "to": to.to_rfc3339() }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = flow(app, false, &token, "GET", "/v1/flow", None).await;
    r.assert_error(401, "token_expired");
    let r = flow(app, false, &token, "POST", "/v1/flow/applications", Some(application_body())).await;
    r.assert_error(401, "token_expired");
    assert_eq!(app.count_rows("applications").await, before);
}
both!(a_flow_token_opens_its_own_flow_only);

async fn the_rental_application_flow_submits_once(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, false, &t.test_key).await;
    let token = s.token(app, "rental-application", ("listing_id", &s.listing)).await;
    let r = flow(app, false, &token, "GET", "/v1/flow", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["object"], json!("flow_session"));
    let d = &r.body["data"];
    assert_eq!((d["flow"].clone(), d["livemode"].clone(), d["origin"].clone()), (json!("rental-application"), json!(false), json!(ORIGIN)));
    assert_eq!(d["listing"]["title"], json!("Bright 2-bed"));
    assert_eq!(d["listing"]["rent"], json!("1450.00"), "money as fixed decimal strings");
    assert_eq!(d["listing"]["unit"]["bedrooms"], json!(2));
    assert_eq!(d["property"]["name"], json!("Maple Court"));
    assert_eq!(d["property"]["address"]["city"], json!("Portland"));
    assert!(d["completed"].is_null());
    assert!(d.get("lease").is_none() && d.get("invoice").is_none(), "the flow shows its own subject only: {d}");

    // Bad input: a clear error naming the field, and nothing written.
    let before = app.count_rows("applications").await;
    let mut bad = application_body();
    bad["consent"]["screening"] = json!(false);
    let mut bad_income = application_body();
    bad_income["monthly_income"] = json!("lots");
    let mut bad_email = application_body();
    bad_email["applicants"][0]["email"] = json!("");
    let mut extra = application_body();
    extra["status"] = json!("approved");
    for (body, param) in [(bad, "consent.screening"), (bad_income, "monthly_income"), (bad_email, "applicants[0].email"), (extra, "status")]
    {
        let r = flow(app, false, &token, "POST", "/v1/flow/applications", Some(body)).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.param(), param, "{}", r.text);
    }
    assert_eq!(app.count_rows("applications").await, before);

    let r = flow(app, false, &token, "POST", "/v1/flow/applications", Some(application_body())).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["object"], json!("application"));
    assert_eq!(r.body["data"]["status"], json!("submitted"));
    let app_id = id(&r.body["data"]);
    // Through the API: the same record an integrator would have made.
    let a = s.get(app, "applications", &app_id).await;
    assert_eq!(a["listing_id"], json!(s.listing));
    assert_eq!(a["status"], json!("submitted"));
    assert_eq!((a["adults"].clone(), a["children"].clone(), a["employer"].clone()), (json!(2), json!(1), json!("Acme")));
    assert_eq!(a["monthly_income"], json!(6200));
    assert_eq!(a["reference_contacts"][0]["name"], json!("Rita Ref"));
    assert_eq!(a["consent_signature"], json!("Ada Applicant"));
    assert!(a["consented_at"].is_string() && a["submitted_at"].is_string());
    assert_eq!(s.events(app, "application.submitted", &app_id).await, 1);

    // One application per token; the session says it is done.
    let r = flow(app, false, &token, "POST", "/v1/flow/applications", Some(application_body())).await;
    r.assert_error(409, "conflict");
    assert_eq!(app.count_rows("applications").await, before + 1);
    let r = flow(app, false, &token, "GET", "/v1/flow", None).await;
    assert_eq!(r.body["data"]["completed"], json!({ "object": "application", "id": app_id }));
}
both!(the_rental_application_flow_submits_once);

async fn the_booking_flow_books_free_nights(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, false, &t.test_key).await;
    let today = app.clock.now().date_naive();
    let day = |n: i64| (today + Duration::days(n)).to_string();
    // An existing booking blocks its nights.
    let guest = app.create(&t.test_key, "guests", json!({ "name": "Gus" })).await;
    app.create(&t.test_key, "bookings", json!({ "unit_id": s.unit, "guest_id": id(&guest), "check_in": day(10), "check_out": day(13) }))
        .await;
    let token = s.token(app, "booking", ("listing_id", &s.listing)).await;
    let r = flow(app, false, &token, "GET", "/v1/flow", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.body["data"];
    assert_eq!(d["nightly_rate"], json!("150.00"), "the listing's rate over the unit's");
    assert_eq!(d["unit"]["number"], json!("1A"));
    assert_eq!(d["today"], json!(today.to_string()));
    assert_eq!(d["unavailable"], json!([{ "start": day(10), "end": day(13) }]));

    let stay = |a: i64, b: i64| json!({ "check_in": day(a), "check_out": day(b), "guests_count": 2, "guest": { "name": "Bea Booker", "email": "bea@example.com" } });
    let before = (app.count_rows("bookings").await, app.count_rows("guests").await);
    let r = flow(app, false, &token, "POST", "/v1/flow/bookings", Some(stay(12, 14))).await;
    r.assert_error(409, "conflict");
    for (body, param) in
        [(stay(-2, 1), "check_in"), (stay(5, 5), "check_out"), (json!({ "check_in": day(1), "check_out": day(2) }), "guest")]
    {
        let r = flow(app, false, &token, "POST", "/v1/flow/bookings", Some(body)).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.param(), param, "{}", r.text);
    }
    assert_eq!((app.count_rows("bookings").await, app.count_rows("guests").await), before, "refusals leave no guest behind");

    // Check-out day of one stay is the check-in day of the next: no overlap.
    let r = flow(app, false, &token, "POST", "/v1/flow/bookings", Some(stay(13, 16))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let b = &r.body["data"];
    assert_eq!((b["status"].clone(), b["total"].clone()), (json!("confirmed"), json!("450.00")), "3 nights × 150.00");
    let booking = s.get(app, "bookings", &id(b)).await;
    assert_eq!(booking["guests_count"], json!(2));
    assert_eq!(booking["unit_id"], json!(s.unit));
    let guest = s.get(app, "guests", booking["guest_id"].as_str().unwrap()).await;
    assert_eq!(guest["email"], json!("bea@example.com"));
    assert_eq!(s.events(app, "booking.created", &id(b)).await, 1);
    let r = flow(app, false, &token, "POST", "/v1/flow/bookings", Some(stay(20, 21))).await;
    r.assert_error(409, "conflict");

    // A unit's token uses the unit's rate.
    let token = s.token(app, "booking", ("unit_id", &s.unit)).await;
    let r = flow(app, false, &token, "POST", "/v1/flow/bookings", Some(stay(20, 22))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["total"], json!("240.00"));
}
both!(the_booking_flow_books_free_nights);

async fn the_payment_flow_pays_once(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, false, &t.test_key).await;
    let token = s.token(app, "payment", ("invoice_id", &s.invoice)).await;
    let r = flow(app, false, &token, "GET", "/v1/flow", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let inv = &r.body["data"]["invoice"];
    assert_eq!((inv["amount_due"].clone(), inv["amount_remaining"].clone()), (json!("1450.00"), json!("1450.00")));
    assert_eq!(r.body["data"]["scenarios"], json!(["succeeded", "failed", "reversed"]));
    assert!(r.body["data"]["payment_instructions"].is_null(), "the sandbox takes test payments instead");

    let base = app.base(false).to_string();
    let pay = |key: Option<String>, scenario: &'static str| {
        let mut req = app.client.post(format!("{base}/v1/flow/payments")).bearer_auth(&token).header("Origin", base.clone());
        if let Some(k) = key {
            req = req.header("Idempotency-Key", k);
        }
        app.raw(req.json(&json!({ "scenario": scenario })))
    };
    pay(None, "succeeded").await.assert_error(400, "missing_idempotency_key");
    // A decline: the payment is failed, the invoice still open.
    let r = pay(Some(Uuid::new_v4().to_string()), "failed").await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["status"], json!("failed"));
    assert!(r.body["data"]["failure_message"].is_string());
    // A double click: one key, one payment, the same answer.
    let key = Uuid::new_v4().to_string();
    let first = pay(Some(key.clone()), "succeeded").await;
    assert_eq!(first.status, 201, "{}", first.text);
    let second = pay(Some(key), "succeeded").await;
    assert_eq!(second.status, 201, "{}", second.text);
    assert_eq!(first.body["data"]["id"], second.body["data"]["id"]);
    let payments = app.all_pages(&t.test_key, &format!("/v1/payments?filter[invoice_id]={}", s.invoice)).await;
    assert_eq!(payments.len(), 2, "one declined and one paid");
    assert_eq!(first.body["data"]["amount"], json!("1450.00"));
    assert_eq!(s.get(app, "invoices", &s.invoice).await["status"], json!("paid"));
    assert_eq!(s.events(app, "payment.succeeded", &id(&first.body["data"])).await, 1);
    // Paid: nothing left to pay.
    pay(Some(Uuid::new_v4().to_string()), "succeeded").await.assert_error(409, "conflict");
    // The flow pays its own invoice only.
    let r =
        flow(app, false, &token, "POST", "/v1/flow/payments", Some(json!({ "scenario": "succeeded", "invoice_id": Uuid::now_v7() }))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "invoice_id");

    // Live mode takes no cards: the session shows the property's instructions.
    let live = site(app, true, &t.live_key).await;
    let token = live.token(app, "payment", ("invoice_id", &live.invoice)).await;
    let r = flow(app, true, &token, "GET", "/v1/flow", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert!(r.body["data"]["scenarios"].is_null());
    assert_eq!(r.body["data"]["payment_instructions"], json!("Pay by bank transfer to IBAN X."));
    let r = flow(app, true, &token, "POST", "/v1/flow/payments", Some(json!({ "scenario": "succeeded" }))).await;
    r.assert_error(400, "invalid_request");
}
both!(the_payment_flow_pays_once);

async fn the_tenant_portal_serves_its_lease_only(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, false, &t.test_key).await;
    let other = site(app, false, &t.test_key).await;
    // A work order of the same unit but not of this lease is not the portal's to show.
    app.create(&t.test_key, "workorders", json!({ "property_id": s.property, "unit_id": s.unit, "title": "Staff: repaint" })).await;
    let token = s.token(app, "tenant-portal", ("lease_id", &s.lease)).await;
    let r = flow(app, false, &token, "GET", "/v1/flow", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let d = &r.body["data"];
    assert_eq!(d["lease"]["id"], json!(s.lease));
    assert_eq!(d["lease"]["rent"], json!("1450.00"));
    assert_eq!(d["residents"], json!([{ "name": "Tess Tenant" }]));
    assert_eq!(d["balance"], json!({ "amount": "1450.00", "currency": "USD" }));
    assert_eq!(d["invoices"].as_array().unwrap().len(), 1);
    assert_eq!(d["invoices"][0]["id"], json!(s.invoice));
    assert_eq!(d["workorders"], json!([]));

    // A maintenance request: a work order of the lease's unit, with the lease.
    let r = flow(app, false, &token, "POST", "/v1/flow/workorders", Some(json!({ "title": "Dripping tap", "priority": "high" }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let wo = s.get(app, "workorders", &id(&r.body["data"])).await;
    assert_eq!(
        (wo["lease_id"].clone(), wo["unit_id"].clone(), wo["property_id"].clone()),
        (json!(s.lease), json!(s.unit), json!(s.property))
    );
    assert_eq!(wo["priority"], json!("high"));
    assert_eq!(s.events(app, "workorder.created", &id(&wo)).await, 1);
    let r = flow(app, false, &token, "POST", "/v1/flow/workorders", Some(json!({ "priority": "urgent" }))).await;
    r.assert_error(400, "validation_failed");
    let r = flow(app, false, &token, "POST", "/v1/flow/workorders", Some(json!({ "title": "x", "vendor_id": Uuid::now_v7() }))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "vendor_id", "the portal sets only what a resident may");

    // Paying: its lease's invoices only; another lease's is as good as missing.
    let r =
        flow(app, false, &token, "POST", "/v1/flow/payments", Some(json!({ "scenario": "succeeded", "invoice_id": other.invoice }))).await;
    r.assert_error(404, "not_found");
    assert_eq!(r.param(), "invoice_id");
    assert_eq!(s.get(app, "invoices", &other.invoice).await["status"], json!("open"));
    let r = flow(app, false, &token, "POST", "/v1/flow/payments", Some(json!({ "scenario": "succeeded", "invoice_id": s.invoice }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["status"], json!("succeeded"));
    let r = flow(app, false, &token, "GET", "/v1/flow", None).await;
    let d = &r.body["data"];
    assert_eq!(d["balance"]["amount"], json!("0.00"));
    assert_eq!(d["invoices"][0]["status"], json!("paid"));
    assert_eq!(d["payments"].as_array().unwrap().len(), 1);
    assert_eq!(d["workorders"].as_array().unwrap().len(), 1, "its own request, not staff's: {}", d["workorders"]);
    assert!(d["completed"].is_null(), "the portal is a session, never done");
}
both!(the_tenant_portal_serves_its_lease_only);

async fn pages_are_framed_by_their_origin_only(app: &TestApp) {
    let t = app.tenant("A").await;
    let s = site(app, false, &t.test_key).await;
    let token = s.token(app, "payment", ("invoice_id", &s.invoice)).await;
    let page = |livemode: bool, path: String| async move { app.raw(app.client.get(format!("{}{path}", app.base(livemode)))).await };

    // The loader names its host page's origin; the token travels in the fragment, which
    // the server never sees (the flow checks the token's origin against the page's).
    let r = page(false, "/embed/payment?origin=https%3A%2F%2Fwww.example.com&frame=f1".into()).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let h = |name: &str| r.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("").to_string();
    let csp = h("content-security-policy");
    assert!(csp.contains(&format!("frame-ancestors {ORIGIN}")), "the host page's origin: {csp}");
    // A token in the query (an old loader's) is not read: the same page, the claimed origin.
    let with_token = page(false, format!("/embed/payment?token={token}&origin=https%3A%2F%2Fwww.example.com&frame=f1")).await;
    assert_eq!(with_token.text, r.text);
    assert_eq!(with_token.headers["content-security-policy"], r.headers["content-security-policy"]);
    let evil = page(false, format!("/embed/payment?token={token}&origin=https%3A%2F%2Fevil.example&frame=f1")).await;
    let evil_csp = evil.headers["content-security-policy"].to_str().unwrap().to_string();
    assert!(evil_csp.ends_with("frame-ancestors https://evil.example") && !evil_csp.contains(ORIGIN), "{evil_csp}");
    for part in
        ["default-src 'none'", "script-src 'self' 'wasm-unsafe-eval'", "connect-src 'self'", "base-uri 'none'", "form-action 'none'"]
    {
        assert!(csp.contains(part), "{part} in {csp}");
    }
    assert!(!csp.contains("unsafe-inline"), "{csp}");
    assert_eq!((h("cache-control"), h("referrer-policy")), ("no-store".into(), "no-referrer".into()));
    assert!(h("x-frame-options").is_empty(), "frame-ancestors decides; X-Frame-Options would forbid every site");
    assert!(r.text.contains(r#"<meta name="gable:flow" content="payment">"#), "{}", r.text);
    assert!(r.text.contains(&format!(r#"<meta name="gable:parent-origin" content="{ORIGIN}">"#)));
    assert!(r.text.contains(r#"<meta name="gable:frame" content="f1">"#));
    assert!(!r.text.contains("<script>") && !with_token.text.contains(&token), "no inline script, and the page never copies a token");

    // Whatever the token, the page may be framed by the origin the loader claims (to show
    // the flow, or its error, there); with no usable origin, by nobody.
    let r = page(false, "/embed/booking?token=gft_nope&origin=http%3A%2F%2F127.0.0.1%3A5173&frame=x".into()).await;
    assert!(r.headers["content-security-policy"].to_str().unwrap().contains("frame-ancestors http://127.0.0.1:5173"));
    let r = page(false, "/embed/booking?token=gft_nope&origin=javascript%3Aalert(1)".into()).await;
    assert!(r.headers["content-security-policy"].to_str().unwrap().contains("frame-ancestors 'none'"));
    let r = page(false, "/embed/checkout".into()).await;
    assert_eq!(r.status, 404);
    // A page's frame id is an id, not markup.
    let r = page(false, "/embed/booking?frame=%22%3E%3Cscript%3E".into()).await;
    assert!(!r.text.contains("<script>"), "{}", r.text);

    // The loader: on both listeners, JavaScript, revalidated by its ETag.
    for livemode in [true, false] {
        let r = page(livemode, "/embed.js".into()).await;
        assert_eq!(r.status, 200);
        assert!(r.headers["content-type"].to_str().unwrap().starts_with("text/javascript"));
        assert!(r.text.contains("data-flow") && r.text.contains("postMessage"));
        assert!(!r.text.contains("'*'") && !r.text.contains("\"*\""), "postMessage never targets *");
        let etag = r.headers["etag"].to_str().unwrap().to_string();
        assert!(r.headers["cache-control"].to_str().unwrap().contains("max-age="));
        let again = app.raw(app.client.get(format!("{}/embed.js", app.base(livemode))).header("If-None-Match", &etag)).await;
        assert_eq!(again.status, 304);
        let gz = app.raw(app.client.get(format!("{}/embed.js", app.base(livemode))).header("Accept-Encoding", "gzip")).await;
        assert_eq!(gz.headers.get("content-encoding").map(|v| v.to_str().unwrap()), Some("gzip"));
        assert!(gz.headers["content-length"].to_str().unwrap().parse::<usize>().unwrap() <= 4096, "the loader is ≤ 4 KB gzipped");
    }
    // Bundle files: only under the current version.
    let r = page(false, "/embed/assets/0000/boot.js".into()).await;
    assert_eq!(r.status, 404);
}
both!(pages_are_framed_by_their_origin_only);
