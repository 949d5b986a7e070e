//! The two funnels (`docs/workflows.md`), end to end through the API: a long-term lease from
//! listing to move-out, and a short stay from booking to check-out. Each produces
//! exactly the documented events, in order, and a balanced ledger.

use std::time::Duration;

use chrono::Duration as Days;
use gable_tests::{both, TestApp};
use serde_json::{json, Value};

struct Api<'a> {
    app: &'a TestApp,
    key: String,
}

impl Api<'_> {
    async fn create(&self, resource: &str, body: Value) -> Value {
        self.app.create(&self.key, resource, body).await
    }

    /// Runs an action that must succeed; returns the record after it.
    async fn act(&self, resource: &str, rec: &Value, action: &str, body: Option<Value>) -> Value {
        let id = rec["id"].as_str().expect("record id");
        let r = self.app.call(&self.key, "POST", &format!("/v1/{resource}/{id}/{action}"), body).await;
        assert_eq!(r.status, 200, "{resource}/{action}: {}", r.text);
        r.body["data"].clone()
    }

    async fn get(&self, resource: &str, id: &Value) -> Value {
        let r = self.app.call(&self.key, "GET", &format!("/v1/{resource}/{}", id.as_str().expect("id")), None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["data"].clone()
    }

    /// Every event of the tenant's sandbox, oldest first.
    async fn events(&self) -> Vec<Value> {
        let r = self.app.call(&self.key, "GET", "/v1/events?sort=created_at&limit=100", None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["data"].as_array().expect("list").clone()
    }

    /// Runs a report and waits for it to complete.
    async fn report(&self, kind: &str) -> Value {
        let rep = self.create("reports", json!({ "kind": kind })).await;
        assert_eq!(rep["status"], "queued");
        for _ in 0..100 {
            let now = self.get("reports", &rep["id"]).await;
            if now["status"] == "completed" {
                return now["result"].clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("report {kind} did not complete");
    }

    async fn property_and_unit(&self) -> (Value, Value) {
        let property = self
            .create("properties", json!({ "name": "Maple Court", "kind": "mixed", "address": { "line1": "1 Maple St", "city": "Portland", "country": "US" } }))
            .await;
        let unit = self
            .create(
                "units",
                json!({ "property_id": property["id"], "number": "1A", "bedrooms": 2, "market_rent": 1450, "currency": "USD" }),
            )
            .await;
        (property, unit)
    }
}

fn types(events: &[Value]) -> Vec<&str> {
    events.iter().map(|e| e["type"].as_str().expect("type")).collect()
}

/// The trial balance is balanced and has the expected balances (account → debit − credit).
fn assert_ledger(result: &Value, expected: &[(&str, f64)]) {
    assert_eq!(result["balanced"], json!(true), "{result}");
    let usd = result["currencies"].as_array().unwrap().iter().find(|c| c["currency"] == "USD").expect("USD in the trial balance");
    assert_eq!(usd["debit"], usd["credit"]);
    for (account, balance) in expected {
        let row =
            usd["accounts"].as_array().unwrap().iter().find(|a| a["account"] == *account).unwrap_or_else(|| panic!("no {account}: {usd}"));
        assert_eq!(row["balance"].as_f64(), Some(*balance), "{account}: {usd}");
    }
}

async fn leasing_funnel(app: &TestApp) {
    let t = app.tenant("Funnel").await;
    let api = Api { app, key: t.test_key.clone() };
    let (property, unit) = api.property_and_unit().await;
    // Rent falls due on the 1st and is billed 7 days ahead: the first period is billed
    // alone only when the next 1st is further away, so the story starts mid-month.
    let dom = i64::from(chrono::Datelike::day(&app.clock.today()));
    if dom > 15 {
        app.clock.advance(Days::days(41 - dom));
    }
    let today = app.clock.today();
    let day = |n: i64| (today + Days::days(n)).to_string();

    // Listing → lead → viewing.
    let listing = api
        .create("listings", json!({ "unit_id": unit["id"], "title": "Bright 2-bed", "rent": 1450, "deposit": 2000, "currency": "USD" }))
        .await;
    api.act("listings", &listing, "publish", None).await;
    let lead = api.create("leads", json!({ "listing_id": listing["id"], "name": "Lee Lead", "email": "lee@example.com" })).await;
    api.act("leads", &lead, "contact", None).await;
    api.act("leads", &lead, "qualify", None).await;
    let viewing = api
        .create("viewings", json!({ "listing_id": listing["id"], "lead_id": lead["id"], "starts_at": format!("{}T10:00:00Z", day(1)) }))
        .await;
    api.act("viewings", &viewing, "complete", None).await;

    // Application → screening → approval → draft lease.
    let application = api
        .create("applications", json!({ "listing_id": listing["id"], "applicants": [{ "name": "Lee Lead", "email": "lee@example.com" }], "monthly_income": 6000, "currency": "USD" }))
        .await;
    api.act("applications", &application, "submit", None).await;
    api.act("applications", &application, "start_screening", None).await;
    let screening = api.create("screening", json!({ "application_id": application["id"], "provider": "CheckCo" })).await;
    api.act("screening", &screening, "complete", Some(json!({ "result": "clear" }))).await;
    api.act("applications", &application, "approve", None).await;
    api.act("leads", &lead, "convert", None).await;
    let converted = api.act("applications", &application, "convert", Some(json!({ "start_date": day(3), "end_date": day(368) }))).await;
    assert_eq!(converted["status"], "converted");
    let lease = api.get("leases", &converted["lease_id"]).await;
    assert_eq!(lease["status"], "draft");
    assert_eq!(lease["application_id"], application["id"]);
    assert_eq!(lease["unit_id"], unit["id"]);
    assert_eq!((lease["rent"].clone(), lease["deposit"].clone(), lease["currency"].clone()), (json!(1450), json!(2000), json!("USD")));

    // Lease → signatures → active lease and tenancy.
    api.act("leases", &lease, "send", None).await;
    let tenant_sig =
        api.create("signatures", json!({ "lease_id": lease["id"], "signer_name": "Lee Lead", "signer_email": "lee@example.com" })).await;
    let landlord_sig = api
        .create(
            "signatures",
            json!({ "lease_id": lease["id"], "signer_name": "Pat Manager", "signer_email": "pat@example.com", "role": "landlord" }),
        )
        .await;
    api.act("signatures", &tenant_sig, "sign", None).await;
    assert_eq!(api.get("leases", &lease["id"]).await["status"], "sent", "one signature of two does not sign the lease");
    api.act("signatures", &landlord_sig, "sign", None).await;
    assert_eq!(api.get("leases", &lease["id"]).await["status"], "signed");
    api.act("leases", &lease, "activate", None).await;
    let tenancies = app.call(&t.test_key, "GET", &format!("/v1/tenancies?filter[lease_id]={}", lease["id"].as_str().unwrap()), None).await;
    let tenancy = tenancies.body["data"][0].clone();
    assert_eq!(tenancy["status"], "current");
    assert_eq!(tenancy["move_in_date"], json!(day(3)));
    assert_eq!(tenancy["occupants"], json!([{ "name": "Lee Lead", "email": "lee@example.com" }]));

    // Gable bills the rent: the first period is due on the start date (day 3), billed
    // at once (within 7 days) with its open invoice; `rent.due` fires on the day.
    let round = app.run_jobs().await;
    assert_eq!((round.rent_billed, round.events_fired), (1, 0), "billed, nothing due yet: {round:?}");
    let lease_id = lease["id"].as_str().unwrap();
    let billed = app.all_pages(&t.test_key, &format!("/v1/charges?filter[lease_id]={lease_id}")).await;
    assert_eq!(billed.len(), 1);
    let rent = billed[0].clone();
    assert_eq!((rent["kind"].clone(), rent["amount"].clone(), rent["due_date"].clone()), (json!("rent"), json!(1450), json!(day(3))));
    let invoices = app.all_pages(&t.test_key, &format!("/v1/invoices?filter[lease_id]={lease_id}")).await;
    assert_eq!(invoices.len(), 1);
    let invoice = invoices[0].clone();
    assert_eq!((invoice["status"].clone(), invoice["charge_ids"].clone()), (json!("open"), json!([rent["id"]])));
    assert_eq!(app.run_jobs().await.rent_billed, 0, "billed once");
    app.clock.advance(Days::days(3));
    let round = app.run_jobs().await;
    assert_eq!((round.events_fired, round.rent_due_fired), (1, 1), "the rent falls due: {round:?}");
    assert_eq!(app.run_jobs().await.events_fired, 0, "once");
    // A test payment: its scenario settles it at once.
    let payment = api
        .create(
            "payments",
            json!({ "invoice_id": invoice["id"], "amount": 1450, "currency": "USD", "method": "ach", "scenario": "succeeded" }),
        )
        .await;
    assert_eq!(payment["status"], "succeeded");
    assert_eq!(payment["lease_id"], lease["id"], "a payment of an invoice pays the invoice's lease");
    let paid = api.get("invoices", &invoice["id"]).await;
    assert_eq!((paid["status"].clone(), paid["amount_paid"].clone()), (json!("paid"), json!(1450)));

    // Move-out.
    api.act("tenancies", &tenancy, "move_out", None).await;
    api.act("leases", &lease, "end", None).await;

    let events = api.events().await;
    assert_eq!(
        types(&events),
        [
            "listing.published",
            "lead.created",
            "viewing.booked",
            "application.submitted",
            "application.status_changed",
            "screening.completed",
            "application.status_changed",
            "application.status_changed",
            "lease.sent",
            "lease.signed",
            "tenancy.started",
            "rent.due",
            "payment.succeeded",
            "tenant.moved_out",
        ]
    );
    let changes: Vec<_> = events
        .iter()
        .filter(|e| e["type"] == "application.status_changed")
        .map(|e| e["data"]["object"]["status"].as_str().unwrap())
        .collect();
    assert_eq!(changes, ["screening", "approved", "converted"]);
    for e in &events {
        let object = &e["data"]["object"];
        assert_eq!(e["related_object_id"], object["id"], "{e}");
        assert_eq!(e["property_id"], property["id"], "every event of the funnel is about this property: {e}");
        assert_eq!(e["livemode"], json!(false));
    }
    let signed = events.iter().find(|e| e["type"] == "lease.signed").unwrap();
    assert_eq!(signed["data"]["previous_attributes"]["status"], "sent");
    let due = events.iter().find(|e| e["type"] == "rent.due").unwrap();
    assert_eq!(due["data"]["object"]["id"], rent["id"]);

    // Rent charged and received: receivables settled, cash and income of 1450.
    assert_ledger(&api.report("ledger").await, &[("accounts_receivable", 0.0), ("cash", 1450.0), ("rent_income", -1450.0)]);
}
both!(leasing_funnel);

async fn short_stay_funnel(app: &TestApp) {
    let t = app.tenant("Stay").await;
    let api = Api { app, key: t.test_key.clone() };
    let (property, unit) = api.property_and_unit().await;
    let today = app.clock.today();
    let day = |n: i64| (today + Days::days(n)).to_string();

    let guest = api.create("guests", json!({ "name": "Gus Guest", "email": "gus@example.com" })).await;
    let booking = api
        .create("bookings", json!({ "unit_id": unit["id"], "guest_id": guest["id"], "check_in": day(0), "check_out": day(3), "total": 540, "currency": "USD" }))
        .await;
    api.act("bookings", &booking, "confirm", None).await;
    let fee = api
        .create("charges", json!({ "booking_id": booking["id"], "kind": "fee", "amount": 540, "currency": "USD", "due_date": day(0) }))
        .await;
    let invoice = api
        .create(
            "invoices",
            json!({ "booking_id": booking["id"], "charge_ids": [fee["id"]], "amount_due": 540, "currency": "USD", "due_date": day(0) }),
        )
        .await;
    api.act("invoices", &invoice, "open", None).await;
    let payment =
        api.create("payments", json!({ "invoice_id": invoice["id"], "amount": 540, "currency": "USD", "scenario": "succeeded" })).await;
    assert_eq!(payment["status"], "succeeded");

    api.act("bookings", &booking, "check_in", None).await;
    assert_eq!(api.get("guests", &guest["id"]).await["status"], "checked_in", "checking the booking in checks its guest in");
    let occupancy = api.report("occupancy").await;
    assert_eq!(occupancy["total"]["occupied"], json!(1), "{occupancy}");
    app.clock.advance(Days::days(3));
    api.act("bookings", &booking, "check_out", None).await;
    assert_eq!(api.get("guests", &guest["id"]).await["status"], "checked_out");

    // A second booking is cancelled before arrival.
    let later = api.create("bookings", json!({ "unit_id": unit["id"], "check_in": day(10), "check_out": day(12) })).await;
    api.act("bookings", &later, "cancel", None).await;

    let events = api.events().await;
    assert_eq!(
        types(&events),
        ["booking.created", "payment.succeeded", "guest.checked_in", "guest.checked_out", "booking.created", "booking.cancelled"]
    );
    let checked_in = &events[2];
    assert_eq!(checked_in["data"]["object"]["id"], guest["id"]);
    assert_eq!(checked_in["property_id"], property["id"], "a guest's check-in through a booking is about the booking's property");
    assert_eq!(checked_in["data"]["previous_attributes"]["status"], "expected");
    assert_eq!(app.run_jobs().await.events_fired, 0, "a fee is not rent: nothing falls due");

    assert_ledger(&api.report("ledger").await, &[("accounts_receivable", 0.0), ("cash", 540.0), ("fee_income", -540.0)]);
}
both!(short_stay_funnel);
