//! Recurring rent: an active lease bills its rent for each period from
//! its start date on its rent day, once each, as a charge and an open invoice with their
//! ledger entries; `rent.due` fires for each on its due date; the lease ends after its
//! last day. A year of a lease, one scheduler round per day, with the clock.

use chrono::{DateTime, Duration, NaiveDate, TimeZone, Utc};
use gable_tests::{both, TestApp};
use serde_json::{json, Value};

fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

async fn act(app: &TestApp, k: &str, resource: &str, id: &str, action: &str) -> Value {
    let r = app.call(k, "POST", &format!("/v1/{resource}/{id}/{action}"), None).await;
    assert_eq!(r.status, 200, "{resource}/{action}: {}", r.text);
    r.body["data"].clone()
}

/// A property under key `k`.
async fn property(app: &TestApp, k: &str) -> String {
    let address = json!({ "line1": "1 Maple St", "city": "Portland", "region": "OR", "postal_code": "97201", "country": "US" });
    id(&app.create(k, "properties", json!({ "name": "Maple Court", "kind": "residential", "address": address })).await)
}

/// A lease (`lease`, without its unit) on a new unit `number` in its currency, signed and
/// active.
async fn active_lease(app: &TestApp, k: &str, property: &str, number: &str, mut lease: Value) -> String {
    let unit = id(&app.create(k, "units", json!({ "property_id": property, "number": number, "currency": lease["currency"] })).await);
    lease["unit_id"] = json!(unit);
    let lease = id(&app.create(k, "leases", lease).await);
    let sig =
        id(&app.create(k, "signatures", json!({ "lease_id": lease, "signer_name": "Tess", "signer_email": "tess@example.com" })).await);
    act(app, k, "leases", &lease, "send").await;
    act(app, k, "signatures", &sig, "sign").await;
    assert_eq!(act(app, k, "leases", &lease, "activate").await["status"], "active");
    lease
}

async fn a_year_of_rent(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    let first_day: DateTime<Utc> = Utc.with_ymd_and_hms(2027, 1, 1, 12, 0, 0).unwrap();
    app.clock.set(first_day);
    let property = property(app, k).await;
    let lease = active_lease(
        app,
        k,
        &property,
        "1A",
        json!({ "start_date": "2027-01-15", "end_date": "2027-12-31", "rent": 1450, "currency": "USD", "rent_due_day": 5 }),
    )
    .await;
    // A hand-made charge is not rent billing's business.
    app.create(k, "charges", json!({ "lease_id": lease, "kind": "fee", "amount": 25, "currency": "USD", "due_date": "2027-01-20" })).await;

    // Each period is billed 7 days before its due date, and `rent.due` fires on it.
    let mut billed_on: Vec<NaiveDate> = vec![];
    let mut ended_on = None;
    let (mut rent_due, mut fired_on) = (vec![], vec![]);
    let second = app.second_node().spawn().await;
    for day in 0..380 {
        let now = first_day + Duration::days(day);
        app.clock.set(now);
        second.clock.set(now);
        // Two processes run the scheduler at once on some days: still once each.
        let (round, other) =
            if day % 30 == 8 { tokio::join!(app.run_jobs(), second.run_jobs()) } else { (app.run_jobs().await, Default::default()) };
        for _ in 0..(round.rent_billed + other.rent_billed) {
            billed_on.push(now.date_naive());
        }
        // Events are kept 30 days: what fired is read the day it fired.
        if round.events_fired + other.events_fired > 0 {
            let today = now.date_naive().format("%Y-%m-%dT00:00:00Z");
            for e in app.all_pages(k, &format!("/v1/events?filter[type]=rent.due&filter[created_at][gte]={today}")).await {
                rent_due.push((e["related_object_id"].as_str().unwrap().to_string(), now.date_naive()));
            }
            fired_on.push((now.date_naive(), round.events_fired + other.events_fired));
        }
        if round.leases_ended + other.leases_ended > 0 {
            assert!(ended_on.is_none(), "a lease ends once");
            ended_on = Some(now.date_naive());
        }
        if day == 3 {
            assert_eq!(app.run_jobs().await.rent_billed, 0, "a second round the same day bills nothing");
        }
    }
    second.stop().await;
    let d = |s: &str| s.parse::<NaiveDate>().unwrap();
    let mut expected_due = vec![d("2027-01-15")];
    expected_due.extend((2..=12).map(|m| NaiveDate::from_ymd_opt(2027, m, 5).unwrap()));
    let expected_billed: Vec<NaiveDate> = expected_due.iter().map(|due| *due - Duration::days(7)).collect();
    assert_eq!(billed_on, expected_billed, "one period a month, each 7 days before it is due");
    assert_eq!(ended_on, Some(d("2028-01-01")), "the lease ends the day after its last day");

    // The charges: one per period, with its period, due date, amount and open invoice.
    let charges = app.all_pages(k, &format!("/v1/charges?filter[lease_id]={lease}&filter[kind]=rent&sort=due_date&limit=100")).await;
    let got: Vec<(String, String, Value)> = charges
        .iter()
        .map(|c| (c["period"].as_str().unwrap().to_string(), c["due_date"].as_str().unwrap().to_string(), c["amount"].clone()))
        .collect();
    let want: Vec<(String, String, Value)> =
        expected_due.iter().map(|due| (due.format("%Y-%m").to_string(), due.to_string(), json!(1450))).collect();
    assert_eq!(got, want);
    let invoices = app.all_pages(k, &format!("/v1/invoices?filter[lease_id]={lease}&limit=100")).await;
    assert_eq!(invoices.len(), 12);
    for c in &charges {
        let inv: Vec<&Value> = invoices.iter().filter(|i| i["charge_ids"] == json!([c["id"]])).collect();
        assert_eq!(inv.len(), 1, "one invoice per charge");
        assert_eq!((inv[0]["status"].clone(), inv[0]["amount_due"].clone()), (json!("open"), json!(1450)));
        assert_eq!(inv[0]["due_date"], c["due_date"]);
        // Its ledger entry (Dr receivable / Cr rent income) and its one `rent.due`.
        let entries = app.all_pages(k, &format!("/v1/accounting-entries?filter[source_id]={}", id(c))).await;
        assert_eq!(entries.len(), 1, "the charge is posted once");
        let fired: Vec<_> = rent_due.iter().filter(|(charge, _)| *charge == id(c)).map(|(_, day)| day.to_string()).collect();
        assert_eq!(fired, vec![c["due_date"].as_str().unwrap().to_string()], "rent.due fires once, on its due date, for {}", c["period"]);
    }
    assert_eq!(rent_due.len(), 12, "no other rent.due");
    // What fired each day: rent.due on each due date, and the two notices of the end.
    let mut want: Vec<(NaiveDate, usize)> = expected_due.iter().map(|due| (*due, 1)).collect();
    want.extend([(d("2027-11-01"), 1), (d("2027-12-01"), 1)]);
    want.sort();
    assert_eq!(fired_on, want);
    let l = app.call(k, "GET", &format!("/v1/leases/{lease}"), None).await;
    assert_eq!((l.body["data"]["status"].clone(), l.body["data"]["rent_billed_through"].clone()), (json!("ended"), json!("2027-12-05")));
    // The fee charge was not billed or invoiced by the scheduler.
    assert_eq!(app.all_pages(k, &format!("/v1/charges?filter[lease_id]={lease}")).await.len(), 13);
}
both!(a_year_of_rent);

async fn a_lease_activated_late_catches_up(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    app.clock.set(Utc.with_ymd_and_hms(2027, 4, 5, 9, 0, 0).unwrap());
    let property = property(app, k).await;
    // A periodic lease (no end) that started in January, recorded in April.
    let lease = active_lease(app, k, &property, "1A", json!({ "start_date": "2027-01-01", "rent": "980.50", "currency": "EUR" })).await;
    let round = app.run_jobs().await;
    assert_eq!(round.rent_billed, 4, "January to April: {round:?}");
    let charges = app.all_pages(k, &format!("/v1/charges?filter[lease_id]={lease}&sort=due_date")).await;
    let periods: Vec<&str> = charges.iter().map(|c| c["period"].as_str().unwrap()).collect();
    assert_eq!(periods, ["2027-01", "2027-02", "2027-03", "2027-04"]);
    assert!(charges.iter().all(|c| c["amount"].as_f64() == Some(980.5) && c["currency"] == "EUR"), "{charges:?}");
    // Only the charges due in the last 7 days fire `rent.due` (the scheduler's catch-up).
    let fired = app.all_pages(k, "/v1/events?filter[type]=rent.due").await;
    assert_eq!(fired.len(), 1, "April's, due on the 1st: {fired:?}");
    assert_eq!(app.run_jobs().await.rent_billed, 0);
}
both!(a_lease_activated_late_catches_up);

/// A round bills many leases, several at once on PostgreSQL: each lease's periods once,
/// each with its invoice and entry, in its own tenant, and the next round nothing.
async fn a_round_bills_many_leases_each_once(app: &TestApp) {
    app.clock.set(Utc.with_ymd_and_hms(2027, 4, 5, 9, 0, 0).unwrap());
    let mut leases = vec![];
    for name in ["A", "B"] {
        let t = app.tenant(name).await;
        let k = t.test_key.clone();
        let property = property(app, &k).await;
        for n in 0..7 {
            // Started in January, February or March: 4, 3 or 2 periods to April.
            let start = format!("2027-0{}-01", 1 + n % 3);
            let lease = json!({ "start_date": start, "rent": 1000, "currency": "USD" });
            leases.push((k.clone(), active_lease(app, &k, &property, &format!("{n}A"), lease).await, 4 - n % 3));
        }
    }
    let round = app.run_jobs().await;
    let want: usize = leases.iter().map(|(_, _, periods)| periods).sum();
    assert_eq!(round.rent_billed, want, "{round:?}");
    for (k, lease, periods) in &leases {
        let charges = app.all_pages(k, &format!("/v1/charges?filter[lease_id]={lease}&sort=due_date")).await;
        let got: Vec<&str> = charges.iter().map(|c| c["period"].as_str().unwrap()).collect();
        let all = ["2027-01", "2027-02", "2027-03", "2027-04"];
        assert_eq!(got, all[4 - periods..], "lease {lease}");
        let invoices = app.all_pages(k, &format!("/v1/invoices?filter[lease_id]={lease}")).await;
        assert_eq!(invoices.len(), *periods, "lease {lease}");
        assert!(invoices.iter().all(|i| i["status"] == "open"), "{invoices:?}");
        for c in &charges {
            let entries = app.all_pages(k, &format!("/v1/accounting-entries?filter[source_id]={}", id(c))).await;
            assert_eq!(entries.len(), 1, "charge {} is posted once", id(c));
        }
        let l = app.call(k, "GET", &format!("/v1/leases/{lease}"), None).await;
        assert_eq!(
            (l.body["data"]["rent_billed_through"].clone(), l.body["data"]["rent_next_due"].clone()),
            (json!("2027-04-01"), json!("2027-05-01"))
        );
    }
    assert_eq!(app.run_jobs().await.rent_billed, 0);
}
both!(a_round_bills_many_leases_each_once);
