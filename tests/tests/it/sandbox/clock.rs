//! The sandbox clock: `GET /v1/sandbox/clock` and
//! `POST /v1/sandbox/clock/advance` on the sandbox listener only, per tenant, forward
//! only; advancing runs what time causes in the sandbox, in order, each scheduled event
//! exactly once, and the sandbox's records and events carry the sandbox's time. Live
//! data never sees it.

use chrono::{DateTime, Datelike, Duration, NaiveDate, SubsecRound, Utc};
use gable_tests::{both, Res, TestApp};
use serde_json::{json, Value};

fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

async fn advance(app: &TestApp, k: &str, to: DateTime<Utc>) -> Res {
    app.call(k, "POST", "/v1/sandbox/clock/advance", Some(json!({ "to": to.to_rfc3339() }))).await
}

fn time(v: &Value) -> DateTime<Utc> {
    v.as_str().and_then(|s| DateTime::parse_from_rfc3339(s).ok()).expect("a date-time").with_timezone(&Utc)
}

/// An active lease of a new unit, from `start` to `end`, in the environment of `k`.
async fn active_lease(app: &TestApp, livemode: bool, k: &str, start: NaiveDate, end: NaiveDate) -> String {
    let make = |resource: &'static str, body: Value| async move {
        let r = app.call_on(livemode, k, "POST", &format!("/v1/{resource}"), Some(body)).await;
        assert_eq!(r.status, 201, "{resource}: {}", r.text);
        id(&r.body["data"])
    };
    let act = |path: String| async move {
        let r = app.call_on(livemode, k, "POST", &path, None).await;
        assert_eq!(r.status, 200, "{path}: {}", r.text);
    };
    let address = json!({ "line1": "1 Maple St", "city": "Portland", "region": "OR", "postal_code": "97201", "country": "US" });
    let property = make("properties", json!({ "name": "Maple Court", "kind": "residential", "address": address })).await;
    let unit = make("units", json!({ "property_id": property, "number": "1A", "currency": "USD" })).await;
    let lease = make(
        "leases",
        json!({ "unit_id": unit, "start_date": start.to_string(), "end_date": end.to_string(), "rent": 1000, "currency": "USD" }),
    )
    .await;
    let sig = make("signatures", json!({ "lease_id": lease, "signer_name": "Tess", "signer_email": "tess@example.com" })).await;
    act(format!("/v1/leases/{lease}/send")).await;
    act(format!("/v1/signatures/{sig}/sign")).await;
    act(format!("/v1/leases/{lease}/activate")).await;
    lease
}

async fn the_clock_is_the_sandboxs_own(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    let real = app.clock.now();
    let r = app.call(k, "GET", "/v1/sandbox/clock", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!((r.body["object"].clone(), r.body["data"]["object"].clone()), (json!("sandbox_clock"), json!("sandbox_clock")));
    let now = time(&r.body["data"]["now"]);
    assert!((now - real).num_seconds().abs() < 5, "an unadvanced sandbox runs on real time: {now} vs {real}");
    // Production has no sandbox clock.
    for (method, path, body) in
        [("GET", "/v1/sandbox/clock", None), ("POST", "/v1/sandbox/clock/advance", Some(json!({ "to": "2030-01-01T00:00:00Z" })))]
    {
        let r = app.call_on(true, &t.live_key, method, path, body).await;
        r.assert_error(404, "not_found");
    }

    // Refusals: forward only, a date-time, only `to`, and the scope `*`.
    let refused = [
        (json!({ "to": (real - Duration::hours(1)).to_rfc3339() }), "to"),
        (json!({ "to": "next tuesday" }), "to"),
        (json!({ "to": 5 }), "to"),
        (json!({}), "to"),
        (json!({ "to": (real + Duration::days(800)).to_rfc3339() }), "to"),
        (json!({ "to": (real + Duration::days(1)).to_rfc3339(), "speed": 2 }), "speed"),
    ];
    for (body, param) in refused {
        let r = app.call(k, "POST", "/v1/sandbox/clock/advance", Some(body.clone())).await;
        r.assert_error(400, "validation_failed");
        assert_eq!(r.param(), param, "{body}");
    }
    let reader = app.key(t.id, false, &["*:read", "leases:write"], None).await;
    advance(app, &reader, real + Duration::days(1)).await.assert_error(403, "insufficient_scope");
    let r = app.call(k, "GET", "/v1/sandbox/clock", None).await;
    assert!((time(&r.body["data"]["now"]) - real).num_seconds().abs() < 5, "refused advances moved nothing");

    // Per tenant: another tenant's sandbox keeps real time.
    let other = app.tenant("B").await;
    let to = (real + Duration::days(10)).trunc_subsecs(0);
    let r = advance(app, k, to).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(time(&r.body["data"]["now"]), to);
    let r = app.call(&other.test_key, "GET", "/v1/sandbox/clock", None).await;
    assert!((time(&r.body["data"]["now"]) - real).num_seconds().abs() < 5);
    // And the clock runs on from where it was moved; back is refused.
    let r = app.call(k, "GET", "/v1/sandbox/clock", None).await;
    assert!(time(&r.body["data"]["now"]) >= to);
    let r = advance(app, k, to - Duration::days(1)).await;
    r.assert_error(400, "validation_failed");
    // Records written in the sandbox now carry the sandbox's time; live ones real time.
    let r = app.call(k, "POST", "/v1/owners", Some(json!({ "name": "Olive" }))).await;
    assert!(time(&r.body["data"]["created_at"]) >= to, "{}", r.text);
    let r = app.call_on(true, &t.live_key, "POST", "/v1/owners", Some(json!({ "name": "Olive" }))).await;
    assert!(time(&r.body["data"]["created_at"]) < to - Duration::days(5), "{}", r.text);
}
both!(the_clock_is_the_sandboxs_own);

async fn advancing_runs_what_time_causes_once(app: &TestApp) {
    let t = app.tenant("A").await;
    let k = t.test_key.as_str();
    let start = app.clock.now();
    let today = start.date_naive();
    // A lease from 10 days ago to 75 days ahead (rent on the 1st), a document expiring in
    // 40 days; and the same lease in live mode, which must see none of it.
    let lease = active_lease(app, false, k, today - Duration::days(10), today + Duration::days(75)).await;
    let live_lease = active_lease(app, true, &t.live_key, today - Duration::days(10), today + Duration::days(75)).await;
    let expires = (start + Duration::days(40)).to_rfc3339();
    let doc = id(&app.create(k, "documents", json!({ "title": "Insurance", "kind": "insurance", "expires_at": expires })).await);
    let live_events = app.count_where("events", "livemode = TRUE").await;

    // 100 days in one call.
    let to = (start + Duration::days(100)).trunc_subsecs(0);
    let r = advance(app, k, to).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(time(&r.body["data"]["now"]), to);
    assert_eq!(r.body["data"]["advanced"]["leases_ended"], json!(1), "{}", r.text);

    // Rent: every period of the lease (the start month's, then each 1st up to the end),
    // each billed once, its rent.due once, on its due date in sandbox time.
    let charges = app.all_pages(k, &format!("/v1/charges?filter[lease_id]={lease}&sort=due_date&limit=100")).await;
    let end = today + Duration::days(75);
    let mut want_due = vec![today - Duration::days(10)];
    let mut m = (today - Duration::days(10)).with_day0(0).unwrap();
    loop {
        m = m.checked_add_months(chrono::Months::new(1)).unwrap();
        if m > end {
            break;
        }
        want_due.push(m);
    }
    let got_due: Vec<String> = charges.iter().map(|c| c["due_date"].as_str().unwrap().to_string()).collect();
    assert_eq!(got_due, want_due.iter().map(|d| d.to_string()).collect::<Vec<_>>());
    assert_eq!(r.body["data"]["advanced"]["rent_billed"], json!(charges.len()), "{}", r.text);
    let rent_due = app.all_pages(k, "/v1/events?filter[type]=rent.due&limit=100").await;
    for c in &charges {
        let fired: Vec<&Value> = rent_due.iter().filter(|e| e["related_object_id"] == c["id"]).collect();
        let due: NaiveDate = c["due_date"].as_str().unwrap().parse().unwrap();
        // The first charge was due 10 days before the advance began: past the week rent.due catches up.
        if due < today - Duration::days(7) {
            assert!(fired.is_empty(), "{c}");
            continue;
        }
        assert_eq!(fired.len(), 1, "rent.due once for {}", c["due_date"]);
        let at = time(&fired[0]["created_at"]);
        assert_eq!(at.date_naive(), due.max(today), "on its due date, in sandbox time");
        // The charge was made 7 days before it fell due, in sandbox time too.
        assert_eq!(time(&c["created_at"]).date_naive(), (due - Duration::days(7)).max(today), "{c}");
    }
    // The lease's notices and the document's, once each, in sandbox time.
    let notices = app.all_pages(k, &format!("/v1/events?filter[type]=lease.expiring&filter[related_object_id]={lease}")).await;
    let mut days: Vec<(i64, NaiveDate)> =
        notices.iter().map(|e| (e["data"]["days_before"].as_i64().unwrap(), time(&e["created_at"]).date_naive())).collect();
    days.sort();
    assert_eq!(days, vec![(30, end - Duration::days(30)), (60, end - Duration::days(60))]);
    let docs = app.all_pages(k, &format!("/v1/events?filter[type]=document.expiring&filter[related_object_id]={doc}")).await;
    assert_eq!(docs.len(), 1);
    // The lease ended after its last day.
    let l = app.call(k, "GET", &format!("/v1/leases/{lease}"), None).await;
    assert_eq!(l.body["data"]["status"], "ended");
    assert_eq!(time(&l.body["data"]["ended_at"]).date_naive(), end + Duration::days(1));

    // Nothing fires twice: another advance, and the real-time scheduler.
    let events_after = app.all_pages(k, "/v1/events?limit=100").await.len();
    let r = advance(app, k, to + Duration::days(3)).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["advanced"], json!({ "rent_billed": 0, "leases_ended": 0, "events_fired": 0 }));
    app.run_jobs().await;
    assert_eq!(app.all_pages(k, "/v1/events?limit=100").await.len(), events_after);

    // Live data never saw the sandbox's time: no rent beyond what real time bills, no notices, no end.
    let l = app.call_on(true, &t.live_key, "GET", &format!("/v1/leases/{live_lease}"), None).await;
    assert_eq!(l.body["data"]["status"], "active");
    assert_eq!(app.count_where("events", "livemode = TRUE AND type = 'lease.expiring'").await, 0);
    let live_now = app.count_where("events", "livemode = TRUE").await;
    assert!(live_now <= live_events + 1, "at most real time's rent.due: {live_now} after {live_events}");
}
both!(advancing_runs_what_time_causes_once);
