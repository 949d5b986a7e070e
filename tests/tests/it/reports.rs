//! Reports over HTTP: each kind computed from records made through the API (rent roll,
//! occupancy, delinquency, the ledger's trial balance), their parameters (`as_of`,
//! `property_id`), and the life of a report: queued, completed, read-only, never deleted.

use chrono::{Duration, NaiveDate};
use gable::domain::reach::Scope;
use gable_tests::{both, Res, TestApp};
use serde_json::{json, Value};

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap_or_else(|| panic!("no id in {v}")).to_string()
}

fn num(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

async fn act(app: &TestApp, key: &str, resource: &str, id: &str, action: &str) -> Value {
    let r = app.call(key, "POST", &format!("/v1/{resource}/{id}/{action}"), None).await;
    assert_eq!(r.status, 200, "{resource}/{id}/{action}: {}", r.text);
    r.body["data"].clone()
}

async fn property(app: &TestApp, key: &str, name: &str) -> String {
    id(&app
        .create(
            key,
            "properties",
            json!({ "name": name, "kind": "residential", "address": { "line1": "1 Main St", "city": "Portland", "country": "US" } }),
        )
        .await)
}

async fn unit(app: &TestApp, key: &str, property: &str, number: &str) -> String {
    id(&app.create(key, "units", json!({ "property_id": property, "number": number })).await)
}

/// A draft lease of a unit from `start`; returns its id.
async fn draft_lease(app: &TestApp, key: &str, unit: &str, start: NaiveDate, rent: i64, currency: &str) -> String {
    id(&app.create(key, "leases", json!({ "unit_id": unit, "start_date": start.to_string(), "rent": rent, "currency": currency })).await)
}

/// A lease taken all the way to `active`: sent, signed by its one signer, activated
/// (which starts its tenancy, moving in on the start date).
/// `terms`: the lease's `rent`, `currency` and `deposit` if any.
async fn active_lease(app: &TestApp, key: &str, unit: &str, start: NaiveDate, end: Option<NaiveDate>, terms: Value) -> String {
    let mut body = terms;
    body["unit_id"] = json!(unit);
    body["start_date"] = json!(start.to_string());
    if let Some(e) = end {
        body["end_date"] = json!(e.to_string());
    }
    let lease = id(&app.create(key, "leases", body).await);
    act(app, key, "leases", &lease, "send").await;
    let sig = id(&app
        .create(key, "signatures", json!({ "lease_id": lease, "signer_name": "Lee Lessee", "signer_email": "lee@example.com" }))
        .await);
    act(app, key, "signatures", &sig, "sign").await;
    let r = app.call(key, "GET", &format!("/v1/leases/{lease}"), None).await;
    assert_eq!(r.body["data"]["status"], "signed", "the only signature signs the lease");
    let l = act(app, key, "leases", &lease, "activate").await;
    assert_eq!(l["status"], "active");
    lease
}

async fn charge(app: &TestApp, key: &str, lease: &str, kind: &str, amount: Value, currency: &str, due: NaiveDate) -> String {
    id(&app
        .create(
            key,
            "charges",
            json!({ "lease_id": lease, "kind": kind, "amount": amount, "currency": currency, "due_date": due.to_string() }),
        )
        .await)
}

/// An invoice of the lease, opened unless `draft`.
async fn invoice(app: &TestApp, key: &str, lease: &str, amount: Value, currency: &str, due: NaiveDate, open: bool) -> String {
    let i = id(&app
        .create(key, "invoices", json!({ "lease_id": lease, "amount_due": amount, "currency": currency, "due_date": due.to_string() }))
        .await);
    if open {
        act(app, key, "invoices", &i, "open").await;
    }
    i
}

/// A test payment whose scenario (`succeeded`, `failed` or `reversed`) runs at once,
/// against an invoice or none.
async fn payment(app: &TestApp, key: &str, invoice: Option<&str>, amount: Value, currency: &str, scenario: &str) -> String {
    let mut body = json!({ "amount": amount, "currency": currency, "scenario": scenario });
    if let Some(i) = invoice {
        body["invoice_id"] = json!(i);
    }
    let p = app.create(key, "payments", body).await;
    assert_eq!(p["status"], scenario, "the scenario ran at once: {p}");
    id(&p)
}

/// Waits for a report to leave `queued` (the in-process worker takes it at once; a
/// round of background work is run too, in case it has not).
async fn wait(app: &TestApp, key: &str, report: &str) -> Value {
    for i in 0..100 {
        let r = app.call(key, "GET", &format!("/v1/reports/{report}"), None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        if r.body["data"]["status"] != "queued" {
            return r.body["data"].clone();
        }
        if i % 20 == 19 {
            app.run_jobs().await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("report {report} still queued after 5 s");
}

/// Runs a report to completion and returns its `result`.
async fn report(app: &TestApp, key: &str, kind: &str, parameters: Value) -> Value {
    let r = app.call(key, "POST", "/v1/reports", Some(json!({ "kind": kind, "parameters": parameters }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["status"], "queued", "a new report is queued");
    let done = wait(app, key, &id(&r.body["data"])).await;
    assert_eq!(done["status"], "completed", "{done}");
    done["result"].clone()
}

fn find<'a>(rows: &'a Value, field: &str, value: &str) -> &'a Value {
    rows.as_array()
        .expect("rows")
        .iter()
        .find(|r| r[field] == json!(value))
        .unwrap_or_else(|| panic!("no row with {field} = {value} in {rows}"))
}

// ---------------------------------------------------------------------------------------

async fn rent_roll_lists_units_leases_and_balances(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let today = app.clock.today();
    let d = |n: i64| today + Duration::days(n);
    let (p1, p2) = (property(app, k, "Maple Court").await, property(app, k, "Birch House").await);
    let (u1a, u1b, u2a) = (unit(app, k, &p1, "1A").await, unit(app, k, &p1, "1B").await, unit(app, k, &p2, "2A").await);

    // 1A: an active lease with charges and payments.
    let l1 = active_lease(app, k, &u1a, d(-60), Some(d(300)), json!({ "rent": 1450, "currency": "USD", "deposit": 2900 })).await;
    charge(app, k, &l1, "deposit", json!(2900), "USD", d(-60)).await;
    let c_old = charge(app, k, &l1, "rent", json!(1450), "USD", d(-31)).await;
    let c_now = charge(app, k, &l1, "rent", json!(1450), "USD", d(0)).await;
    charge(app, k, &l1, "rent", json!(1450), "USD", d(30)).await; // not due yet
    let fee = charge(app, k, &l1, "fee", json!(50), "USD", d(-5)).await;
    act(app, k, "charges", &fee, "void").await; // void: not owed
    let i1 = id(&app
        .create(
            k,
            "invoices",
            json!({ "lease_id": l1, "charge_ids": [c_old], "amount_due": 1450, "currency": "USD", "due_date": d(-31).to_string() }),
        )
        .await);
    act(app, k, "invoices", &i1, "open").await;
    payment(app, k, Some(&i1), json!(1450), "USD", "succeeded").await;
    let i2 = id(&app
        .create(
            k,
            "invoices",
            json!({ "lease_id": l1, "charge_ids": [c_now], "amount_due": 1450, "currency": "USD", "due_date": d(0).to_string() }),
        )
        .await);
    act(app, k, "invoices", &i2, "open").await;
    payment(app, k, Some(&i2), json!(1000), "USD", "succeeded").await;
    payment(app, k, Some(&i2), json!(200), "USD", "failed").await; // failed: not paid
    payment(app, k, Some(&i2), json!(300), "USD", "reversed").await; // reversed: not paid
    payment(app, k, None, json!(500), "USD", "succeeded").await; // not to the lease's invoices
                                                                 // 1B: a lease that ended ten days ago.
    let l2 = active_lease(app, k, &u1b, d(-100), Some(d(-10)), json!({ "rent": 1200, "currency": "USD" })).await;
    charge(app, k, &l2, "rent", json!(1200), "USD", d(-40)).await;
    act(app, k, "leases", &l2, "end").await;
    // 2A: a periodic lease in yen.
    let l3 = active_lease(app, k, &u2a, d(-30), None, json!({ "rent": 120000, "currency": "JPY", "deposit": 240000 })).await;
    charge(app, k, &l3, "rent", json!(120000), "JPY", d(-30)).await;
    let i3 = invoice(app, k, &l3, json!(120000), "JPY", d(-30), true).await;
    payment(app, k, Some(&i3), json!(20000), "JPY", "succeeded").await;
    // A draft lease is not in force.
    draft_lease(app, k, &u1b, d(-5), 999, "USD").await;

    let r = report(app, k, "rent_roll", json!({})).await;
    assert_eq!(r["as_of"], json!(today.to_string()), "as_of defaults to today");
    assert_eq!((r["units"].clone(), r["leased_units"].clone(), r["vacant_units"].clone()), (json!(3), json!(2), json!(1)), "{r}");
    let rows = &r["rows"];
    assert_eq!(rows.as_array().unwrap().len(), 3);
    let a = find(rows, "unit_id", &u1a);
    assert_eq!(a["status"], "occupied");
    assert_eq!(a["unit_number"], "1A");
    assert_eq!(a["property_id"], json!(p1));
    assert_eq!(a["lease_id"], json!(l1));
    assert_eq!(a["lease_start"], json!(d(-60).to_string()));
    assert_eq!(a["lease_end"], json!(d(300).to_string()));
    assert_eq!(a["currency"], "USD");
    assert_eq!(a["rent"], json!(1450));
    assert_eq!(a["deposit"], json!(2900));
    // Posted charges due by today (deposit, two rents) less succeeded payments to its invoices.
    assert_eq!(a["balance"], json!(2900 + 1450 + 1450 - 1450 - 1000), "{a}");
    let b = find(rows, "unit_id", &u1b);
    assert_eq!(b["status"], "vacant", "an ended lease is not in force after its end: {b}");
    assert!(b["lease_id"].is_null() && b["rent"].is_null() && b["balance"].is_null(), "{b}");
    let c = find(rows, "unit_id", &u2a);
    assert_eq!(
        (c["status"].clone(), c["currency"].clone(), c["rent"].clone(), c["deposit"].clone()),
        (json!("occupied"), json!("JPY"), json!(120000), json!(240000))
    );
    assert_eq!(c["balance"], json!(100000));
    assert!(c["lease_end"].is_null());
    assert_eq!(
        r["totals"],
        json!([
            { "currency": "JPY", "leased_units": 1, "rent": 120000, "balance": 100000 },
            { "currency": "USD", "leased_units": 1, "rent": 1450, "balance": 3350 },
        ])
    );

    // One property only.
    let r = report(app, k, "rent_roll", json!({ "property_id": p1 })).await;
    assert_eq!(r["property_id"], json!(p1));
    let units: Vec<&Value> = r["rows"].as_array().unwrap().iter().map(|r| &r["unit_id"]).collect();
    assert_eq!(units.len(), 2, "{r}");
    assert!(units.contains(&&json!(u1a)) && units.contains(&&json!(u1b)));
    assert_eq!(r["units"], json!(2));
    assert_eq!(r["totals"], json!([{ "currency": "USD", "leased_units": 1, "rent": 1450, "balance": 3350 }]));

    // Later: the next rent is due too.
    let r = report(app, k, "rent_roll", json!({ "as_of": d(30).to_string() })).await;
    assert_eq!(r["as_of"], json!(d(30).to_string()));
    assert_eq!(find(&r["rows"], "unit_id", &u1a)["balance"], json!(3350 + 1450));
    // Earlier: 1B's lease was in force (ended leases count up to their end date).
    let r = report(app, k, "rent_roll", json!({ "as_of": d(-20).to_string() })).await;
    let b = find(&r["rows"], "unit_id", &u1b);
    assert_eq!(
        (b["status"].clone(), b["lease_id"].clone(), b["rent"].clone(), b["balance"].clone()),
        (json!("occupied"), json!(l2), json!(1200), json!(1200)),
        "{b}"
    );
    assert_eq!(r["leased_units"], json!(3));
    // Before 1A's lease started, and before 2A's: only 1B was let.
    let r = report(app, k, "rent_roll", json!({ "as_of": d(-61).to_string() })).await;
    assert_eq!(find(&r["rows"], "unit_id", &u1a)["status"], "vacant");
    assert_eq!(find(&r["rows"], "unit_id", &u2a)["status"], "vacant");
    assert_eq!(find(&r["rows"], "unit_id", &u1b)["status"], "occupied");
    assert_eq!(r["leased_units"], json!(1));
}
both!(rent_roll_lists_units_leases_and_balances);

async fn occupancy_counts_tenancies_and_stays(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let today = app.clock.today();
    let d = |n: i64| today + Duration::days(n);
    let (p1, p2) = (property(app, k, "Maple Court").await, property(app, k, "Birch House").await);
    let mut u = vec![];
    for n in ["A", "B", "C", "D"] {
        u.push(unit(app, k, &p1, n).await);
    }
    for n in ["E", "F"] {
        u.push(unit(app, k, &p2, n).await);
    }
    // A: a current tenancy (the lease's activation moved it in 30 days ago).
    let la = active_lease(app, k, &u[0], d(-30), None, json!({ "rent": 1000, "currency": "USD" })).await;
    let r = app.call(k, "GET", &format!("/v1/tenancies?filter[lease_id]={la}"), None).await;
    let ten = &r.body["data"][0];
    assert_eq!((ten["status"].clone(), ten["move_in_date"].clone()), (json!("current"), json!(d(-30).to_string())), "{}", r.text);
    // B: a stay checked in yesterday.
    let b = id(&app.create(k, "bookings", json!({ "unit_id": u[1], "check_in": d(-1).to_string(), "check_out": d(3).to_string() })).await);
    act(app, k, "bookings", &b, "confirm").await;
    assert_eq!(act(app, k, "bookings", &b, "check_in").await["status"], "checked_in");
    // C: a confirmed stay, not checked in.
    let c = id(&app.create(k, "bookings", json!({ "unit_id": u[2], "check_in": d(0).to_string(), "check_out": d(2).to_string() })).await);
    act(app, k, "bookings", &c, "confirm").await;
    // D: an upcoming tenancy of a draft lease.
    let ld = draft_lease(app, k, &u[3], d(-5), 900, "USD").await;
    let td = app.create(k, "tenancies", json!({ "lease_id": ld, "unit_id": u[3], "move_in_date": d(-5).to_string() })).await;
    assert_eq!(td["status"], "upcoming");
    // E: moved out today.
    let le = active_lease(app, k, &u[4], d(-60), None, json!({ "rent": 1000, "currency": "USD" })).await;
    let r = app.call(k, "GET", &format!("/v1/tenancies?filter[lease_id]={le}"), None).await;
    let te = id(&r.body["data"][0]);
    let moved = act(app, k, "tenancies", &te, "move_out").await;
    assert_eq!(moved["move_out_date"], json!(today.to_string()));
    // F: nothing.

    let check = |r: &Value, p: &str, units: u64, occupied: u64, rate: f64| {
        let row = if p == "total" { &r["total"] } else { find(&r["properties"], "property_id", p) };
        assert_eq!(
            (row["units"].clone(), row["occupied"].clone(), row["vacant"].clone()),
            (json!(units), json!(occupied), json!(units - occupied)),
            "{p}: {r}"
        );
        assert_eq!(num(&row["occupancy_rate"]), rate, "{p}: {r}");
    };
    let r = report(app, k, "occupancy", json!(null)).await;
    assert_eq!(r["as_of"], json!(today.to_string()));
    assert_eq!(r["properties"].as_array().unwrap().len(), 2);
    check(&r, &p1, 4, 2, 0.5);
    check(&r, &p2, 2, 0, 0.0);
    check(&r, "total", 6, 2, 0.3333);

    // Yesterday: E was still in, and B's stay had begun.
    let r = report(app, k, "occupancy", json!({ "as_of": d(-1).to_string() })).await;
    check(&r, &p1, 4, 2, 0.5);
    check(&r, &p2, 2, 1, 0.5);
    check(&r, "total", 6, 3, 0.5);
    // A month ago: only E.
    let r = report(app, k, "occupancy", json!({ "as_of": d(-31).to_string() })).await;
    check(&r, &p1, 4, 0, 0.0);
    check(&r, &p2, 2, 1, 0.5);
    check(&r, "total", 6, 1, 0.1667);
    // One property.
    let r = report(app, k, "occupancy", json!({ "property_id": p2, "as_of": d(-1).to_string() })).await;
    assert_eq!(r["property_id"], json!(p2));
    assert_eq!(r["properties"].as_array().unwrap().len(), 1);
    check(&r, &p2, 2, 1, 0.5);
    check(&r, "total", 2, 1, 0.5);
}
both!(occupancy_counts_tenancies_and_stays);

async fn delinquency_ages_open_invoices(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let today = app.clock.today();
    let d = |n: i64| today + Duration::days(n);
    let p = property(app, k, "Maple Court").await;
    let lease = draft_lease(app, k, &unit(app, k, &p, "1A").await, d(-500), 100, "USD").await;
    let yen = draft_lease(app, k, &unit(app, k, &p, "1B").await, d(-500), 5000, "JPY").await;
    // (days past due today, amount due): bucket boundaries on both sides.
    let aged = [(1, 101), (30, 130), (31, 131), (60, 160), (61, 161), (90, 190), (91, 191), (400, 400)];
    let mut ids = vec![];
    for (days, amount) in aged {
        ids.push((invoice(app, k, &lease, json!(amount), "USD", d(-days), true).await, days, amount));
    }
    // Part-paid, 45 days late: 200 outstanding.
    let part = invoice(app, k, &lease, json!(245), "USD", d(-45), true).await;
    payment(app, k, Some(&part), json!(45), "USD", "succeeded").await;
    // Not delinquent today: due today, due later, draft, void, paid.
    let due_today = invoice(app, k, &lease, json!(1000), "USD", d(0), true).await;
    let due_later = invoice(app, k, &lease, json!(1005), "USD", d(5), true).await;
    invoice(app, k, &lease, json!(7), "USD", d(-10), false).await;
    let void = invoice(app, k, &lease, json!(8), "USD", d(-10), true).await;
    act(app, k, "invoices", &void, "void").await;
    let paid = invoice(app, k, &lease, json!(9), "USD", d(-10), true).await;
    payment(app, k, Some(&paid), json!(9), "USD", "succeeded").await;
    // Paid, then the payment reversed: open and delinquent again.
    let reopened = invoice(app, k, &lease, json!(11), "USD", d(-12), true).await;
    payment(app, k, Some(&reopened), json!(11), "USD", "reversed").await;
    assert_eq!(app.call(k, "GET", &format!("/v1/invoices/{reopened}"), None).await.body["data"]["status"], "open");
    let jpy = invoice(app, k, &yen, json!(5000), "JPY", d(-10), true).await;

    let r = report(app, k, "delinquency", json!({})).await;
    assert_eq!(r["as_of"], json!(today.to_string()));
    let rows = r["rows"].as_array().unwrap();
    assert_eq!(r["invoices"], json!(rows.len()));
    assert_eq!(rows.len(), 11, "eight aged, the part-paid, the reopened and the yen invoice: {r:#}");
    for (inv, days, amount) in &ids {
        let row = find(&r["rows"], "invoice_id", inv);
        let bucket = match days {
            1..=30 => "1_30",
            31..=60 => "31_60",
            61..=90 => "61_90",
            _ => "over_90",
        };
        assert_eq!((row["days_overdue"].clone(), row["bucket"].clone()), (json!(days), json!(bucket)), "{row}");
        assert_eq!(
            (row["amount_due"].clone(), row["amount_paid"].clone(), row["outstanding"].clone()),
            (json!(amount), json!(0), json!(amount))
        );
        assert_eq!((row["lease_id"].clone(), row["property_id"].clone(), row["currency"].clone()), (json!(lease), json!(p), json!("USD")));
        assert_eq!(row["due_date"], json!(d(-days).to_string()));
    }
    let row = find(&r["rows"], "invoice_id", &part);
    assert_eq!((row["bucket"].clone(), row["amount_paid"].clone(), row["outstanding"].clone()), (json!("31_60"), json!(45), json!(200)));
    assert_eq!(find(&r["rows"], "invoice_id", &reopened)["outstanding"], json!(11));
    let row = find(&r["rows"], "invoice_id", &jpy);
    assert_eq!((row["currency"].clone(), row["outstanding"].clone(), row["bucket"].clone()), (json!("JPY"), json!(5000), json!("1_30")));
    for excluded in [&due_today, &due_later, &void, &paid] {
        assert!(!rows.iter().any(|r| r["invoice_id"] == json!(excluded)), "{excluded} is not delinquent");
    }
    let days: Vec<i64> = rows.iter().map(|r| r["days_overdue"].as_i64().unwrap()).collect();
    assert!(days.windows(2).all(|w| w[0] >= w[1]), "oldest first: {days:?}");
    assert_eq!(
        r["totals"],
        json!([
            { "currency": "JPY", "outstanding": 5000, "by_bucket": { "1_30": 5000, "31_60": 0, "61_90": 0, "over_90": 0 } },
            { "currency": "USD", "outstanding": 101 + 130 + 11 + 131 + 160 + 200 + 161 + 190 + 191 + 400,
              "by_bucket": { "1_30": 101 + 130 + 11, "31_60": 131 + 160 + 200, "61_90": 161 + 190, "over_90": 191 + 400 } },
        ])
    );

    // Thirty days on (as_of): everything ages a month, and today's invoices fall due.
    let later = report(app, k, "delinquency", json!({ "as_of": d(30).to_string() })).await;
    let row = |id: &str| find(&later["rows"], "invoice_id", id).clone();
    assert_eq!((row(&due_today)["days_overdue"].clone(), row(&due_today)["bucket"].clone()), (json!(30), json!("1_30")));
    assert_eq!(row(&due_later)["days_overdue"], json!(25));
    assert_eq!(row(&ids[0].0)["bucket"], "31_60", "1 + 30 days");
    assert_eq!(row(&ids[1].0)["bucket"], "31_60", "30 + 30 days");
    assert_eq!(row(&ids[2].0)["bucket"], "61_90", "31 + 30 days");
    assert_eq!(row(&ids[4].0)["bucket"], "over_90", "61 + 30 days");
    assert_eq!(later["invoices"], json!(13));
    // An as_of in the past: only what was due before it.
    let earlier = report(app, k, "delinquency", json!({ "as_of": d(-90).to_string() })).await;
    let ids_then: Vec<&str> = earlier["rows"].as_array().unwrap().iter().map(|r| r["invoice_id"].as_str().unwrap()).collect();
    assert_eq!(ids_then, vec![ids[7].0.as_str(), ids[6].0.as_str()], "due 400 and 91 days ago: {earlier}");
    assert_eq!(find(&earlier["rows"], "invoice_id", &ids[6].0)["days_overdue"], json!(1));
    // One property only: the same rows (all on it); another property has none.
    let other = property(app, k, "Birch House").await;
    let r = report(app, k, "delinquency", json!({ "property_id": other })).await;
    assert_eq!((r["invoices"].clone(), r["totals"].clone()), (json!(0), json!([])));

    // The clock moves thirty days: the default as_of follows it.
    app.clock.advance(Duration::days(30));
    let moved = report(app, k, "delinquency", json!({})).await;
    assert_eq!(moved, later, "as_of defaults to the server's today");
}
both!(delinquency_ages_open_invoices);

async fn ledger_report_is_the_trial_balance(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let today = app.clock.today();
    let d = |n: i64| today + Duration::days(n);
    let (p1, p2) = (property(app, k, "Maple Court").await, property(app, k, "Birch House").await);
    let l1 = draft_lease(app, k, &unit(app, k, &p1, "1A").await, d(-60), 1450, "USD").await;
    let l2 = draft_lease(app, k, &unit(app, k, &p2, "2A").await, d(-60), 50000, "JPY").await;
    charge(app, k, &l1, "rent", json!(1450), "USD", d(-10)).await;
    charge(app, k, &l1, "fee", json!(35.5), "USD", d(10)).await; // posted on its due date, later
    let inv = invoice(app, k, &l1, json!(1450), "USD", d(-10), true).await;
    let p = payment(app, k, Some(&inv), json!(1000), "USD", "succeeded").await;
    let rf = id(&app.create(k, "refunds", json!({ "payment_id": p, "amount": 100, "currency": "USD" })).await);
    act(app, k, "refunds", &rf, "succeed").await;
    app.create(k, "accounting-entries", json!({ "lines": [{ "account": "cash", "debit": 10, "credit": 0 }, { "account": "fee_income", "debit": 0, "credit": 10 }], "currency": "USD", "posted_on": d(20).to_string() })).await;
    charge(app, k, &l2, "rent", json!(50000), "JPY", d(-1)).await;

    // The report is account_sums up to as_of, in major units, per currency.
    let scope = Scope { tenant: t.id, livemode: false, properties: None };
    let expect = |as_of: NaiveDate, property: Option<&str>| {
        let scope = scope.clone();
        let property = property.map(|p| p.parse().unwrap());
        async move {
            let sums = app.store.account_sums(&scope, Some(as_of), property).await.unwrap();
            let mut currencies: Vec<Value> = vec![];
            let mut cur_names: Vec<String> = sums.iter().map(|s| s.currency.clone()).collect();
            cur_names.dedup();
            for cur in cur_names {
                let scale = if cur == "JPY" { 1.0 } else { 100.0 };
                let m = |v: i64| if v % scale as i64 == 0 { json!(v / scale as i64) } else { json!(v as f64 / scale) };
                let rows: Vec<_> = sums.iter().filter(|s| s.currency == cur).collect();
                let (dr, cr) = rows.iter().fold((0, 0), |(a, b), s| (a + s.debit, b + s.credit));
                let accounts: Vec<Value> = rows
                    .iter()
                    .map(|s| json!({ "account": s.account, "debit": m(s.debit), "credit": m(s.credit), "balance": m(s.debit - s.credit) }))
                    .collect();
                currencies.push(json!({ "currency": cur, "accounts": accounts, "debit": m(dr), "credit": m(cr), "balanced": dr == cr }));
            }
            json!({ "as_of": as_of.to_string(), "currencies": currencies, "balanced": true })
        }
    };
    let r = report(app, k, "ledger", json!({})).await;
    assert_eq!(r, expect(today, None).await);
    assert_eq!(r["balanced"], json!(true));
    let usd = find(&r["currencies"], "currency", "USD");
    let acct = |a: &str| usd["accounts"].as_array().unwrap().iter().find(|x| x["account"] == a).cloned();
    assert_eq!(
        acct("accounts_receivable"),
        Some(json!({ "account": "accounts_receivable", "debit": 1450, "credit": 1000, "balance": 450 }))
    );
    assert_eq!(acct("cash"), Some(json!({ "account": "cash", "debit": 1000, "credit": 100, "balance": 900 })));
    assert_eq!(acct("rent_income").unwrap()["balance"], json!(-1450));
    assert_eq!(acct("refunds").unwrap()["balance"], json!(100));
    assert_eq!(acct("fee_income"), None, "the fee and the manual entry are posted later");
    assert_eq!((usd["debit"].clone(), usd["credit"].clone(), usd["balanced"].clone()), (json!(2550), json!(2550), json!(true)));
    let names: Vec<&str> = usd["accounts"].as_array().unwrap().iter().map(|a| a["account"].as_str().unwrap()).collect();
    assert!(names.windows(2).all(|w| w[0] < w[1]), "accounts in order: {names:?}");
    assert_eq!(find(&r["currencies"], "currency", "JPY")["debit"], json!(50000));

    // Later postings join at their dates.
    let r = report(app, k, "ledger", json!({ "as_of": d(30).to_string() })).await;
    assert_eq!(r, expect(d(30), None).await);
    let usd = find(&r["currencies"], "currency", "USD");
    let fee = usd["accounts"].as_array().unwrap().iter().find(|x| x["account"] == "fee_income").unwrap();
    assert_eq!(fee["credit"], json!(45.5));
    // Before anything was posted.
    let r = report(app, k, "ledger", json!({ "as_of": d(-11).to_string() })).await;
    assert_eq!(r, json!({ "as_of": d(-11).to_string(), "currencies": [], "balanced": true }));
    // One property: its postings only (the yen lease's).
    let r = report(app, k, "ledger", json!({ "property_id": p2 })).await;
    let mut want = expect(today, Some(&p2)).await;
    want["property_id"] = json!(p2);
    assert_eq!(r, want);
    assert_eq!(r["currencies"].as_array().unwrap().len(), 1);
    assert_eq!(r["currencies"][0]["currency"], "JPY");
    // The live environment has its own (empty) books.
    let live = app.call_on(true, &t.live_key, "POST", "/v1/reports", Some(json!({ "kind": "ledger" }))).await;
    assert_eq!(live.status, 201, "{}", live.text);
    let rid = id(&live.body["data"]);
    let mut done = Value::Null;
    for _ in 0..100 {
        done = app.call_on(true, &t.live_key, "GET", &format!("/v1/reports/{rid}"), None).await.body["data"].clone();
        if done["status"] != "queued" {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["currencies"], json!([]), "sandbox postings are not in the live books");
}
both!(ledger_report_is_the_trial_balance);

async fn a_report_is_queued_completed_and_then_fixed(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let r = app.call(k, "POST", "/v1/reports", Some(json!({ "kind": "ledger", "metadata": { "by": "tests" } }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let created = r.body["data"].clone();
    assert_eq!(created["object"], "report");
    assert_eq!(created["status"], "queued");
    assert!(created["result"].is_null() && created["completed_at"].is_null(), "{created}");
    let rid = id(&created);
    let done = wait(app, k, &rid).await;
    assert_eq!(done["status"], "completed");
    assert!(done["completed_at"].is_string(), "{done}");
    assert_eq!(done["result"]["as_of"], json!(app.clock.today().to_string()));
    assert_eq!(done["kind"], "ledger");
    // Computed once: a later round finds nothing to do.
    assert_eq!(app.run_jobs().await.reports_completed, 0);
    assert_eq!(wait(app, k, &rid).await, done);

    // Parameters are checked when the report is requested.
    let post = |body: Value| app.call(k, "POST", "/v1/reports", Some(body));
    let other = app.tenant("B").await;
    let theirs = property(app, &other.test_key, "Theirs").await;
    let bad: Vec<(Value, u16, &str, &str)> = vec![
        (json!({ "kind": "ledger", "parameters": { "period": "2026-11" } }), 400, "validation_failed", "parameters.period"),
        (json!({ "kind": "ledger", "parameters": { "as_of": "soon" } }), 400, "validation_failed", "parameters.as_of"),
        (json!({ "kind": "ledger", "parameters": { "as_of": "2026-02-30" } }), 400, "validation_failed", "parameters.as_of"),
        (json!({ "kind": "ledger", "parameters": { "as_of": 20261130 } }), 400, "validation_failed", "parameters.as_of"),
        (json!({ "kind": "ledger", "parameters": { "property_id": "nope" } }), 400, "validation_failed", "parameters.property_id"),
        (json!({ "kind": "ledger", "parameters": { "property_id": uuid::Uuid::now_v7() } }), 404, "not_found", "parameters.property_id"),
        (json!({ "kind": "rent_roll", "parameters": { "property_id": theirs } }), 404, "not_found", "parameters.property_id"),
        (json!({ "kind": "ledger", "parameters": "as_of=2026-11-30" }), 400, "validation_failed", "parameters"),
        (json!({ "kind": "profit_and_loss" }), 400, "validation_failed", "kind"),
        (json!({ "parameters": {} }), 400, "validation_failed", "kind"),
        (json!({ "kind": "ledger", "status": "completed" }), 400, "validation_failed", "status"),
        (json!({ "kind": "ledger", "result": {} }), 400, "validation_failed", "result"),
    ];
    for (body, status, code, param) in bad {
        let r: Res = post(body.clone()).await;
        r.assert_error(status, code);
        assert_eq!(r.param(), param, "{body}: {}", r.text);
    }
    assert_eq!(app.count_where("reports", &format!("tenant_id = '{}'", t.id)).await, 1, "refused requests queue nothing");

    // Reports are never deleted; what the worker wrote is read-only.
    app.call(k, "DELETE", &format!("/v1/reports/{rid}"), None).await.assert_error(409, "immutable_resource");
    for (field, value) in [
        ("status", json!("queued")),
        ("result", json!({ "balanced": false })),
        ("completed_at", json!("2026-01-01T00:00:00Z")),
        ("kind", json!("occupancy")),
        ("parameters", json!({ "as_of": "2026-01-01" })),
    ] {
        let r = app.call(k, "PATCH", &format!("/v1/reports/{rid}"), Some(json!({ field: value }))).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.param(), field, "{}", r.text);
    }
    let r = app.call(k, "PATCH", &format!("/v1/reports/{rid}"), Some(json!({ "metadata": { "by": "someone else" } }))).await;
    assert_eq!(r.status, 200, "metadata may change: {}", r.text);
    let after = wait(app, k, &rid).await;
    assert_eq!(
        (after["status"].clone(), after["result"].clone(), after["completed_at"].clone()),
        (done["status"].clone(), done["result"].clone(), done["completed_at"].clone())
    );
    // Actions: reports have none.
    app.call(k, "POST", &format!("/v1/reports/{rid}/complete"), None).await.assert_error(404, "not_found");

    // A report of another tenant is not found.
    app.call(&other.test_key, "GET", &format!("/v1/reports/{rid}"), None).await.assert_error(404, "not_found");
    // Each kind completes on an empty tenant with an empty result.
    let empty = app.tenant("C").await;
    let today = app.clock.today().to_string();
    assert_eq!(
        report(app, &empty.test_key, "rent_roll", json!({})).await,
        json!({ "as_of": today, "units": 0, "leased_units": 0, "vacant_units": 0, "rows": [], "totals": [] })
    );
    assert_eq!(
        report(app, &empty.test_key, "occupancy", json!({})).await,
        json!({ "as_of": today, "properties": [], "total": { "units": 0, "occupied": 0, "vacant": 0, "occupancy_rate": 0 } })
    );
    assert_eq!(
        report(app, &empty.test_key, "delinquency", json!({})).await,
        json!({ "as_of": today, "invoices": 0, "rows": [], "totals": [] })
    );
    assert_eq!(report(app, &empty.test_key, "ledger", json!({})).await, json!({ "as_of": today, "currencies": [], "balanced": true }));
}
both!(a_report_is_queued_completed_and_then_fixed);

// Found while writing these tests: `in force` is read from `end_date`, the planned end,
// not from when the lease was ended or terminated.

async fn a_terminated_lease_is_not_in_force_after_termination(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let today = app.clock.today();
    let d = |n: i64| today + Duration::days(n);
    let p = property(app, k, "Maple Court").await;
    let (u1, u2) = (unit(app, k, &p, "1A").await, unit(app, k, &p, "1B").await);
    // A fixed-term lease terminated today, a year before its planned end.
    let fixed = active_lease(app, k, &u1, d(-60), Some(d(300)), json!({ "rent": 1450, "currency": "USD" })).await;
    act(app, k, "leases", &fixed, "terminate").await;
    // A periodic lease (no end date) terminated today.
    let periodic = active_lease(app, k, &u2, d(-60), None, json!({ "rent": 1200, "currency": "USD" })).await;
    act(app, k, "leases", &periodic, "terminate").await;
    let mut problems = vec![];
    for (as_of, unit, lease, want) in [(d(30), &u1, &fixed, "vacant"), (d(-30), &u2, &periodic, "occupied")] {
        let r = report(app, k, "rent_roll", json!({ "as_of": as_of.to_string() })).await;
        let row = find(&r["rows"], "unit_id", unit);
        if row["status"] != want {
            problems.push(format!(
                "lease {lease} (terminated on {today}), rent_roll as_of {as_of}: {} but expected {want}; row {row}",
                row["status"]
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
both!(a_terminated_lease_is_not_in_force_after_termination);

/// A charge in another currency than its lease's: refused naming `currency`, or kept
/// out of the lease's balance (minor units of two currencies must not be added).
async fn a_balance_never_adds_two_currencies(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = &t.test_key;
    let today = app.clock.today();
    let p = property(app, k, "Maple Court").await;
    let u = unit(app, k, &p, "1A").await;
    let lease = active_lease(app, k, &u, today - Duration::days(10), None, json!({ "rent": 1000, "currency": "USD" })).await;
    let r = app
        .call(
            k,
            "POST",
            "/v1/charges",
            Some(json!({ "lease_id": lease, "kind": "fee", "amount": 5000, "currency": "JPY", "due_date": today.to_string() })),
        )
        .await;
    if r.status == 201 {
        let rr = report(app, k, "rent_roll", json!({})).await;
        let row = find(&rr["rows"], "unit_id", &u);
        assert_eq!(
            row["balance"],
            json!(0),
            "a JPY 5000 charge on a USD lease (POST /v1/charges answered 201) shows in the USD balance: {row}"
        );
    } else {
        r.assert_error(400, "validation_failed");
        assert_eq!(r.param(), "currency");
    }
}
both!(a_balance_never_adds_two_currencies);
