//! Events as docs/workflows.md describes them: every type of the catalogue
//! (`EVENT_TYPES`), each emitted once by its operation and by nothing else, with the
//! record as `GET` returns it and the changed fields; the couplings that emit them; the event list; the scheduled events under a
//! moved clock, once across processes; and the 30 days they are kept.

#![allow(clippy::too_many_arguments)] // event checks name every part of the contract they check

use std::collections::{BTreeMap, HashSet};

use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use gable::domain::collections::collection;
use gable::domain::events::EVENT_TYPES;
use gable::domain::value::Val;
use gable::store::records::NewRow;
use gable_tests::{both, TestApp};
use serde_json::{json, Value};
use uuid::Uuid;

const API_VERSION: &str = "2026-11-22";

/// The first day of the stories that move the clock; they start at its noon.
/// The scheduled events of a round other than `rent.due` (active leases bill their rent,
/// and it falls due beside the notices these stories are about).
fn notices(r: gable::jobs::Round) -> usize {
    r.events_fired - r.rent_due_fired
}

fn day0() -> NaiveDate {
    NaiveDate::from_ymd_opt(2027, 1, 4).expect("date")
}

fn day(n: i64) -> NaiveDate {
    day0() + Duration::days(n)
}

fn at(d: NaiveDate, hour: u32, min: u32) -> DateTime<Utc> {
    Utc.from_utc_datetime(&d.and_hms_opt(hour, min, 0).expect("time"))
}

fn noon(d: NaiveDate) -> DateTime<Utc> {
    at(d, 12, 0)
}

fn rfc(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

fn enc(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap_or_else(|| panic!("no id in {v}")).to_string()
}

fn types(evs: &[Value]) -> Vec<String> {
    evs.iter().map(|e| e["type"].as_str().unwrap_or("?").to_string()).collect()
}

/// Whether a key is a live one (`gbl_live_…`): the helpers below send its requests to
/// production, a test key's to the sandbox. Live mode is where a payment stays `pending`
/// for staff to `succeed` or `fail` it; the sandbox runs a test payment's scenario at once.
fn is_live(key: &str) -> bool {
    key.starts_with("gbl_live_")
}

/// A request in the key's environment.
async fn call(app: &TestApp, key: &str, method: &str, path: &str, body: Option<Value>) -> gable_tests::Res {
    app.call_on(is_live(key), key, method, path, body).await
}

/// Creates a record in the key's environment; returns it.
async fn create(app: &TestApp, key: &str, resource: &str, body: Value) -> Value {
    let r = call(app, key, "POST", &format!("/v1/{resource}"), Some(body.clone())).await;
    assert_eq!(r.status, 201, "creating {resource} with {body}: {}", r.body);
    r.body["data"].clone()
}

/// The events a key sees, oldest first; `query` adds filters (`filter[type]=…`).
async fn events(app: &TestApp, key: &str, query: &str) -> Vec<Value> {
    let amp = if query.is_empty() { "" } else { "&" };
    let path = format!("/v1/events?limit=100&sort=created_at{amp}{query}");
    app.all_pages(key, &path).await
}

async fn get(app: &TestApp, key: &str, resource: &str, id: &str) -> Value {
    let r = call(app, key, "GET", &format!("/v1/{resource}/{id}"), None).await;
    assert_eq!(r.status, 200, "GET {resource}/{id}: {}", r.text);
    r.body["data"].clone()
}

/// Runs an action that must succeed; returns the record.
async fn act(app: &TestApp, key: &str, resource: &str, id: &str, action: &str, body: Option<Value>) -> Value {
    let r = call(app, key, "POST", &format!("/v1/{resource}/{id}/{action}"), body).await;
    assert_eq!(r.status, 200, "{resource}/{action}: {}", r.text);
    r.body["data"].clone()
}

async fn patch(app: &TestApp, key: &str, resource: &str, id: &str, body: Value) -> Value {
    let r = app.call(key, "PATCH", &format!("/v1/{resource}/{id}"), Some(body)).await;
    assert_eq!(r.status, 200, "PATCH {resource}/{id}: {}", r.text);
    r.body["data"].clone()
}

/// Checks one event against its contract: the envelope fields, that the list finds it
/// by type and record and `GET /v1/events/{id}` reads it, that `data.object` is the
/// record as `GET` returns it now, and the previous attributes. `property` is the
/// property it must carry (the record's own when `None`).
async fn check_event(
    app: &TestApp,
    key: &str,
    e: &Value,
    kind: &str,
    resource: &str,
    rid: &str,
    previous: Value,
    property: Option<&str>,
) -> Value {
    assert_eq!(e["object"], "event", "{e}");
    assert_eq!(e["type"], kind, "{e}");
    assert_eq!(e["livemode"], is_live(key), "{e}");
    assert_eq!(e["api_version"], API_VERSION, "{e}");
    assert_eq!(e["related_object_id"], rid, "{kind}: related_object_id");
    let found = events(app, key, &format!("filter[type]={kind}&filter[related_object_id]={rid}")).await;
    assert!(found.contains(e), "{kind} of {rid} not found by filter[type] and filter[related_object_id]: {found:?}");
    assert!(found.iter().all(|f| f["type"] == kind && f["related_object_id"] == rid), "the filters let others through: {found:?}");
    assert_eq!(&get(app, key, "events", &id(e)).await, e, "GET /v1/events/{{id}} differs from the list");
    let now = get(app, key, resource, rid).await;
    assert_eq!(e["data"]["object"], now, "{kind}: data.object is not the {resource} record as GET returns it");
    assert_eq!(e["data"]["previous_attributes"], previous, "{kind}: previous_attributes");
    match property {
        Some(p) => assert_eq!(e["property_id"], p, "{kind}: property_id"),
        None => assert_eq!(e["property_id"], now.get("property_id").cloned().unwrap_or(Value::Null), "{kind}: property_id"),
    }
    now
}

/// The events of one tenant's sandbox as a story goes: each step checks what is new.
#[derive(Default)]
struct Log {
    seen: HashSet<String>,
    /// Types a story is not about (the rent its active leases bill falls due on the way).
    ignored: &'static [&'static str],
}

impl Log {
    /// A log that passes over events of these types.
    fn ignoring(ignored: &'static [&'static str]) -> Log {
        Log { ignored, ..Log::default() }
    }

    /// The events not seen before, oldest first.
    async fn fresh(&mut self, app: &TestApp, key: &str) -> Vec<Value> {
        let evs = events(app, key, "").await;
        let ignored = self.ignored;
        let new: Vec<Value> = evs.into_iter().filter(|e| !self.seen.contains(&id(e)) && !ignored.iter().any(|t| e["type"] == *t)).collect();
        self.seen.extend(new.iter().map(id));
        new
    }

    async fn none(&mut self, app: &TestApp, key: &str, what: &str) {
        let new = self.fresh(app, key).await;
        assert!(new.is_empty(), "{what} emitted {:?}", types(&new));
    }

    /// Exactly one new event, of `kind`, about the record, emitted by an operation now.
    async fn one(&mut self, app: &TestApp, key: &str, kind: &str, resource: &str, rid: &str, previous: Value) -> Value {
        self.one_at(app, key, kind, resource, rid, previous, None).await
    }

    async fn one_at(
        &mut self,
        app: &TestApp,
        key: &str,
        kind: &str,
        resource: &str,
        rid: &str,
        previous: Value,
        property: Option<&str>,
    ) -> Value {
        let new = self.fresh(app, key).await;
        assert_eq!(types(&new), vec![kind.to_string()], "expected exactly one {kind} about {resource} {rid}: {new:?}");
        let e = new[0].clone();
        let now = check_event(app, key, &e, kind, resource, rid, previous, property).await;
        // Written in the operation's transaction, at its time.
        assert_eq!(e["created_at"], now["updated_at"], "{kind}: created_at is the time of the change");
        assert_eq!(e["data"].as_object().map(|d| d.len()), Some(2), "{kind}: data has object and previous_attributes only");
        e
    }
}

struct Site {
    property: String,
    unit: String,
}

async fn site(app: &TestApp, key: &str, name: &str) -> Site {
    let address = json!({ "line1": "1 Elm St", "city": "Boise", "country": "US" });
    let p = create(app, key, "properties", json!({ "name": name, "kind": "residential", "address": address })).await;
    let u = create(app, key, "units", json!({ "property_id": id(&p), "number": "1A" })).await;
    Site { property: id(&p), unit: id(&u) }
}

async fn lease(app: &TestApp, key: &str, unit: &str, start: NaiveDate, end: Option<NaiveDate>) -> String {
    let mut body = json!({ "unit_id": unit, "start_date": start.to_string(), "rent": 1000, "currency": "USD" });
    if let Some(e) = end {
        body["end_date"] = json!(e.to_string());
    }
    id(&create(app, key, "leases", body).await)
}

async fn signature(app: &TestApp, key: &str, lease: &str, who: &str) -> String {
    id(&app.create(key, "signatures", json!({ "lease_id": lease, "signer_name": who, "signer_email": format!("{who}@example.com") })).await)
}

/// A lease taken through send, sign and activate.
async fn active_lease(app: &TestApp, key: &str, unit: &str, start: NaiveDate, end: Option<NaiveDate>) -> String {
    let l = lease(app, key, unit, start, end).await;
    let s = signature(app, key, &l, "tess").await;
    act(app, key, "leases", &l, "send", None).await;
    act(app, key, "signatures", &s, "sign", None).await;
    let r = act(app, key, "leases", &l, "activate", None).await;
    assert_eq!(r["status"], "active");
    l
}

async fn charge(app: &TestApp, key: &str, lease: &str, kind: &str, due: NaiveDate) -> String {
    let body = json!({ "lease_id": lease, "kind": kind, "amount": 1000, "currency": "USD", "due_date": due.to_string() });
    id(&app.create(key, "charges", body).await)
}

/// The tenancies of a lease.
async fn tenancies_of(app: &TestApp, key: &str, lease: &str) -> Vec<Value> {
    app.all_pages(key, &format!("/v1/tenancies?filter[lease_id]={lease}")).await
}

/// Checks the scheduled events a round wrote (`fresh`) against the records they are
/// about: (type, resource, record, days_before).
async fn check_scheduled(app: &TestApp, key: &str, fresh: &[Value], expected: &[(&str, &str, &str, Option<i64>)], ran_at: DateTime<Utc>) {
    let mut got: Vec<(String, String)> =
        fresh.iter().map(|e| (e["type"].as_str().unwrap().to_string(), e["related_object_id"].as_str().unwrap().to_string())).collect();
    let mut want: Vec<(String, String)> = expected.iter().map(|(t, _, r, _)| (t.to_string(), r.to_string())).collect();
    got.sort();
    want.sort();
    assert_eq!(got, want, "scheduled events of the round");
    for (kind, resource, rid, days) in expected {
        let e = fresh.iter().find(|e| e["type"] == *kind && e["related_object_id"] == *rid).unwrap();
        check_event(app, key, e, kind, resource, rid, json!({}), None).await;
        assert_eq!(e["data"].get("days_before").cloned(), days.map(|d| json!(d)), "{kind}: data.days_before");
        let created = DateTime::parse_from_rfc3339(e["created_at"].as_str().unwrap()).unwrap().with_timezone(&Utc);
        assert!(created >= ran_at && created < ran_at + Duration::minutes(5), "{kind}: created_at {created} is the round's time {ran_at}");
    }
}

// ---------------------------------------------------------------------------------------
// 1. Every type, once, from its operation.
// ---------------------------------------------------------------------------------------

async fn every_type_comes_once_from_its_operation(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    app.clock.set(noon(day0()));
    let mut log = Log::default();
    let s = site(app, k, "Elm Court").await;
    log.none(app, k, "creating a property and a unit").await;

    // Leasing.
    let listing = id(&app
        .create(k, "listings", json!({ "unit_id": s.unit, "title": "2-bed", "rent": 1450, "deposit": 2000, "currency": "USD" }))
        .await);
    log.none(app, k, "creating a listing").await;
    act(app, k, "listings", &listing, "publish", None).await;
    log.one(app, k, "listing.published", "listings", &listing, json!({ "status": "draft", "published_at": null })).await;
    let lead = id(&app.create(k, "leads", json!({ "listing_id": listing, "name": "Lee Lead" })).await);
    log.one(app, k, "lead.created", "leads", &lead, json!({})).await;
    let viewing = id(&app.create(k, "viewings", json!({ "listing_id": listing, "lead_id": lead, "starts_at": rfc(noon(day(2))) })).await);
    log.one(app, k, "viewing.booked", "viewings", &viewing, json!({})).await;
    let application = app
        .create(k, "applications", json!({ "listing_id": listing, "applicants": [{ "name": "Lee Lead", "email": "lee@example.com" }] }))
        .await;
    let application = id(&application);
    log.none(app, k, "creating a draft application").await;
    act(app, k, "applications", &application, "submit", None).await;
    log.one(app, k, "application.submitted", "applications", &application, json!({ "status": "draft", "submitted_at": null })).await;
    let screening = id(&app.create(k, "screening", json!({ "application_id": application })).await);
    log.none(app, k, "creating a screening").await;
    act(app, k, "screening", &screening, "complete", Some(json!({ "result": "clear" }))).await;
    log.one(app, k, "screening.completed", "screening", &screening, json!({ "status": "pending", "result": null, "completed_at": null }))
        .await;
    act(app, k, "applications", &application, "start_screening", None).await;
    log.one(app, k, "application.status_changed", "applications", &application, json!({ "status": "submitted" })).await;
    act(app, k, "applications", &application, "approve", None).await;
    log.one(app, k, "application.status_changed", "applications", &application, json!({ "status": "screening" })).await;
    let body = json!({ "start_date": day0().to_string(), "end_date": day(45).to_string() });
    let converted = act(app, k, "applications", &application, "convert", Some(body)).await;
    log.one(app, k, "application.status_changed", "applications", &application, json!({ "status": "approved", "lease_id": null })).await;
    let lease1 = converted["lease_id"].as_str().expect("lease_id").to_string();
    let sig = signature(app, k, &lease1, "lee").await;
    log.none(app, k, "creating a signature").await;
    act(app, k, "leases", &lease1, "send", None).await;
    log.one(app, k, "lease.sent", "leases", &lease1, json!({ "status": "draft" })).await;
    act(app, k, "signatures", &sig, "sign", None).await;
    log.one(app, k, "lease.signed", "leases", &lease1, json!({ "status": "sent" })).await;
    act(app, k, "leases", &lease1, "activate", None).await;
    let ts = tenancies_of(app, k, &lease1).await;
    assert_eq!(ts.len(), 1, "activation made one tenancy: {ts:?}");
    log.one(app, k, "tenancy.started", "tenancies", &id(&ts[0]), json!({})).await;

    // A tenancy started and ended by its own actions.
    let lease2 = lease(app, k, &s.unit, day0(), None).await;
    let tenancy = id(&app.create(k, "tenancies", json!({ "lease_id": lease2, "unit_id": s.unit })).await);
    log.none(app, k, "creating a lease and a tenancy").await;
    act(app, k, "tenancies", &tenancy, "start", None).await;
    log.one(app, k, "tenancy.started", "tenancies", &tenancy, json!({ "status": "upcoming", "move_in_date": null })).await;
    act(app, k, "tenancies", &tenancy, "move_out", None).await;
    log.one(app, k, "tenant.moved_out", "tenancies", &tenancy, json!({ "status": "current", "move_out_date": null })).await;

    // Money.
    let rent = charge(app, k, &lease2, "rent", day0()).await;
    let invoice = app
        .create(
            k,
            "invoices",
            json!({ "lease_id": lease2, "charge_ids": [rent], "amount_due": 1000, "currency": "USD", "due_date": day0().to_string() }),
        )
        .await;
    let invoice = id(&invoice);
    act(app, k, "invoices", &invoice, "open", None).await;
    log.none(app, k, "a charge and an invoice opened").await;
    // A test payment's scenario runs at once, in its create, through the payment's actions:
    // `succeeded` is created pending and then succeeded.
    let pay =
        create(app, k, "payments", json!({ "amount": 1000, "currency": "USD", "invoice_id": invoice, "scenario": "succeeded" })).await;
    assert_eq!(pay["status"], "succeeded");
    let pay = id(&pay);
    log.one(app, k, "payment.succeeded", "payments", &pay, json!({ "status": "pending", "succeeded_at": null })).await;
    act(app, k, "payments", &pay, "reverse", None).await;
    log.one(app, k, "payment.reversed", "payments", &pay, json!({ "status": "succeeded", "reversed_at": null })).await;
    let failing = id(&create(app, k, "payments", json!({ "amount": 5, "currency": "USD", "scenario": "failed" })).await);
    let declined = log
        .one(app, k, "payment.failed", "payments", &failing, json!({ "status": "pending", "failure_code": null, "failure_message": null }))
        .await;
    assert_eq!(declined["data"]["object"]["failure_code"], "card_declined");
    // Live mode: a payment waits, pending, for staff to confirm it (`succeed`) or to say
    // why it failed (`fail`); the actions emit the same events, in live mode.
    let lk = t.live_key.as_str();
    let mut live_log = Log::default();
    let cash = id(&create(app, lk, "payments", json!({ "amount": 1000, "currency": "USD", "method": "cash" })).await);
    let cheque = id(&create(app, lk, "payments", json!({ "amount": 5, "currency": "USD", "method": "check" })).await);
    live_log.none(app, lk, "creating live payments").await;
    act(app, lk, "payments", &cash, "succeed", None).await;
    live_log.one(app, lk, "payment.succeeded", "payments", &cash, json!({ "status": "pending", "succeeded_at": null })).await;
    let why = json!({ "failure_code": "insufficient_funds", "failure_message": "The cheque bounced." });
    act(app, lk, "payments", &cheque, "fail", Some(why)).await;
    let bounced = live_log
        .one(app, lk, "payment.failed", "payments", &cheque, json!({ "status": "pending", "failure_code": null, "failure_message": null }))
        .await;
    assert_eq!(bounced["data"]["object"]["failure_message"], "The cheque bounced.");
    act(app, lk, "payments", &cash, "reverse", None).await;
    live_log.one(app, lk, "payment.reversed", "payments", &cash, json!({ "status": "succeeded", "reversed_at": null })).await;
    log.none(app, k, "live payments, in the sandbox").await;

    // Stays: the guest's events carry the booking's property.
    let guest = id(&app.create(k, "guests", json!({ "name": "Gus Guest" })).await);
    log.none(app, k, "creating a guest").await;
    let stay = json!({ "unit_id": s.unit, "guest_id": guest, "check_in": day(10).to_string(), "check_out": day(12).to_string() });
    let booking = id(&app.create(k, "bookings", stay.clone()).await);
    log.one(app, k, "booking.created", "bookings", &booking, json!({})).await;
    act(app, k, "bookings", &booking, "confirm", None).await;
    log.none(app, k, "confirming a booking").await;
    act(app, k, "bookings", &booking, "check_in", None).await;
    log.one_at(app, k, "guest.checked_in", "guests", &guest, json!({ "status": "expected" }), Some(&s.property)).await;
    act(app, k, "bookings", &booking, "check_out", None).await;
    log.one_at(app, k, "guest.checked_out", "guests", &guest, json!({ "status": "checked_in" }), Some(&s.property)).await;
    let cancelled = id(&app.create(k, "bookings", stay).await);
    log.one(app, k, "booking.created", "bookings", &cancelled, json!({})).await;
    act(app, k, "bookings", &cancelled, "cancel", None).await;
    log.one(app, k, "booking.cancelled", "bookings", &cancelled, json!({ "status": "inquiry" })).await;

    // Maintenance.
    let wo = id(&app.create(k, "workorders", json!({ "property_id": s.property, "title": "Leaking tap" })).await);
    log.one(app, k, "workorder.created", "workorders", &wo, json!({})).await;
    act(app, k, "workorders", &wo, "assign", None).await;
    log.none(app, k, "assigning a work order").await;
    act(app, k, "workorders", &wo, "complete", None).await;
    log.one(app, k, "workorder.completed", "workorders", &wo, json!({ "status": "assigned", "completed_at": null })).await;
    let insp = id(&app.create(k, "inspections", json!({ "unit_id": s.unit, "kind": "routine" })).await);
    log.none(app, k, "creating an inspection").await;
    act(app, k, "inspections", &insp, "complete", None).await;
    log.one(app, k, "inspection.completed", "inspections", &insp, json!({ "status": "scheduled", "completed_at": null })).await;

    // An import: the records it writes cause no events; its end is one.
    let file = format!("{}\n", json!({ "external_id": "WO-IMPORTED", "property_id": s.property, "title": "Imported tap" }));
    let up = crate::api::imports::upload(app, k, "collection=workorders", "application/x-ndjson", file).await;
    assert_eq!(up.status, 201, "{}", up.text);
    let import = id(&up.body["data"]);
    log.none(app, k, "uploading a file to import").await;
    act(app, k, "imports", &import, "commit", Some(json!({}))).await;
    gable::jobs::imports::run_committed(&app.state.ops, None).await.expect("the import worker");
    log.one(app, k, "import.completed", "imports", &import, json!({ "status": "importing", "completed_at": null })).await;

    // The scheduler: the rent charge is due today, the active lease ends in 45 days,
    // the document expires in 10.
    let expires = rfc(noon(day(10)));
    let doc = id(&app
        .create(k, "documents", json!({ "title": "Insurance", "kind": "insurance", "property_id": s.property, "expires_at": expires }))
        .await);
    log.none(app, k, "creating a document").await;
    let ran_at = app.clock.now();
    let round = app.run_jobs().await;
    // The active lease's rent is billed by Gable too: its period due on the 1st (within
    // the week rent.due catches up) falls due beside the hand-made charge.
    assert_eq!((round.rent_billed, round.events_fired, round.rent_due_fired), (1, 4, 2), "{round:?}");
    let billed = app.all_pages(k, &format!("/v1/charges?filter[lease_id]={lease1}&filter[period][exists]=true")).await;
    assert_eq!(billed.len(), 1, "{billed:?}");
    let billed_rent = id(&billed[0]);
    let fresh = log.fresh(app, k).await;
    let expected = [
        ("rent.due", "charges", rent.as_str(), None),
        ("rent.due", "charges", billed_rent.as_str(), None),
        ("lease.expiring", "leases", lease1.as_str(), Some(60)),
        ("document.expiring", "documents", doc.as_str(), Some(30)),
    ];
    check_scheduled(app, k, &fresh, &expected, ran_at).await;

    // Each type of the catalogue, and as many of each as the story caused.
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for ty in types(&events(app, k, "").await) {
        *count.entry(ty).or_default() += 1;
    }
    let mut want: BTreeMap<String, usize> = EVENT_TYPES.iter().map(|e| (e.name.to_string(), 1)).collect();
    want.insert("application.status_changed".into(), 3);
    want.insert("booking.created".into(), 2);
    want.insert("tenancy.started".into(), 2);
    want.insert("rent.due".into(), 2);
    assert_eq!(count, want);
    assert_eq!(types(&events(app, lk, "").await), ["payment.succeeded", "payment.failed", "payment.reversed"], "live mode's own events");
}
both!(every_type_comes_once_from_its_operation);

// ---------------------------------------------------------------------------------------
// 2. Nothing else emits.
// ---------------------------------------------------------------------------------------

async fn other_operations_emit_nothing(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    app.clock.set(noon(day0()));
    let mut log = Log::default();
    let today = app.clock.today();
    let s = site(app, k, "Elm Court").await;
    patch(app, k, "properties", &s.property, json!({ "name": "Elm Court II" })).await;
    log.none(app, k, "properties and units").await;

    // Leads, listings, viewings.
    let listing = id(&app.create(k, "listings", json!({ "unit_id": s.unit, "title": "2-bed", "rent": 1450, "currency": "USD" })).await);
    patch(app, k, "listings", &listing, json!({ "title": "Bright 2-bed" })).await;
    log.none(app, k, "creating and patching a listing").await;
    let lead = id(&app.create(k, "leads", json!({ "listing_id": listing, "name": "Lee" })).await);
    log.one(app, k, "lead.created", "leads", &lead, json!({})).await;
    patch(app, k, "leads", &lead, json!({ "name": "Lee Lead", "phone": "555-0100" })).await;
    log.none(app, k, "patching a lead").await;
    for a in ["contact", "qualify", "convert"] {
        act(app, k, "leads", &lead, a, None).await;
        log.none(app, k, &format!("leads/{a}")).await;
    }
    let viewing = id(&app.create(k, "viewings", json!({ "listing_id": listing, "starts_at": "2027-02-01T10:00:00Z" })).await);
    log.one(app, k, "viewing.booked", "viewings", &viewing, json!({})).await;
    act(app, k, "viewings", &viewing, "cancel", None).await;
    log.none(app, k, "cancelling a viewing").await;
    act(app, k, "listings", &listing, "publish", None).await;
    log.one(app, k, "listing.published", "listings", &listing, json!({ "status": "draft", "published_at": null })).await;
    act(app, k, "listings", &listing, "unlist", None).await;
    log.none(app, k, "unlisting").await;

    // Applications: a draft withdrawn was never seen; a submitted one was.
    let applicants = json!([{ "name": "Ann", "email": "ann@example.com" }]);
    let draft = id(&app.create(k, "applications", json!({ "listing_id": listing, "applicants": applicants })).await);
    patch(app, k, "applications", &draft, json!({ "monthly_income": 5000, "currency": "USD" })).await;
    log.none(app, k, "creating and patching a draft application").await;
    act(app, k, "applications", &draft, "withdraw", None).await;
    log.none(app, k, "withdrawing a draft application").await;
    let submitted = id(&app.create(k, "applications", json!({ "unit_id": s.unit, "applicants": applicants })).await);
    act(app, k, "applications", &submitted, "submit", None).await;
    log.one(app, k, "application.submitted", "applications", &submitted, json!({ "status": "draft", "submitted_at": null })).await;
    act(app, k, "applications", &submitted, "withdraw", None).await;
    log.one(app, k, "application.status_changed", "applications", &submitted, json!({ "status": "submitted" })).await;
    id(&app.create(k, "screening", json!({ "application_id": submitted })).await);
    log.none(app, k, "creating a screening").await;

    // Leases: creating, patching, declining, cancelling, ending emit nothing.
    let l1 = lease(app, k, &s.unit, today, Some(today + Duration::days(365))).await;
    patch(app, k, "leases", &l1, json!({ "rent": 1100 })).await;
    let (declining, signing) = (signature(app, k, &l1, "ann").await, signature(app, k, &l1, "bob").await);
    log.none(app, k, "creating and patching a lease, creating signatures").await;
    act(app, k, "leases", &l1, "send", None).await;
    log.one(app, k, "lease.sent", "leases", &l1, json!({ "status": "draft" })).await;
    act(app, k, "signatures", &declining, "decline", None).await;
    log.none(app, k, "declining a signature").await;
    act(app, k, "signatures", &signing, "sign", None).await;
    log.none(app, k, "signing beside a declined signature").await;
    assert_eq!(get(app, k, "leases", &l1).await["status"], "sent", "a declined signature keeps the lease sent");
    act(app, k, "leases", &l1, "cancel", None).await;
    log.none(app, k, "cancelling a lease").await;

    let l2 = lease(app, k, &s.unit, today, None).await;
    let sig = signature(app, k, &l2, "cy").await;
    act(app, k, "leases", &l2, "send", None).await;
    log.one(app, k, "lease.sent", "leases", &l2, json!({ "status": "draft" })).await;
    act(app, k, "signatures", &sig, "sign", None).await;
    log.one(app, k, "lease.signed", "leases", &l2, json!({ "status": "sent" })).await;
    act(app, k, "leases", &l2, "activate", None).await;
    let new = log.fresh(app, k).await;
    assert_eq!(types(&new), ["tenancy.started"], "activation emits tenancy.started and no lease event");
    act(app, k, "leases", &l2, "end", None).await;
    log.none(app, k, "ending a lease").await;

    // Money: charges, invoices, refunds emit nothing; refusals write nothing.
    let fee = charge(app, k, &l2, "fee", today).await;
    log.none(app, k, "creating a charge").await;
    act(app, k, "charges", &fee, "void", None).await;
    log.none(app, k, "voiding a charge").await;
    app.call(k, "POST", &format!("/v1/charges/{fee}/void"), None).await.assert_error(409, "invalid_state_transition");
    log.none(app, k, "a refused void").await;
    let inv =
        app.create(k, "invoices", json!({ "lease_id": l2, "amount_due": 100, "currency": "USD", "due_date": today.to_string() })).await;
    let inv = id(&inv);
    act(app, k, "invoices", &inv, "open", None).await;
    log.none(app, k, "an invoice opened").await;
    let pay =
        id(&create(app, k, "payments", json!({ "amount": 100, "currency": "USD", "invoice_id": inv, "scenario": "succeeded" })).await);
    log.one(app, k, "payment.succeeded", "payments", &pay, json!({ "status": "pending", "succeeded_at": null })).await;
    assert_eq!(get(app, k, "invoices", &inv).await["status"], "paid");
    let failed = id(&app.create(k, "refunds", json!({ "payment_id": pay, "amount": 30, "currency": "USD" })).await);
    act(app, k, "refunds", &failed, "fail", None).await;
    log.none(app, k, "a failed refund").await;
    let refunded = id(&app.create(k, "refunds", json!({ "payment_id": pay, "amount": 30, "currency": "USD" })).await);
    act(app, k, "refunds", &refunded, "succeed", None).await;
    log.none(app, k, "a succeeded refund").await;
    app.call(k, "POST", &format!("/v1/payments/{pay}/reverse"), None).await.assert_error(409, "invalid_state_transition");
    log.none(app, k, "a refused reversal").await;
    // A refused test payment (its scenario is required) writes nothing, so emits nothing.
    app.call(k, "POST", "/v1/payments", Some(json!({ "amount": 5, "currency": "USD" }))).await.assert_error(400, "validation_failed");
    log.none(app, k, "a test payment without a scenario").await;
    let draft_inv =
        app.create(k, "invoices", json!({ "lease_id": l2, "amount_due": 100, "currency": "USD", "due_date": today.to_string() })).await;
    act(app, k, "invoices", &id(&draft_inv), "void", None).await;
    log.none(app, k, "voiding an invoice").await;

    // A booking without a guest moves no guest.
    let booking = id(&app.create(k, "bookings", json!({ "unit_id": s.unit, "check_in": "2027-02-01", "check_out": "2027-02-03" })).await);
    log.one(app, k, "booking.created", "bookings", &booking, json!({})).await;
    for a in ["confirm", "check_in", "check_out"] {
        act(app, k, "bookings", &booking, a, None).await;
        log.none(app, k, &format!("bookings/{a} without a guest")).await;
    }

    // Operations' other records.
    let vendor = id(&app.create(k, "vendors", json!({ "name": "Drip Plumbing" })).await);
    let lines = json!([{ "description": "Washer", "quantity": 2, "unit_amount": 3.5 }]);
    let po = app.create(k, "purchase-orders", json!({ "vendor_id": vendor, "lines": lines, "currency": "USD" })).await;
    for a in ["approve", "send", "receive", "close"] {
        act(app, k, "purchase-orders", &id(&po), a, None).await;
    }
    let task = id(&app.create(k, "tasks", json!({ "title": "Call back", "property_id": s.property })).await);
    act(app, k, "tasks", &task, "start", None).await;
    act(app, k, "tasks", &task, "complete", None).await;
    app.create(k, "documents", json!({ "title": "Lease", "kind": "lease", "property_id": s.property })).await;
    app.create(k, "messages", json!({ "direction": "outbound", "body": "Hello", "property_id": s.property })).await;
    let insp = id(&app.create(k, "inspections", json!({ "unit_id": s.unit, "kind": "move_in" })).await);
    log.none(app, k, "vendors, purchase orders, tasks, documents, messages, inspections").await;
    let wo = id(&app.create(k, "workorders", json!({ "property_id": s.property, "title": "Tap" })).await);
    log.one(app, k, "workorder.created", "workorders", &wo, json!({})).await;
    for a in ["assign", "start", "hold"] {
        act(app, k, "workorders", &wo, a, None).await;
    }
    act(app, k, "workorders", &wo, "cancel", None).await;
    log.none(app, k, "work order steps short of completion").await;
    app.call(k, "POST", &format!("/v1/inspections/{insp}/complete"), Some(json!({ "status": "done" })))
        .await
        .assert_error(400, "validation_failed");
    log.none(app, k, "a refused inspection completion").await;
    // Nothing is due: the one charge is a voided fee, the active lease has ended.
    assert_eq!(app.run_jobs().await.events_fired, 0);
    log.none(app, k, "a scheduler round").await;
}
both!(other_operations_emit_nothing);

// ---------------------------------------------------------------------------------------
// 3. Couplings.
// ---------------------------------------------------------------------------------------

async fn the_last_signature_signs_the_lease(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    app.clock.set(noon(day0()));
    let mut log = Log::default();
    let today = app.clock.today();
    let s = site(app, k, "Elm Court").await;
    let l = lease(app, k, &s.unit, today, None).await;
    let (first, second) = (signature(app, k, &l, "ann").await, signature(app, k, &l, "bob").await);
    log.none(app, k, "setup").await;

    // Not while the lease is a draft: refused, nothing changes.
    let before = get(app, k, "signatures", &first).await;
    let r = app.call(k, "POST", &format!("/v1/signatures/{first}/sign"), None).await;
    r.assert_error(409, "invalid_state_transition");
    assert!(r.body["error"]["message"].as_str().unwrap().contains("draft"), "the message names the lease's state: {}", r.text);
    assert_eq!(r.body["error"]["details"]["current_status"], "pending");
    assert_eq!(get(app, k, "signatures", &first).await, before, "a refused signing changed the signature");
    assert_eq!(get(app, k, "leases", &l).await["status"], "draft");
    log.none(app, k, "a refused signing").await;

    act(app, k, "leases", &l, "send", None).await;
    log.one(app, k, "lease.sent", "leases", &l, json!({ "status": "draft" })).await;
    let signed = act(app, k, "signatures", &first, "sign", None).await;
    assert_eq!(signed["status"], "signed");
    assert!(signed["signed_at"].is_string());
    assert_eq!(get(app, k, "leases", &l).await["status"], "sent", "one of two signatures does not sign the lease");
    log.none(app, k, "the first of two signatures").await;
    act(app, k, "signatures", &second, "sign", None).await;
    let e = log.one(app, k, "lease.signed", "leases", &l, json!({ "status": "sent" })).await;
    assert_eq!(e["data"]["object"]["status"], "signed");
    // Signing again is refused by the signature's own machine.
    app.call(k, "POST", &format!("/v1/signatures/{second}/sign"), None).await.assert_error(409, "invalid_state_transition");
    // A signature added to a signed lease cannot be signed (the lease is no longer sent).
    let late = signature(app, k, &l, "cy").await;
    app.call(k, "POST", &format!("/v1/signatures/{late}/sign"), None).await.assert_error(409, "invalid_state_transition");
    log.none(app, k, "refusals after signing").await;
    assert_eq!(events(app, k, &format!("filter[type]=lease.signed&filter[related_object_id]={l}")).await.len(), 1);

    // Declined: the lease stays sent; a new signature signed then signs it.
    let l2 = lease(app, k, &s.unit, today, None).await;
    let (no, yes) = (signature(app, k, &l2, "dee").await, signature(app, k, &l2, "eve").await);
    act(app, k, "leases", &l2, "send", None).await;
    log.one(app, k, "lease.sent", "leases", &l2, json!({ "status": "draft" })).await;
    act(app, k, "signatures", &no, "decline", None).await;
    act(app, k, "signatures", &yes, "sign", None).await;
    assert_eq!(get(app, k, "leases", &l2).await["status"], "sent");
    log.none(app, k, "signing beside a declined signature").await;

    // A lease with no signatures is never signed.
    let l3 = lease(app, k, &s.unit, today, None).await;
    act(app, k, "leases", &l3, "send", None).await;
    log.one(app, k, "lease.sent", "leases", &l3, json!({ "status": "draft" })).await;
    assert_eq!(get(app, k, "leases", &l3).await["status"], "sent");
    app.call(k, "POST", &format!("/v1/leases/{l3}/activate"), None).await.assert_error(409, "invalid_state_transition");
    log.none(app, k, "activating a sent lease").await;
}
both!(the_last_signature_signs_the_lease);

async fn activation_starts_or_makes_the_tenancy(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    app.clock.set(noon(day0()));
    let mut log = Log::default();
    let s = site(app, k, "Elm Court").await;

    // A lease with an upcoming tenancy: that tenancy starts, today.
    let l1 = lease(app, k, &s.unit, day(-3), None).await;
    let upcoming = id(&app.create(k, "tenancies", json!({ "lease_id": l1, "unit_id": s.unit })).await);
    let sig = signature(app, k, &l1, "ann").await;
    act(app, k, "leases", &l1, "send", None).await;
    act(app, k, "signatures", &sig, "sign", None).await;
    log.fresh(app, k).await;
    let active = act(app, k, "leases", &l1, "activate", None).await;
    assert_eq!(active["status"], "active");
    let e = log.one(app, k, "tenancy.started", "tenancies", &upcoming, json!({ "status": "upcoming", "move_in_date": null })).await;
    assert_eq!(e["data"]["object"]["status"], "current");
    assert_eq!(e["data"]["object"]["move_in_date"], day0().to_string(), "start sets move_in_date to today");
    assert_eq!(tenancies_of(app, k, &l1).await.len(), 1, "no second tenancy");
    assert_eq!(get(app, k, "leases", &l1).await["status"], "active");

    // An upcoming tenancy with its move-in date keeps it.
    let l2 = lease(app, k, &s.unit, day(5), None).await;
    let dated = id(&app.create(k, "tenancies", json!({ "lease_id": l2, "unit_id": s.unit, "move_in_date": day(5).to_string() })).await);
    let sig = signature(app, k, &l2, "bob").await;
    act(app, k, "leases", &l2, "send", None).await;
    act(app, k, "signatures", &sig, "sign", None).await;
    log.fresh(app, k).await;
    act(app, k, "leases", &l2, "activate", None).await;
    let e = log.one(app, k, "tenancy.started", "tenancies", &dated, json!({ "status": "upcoming" })).await;
    assert_eq!(e["data"]["object"]["move_in_date"], day(5).to_string());

    // A lease with no tenancy: a current one is made, from the lease's start date.
    let l3 = lease(app, k, &s.unit, day(-7), None).await;
    let sig = signature(app, k, &l3, "cy").await;
    act(app, k, "leases", &l3, "send", None).await;
    act(app, k, "signatures", &sig, "sign", None).await;
    log.fresh(app, k).await;
    act(app, k, "leases", &l3, "activate", None).await;
    let ts = tenancies_of(app, k, &l3).await;
    assert_eq!(ts.len(), 1, "{ts:?}");
    let made = &ts[0];
    assert_eq!(made["status"], "current");
    assert_eq!(made["unit_id"], s.unit.as_str());
    assert_eq!(made["property_id"], s.property.as_str());
    assert_eq!(made["move_in_date"], day(-7).to_string());
    assert!(made["move_out_date"].is_null());
    log.one(app, k, "tenancy.started", "tenancies", &id(made), json!({})).await;
    // The made tenancy moves out like any other.
    act(app, k, "tenancies", &id(made), "move_out", None).await;
    let e = log.one(app, k, "tenant.moved_out", "tenancies", &id(made), json!({ "status": "current", "move_out_date": null })).await;
    assert_eq!(e["data"]["object"]["move_out_date"], day0().to_string());
}
both!(activation_starts_or_makes_the_tenancy);

async fn conversion_makes_a_draft_lease(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    let mut log = Log::default();
    let s = site(app, k, "Elm Court").await;
    let listing = id(&app
        .create(k, "listings", json!({ "unit_id": s.unit, "title": "2-bed", "rent": 1450.5, "deposit": 2000, "currency": "EUR" }))
        .await);
    let applicants = json!([{ "name": "Ann", "email": "ann@example.com" }, { "name": "Bob", "email": "bob@example.com" }]);
    let a = id(&app.create(k, "applications", json!({ "listing_id": listing, "applicants": applicants })).await);
    act(app, k, "applications", &a, "submit", None).await;
    act(app, k, "applications", &a, "approve", None).await;
    log.fresh(app, k).await;
    let approved = get(app, k, "applications", &a).await;
    let convert = format!("/v1/applications/{a}/convert");

    // Lease validation errors name the field, and nothing is written.
    let r = app.call(k, "POST", &convert, Some(json!({ "end_date": "2027-12-31" }))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "start_date");
    let r = app.call(k, "POST", &convert, None).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "start_date");
    let r = app.call(k, "POST", &convert, Some(json!({ "start_date": "2027-03-01", "end_date": "2027-02-01" }))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "end_date");
    let r = app.call(k, "POST", &convert, Some(json!({ "start_date": "2027-03-01", "unit_id": s.unit }))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "unit_id");
    assert_eq!(get(app, k, "applications", &a).await, approved, "a refused conversion changed the application");
    assert!(app.all_pages(k, "/v1/leases").await.is_empty(), "a refused conversion made a lease");
    log.none(app, k, "refused conversions").await;

    // Converted: a draft lease of the listing's unit, with its rent, deposit and currency.
    let converted = act(app, k, "applications", &a, "convert", Some(json!({ "start_date": "2027-03-01", "rent_due_day": 5 }))).await;
    assert_eq!(converted["status"], "converted");
    let lease_id = converted["lease_id"].as_str().expect("lease_id set").to_string();
    let l = get(app, k, "leases", &lease_id).await;
    assert_eq!(l["status"], "draft");
    assert_eq!(l["application_id"], a.as_str());
    assert_eq!(l["unit_id"], s.unit.as_str());
    assert_eq!(l["property_id"], s.property.as_str());
    assert_eq!(l["start_date"], "2027-03-01");
    assert!(l["end_date"].is_null());
    assert_eq!((&l["rent"], &l["deposit"], &l["currency"]), (&json!(1450.5), &json!(2000), &json!("EUR")));
    assert_eq!(l["rent_due_day"], 5);
    assert_eq!(app.all_pages(k, "/v1/leases").await.len(), 1);
    log.one(app, k, "application.status_changed", "applications", &a, json!({ "status": "approved", "lease_id": null })).await;
    app.call(k, "POST", &convert, Some(json!({ "start_date": "2027-03-01" }))).await.assert_error(409, "invalid_state_transition");
    assert_eq!(app.all_pages(k, "/v1/leases").await.len(), 1);

    // Given fields win over the listing's.
    let b = id(&app.create(k, "applications", json!({ "unit_id": s.unit, "applicants": applicants })).await);
    act(app, k, "applications", &b, "submit", None).await;
    act(app, k, "applications", &b, "approve", None).await;
    let r = app.call(k, "POST", &format!("/v1/applications/{b}/convert"), Some(json!({ "start_date": "2027-03-01" }))).await;
    r.assert_error(400, "validation_failed");
    assert!(["rent", "currency"].contains(&r.param()), "an application without a listing has no rent to default: {}", r.text);
    let own = act(app, k, "applications", &b, "convert", Some(json!({ "start_date": "2027-03-01", "rent": 900, "currency": "USD" }))).await;
    let l2 = get(app, k, "leases", own["lease_id"].as_str().unwrap()).await;
    assert_eq!((&l2["rent"], &l2["currency"], &l2["unit_id"]), (&json!(900), &json!("USD"), &json!(s.unit)));

    // Activated, the converted lease's tenancy holds the applicants.
    let sig = signature(app, k, &lease_id, "ann").await;
    act(app, k, "leases", &lease_id, "send", None).await;
    act(app, k, "signatures", &sig, "sign", None).await;
    act(app, k, "leases", &lease_id, "activate", None).await;
    let ts = tenancies_of(app, k, &lease_id).await;
    assert_eq!(ts.len(), 1);
    assert_eq!(ts[0]["occupants"], applicants);
    assert_eq!(ts[0]["move_in_date"], "2027-03-01");
}
both!(conversion_makes_a_draft_lease);

async fn check_ins_move_guests_and_payments_settle_invoices(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    let mut log = Log::default();
    let s = site(app, k, "Elm Court").await;

    // A booking's check-in and check-out move its guest, with the booking's property.
    let guest = id(&app.create(k, "guests", json!({ "name": "Gus" })).await);
    let stay = |g: &str| json!({ "unit_id": s.unit, "guest_id": g, "check_in": "2027-02-01", "check_out": "2027-02-03" });
    let b1 = id(&app.create(k, "bookings", stay(&guest)).await);
    act(app, k, "bookings", &b1, "confirm", None).await;
    log.fresh(app, k).await;
    let r = act(app, k, "bookings", &b1, "check_in", None).await;
    assert_eq!(r["status"], "checked_in");
    assert_eq!(get(app, k, "guests", &guest).await["status"], "checked_in");
    log.one_at(app, k, "guest.checked_in", "guests", &guest, json!({ "status": "expected" }), Some(&s.property)).await;
    // A second booking of a guest already checked in leaves the guest as is.
    let b2 = id(&app.create(k, "bookings", stay(&guest)).await);
    act(app, k, "bookings", &b2, "confirm", None).await;
    log.fresh(app, k).await;
    act(app, k, "bookings", &b2, "check_in", None).await;
    log.none(app, k, "checking in a booking whose guest is in already").await;
    act(app, k, "bookings", &b1, "check_out", None).await;
    assert_eq!(get(app, k, "guests", &guest).await["status"], "checked_out");
    log.one_at(app, k, "guest.checked_out", "guests", &guest, json!({ "status": "checked_in" }), Some(&s.property)).await;
    // A returning guest checks in again; the guest's own action has no property.
    act(app, k, "guests", &guest, "check_in", None).await;
    log.one_at(app, k, "guest.checked_in", "guests", &guest, json!({ "status": "checked_out" }), None).await;
    assert_eq!(events(app, k, &format!("filter[type]=guest.checked_in&filter[related_object_id]={guest}")).await.len(), 2);

    // Payments settle, and reversals reopen, their invoice.
    let l = lease(app, k, &s.unit, day0(), None).await;
    let inv = app.create(k, "invoices", json!({ "lease_id": l, "amount_due": 100, "currency": "USD", "due_date": "2027-02-01" })).await;
    let inv = id(&inv);
    let paying = |amount: i64, currency: &str, scenario: &str| json!({ "amount": amount, "currency": currency, "invoice_id": inv, "scenario": scenario });
    let r = app.call(k, "POST", "/v1/payments", Some(paying(60, "USD", "succeeded"))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "invoice_id", "a draft invoice takes no payments");
    act(app, k, "invoices", &inv, "open", None).await;
    let r = app.call(k, "POST", "/v1/payments", Some(paying(60, "EUR", "succeeded"))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "currency");
    log.fresh(app, k).await;
    // Test payments: each one's scenario settles the invoice as it is created.
    let p1 = id(&create(app, k, "payments", paying(60, "USD", "succeeded")).await);
    let i = get(app, k, "invoices", &inv).await;
    assert_eq!((&i["amount_paid"], &i["status"]), (&json!(60), &json!("open")));
    log.one(app, k, "payment.succeeded", "payments", &p1, json!({ "status": "pending", "succeeded_at": null })).await;
    let p2 = id(&create(app, k, "payments", paying(40, "USD", "succeeded")).await);
    let i = get(app, k, "invoices", &inv).await;
    assert_eq!((&i["amount_paid"], &i["status"]), (&json!(100), &json!("paid")));
    log.one(app, k, "payment.succeeded", "payments", &p2, json!({ "status": "pending", "succeeded_at": null })).await;
    act(app, k, "payments", &p2, "reverse", None).await;
    let i = get(app, k, "invoices", &inv).await;
    assert_eq!((&i["amount_paid"], &i["status"]), (&json!(60), &json!("open")), "a reversal reopens a paid invoice");
    log.one(app, k, "payment.reversed", "payments", &p2, json!({ "status": "succeeded", "reversed_at": null })).await;
    act(app, k, "payments", &p1, "reverse", None).await;
    let i = get(app, k, "invoices", &inv).await;
    assert_eq!((&i["amount_paid"], &i["status"]), (&json!(0), &json!("open")));
    log.one(app, k, "payment.reversed", "payments", &p1, json!({ "status": "succeeded", "reversed_at": null })).await;
    // The `reversed` scenario: settled, then reversed, in one create: both events, in that
    // order, and the invoice as it was.
    let p3 = create(app, k, "payments", paying(100, "USD", "reversed")).await;
    assert_eq!(p3["status"], "reversed");
    assert!(p3["succeeded_at"].is_string() && p3["reversed_at"].is_string(), "{p3}");
    let i = get(app, k, "invoices", &inv).await;
    assert_eq!((&i["amount_paid"], &i["status"]), (&json!(0), &json!("open")), "a reversed test payment leaves its invoice as it was");
    let both = log.fresh(app, k).await;
    assert_eq!(types(&both), ["payment.succeeded", "payment.reversed"], "{both:?}");
    assert!(both.iter().all(|e| e["related_object_id"] == p3["id"] && e["created_at"] == p3["updated_at"]), "{both:?}");
    assert_eq!(both[0]["data"]["previous_attributes"], json!({ "status": "pending", "succeeded_at": null }));
    assert_eq!(both[0]["data"]["object"]["status"], "succeeded", "the payment as it was when it succeeded");
    assert_eq!(both[1]["data"]["previous_attributes"], json!({ "status": "succeeded", "reversed_at": null }));
    assert_eq!(both[1]["data"]["object"], get(app, k, "payments", &id(&p3)).await);
}
both!(check_ins_move_guests_and_payments_settle_invoices);

/// Couplings under concurrent requests: the last of many signatures signed at once
/// signs the lease once; a lease activated twice at once starts one tenancy; an
/// application converted twice at once makes one lease; payments succeeding at once (test
/// payments created at once, live payments confirmed at once) all count towards their
/// invoice.
async fn concurrent_couplings_happen_once(app: &TestApp) {
    use futures::future::join_all;
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    let s = site(app, k, "Elm Court").await;
    const N: usize = 8;
    let l = lease(app, k, &s.unit, day0(), None).await;
    let mut sigs = vec![];
    for n in 0..N {
        sigs.push(signature(app, k, &l, &format!("signer{n}")).await);
    }
    act(app, k, "leases", &l, "send", None).await;
    let paths: Vec<String> = sigs.iter().map(|sg| format!("/v1/signatures/{sg}/sign")).collect();
    let signing = paths.iter().map(|p| app.call(k, "POST", p, None));
    for r in join_all(signing).await {
        assert_eq!(r.status, 200, "{}", r.text);
    }
    assert_eq!(get(app, k, "leases", &l).await["status"], "signed");
    assert_eq!(events(app, k, &format!("filter[type]=lease.signed&filter[related_object_id]={l}")).await.len(), 1);

    let path = format!("/v1/leases/{l}/activate");
    let activating = (0..4).map(|_| app.call(k, "POST", &path, None));
    let codes: Vec<u16> = join_all(activating).await.iter().map(|r| r.status).collect();
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 1, "{codes:?}");
    assert!(codes.iter().all(|c| *c == 200 || *c == 409), "{codes:?}");
    assert_eq!(tenancies_of(app, k, &l).await.len(), 1);
    assert_eq!(events(app, k, "filter[type]=tenancy.started").await.len(), 1);

    let listing = id(&app.create(k, "listings", json!({ "unit_id": s.unit, "title": "2-bed", "rent": 1450, "currency": "USD" })).await);
    let a = id(&app.create(k, "applications", json!({ "listing_id": listing, "applicants": [{ "name": "Ann" }] })).await);
    act(app, k, "applications", &a, "submit", None).await;
    act(app, k, "applications", &a, "approve", None).await;
    let path = format!("/v1/applications/{a}/convert");
    let converting = (0..4).map(|_| app.call(k, "POST", &path, Some(json!({ "start_date": "2027-03-01" }))));
    let codes: Vec<u16> = join_all(converting).await.iter().map(|r| r.status).collect();
    assert_eq!(codes.iter().filter(|c| **c == 200).count(), 1, "{codes:?}");
    assert_eq!(app.all_pages(k, &format!("/v1/leases?filter[application_id]={a}")).await.len(), 1, "one conversion, one lease");
    assert_eq!(events(app, k, &format!("filter[type]=application.status_changed&filter[related_object_id]={a}")).await.len(), 2);

    // Test payments created at once, each settled by its scenario as it is created; all of
    // them fit (a paid invoice takes no more payments), and the last one pays it.
    let inv = json!({ "lease_id": l, "amount_due": 20 * N as i64, "currency": "USD", "due_date": "2027-02-01" });
    let inv = id(&app.create(k, "invoices", inv).await);
    act(app, k, "invoices", &inv, "open", None).await;
    let body = json!({ "amount": 20, "currency": "USD", "invoice_id": inv, "scenario": "succeeded" });
    let paying = (0..N).map(|_| app.call(k, "POST", "/v1/payments", Some(body.clone())));
    for r in join_all(paying).await {
        assert_eq!(r.status, 201, "{}", r.text);
        assert_eq!(r.body["data"]["status"], "succeeded");
    }
    let i = get(app, k, "invoices", &inv).await;
    assert_eq!((&i["amount_paid"], &i["status"]), (&json!(20 * N as i64), &json!("paid")));
    assert_eq!(events(app, k, "filter[type]=payment.succeeded").await.len(), N);

    // Live payments confirmed at once (`succeed`), against a live invoice.
    let lk = t.live_key.as_str();
    let ls = site(app, lk, "Elm Court").await;
    let ll = lease(app, lk, &ls.unit, day0(), None).await;
    let linv =
        id(&create(app, lk, "invoices", json!({ "lease_id": ll, "amount_due": 100, "currency": "USD", "due_date": "2027-02-01" })).await);
    act(app, lk, "invoices", &linv, "open", None).await;
    let mut pays = vec![];
    for _ in 0..N {
        let body = json!({ "amount": 20, "currency": "USD", "invoice_id": linv, "method": "bank_transfer" });
        pays.push(id(&create(app, lk, "payments", body).await));
    }
    let paths: Vec<String> = pays.iter().map(|p| format!("/v1/payments/{p}/succeed")).collect();
    let confirming = paths.iter().map(|p| app.call_on(true, lk, "POST", p, None));
    for r in join_all(confirming).await {
        assert_eq!(r.status, 200, "{}", r.text);
    }
    let i = get(app, lk, "invoices", &linv).await;
    assert_eq!((&i["amount_paid"], &i["status"]), (&json!(20 * N as i64), &json!("paid")));
    assert_eq!(events(app, lk, "filter[type]=payment.succeeded").await.len(), N);
}
both!(concurrent_couplings_happen_once);

// ---------------------------------------------------------------------------------------
// 4. The event list.
// ---------------------------------------------------------------------------------------

async fn the_event_list_filters_reads_and_refuses_writes(app: &TestApp) {
    let a = app.tenant("A").await;
    let k = a.test_key.as_str();
    let t0 = noon(day0());
    app.clock.set(t0);
    let p1 = site(app, k, "One").await;
    let p2 = site(app, k, "Two").await;
    let w1 = id(&app.create(k, "workorders", json!({ "property_id": p1.property, "title": "w1" })).await);
    app.clock.set(t0 + Duration::hours(1));
    let w2 = id(&app.create(k, "workorders", json!({ "property_id": p2.property, "title": "w2" })).await);
    app.clock.set(t0 + Duration::hours(2));
    let w3 = id(&app.create(k, "workorders", json!({ "property_id": p1.property, "title": "w3" })).await);
    app.clock.set(t0 + Duration::hours(3));
    act(app, k, "workorders", &w1, "assign", None).await;
    act(app, k, "workorders", &w1, "complete", None).await;
    let guest = id(&app.create(k, "guests", json!({ "name": "Gus" })).await);
    act(app, k, "guests", &guest, "check_in", None).await;

    let rel = |evs: &[Value]| {
        evs.iter().map(|e| format!("{} {}", e["type"].as_str().unwrap(), e["related_object_id"].as_str().unwrap())).collect::<Vec<_>>()
    };
    let every = events(app, k, "").await;
    assert_eq!(
        rel(&every),
        [
            format!("workorder.created {w1}"),
            format!("workorder.created {w2}"),
            format!("workorder.created {w3}"),
            format!("workorder.completed {w1}"),
            format!("guest.checked_in {guest}"),
        ]
    );
    // Newest first by default.
    let newest = app.all_pages(k, "/v1/events").await;
    assert_eq!(newest.iter().rev().cloned().collect::<Vec<_>>(), every);
    // Paging.
    let paged = app.all_pages(k, "/v1/events?limit=2&sort=created_at").await;
    assert_eq!(paged, every);

    // By type, time and record.
    assert_eq!(events(app, k, "filter[type]=workorder.created").await.len(), 3);
    assert_eq!(rel(&events(app, k, "filter[type]=workorder.completed").await), [format!("workorder.completed {w1}")]);
    assert!(events(app, k, "filter[type]=lease.sent").await.is_empty());
    let t1 = enc(&rfc(t0 + Duration::hours(1)));
    let t2 = enc(&rfc(t0 + Duration::hours(2)));
    assert_eq!(rel(&events(app, k, &format!("filter[created_at][lt]={t1}")).await), [format!("workorder.created {w1}")]);
    let from_t1 = events(app, k, &format!("filter[created_at][gte]={t1}")).await;
    assert_eq!(from_t1.len(), 4, "{:?}", rel(&from_t1));
    let window = events(app, k, &format!("filter[created_at][gte]={t1}&filter[created_at][lt]={t2}")).await;
    assert_eq!(rel(&window), [format!("workorder.created {w2}")]);
    let window = events(app, k, &format!("filter[created_at][gte]={t1}&filter[type]=workorder.created")).await;
    assert_eq!(rel(&window), [format!("workorder.created {w2}"), format!("workorder.created {w3}")]);
    let of_w1 = events(app, k, &format!("filter[related_object_id]={w1}")).await;
    assert_eq!(rel(&of_w1), [format!("workorder.created {w1}"), format!("workorder.completed {w1}")]);
    let r = app.call(k, "GET", "/v1/events?filter[related_object_id]=nope", None).await;
    r.assert_error(400, "invalid_parameter");
    assert_eq!(r.param(), "filter[related_object_id]");

    // One event; no writes.
    let e = &every[0];
    let eid = id(e);
    assert_eq!(&get(app, k, "events", &eid).await, e);
    let forged = json!({ "type": "lead.created", "api_version": API_VERSION, "data": {} });
    app.call(k, "POST", "/v1/events", Some(forged)).await.assert_error(405, "method_not_allowed");
    app.call(k, "PATCH", &format!("/v1/events/{eid}"), Some(json!({ "type": "lead.created" })))
        .await
        .assert_error(405, "method_not_allowed");
    app.call(k, "DELETE", &format!("/v1/events/{eid}"), None).await.assert_error(405, "method_not_allowed");
    app.call(k, "PUT", &format!("/v1/events/{eid}"), Some(json!({}))).await.assert_error(405, "method_not_allowed");
    app.call(k, "GET", &format!("/v1/events/{}", Uuid::now_v7()), None).await.assert_error(404, "not_found");
    assert_eq!(events(app, k, "").await, every, "refused writes changed the events");

    // Tenants and environments see their own only.
    let b = app.tenant("B").await;
    assert!(events(app, &b.test_key, "").await.is_empty());
    assert!(events(app, &b.test_key, &format!("filter[related_object_id]={w1}")).await.is_empty());
    app.call(&b.test_key, "GET", &format!("/v1/events/{eid}"), None).await.assert_error(404, "not_found");
    app.call(&b.test_key, "DELETE", &format!("/v1/events/{eid}"), None).await.assert_error(405, "method_not_allowed");
    let live = app.call_on(true, &a.live_key, "GET", "/v1/events", None).await;
    assert_eq!(live.status, 200, "{}", live.text);
    assert_eq!(live.body["data"], json!([]), "the live environment sees no sandbox events");
    let bw = id(&app
        .create(&b.test_key, "workorders", json!({ "property_id": site(app, &b.test_key, "B").await.property, "title": "b" }))
        .await);
    assert_eq!(rel(&events(app, &b.test_key, "").await), [format!("workorder.created {bw}")]);
    assert_eq!(events(app, k, "").await, every);

    // A property-constrained key sees its property's events.
    let pk = app.key(a.id, false, &["*"], Some(vec![p1.property.parse().unwrap()])).await;
    assert_eq!(
        rel(&events(app, &pk, "").await),
        [format!("workorder.created {w1}"), format!("workorder.created {w3}"), format!("workorder.completed {w1}")]
    );
    let of_w2 = every.iter().find(|e| e["related_object_id"] == w2.as_str()).unwrap();
    app.call(&pk, "GET", &format!("/v1/events/{}", id(of_w2)), None).await.assert_error(404, "not_found");
    assert_eq!(get(app, &pk, "events", &eid).await, every[0]);
    assert!(events(app, &pk, &format!("filter[related_object_id]={w2}")).await.is_empty());
    // A key reading events sees those whose records it may also read (docs/api.md, "What
    // a scope reaches"): these are work orders' and a guest's.
    let reader = app.key(a.id, false, &["events:read"], None).await;
    assert!(events(app, &reader, "").await.is_empty());
    let reader = app.key(a.id, false, &["events:read", "workorders:read", "guests:read"], None).await;
    assert_eq!(events(app, &reader, "").await, every);
    let other = app.key(a.id, false, &["leases:read"], None).await;
    app.call(&other, "GET", "/v1/events", None).await.assert_error(403, "insufficient_scope");
}
both!(the_event_list_filters_reads_and_refuses_writes);

// ---------------------------------------------------------------------------------------
// 5. Scheduled events under a moved clock.
// ---------------------------------------------------------------------------------------

async fn rent_due_fires_once_on_its_day(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    app.clock.set(noon(day0()));
    let mut log = Log::default();
    let s = site(app, k, "Elm Court").await;
    let l = lease(app, k, &s.unit, day(-30), None).await;
    let due = charge(app, k, &l, "rent", day0()).await;
    let later = charge(app, k, &l, "rent", day(2)).await;
    let voided = charge(app, k, &l, "rent", day0()).await;
    act(app, k, "charges", &voided, "void", None).await;
    // Not rent, or past the week a stopped scheduler catches up: never.
    charge(app, k, &l, "fee", day0()).await;
    charge(app, k, &l, "deposit", day0()).await;
    charge(app, k, &l, "rent", day(-8)).await;
    let late = charge(app, k, &l, "rent", day(-3)).await;
    // A booking's rent charge is a rent charge too.
    let booking =
        id(&app.create(k, "bookings", json!({ "unit_id": s.unit, "check_in": day(1).to_string(), "check_out": day(3).to_string() })).await);
    let body = json!({ "booking_id": booking, "kind": "rent", "amount": 300, "currency": "USD", "due_date": day0().to_string() });
    let stay = id(&app.create(k, "charges", body).await);
    log.fresh(app, k).await;

    let ran_at = app.clock.now();
    let round = app.run_jobs().await;
    assert_eq!(round.events_fired, 3, "{round:?}");
    let fresh = log.fresh(app, k).await;
    let expected = [
        ("rent.due", "charges", due.as_str(), None),
        ("rent.due", "charges", late.as_str(), None),
        ("rent.due", "charges", stay.as_str(), None),
    ];
    check_scheduled(app, k, &fresh, &expected, ran_at).await;
    assert_eq!(fresh.iter().find(|e| e["related_object_id"] == due.as_str()).unwrap()["property_id"], s.property.as_str());
    // Once: a second round, and a later time the same day, fire nothing.
    assert_eq!(app.run_jobs().await.events_fired, 0);
    app.clock.set(at(day0(), 23, 59));
    assert_eq!(app.run_jobs().await.events_fired, 0);
    log.none(app, k, "rounds after the first").await;
    // Not before the due date.
    app.clock.set(noon(day(1)));
    assert_eq!(app.run_jobs().await.events_fired, 0);
    log.none(app, k, "the day before a due date").await;
    app.clock.set(at(day(2), 0, 1));
    let ran_at = app.clock.now();
    assert_eq!(app.run_jobs().await.events_fired, 1);
    let fresh = log.fresh(app, k).await;
    check_scheduled(app, k, &fresh, &[("rent.due", "charges", later.as_str(), None)], ran_at).await;
    assert_eq!(app.run_jobs().await.events_fired, 0);
    // A charge voided after it fell due does not fire again, nor does anything else.
    act(app, k, "charges", &due, "void", None).await;
    for n in 3..12 {
        app.clock.set(noon(day(n)));
        assert_eq!(app.run_jobs().await.events_fired, 0, "day {n}");
    }
    log.none(app, k, "the following days").await;
    assert_eq!(events(app, k, "filter[type]=rent.due").await.len(), 4);

    // Live records fire in the live environment.
    let lk = t.live_key.as_str();
    let live = |method: &'static str, path: String, body: Option<Value>| async move { app.call_on(true, lk, method, &path, body).await };
    let body = json!({ "name": "Live", "kind": "residential", "address": { "line1": "2 Elm St", "city": "Boise", "country": "US" } });
    let p = live("POST", "/v1/properties".into(), Some(body)).await;
    let u = live("POST", "/v1/units".into(), Some(json!({ "property_id": id(&p.body["data"]), "number": "1" }))).await;
    let body = json!({ "unit_id": id(&u.body["data"]), "start_date": day(1).to_string(), "rent": 10, "currency": "USD" });
    let ll = live("POST", "/v1/leases".into(), Some(body)).await;
    let body =
        json!({ "lease_id": id(&ll.body["data"]), "kind": "rent", "amount": 10, "currency": "USD", "due_date": day(11).to_string() });
    let c = live("POST", "/v1/charges".into(), Some(body)).await;
    assert_eq!(c.status, 201, "{}", c.text);
    assert_eq!(app.run_jobs().await.events_fired, 1);
    let r = live("GET", "/v1/events?filter[type]=rent.due".into(), None).await;
    assert_eq!(r.body["data"].as_array().map(Vec::len), Some(1), "{}", r.text);
    let e = &r.body["data"][0];
    assert_eq!((&e["livemode"], &e["related_object_id"]), (&json!(true), &c.body["data"]["id"]));
    assert_eq!(e["data"]["object"], c.body["data"]);
    log.none(app, k, "a live charge falling due").await;
}
both!(rent_due_fires_once_on_its_day);

/// "`due_date` is today, or up to 7 days past (a stopped scheduler catches up a week,
/// no more)": a charge 7 days past due still fires, 8 days past does not.
async fn rent_due_catches_up_a_week(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    app.clock.set(noon(day0()));
    let s = site(app, k, "Elm Court").await;
    let l = lease(app, k, &s.unit, day(-30), None).await;
    let (d6, d7, d8) =
        (charge(app, k, &l, "rent", day(-6)).await, charge(app, k, &l, "rent", day(-7)).await, charge(app, k, &l, "rent", day(-8)).await);
    let round = app.run_jobs().await;
    let fired: Vec<String> =
        events(app, k, "filter[type]=rent.due").await.iter().map(|e| e["related_object_id"].as_str().unwrap().to_string()).collect();
    assert!(fired.contains(&d6), "6 days late fires");
    assert!(!fired.contains(&d8), "8 days late does not fire");
    assert!(fired.contains(&d7), "a charge 7 days past due fires (documented: up to 7 days past); fired {round:?}");
    assert_eq!(round.events_fired, 2);
}
both!(rent_due_catches_up_a_week);

async fn lease_expiring_notices_fire_once_per_end(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    app.clock.set(noon(day0()));
    let mut log = Log::ignoring(&["rent.due"]);
    let s = site(app, k, "Elm Court").await;
    let moving = active_lease(app, k, &s.unit, day(-300), Some(day(75))).await;
    let near = active_lease(app, k, &s.unit, day(-300), Some(day(20))).await;
    let _periodic = active_lease(app, k, &s.unit, day(-300), None).await;
    let ended = active_lease(app, k, &s.unit, day(-300), Some(day(45))).await;
    act(app, k, "leases", &ended, "end", None).await;
    let terminated = active_lease(app, k, &s.unit, day(-300), Some(day(45))).await;
    act(app, k, "leases", &terminated, "terminate", None).await;
    let _draft = lease(app, k, &s.unit, day(-300), Some(day(45))).await;
    let signed = lease(app, k, &s.unit, day(-300), Some(day(45))).await;
    let sig = signature(app, k, &signed, "sy").await;
    act(app, k, "leases", &signed, "send", None).await;
    act(app, k, "signatures", &sig, "sign", None).await;
    log.fresh(app, k).await;

    // Day 0: the lease ending in 20 days gets the 30-day notice only.
    let run = |n: i64| async move {
        app.clock.set(noon(day(n)));
        notices(app.run_jobs().await)
    };
    let ran_at = noon(day0());
    assert_eq!(run(0).await, 1);
    let fresh = log.fresh(app, k).await;
    check_scheduled(app, k, &fresh, &[("lease.expiring", "leases", near.as_str(), Some(30))], ran_at).await;
    assert_eq!(run(0).await, 0);
    // 61 days before the end: nothing; 60: the 60-day notice, once.
    assert_eq!(run(14).await, 0);
    log.none(app, k, "61 days before the end").await;
    assert_eq!(run(15).await, 1);
    let fresh = log.fresh(app, k).await;
    check_scheduled(app, k, &fresh, &[("lease.expiring", "leases", moving.as_str(), Some(60))], noon(day(15))).await;
    assert_eq!(fresh[0]["data"]["object"]["end_date"], day(75).to_string());
    assert_eq!(run(15).await, 0);
    assert_eq!(run(30).await, 0);
    assert_eq!(run(44).await, 0, "31 days before the end");
    log.none(app, k, "31-59 days before the end").await;
    // 30 days before: the 30-day notice, once.
    assert_eq!(run(45).await, 1);
    let fresh = log.fresh(app, k).await;
    check_scheduled(app, k, &fresh, &[("lease.expiring", "leases", moving.as_str(), Some(30))], noon(day(45))).await;
    assert_eq!(run(45).await, 0);
    assert_eq!(run(50).await, 0);
    log.none(app, k, "after the notices").await;

    // The end moves out by 50 days: notices for the new end, each once.
    patch(app, k, "leases", &moving, json!({ "end_date": day(125).to_string() })).await;
    log.none(app, k, "patching end_date").await;
    assert_eq!(run(50).await, 0, "75 days before the new end");
    assert_eq!(run(65).await, 1, "60 days before the new end");
    let fresh = log.fresh(app, k).await;
    check_scheduled(app, k, &fresh, &[("lease.expiring", "leases", moving.as_str(), Some(60))], noon(day(65))).await;
    assert_eq!(fresh[0]["data"]["object"]["end_date"], day(125).to_string());
    assert_eq!(run(66).await, 0);
    assert_eq!(run(95).await, 1, "30 days before the new end");
    let fresh = log.fresh(app, k).await;
    check_scheduled(app, k, &fresh, &[("lease.expiring", "leases", moving.as_str(), Some(30))], noon(day(95))).await;
    assert_eq!(run(95).await, 0);
    // The end moves in to 40 days away: the 60-day notice for that end fires at once.
    patch(app, k, "leases", &moving, json!({ "end_date": day(135).to_string() })).await;
    assert_eq!(run(95).await, 1);
    let fresh = log.fresh(app, k).await;
    check_scheduled(app, k, &fresh, &[("lease.expiring", "leases", moving.as_str(), Some(60))], noon(day(95))).await;
    // Ended leases get nothing more.
    act(app, k, "leases", &moving, "end", None).await;
    log.none(app, k, "ending the lease").await;
    assert_eq!(run(110).await, 0);
    assert_eq!(run(130).await, 0);
    log.none(app, k, "rounds after the end").await;
}
both!(lease_expiring_notices_fire_once_per_end);

/// docs/workflows.md: lease notices fire "once per lease, notice and end date"; events
/// are kept 30 days. The 30-day notice's window runs to the end date itself, so a
/// notice fired exactly 30 days before the end is purged on the end date while the
/// window is still open, and the next round must not send it again.
async fn a_purged_lease_notice_is_not_sent_again(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    app.clock.set(at(day0(), 9, 0));
    let s = site(app, k, "Elm Court").await;
    let l = active_lease(app, k, &s.unit, day(-300), Some(day(30))).await;
    assert_eq!(notices(app.run_jobs().await), 1, "the 30-day notice");
    // The end date, later in the day than the notice was sent: over 30 days later.
    app.clock.set(at(day(30), 10, 0));
    let first = app.run_jobs().await;
    let second = app.run_jobs().await;
    let fired = (notices(first), notices(second));
    let notices = events(app, k, &format!("filter[type]=lease.expiring&filter[related_object_id]={l}")).await;
    assert_eq!(fired, (0, 0), "the 30-day notice fired again after retention removed it: {first:?} {second:?}; {notices:?}");
}
both!(a_purged_lease_notice_is_not_sent_again);

async fn document_expiring_fires_once_per_expiry_day(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    let t0 = noon(day0());
    app.clock.set(t0);
    let mut log = Log::default();
    let s = site(app, k, "Elm Court").await;
    let doc = |title: &str, expires: Option<DateTime<Utc>>| {
        let mut body = json!({ "title": title, "kind": "certificate", "property_id": s.property });
        if let Some(x) = expires {
            body["expires_at"] = json!(rfc(x));
        }
        let key = k.to_string();
        async move { id(&app.create(&key, "documents", body).await) }
    };
    let far = doc("far", Some(t0 + Duration::days(40))).await;
    let soon = doc("soon", Some(t0 + Duration::days(10))).await;
    let _never = doc("never", None).await;
    let _expired = doc("expired", Some(t0 - Duration::days(1))).await;
    let no_property =
        id(&app.create(k, "documents", json!({ "title": "ID", "kind": "identity", "expires_at": rfc(t0 + Duration::days(5)) })).await);
    log.fresh(app, k).await;

    let round = app.run_jobs().await;
    assert_eq!(round.events_fired, 2, "{round:?}");
    let fresh = log.fresh(app, k).await;
    let expected =
        [("document.expiring", "documents", soon.as_str(), Some(30)), ("document.expiring", "documents", no_property.as_str(), Some(30))];
    check_scheduled(app, k, &fresh, &expected, t0).await;
    assert_eq!(app.run_jobs().await.events_fired, 0);
    // Just over 30 days before: nothing; just under: once.
    app.clock.set(t0 + Duration::days(10) - Duration::minutes(1));
    assert_eq!(app.run_jobs().await.events_fired, 0);
    app.clock.set(t0 + Duration::days(10) + Duration::minutes(1));
    let ran_at = app.clock.now();
    assert_eq!(app.run_jobs().await.events_fired, 1);
    let fresh = log.fresh(app, k).await;
    check_scheduled(app, k, &fresh, &[("document.expiring", "documents", far.as_str(), Some(30))], ran_at).await;
    app.clock.set(t0 + Duration::days(20));
    assert_eq!(app.run_jobs().await.events_fired, 0);
    // Moved within the same day: no new notice; moved to another day: a new one.
    patch(app, k, "documents", &far, json!({ "expires_at": rfc(t0 + Duration::days(40) + Duration::hours(3)) })).await;
    assert_eq!(app.run_jobs().await.events_fired, 0, "same expiry day");
    patch(app, k, "documents", &far, json!({ "expires_at": rfc(t0 + Duration::days(45)) })).await;
    let ran_at = app.clock.now();
    assert_eq!(app.run_jobs().await.events_fired, 1, "a new expiry day");
    let fresh = log.fresh(app, k).await;
    check_scheduled(app, k, &fresh, &[("document.expiring", "documents", far.as_str(), Some(30))], ran_at).await;
    assert_eq!(fresh[0]["data"]["object"]["expires_at"], "2027-02-18T12:00:00.000000Z");
    assert_eq!(app.run_jobs().await.events_fired, 0);
    // Moved far out: a notice when that one comes near.
    patch(app, k, "documents", &far, json!({ "expires_at": rfc(t0 + Duration::days(100)) })).await;
    assert_eq!(app.run_jobs().await.events_fired, 0);
    app.clock.set(t0 + Duration::days(71));
    assert_eq!(app.run_jobs().await.events_fired, 1);
    assert_eq!(app.run_jobs().await.events_fired, 0);
    log.fresh(app, k).await;
    // Of the far document's three notices, retention has removed the two sent over 30
    // days ago.
    let notices = events(app, k, &format!("filter[type]=document.expiring&filter[related_object_id]={far}")).await;
    assert_eq!(notices.len(), 1, "{notices:?}");
    assert_eq!(notices[0]["data"]["object"]["expires_at"], "2027-04-14T12:00:00.000000Z");
}
both!(document_expiring_fires_once_per_expiry_day);

// ---------------------------------------------------------------------------------------
// 6. Exactly once across processes.
// ---------------------------------------------------------------------------------------

async fn scheduled_events_fire_once_across_nodes(app: &TestApp) {
    // A node's own scheduler runs a round as it starts: start the second one while
    // nothing is due yet, so that the rounds below are the ones that fire.
    app.clock.set(noon(day(-10)));
    let node2 = app.second_node().spawn().await;
    app.clock.set(noon(day0()));
    const CHARGES: usize = 130;
    let mut tenants = vec![];
    for name in ["A", "B"] {
        let t = app.tenant(name).await;
        let k = t.test_key.clone();
        let s = site(app, &k, name).await;
        let l = lease(app, &k, &s.unit, day(-30), None).await;
        let mut ids = HashSet::new();
        for _ in 0..CHARGES {
            ids.insert(charge(app, &k, &l, "rent", day0()).await);
        }
        for n in 0..5 {
            app.create(&k, "documents", json!({ "title": format!("doc {n}"), "kind": "insurance", "expires_at": rfc(noon(day(5 + n))) }))
                .await;
        }
        for n in 0..3 {
            active_lease(app, &k, &s.unit, day(-300), Some(day(40 + n))).await;
        }
        tenants.push((t, ids));
    }
    node2.clock.set(app.clock.now());
    let mut fired = 0;
    for _ in 0..4 {
        let (one, two) = tokio::join!(app.run_jobs(), node2.run_jobs());
        fired += one.events_fired + two.events_fired;
    }
    // Per tenant: the rent charges, 5 documents, 3 sixty-day lease notices, and the rent
    // the 3 active leases bill (since 2026-03-10: 11 periods each, the last due on the 1st,
    // within the week rent.due catches up).
    assert_eq!(fired, 2 * (CHARGES + 5 + 3 + 3), "events written by the two nodes together");
    assert_eq!(app.count_where("charges", "period IS NOT NULL").await, 2 * 3 * 11, "each period billed once");
    for (t, ids) in &tenants {
        let due = events(app, &t.test_key, "filter[type]=rent.due").await;
        let related: Vec<String> = due.iter().map(|e| e["related_object_id"].as_str().unwrap().to_string()).collect();
        assert_eq!(related.len(), CHARGES + 3, "rent.due events of one tenant");
        let related: HashSet<String> = related.into_iter().collect();
        assert_eq!(related.len(), CHARGES + 3, "once each");
        assert!(ids.is_subset(&related));
        assert_eq!(events(app, &t.test_key, "filter[type]=document.expiring").await.len(), 5);
        assert_eq!(events(app, &t.test_key, "filter[type]=lease.expiring").await.len(), 3);
    }
    assert_eq!(app.count_where("events", "type = 'rent.due'").await, 2 * (CHARGES as i64 + 3));
    // The next day, both nodes again: nothing new.
    app.clock.set(noon(day(1)));
    node2.clock.set(noon(day(1)));
    let (one, two) = tokio::join!(app.run_jobs(), node2.run_jobs());
    assert_eq!(one.events_fired + two.events_fired, 0);
    node2.stop().await;
}
both!(scheduled_events_fire_once_across_nodes);

// ---------------------------------------------------------------------------------------
// 7. Retention.
// ---------------------------------------------------------------------------------------

async fn events_are_kept_thirty_days(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    let t0 = noon(day0());
    app.clock.set(t0);
    let s = site(app, k, "Elm Court").await;
    let old = id(&app.create(k, "workorders", json!({ "property_id": s.property, "title": "old" })).await);
    app.clock.set(t0 + Duration::days(20));
    let newer = id(&app.create(k, "workorders", json!({ "property_id": s.property, "title": "newer" })).await);
    let evs = events(app, k, "").await;
    assert_eq!(evs.len(), 2);
    let (old_e, new_e) = (id(&evs[0]), id(&evs[1]));
    assert_eq!(evs[0]["related_object_id"], old.as_str());
    assert_eq!(evs[1]["related_object_id"], newer.as_str());
    // A delivery record for each (written by Gable only: straight into the store).
    let hook = id(&app.create(k, "webhooks", json!({ "url": "https://hooks.example.com/gable", "events": ["*"] })).await);
    for e in [&old_e, &new_e] {
        let row = NewRow {
            id: Uuid::now_v7(),
            created_at: app.clock.now(),
            values: [
                ("webhook_id", Val::Uuid(hook.parse().unwrap())),
                ("event_id", Val::Uuid(e.parse().unwrap())),
                ("event_type", Val::Str("workorder.created".into())),
                ("event_created_at", Val::DateTime(t0)),
                ("url", Val::Str("https://hooks.example.com/gable".into())),
                ("trigger", Val::Str("event".into())),
                ("attempt", Val::Int(1)),
                ("status", Val::Str("succeeded".into())),
                ("response_status", Val::Int(200)),
            ]
            .into_iter()
            .collect(),
        };
        app.store.insert_many(t.id, false, collection("webhook-deliveries").unwrap(), &[row]).await.expect("delivery");
    }
    assert_eq!(app.all_pages(k, "/v1/webhook-deliveries").await.len(), 2);

    // Just under 30 days: kept.
    app.clock.set(t0 + Duration::days(30) - Duration::minutes(1));
    let round = app.run_jobs().await;
    assert_eq!(round.events_purged, 0, "{round:?}");
    assert_eq!(events(app, k, "").await.len(), 2);
    // Over 30 days: the old one goes, with its delivery.
    app.clock.set(t0 + Duration::days(30) + Duration::minutes(1));
    let round = app.run_jobs().await;
    assert_eq!(round.events_purged, 1, "{round:?}");
    app.call(k, "GET", &format!("/v1/events/{old_e}"), None).await.assert_error(404, "not_found");
    assert_eq!(get(app, k, "events", &new_e).await["related_object_id"], newer.as_str());
    let deliveries = app.all_pages(k, "/v1/webhook-deliveries").await;
    assert_eq!(deliveries.len(), 1, "{deliveries:?}");
    assert_eq!(deliveries[0]["event_id"], new_e.as_str());
    // The record itself stays; the next round purges nothing more.
    get(app, k, "workorders", &old).await;
    assert_eq!(app.run_jobs().await.events_purged, 0);
    // Other tenants' old events go too.
    let b = app.tenant("B").await;
    let bs = site(app, &b.test_key, "B").await;
    app.create(&b.test_key, "workorders", json!({ "property_id": bs.property, "title": "b" })).await;
    app.clock.set(t0 + Duration::days(51));
    assert_eq!(app.run_jobs().await.events_purged, 1, "A's newer event (created day 20)");
    app.clock.set(t0 + Duration::days(62));
    assert_eq!(app.run_jobs().await.events_purged, 1, "B's event");
    assert!(events(app, k, "").await.is_empty());
    assert!(events(app, &b.test_key, "").await.is_empty());
}
both!(events_are_kept_thirty_days);

/// A backlog larger than one purge batch (1,000 rows per transaction) goes in full, in
/// one round.
async fn a_large_backlog_is_purged_in_batches(app: &TestApp) {
    let t = app.tenant("Backlog").await;
    let t0 = app.clock.now();
    let related = Uuid::now_v7();
    app.store
        .in_system(gable::store::Intent::Write, async |tx| {
            for n in 0..2_500 {
                let e = gable::store::events::NewEvent {
                    tenant: t.id,
                    livemode: false,
                    kind: "workorder.created",
                    data: json!({ "n": n }),
                    related,
                    property: None,
                    occurrence: None,
                    at: t0,
                    request: None,
                };
                gable::store::events::insert(tx, e).await?;
            }
            Ok(())
        })
        .await
        .expect("old events");
    assert_eq!(app.count_rows("events").await, 2_500);
    app.clock.set(t0 + Duration::days(31));
    assert_eq!(app.run_jobs().await.events_purged, 2_500);
    assert_eq!(app.count_rows("events").await, 0);
}
both!(a_large_backlog_is_purged_in_batches);
