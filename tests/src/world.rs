//! A world: one record in each collection of the registry for one tenant's sandbox, made
//! through the API with minimal create bodies (and, for the collections only Gable writes,
//! straight through the store). A new collection needs its line here: `build` names the
//! collections it lacks.

use std::collections::BTreeMap;

use gable::domain::collections::{collection, COLLECTIONS};
use gable::domain::value::Val;
use gable::store::records::NewRow;
use serde_json::{json, Value};
use uuid::Uuid;

use crate::TestApp;

pub struct World {
    /// Collection name → the id of its record.
    pub ids: BTreeMap<&'static str, String>,
}

impl World {
    pub fn id(&self, c: &str) -> &str {
        self.ids.get(c).unwrap_or_else(|| panic!("world has no {c}"))
    }
}

/// Runs an action that must succeed.
async fn act(app: &TestApp, key: &str, resource: &str, id: &str, action: &str) {
    let r = app.call(key, "POST", &format!("/v1/{resource}/{id}/{action}"), None).await;
    assert_eq!(r.status, 200, "{resource}/{action}: {}", r.text);
}

/// Creation order: parents first. Each step is (collection, body built from earlier ids).
pub async fn build(app: &TestApp, tenant: Uuid, key: &str) -> World {
    let mut w = World { ids: BTreeMap::new() };
    macro_rules! mk {
        ($c:literal, $body:expr) => {{
            let body: Value = $body;
            let rec = app.create(key, $c, body).await;
            w.ids.insert($c, rec["id"].as_str().expect("id").to_string());
        }};
    }
    mk!("organizations", json!({ "name": "North region" }));
    mk!("companies", json!({ "name": "Maple Holdings LLC", "kind": "owner_entity" }));
    mk!("roles", json!({ "name": "Leasing agent", "permissions": ["leases:write", "*:read"] }));
    mk!("users", json!({ "email": "ann@example.com", "name": "Ann Agent", "role_id": w.id("roles") }));
    mk!("owners", json!({ "name": "Olive Owner", "company_id": w.id("companies") }));
    mk!(
        "properties",
        json!({
            "name": "Maple Court", "kind": "residential",
            "address": { "line1": "1 Maple St", "city": "Portland", "region": "OR", "postal_code": "97201", "country": "US" },
            "owner_id": w.id("owners"), "company_id": w.id("companies"), "organization_id": w.id("organizations")
        })
    );
    mk!("buildings", json!({ "property_id": w.id("properties"), "name": "Building A", "floors": 4 }));
    mk!(
        "units",
        json!({ "property_id": w.id("properties"), "building_id": w.id("buildings"), "number": "1A", "bedrooms": 2, "bathrooms": 1.5, "market_rent": 1450, "currency": "USD" })
    );
    mk!("rooms", json!({ "unit_id": w.id("units"), "name": "Room 1" }));
    mk!("beds", json!({ "room_id": w.id("rooms"), "label": "Bed 1" }));
    mk!("listings", json!({ "unit_id": w.id("units"), "title": "Bright 2-bed", "rent": 1450, "currency": "USD" }));
    mk!("leads", json!({ "listing_id": w.id("listings"), "name": "Lee Lead", "email": "lee@example.com" }));
    mk!("viewings", json!({ "listing_id": w.id("listings"), "lead_id": w.id("leads"), "starts_at": "2026-12-01T10:00:00Z" }));
    mk!("applications", json!({ "listing_id": w.id("listings"), "applicants": [{ "name": "Lee Lead", "email": "lee@example.com" }] }));
    mk!("screening", json!({ "application_id": w.id("applications") }));
    mk!(
        "leases",
        json!({ "unit_id": w.id("units"), "start_date": "2027-01-01", "end_date": "2027-12-31", "rent": 1450, "currency": "USD" })
    );
    mk!("signatures", json!({ "lease_id": w.id("leases"), "signer_name": "Lee Lead", "signer_email": "lee@example.com" }));
    mk!("tenancies", json!({ "lease_id": w.id("leases"), "unit_id": w.id("units") }));
    mk!("guests", json!({ "name": "Gus Guest" }));
    mk!("bookings", json!({ "unit_id": w.id("units"), "guest_id": w.id("guests"), "check_in": "2027-02-01", "check_out": "2027-02-05" }));
    mk!("charges", json!({ "lease_id": w.id("leases"), "kind": "rent", "amount": 1450, "currency": "USD", "due_date": "2027-01-01" }));
    mk!(
        "invoices",
        json!({ "lease_id": w.id("leases"), "charge_ids": [w.id("charges")], "amount_due": 1450, "currency": "USD", "due_date": "2027-01-01" })
    );
    act(app, key, "invoices", w.id("invoices"), "open").await;
    // Part-paid, so the invoice stays open; succeeded (the sandbox's test scenario settles
    // it at once), so it can be refunded.
    mk!("payments", json!({ "amount": 1000, "currency": "USD", "invoice_id": w.id("invoices"), "scenario": "succeeded" }));
    mk!("refunds", json!({ "payment_id": w.id("payments"), "amount": 50, "currency": "USD" }));
    mk!(
        "accounting-entries",
        json!({
            "lines": [{ "account": "cash", "debit": 1450, "credit": 0 }, { "account": "rent_income", "debit": 0, "credit": 1450 }],
            "currency": "USD", "posted_on": "2027-01-01", "property_id": w.id("properties")
        })
    );
    mk!("vendors", json!({ "name": "Drip Plumbing", "trade": "plumbing" }));
    mk!(
        "workorders",
        json!({ "property_id": w.id("properties"), "unit_id": w.id("units"), "title": "Leaking tap", "vendor_id": w.id("vendors") })
    );
    mk!("inspections", json!({ "unit_id": w.id("units"), "kind": "routine" }));
    mk!("assets", json!({ "property_id": w.id("properties"), "unit_id": w.id("units"), "name": "Boiler" }));
    mk!(
        "purchase-orders",
        json!({ "vendor_id": w.id("vendors"), "workorder_id": w.id("workorders"), "lines": [{ "description": "Washer", "quantity": 2, "unit_amount": 3.5 }], "currency": "USD" })
    );
    mk!(
        "documents",
        json!({ "title": "Lease 1A", "kind": "lease", "property_id": w.id("properties"), "related_type": "leases", "related_id": w.id("leases") })
    );
    mk!("tasks", json!({ "title": "Call back Lee", "property_id": w.id("properties"), "assignee_id": w.id("users") }));
    mk!("messages", json!({ "direction": "outbound", "body": "Your viewing is confirmed.", "property_id": w.id("properties") }));
    mk!("reports", json!({ "kind": "rent_roll" }));
    mk!("webhooks", json!({ "url": "https://hooks.example.com/gable", "events": ["*"] }));
    // A payment token: the world's invoice stays open (part-paid); its listing is a draft.
    mk!("flow-tokens", json!({ "flow": "payment", "origin": "https://www.example.com", "invoice_id": w.id("invoices") }));
    // An import is made by uploading its file; the world's is checked, never committed.
    let up = app
        .client
        .post(format!("{}/v1/imports?collection=owners&file_name=owners.csv", app.base(false)))
        .bearer_auth(key)
        .header("Content-Type", "text/csv")
        .body("external_id,name\nW-1,World Owner\n")
        .send()
        .await
        .expect("upload sent");
    assert_eq!(up.status(), 201, "the world's import");
    let import: Value = up.json().await.expect("the import as JSON");
    w.ids.insert("imports", import["data"]["id"].as_str().expect("id").to_string());

    // Written by Gable only: insert directly.
    let event = Uuid::now_v7();
    insert(
        app,
        tenant,
        "events",
        event,
        &[
            ("type", Val::Str("lease.sent".into())),
            ("api_version", Val::Str("2026-11-22".into())),
            ("data", Val::Json(json!({ "object": { "id": w.id("leases") } }))),
            ("property_id", Val::Uuid(w.id("properties").parse().expect("uuid"))),
        ],
    )
    .await;
    w.ids.insert("events", event.to_string());
    let delivery = Uuid::now_v7();
    insert(
        app,
        tenant,
        "webhook-deliveries",
        delivery,
        &[
            ("webhook_id", Val::Uuid(w.id("webhooks").parse().expect("uuid"))),
            ("event_id", Val::Uuid(event)),
            ("event_type", Val::Str("lease.sent".into())),
            ("event_created_at", Val::DateTime(chrono::Utc::now())),
            ("url", Val::Str("https://hooks.example.com/gable".into())),
            ("attempt", Val::Int(1)),
            ("trigger", Val::Str("event".into())),
            ("status", Val::Str("succeeded".into())),
            ("response_status", Val::Int(200)),
        ],
    )
    .await;
    w.ids.insert("webhook-deliveries", delivery.to_string());
    // The world's own calls are in the request log too; this one is known by its id.
    let call = Uuid::now_v7();
    insert(
        app,
        tenant,
        "request-logs",
        call,
        &[
            ("method", Val::Str("POST".into())),
            ("path", Val::Str("/v1/leases".into())),
            ("route", Val::Str("/v1/{resource}".into())),
            ("status", Val::Int(400)),
            ("status_class", Val::Str("4xx".into())),
            ("error_code", Val::Str("validation_failed".into())),
            ("duration_ms", Val::Num(3.5)),
            ("credential_type", Val::Str("api_key".into())),
            ("credential_id", Val::Uuid(Uuid::now_v7())),
            ("idempotent_replayed", Val::Bool(false)),
            ("request_body", Val::Str("{}".into())),
            ("request_body_truncated", Val::Bool(false)),
            ("response_body_truncated", Val::Bool(false)),
            ("event_ids", Val::Json(json!([event.to_string()]))),
        ],
    )
    .await;
    w.ids.insert("request-logs", call.to_string());
    let missing: Vec<&str> = COLLECTIONS.iter().map(|c| c.name).filter(|c| !w.ids.contains_key(c)).collect();
    assert!(missing.is_empty(), "the world covers every collection: add a record of {missing:?} to tests/src/world.rs");
    assert_eq!(w.ids.len(), COLLECTIONS.len(), "the world's records are of the registry's collections");
    w
}

async fn insert(app: &TestApp, tenant: Uuid, name: &str, id: Uuid, values: &[(&'static str, Val)]) {
    let c = collection(name).expect("collection");
    let row = NewRow { id, created_at: chrono_now(), values: values.iter().cloned().collect() };
    app.store.insert_many(tenant, false, c, &[row]).await.expect("insert");
}

fn chrono_now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}
