//! `expand[]`: a reference answered with its record, on reads, lists, writes and actions;
//! bad paths named; one statement per path, not per record. Who may expand what is the
//! security suite's (`security::expansions`).

use gable::domain::collections::named;
use gable::domain::list::ListQuery;
use gable::store::count::counted;
use gable_tests::world::{self, World};
use gable_tests::{both, TestApp};
use serde_json::{json, Value};

fn id(v: &Value) -> String {
    v["id"].as_str().unwrap_or_else(|| panic!("an id in {v}")).to_string()
}

/// A record as its own `GET` shows it.
async fn plain(app: &TestApp, key: &str, collection: &str, id: &str) -> Value {
    let r = app.call(key, "GET", &format!("/v1/{collection}/{id}"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"].clone()
}

async fn world(app: &TestApp) -> (String, World) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    (t.test_key, w)
}

async fn reads_and_lists_answer_references_with_their_records(app: &TestApp) {
    let (key, w) = world(app).await;
    let lease = w.id("leases");
    let r = app.call(&key, "GET", &format!("/v1/leases/{lease}?expand[]=unit&expand[]=unit.property"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let unit = &r.body["data"]["unit_id"];
    assert_eq!(unit["object"], "unit");
    assert_eq!(id(unit), w.id("units"));
    // The expanded record is its own GET's shape, with its own expansion in place.
    let mut expected = plain(app, &key, "units", w.id("units")).await;
    expected["property_id"] = plain(app, &key, "properties", w.id("properties")).await;
    assert_eq!(unit, &expected);
    // What was not asked for stays an id.
    assert_eq!(r.body["data"]["property_id"], json!(w.id("properties")));
    assert_eq!(unit["building_id"], json!(w.id("buildings")));
    // Without expand[], the answer is as it always was.
    let bare = plain(app, &key, "leases", lease).await;
    assert_eq!(bare["unit_id"], json!(w.id("units")));

    // Lists expand every record of the page.
    let r = app.call(&key, "GET", "/v1/leases?expand[]=unit.property&expand[]=property", None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    for l in r.body["data"].as_array().unwrap() {
        assert_eq!(l["unit_id"]["property_id"]["object"], "property", "{l}");
        assert_eq!(l["property_id"]["object"], "property", "{l}");
    }

    // Three levels down; a list of ids expands item by item.
    let payment = w.id("payments");
    let r = app.call(&key, "GET", &format!("/v1/payments/{payment}?expand[]=invoice.lease.unit"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["invoice_id"]["lease_id"]["unit_id"]["number"], "1A");
    let r = app.call(&key, "GET", &format!("/v1/invoices/{}?expand[]=charges", w.id("invoices")), None).await;
    let charges = r.body["data"]["charge_ids"].as_array().unwrap_or_else(|| panic!("{}", r.text));
    assert_eq!(charges.len(), 1);
    assert_eq!(charges[0], plain(app, &key, "charges", w.id("charges")).await);

    // A fieldset applies to its collection wherever it appears; an expanded reference
    // shows even when its own fieldset leaves it out.
    let q = "expand[]=unit.property&fields[leases]=rent&fields[units]=number&fields[properties]=name";
    let r = app.call(&key, "GET", &format!("/v1/leases/{lease}?{q}"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let keys = |v: &Value| {
        let mut k: Vec<String> = v.as_object().unwrap().keys().cloned().collect();
        k.sort();
        k
    };
    let d = &r.body["data"];
    assert_eq!(keys(d), ["id", "object", "rent", "unit_id"]);
    assert_eq!(keys(&d["unit_id"]), ["id", "number", "object", "property_id"]);
    assert_eq!(keys(&d["unit_id"]["property_id"]), ["id", "name", "object"]);

    // An empty reference stays empty.
    let p = id(&app.property(&key).await);
    let u = id(&app.create(&key, "units", json!({ "property_id": p, "number": "9Z" })).await);
    let r = app.call(&key, "GET", &format!("/v1/units/{u}?expand[]=building"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["building_id"], Value::Null);
}
both!(reads_and_lists_answer_references_with_their_records);

async fn writes_and_actions_answer_with_expansions_and_events_stay_as_they_were(app: &TestApp) {
    let (key, w) = world(app).await;
    let body = json!({ "unit_id": w.id("units"), "start_date": "2028-01-01", "rent": 1500, "currency": "USD" });
    let r = app.call(&key, "POST", "/v1/leases?expand[]=unit.property", Some(body)).await;
    assert_eq!(r.status, 201, "{}", r.text);
    assert_eq!(r.body["data"]["unit_id"]["property_id"]["name"], "Maple Court");
    let lease = id(&r.body["data"]);

    let r = app.call(&key, "PATCH", &format!("/v1/leases/{lease}?expand[]=unit"), Some(json!({ "rent": 1550 }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!((r.body["data"]["rent"].clone(), r.body["data"]["unit_id"]["number"].clone()), (json!(1550), json!("1A")));

    let listing = w.id("listings");
    let r = app.call(&key, "POST", &format!("/v1/listings/{listing}/publish?expand[]=unit"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["status"], "published");
    assert_eq!(r.body["data"]["unit_id"]["object"], "unit");

    // The event the action emitted carries the record as always: references are ids.
    let events = app.all_pages(&key, "/v1/events?filter[type]=listing.published").await;
    assert_eq!(events.len(), 1);
    assert_eq!(events[0]["data"]["object"]["unit_id"], json!(w.id("units")));

    // An idempotent retry answers what the first answer was, expansion and all.
    let key_header = uuid::Uuid::new_v4().to_string();
    let send = || {
        app.client
            .post(format!("{}/v1/units?expand[]=property", app.sandbox))
            .bearer_auth(&key)
            .header("Idempotency-Key", &key_header)
            .json(&json!({ "property_id": w.id("properties"), "number": "7C" }))
    };
    let first = app.raw(send()).await;
    let again = app.raw(send()).await;
    assert_eq!(first.status, 201, "{}", first.text);
    assert_eq!(first.body["data"], again.body["data"]);
    assert_eq!(again.body["data"]["property_id"]["object"], "property");
}
both!(writes_and_actions_answer_with_expansions_and_events_stay_as_they_were);

async fn bad_expansions_are_named_and_change_nothing(app: &TestApp) {
    let (key, w) = world(app).await;
    let lease = w.id("leases");
    let cases: &[(&str, &str, &[&str])] = &[
        ("expand[]=tenant", "expand[]", &["`tenant`", "leases can expand", "`unit`"]),
        ("expand[]=unit.nope", "expand[]", &["`unit.nope`", "units can expand", "`building`"]),
        ("expand[]=unit_id", "expand[]", &["expanded as `unit`"]),
        ("expand[]=rent", "expand[]", &["not a reference"]),
        ("expand[]=unit.property.owner.company", "expand[]", &["4 levels deep"]),
        ("expand[]=", "expand[]", &["must name a path"]),
        ("fields[webhooks]=url", "fields[webhooks]", &["fields[units]"]),
        ("fields[units]=nope&expand[]=unit", "fields[units]", &["`nope`"]),
    ];
    for (q, param, words) in cases {
        let r = app.call(&key, "GET", &format!("/v1/leases/{lease}?{q}"), None).await;
        r.assert_error(400, "invalid_parameter");
        assert_eq!(r.param(), *param, "{q}");
        let message = r.body["error"]["message"].as_str().unwrap();
        for word in *words {
            assert!(message.contains(word), "{q}: `{word}` not in {message}");
        }
        app.call(&key, "GET", &format!("/v1/leases?{q}"), None).await.assert_error(400, "invalid_parameter");
    }
    let eleven: Vec<String> = (0..11).map(|_| "expand[]=unit".to_string()).collect();
    let r = app.call(&key, "GET", &format!("/v1/leases?{}", eleven.join("&")), None).await;
    r.assert_error(400, "invalid_parameter");
    assert!(r.text.contains("at most 10"), "{}", r.text);
    // Ten is the limit, not a refusal.
    let ten: Vec<String> = (0..10).map(|_| "expand[]=unit".to_string()).collect();
    assert_eq!(app.call(&key, "GET", &format!("/v1/leases?{}", ten.join("&")), None).await.status, 200);

    // A write with a bad expansion writes nothing; a deletion has nothing to expand.
    let before = app.count_rows("leases").await;
    let body = json!({ "unit_id": w.id("units"), "start_date": "2028-01-01", "rent": 1500, "currency": "USD" });
    app.call(&key, "POST", "/v1/leases?expand[]=tenant", Some(body)).await.assert_error(400, "invalid_parameter");
    app.call(&key, "PATCH", &format!("/v1/leases/{lease}?expand[]=x"), Some(json!({ "rent": 1 })))
        .await
        .assert_error(400, "invalid_parameter");
    app.call(&key, "POST", &format!("/v1/leases/{lease}/send?limit=1"), None).await.assert_error(400, "invalid_parameter");
    let r = app.call(&key, "DELETE", &format!("/v1/units/{}?expand[]=property", w.id("units")), None).await;
    r.assert_error(400, "invalid_parameter");
    assert_eq!(app.count_rows("leases").await, before);
    assert_eq!(plain(app, &key, "leases", lease).await["rent"], json!(1450));
    assert_eq!(plain(app, &key, "leases", lease).await["status"], "draft");
    assert_eq!(app.call(&key, "GET", &format!("/v1/units/{}", w.id("units")), None).await.status, 200);
}
both!(bad_expansions_are_named_and_change_nothing);

/// A page of 100 with three expansions reads in four statements: the page, and one per
/// path, whatever the number of records.
async fn one_statement_per_path_not_per_record(app: &TestApp) {
    let t = app.tenant("A").await;
    let key = t.test_key;
    let mut units = vec![];
    for p in 0..2 {
        let property = id(&app.property(&key).await);
        for u in 0..5 {
            units.push(id(&app.create(&key, "units", json!({ "property_id": property, "number": format!("{p}-{u}") })).await));
        }
    }
    for (i, unit) in units.iter().cycle().take(100).enumerate() {
        let body = json!({ "unit_id": unit, "start_date": format!("2027-01-{:02}", i % 28 + 1), "rent": 1000, "currency": "USD" });
        app.create(&key, "leases", body).await;
    }
    let principal = app.state.ops.bearer(&key, false).await.expect("the key");
    let leases = named("leases").unwrap();
    let query = |q: &[(&str, &str)]| {
        let pairs: Vec<(String, String)> = q.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        ListQuery::parse(leases, &pairs).unwrap()
    };
    let sorted = [("limit", "40"), ("sort", "-start_date")];
    let (page, plain) = counted(app.state.ops.list(&principal.actor, leases, query(&sorted))).await;
    let plain_page = page.unwrap();
    assert_eq!(plain_page.records.len(), 40);
    assert!(plain_page.has_more);
    assert_eq!(plain, 1, "a plain page is one statement");
    let three = [("limit", "40"), ("sort", "-start_date"), ("expand[]", "unit"), ("expand[]", "unit.property"), ("expand[]", "property")];
    let (page, statements) = counted(app.state.ops.list(&principal.actor, leases, query(&three))).await;
    let page = page.unwrap();
    assert_eq!(statements, 1, "the page and its single references are one statement");
    let ids = |p: &gable::ops::reads::Page| p.records.iter().map(|r| r.id).collect::<Vec<_>>();
    assert_eq!(ids(&page), ids(&plain_page), "the expanded page holds the plain page's records, in its order");
    assert!(page.has_more);
    assert_eq!(page.next.is_some(), plain_page.next.is_some());
    let unit = page.related.of("unit_id").expect("units read");
    assert_eq!(unit.records.len(), 10, "each unit read once");
    assert_eq!(unit.then.of("property_id").expect("properties read").records.len(), 2);
    assert_eq!(page.related.of("property_id").expect("properties read").records.len(), 2);
}
both!(one_statement_per_path_not_per_record);

/// A list of ids (`charge_ids`) cannot be joined: it is read in one statement of its own,
/// and so is each path below it.
async fn a_list_of_ids_is_one_statement_per_path(app: &TestApp) {
    let (key, w) = world(app).await;
    let principal = app.state.ops.bearer(&key, false).await.expect("the key");
    let invoices = named("invoices").unwrap();
    let pairs: Vec<(String, String)> = [("expand[]", "charges"), ("expand[]", "charges.lease"), ("expand[]", "lease.unit")]
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let q = ListQuery::parse(invoices, &pairs).unwrap();
    let (page, statements) = counted(app.state.ops.list(&principal.actor, invoices, q)).await;
    let page = page.unwrap();
    assert_eq!(statements, 3, "the page with lease and lease.unit joined, then charges, then charges.lease");
    let invoice = page.records.iter().find(|r| r.id.to_string() == w.id("invoices")).expect("the world's invoice");
    assert!(page.related.of("lease_id").expect("leases").then.of("unit_id").is_some());
    let charges = page.related.of("charge_ids").expect("charges read");
    assert!(charges.records.contains_key(&w.id("charges").parse().unwrap()), "{:?}", invoice.get("charge_ids"));
    assert!(!charges.then.of("lease_id").expect("their leases read").records.is_empty());
}
both!(a_list_of_ids_is_one_statement_per_path);
