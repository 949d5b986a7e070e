//! Lists as `docs/api.md`, "Lists": limits, keyset cursors, multi-key sorts, filters, fields.

use std::cmp::Ordering;
use std::collections::HashSet;

use chrono::DateTime;
use gable_tests::{both, TestApp};
use serde_json::{json, Value};

async fn property(app: &TestApp, key: &str) -> String {
    let p = app
        .create(
            key,
            "properties",
            json!({ "name": "P", "kind": "residential", "address": { "line1": "1 A St", "city": "Boise", "country": "US" } }),
        )
        .await;
    p["id"].as_str().unwrap().to_string()
}

fn urlencode(s: &str) -> String {
    url::form_urlencoded::byte_serialize(s.as_bytes()).collect()
}

/// Whether `a` comes strictly before `b` in the order `sort` asks for, `id` breaking ties
/// in the direction of the last key (docs/api.md, "Lists"). Text and dates compare
/// bytewise, as the server stores them (PostgreSQL text is `COLLATE "C"`); timestamps
/// compare as instants, since their text form need not have a fixed width.
fn before_in(sort: &str, a: &Value, b: &Value) -> bool {
    let mut keys: Vec<(&str, bool)> = sort.split(',').map(|k| k.strip_prefix('-').map_or((k, false), |n| (n, true))).collect();
    keys.push(("id", keys.last().unwrap().1));
    for (field, desc) in keys {
        let ord = match field {
            "created_at" | "updated_at" => {
                let t = |r: &Value| DateTime::parse_from_rfc3339(r[field].as_str().unwrap()).unwrap();
                t(a).cmp(&t(b))
            }
            _ => a[field].as_str().unwrap().cmp(b[field].as_str().unwrap()),
        };
        let ord = if desc { ord.reverse() } else { ord };
        if ord != Ordering::Equal {
            return ord == Ordering::Less;
        }
    }
    false
}

async fn paging_never_skips_or_repeats(app: &TestApp) {
    let t = app.tenant("A").await;
    let p = property(app, &t.test_key).await;
    const DATES: [&str; 4] = ["2027-01-01", "2027-02-01", "2027-03-01", "2027-04-01"];
    let mut unit = json!(null);
    for i in 0..45 {
        unit = app.create(&t.test_key, "units", json!({ "property_id": p, "number": format!("{:03}", i * 2), "bedrooms": i % 4 })).await;
        // Four start dates among 45 leases: a descending key that is mostly ties.
        let lease = json!({ "unit_id": unit["id"], "start_date": DATES[i % 4], "rent": 1000, "currency": "USD" });
        app.create(&t.test_key, "leases", lease).await;
    }
    let ids = |recs: Vec<Value>| recs.iter().map(|r| r["id"].as_str().unwrap().to_string()).collect::<HashSet<String>>();
    let units_before = ids(app.all_pages(&t.test_key, "/v1/units?limit=100").await);
    let leases_before = ids(app.all_pages(&t.test_key, "/v1/leases?limit=100").await);
    assert_eq!((units_before.len(), leases_before.len()), (45, 45));
    // Page through each sort while inserting rows in between the pages already read.
    // Units have no sortable key with ties (`bedrooms` may be null, so it cannot be
    // sorted on), hence the leases for the descending sort over ties.
    for (resource, sort) in [("units", "number"), ("units", "-number"), ("units", "-created_at"), ("leases", "-start_date")] {
        let path = format!("/v1/{resource}?limit=4&sort={sort}");
        let before = if resource == "units" { &units_before } else { &leases_before };
        let mut seen: Vec<Value> = vec![];
        let mut cursor: Option<String> = None;
        let mut k = 0;
        loop {
            let url = match &cursor {
                Some(c) => format!("{path}&cursor={}", urlencode(c)),
                None => path.clone(),
            };
            let r = app.call(&t.test_key, "GET", &url, None).await;
            assert_eq!(r.status, 200, "{}", r.text);
            seen.extend(r.body["data"].as_array().unwrap().iter().cloned());
            // Insert a row that sorts among what was already read and one among what is ahead.
            k += 1;
            let row = match resource {
                "units" => json!({ "property_id": p, "number": format!("{:03}-{sort}-{k}", k * 7 % 90) }),
                _ => json!({ "unit_id": unit["id"], "start_date": DATES[k % 4], "rent": 1000, "currency": "USD" }),
            };
            app.create(&t.test_key, resource, row).await;
            if r.body["meta"]["has_more"] != json!(true) {
                break;
            }
            cursor = Some(r.body["meta"]["next_cursor"].as_str().unwrap().to_string());
        }
        // Strictly ascending in the requested order: nothing repeated, nothing out of place.
        for w in seen.windows(2) {
            assert!(before_in(sort, &w[0], &w[1]), "sort {sort}: {} is listed before {}", w[0], w[1]);
        }
        let unique: HashSet<&str> = seen.iter().map(|r| r["id"].as_str().unwrap()).collect();
        assert!(before.iter().all(|id| unique.contains(id.as_str())), "sort {sort}: a row that existed before was skipped");
    }
}
both!(paging_never_skips_or_repeats);

async fn sorts_on_several_keys(app: &TestApp) {
    let t = app.tenant("A").await;
    let p = property(app, &t.test_key).await;
    let unit = app.create(&t.test_key, "units", json!({ "property_id": p, "number": "1" })).await;
    let dates = ["2027-03-01", "2027-01-01", "2027-03-01", "2027-02-01", "2027-01-01", "2027-03-01"];
    for d in dates {
        app.create(&t.test_key, "leases", json!({ "unit_id": unit["id"], "start_date": d, "rent": 1000, "currency": "USD" })).await;
    }
    let recs = app.all_pages(&t.test_key, "/v1/leases?limit=2&sort=-start_date,created_at").await;
    let got: Vec<(String, String)> =
        recs.iter().map(|r| (r["start_date"].as_str().unwrap().to_string(), r["created_at"].as_str().unwrap().to_string())).collect();
    let mut want = got.clone();
    want.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
    assert_eq!(got, want);
    assert_eq!(got.len(), 6);
    // Ascending by id is the plain keyset order.
    let by_id = app.all_pages(&t.test_key, "/v1/leases?limit=4&sort=id").await;
    let ids: Vec<&str> = by_id.iter().map(|r| r["id"].as_str().unwrap()).collect();
    let mut sorted = ids.clone();
    sorted.sort();
    assert_eq!(ids, sorted);
}
both!(sorts_on_several_keys);

async fn filters_with_every_operator(app: &TestApp) {
    let t = app.tenant("A").await;
    let p = property(app, &t.test_key).await;
    let b = app.create(&t.test_key, "buildings", json!({ "property_id": p, "name": "B" })).await;
    for i in 0..6 {
        let mut body =
            json!({ "property_id": p, "number": format!("U{i}"), "bedrooms": i, "market_rent": 1000 + i * 100, "currency": "USD" });
        if i % 2 == 0 {
            body["building_id"] = b["id"].clone();
        }
        app.create(&t.test_key, "units", body).await;
    }
    let numbers = |q: &'static str| {
        let key = t.test_key.clone();
        async move {
            let r = app.call(&key, "GET", &format!("/v1/units?sort=number&{q}"), None).await;
            assert_eq!(r.status, 200, "{q}: {}", r.text);
            r.body["data"].as_array().unwrap().iter().map(|u| u["number"].as_str().unwrap().to_string()).collect::<Vec<_>>()
        }
    };
    assert_eq!(numbers("filter[bedrooms]=2").await, ["U2"]);
    assert_eq!(numbers("filter[bedrooms][eq]=2").await, ["U2"]);
    assert_eq!(numbers("filter[bedrooms][ne]=2").await, ["U0", "U1", "U3", "U4", "U5"]);
    assert_eq!(numbers("filter[bedrooms][gt]=3").await, ["U4", "U5"]);
    assert_eq!(numbers("filter[bedrooms][gte]=3").await, ["U3", "U4", "U5"]);
    assert_eq!(numbers("filter[bedrooms][lt]=1").await, ["U0"]);
    assert_eq!(numbers("filter[bedrooms][lte]=1").await, ["U0", "U1"]);
    assert_eq!(numbers("filter[number][in]=U1,U3,U9").await, ["U1", "U3"]);
    assert_eq!(numbers("filter[number][nin]=U1,U3").await, ["U0", "U2", "U4", "U5"]);
    assert_eq!(numbers("filter[building_id][exists]=false").await, ["U1", "U3", "U5"]);
    assert_eq!(numbers("filter[building_id][exists]=true&filter[bedrooms][gte]=2").await, ["U2", "U4"]);
    assert_eq!(numbers("filter[market_rent][gte]=1350.00&filter[currency]=USD").await, ["U4", "U5"]);
    // `contains`: anywhere in the text, any case; `%` and `_` are themselves, not patterns.
    assert_eq!(numbers("filter[number][contains]=u").await, ["U0", "U1", "U2", "U3", "U4", "U5"]);
    assert_eq!(numbers("filter[number][contains]=3").await, ["U3"]);
    assert_eq!(numbers("filter[number][contains]=u%25").await, Vec::<String>::new());
    assert_eq!(numbers("filter[number][contains]=_").await, Vec::<String>::new());
    app.create(&t.test_key, "units", json!({ "property_id": p, "number": "50%_off" })).await;
    assert_eq!(numbers("filter[number][contains]=0%25_").await, ["50%_off"]);
    // Sparse fieldsets: id and object always, then only what was asked.
    let r = app.call(&t.test_key, "GET", "/v1/units?fields[units]=number,bedrooms&limit=1", None).await;
    let rec = r.body["data"][0].as_object().unwrap();
    let mut keys: Vec<&str> = rec.keys().map(String::as_str).collect();
    keys.sort();
    assert_eq!(keys, ["bedrooms", "id", "number", "object"]);
    let one = app.call(&t.test_key, "GET", &format!("/v1/properties/{p}?fields[properties]=name"), None).await;
    assert_eq!(one.body["data"].as_object().unwrap().len(), 3);
}
both!(filters_with_every_operator);

async fn bad_list_parameters_are_named(app: &TestApp) {
    let t = app.tenant("A").await;
    let p = property(app, &t.test_key).await;
    for i in 0..3 {
        app.create(&t.test_key, "units", json!({ "property_id": p, "number": format!("{i}") })).await;
    }
    let cases: &[(&str, &str, &str)] = &[
        ("limit=0", "invalid_parameter", "limit"),
        ("limit=101", "invalid_parameter", "limit"),
        ("limit=-1", "invalid_parameter", "limit"),
        ("limit=99999999999999999999", "invalid_parameter", "limit"),
        ("limit=ten", "invalid_parameter", "limit"),
        ("sort=nope", "invalid_parameter", "sort"),
        ("sort=area", "invalid_parameter", "sort"),
        // Only never-null fields are sortable (docs/api.md), and `bedrooms` is optional.
        ("sort=-bedrooms", "invalid_parameter", "sort"),
        ("filter[nope]=1", "invalid_parameter", "filter[nope]"),
        ("filter[area]=1", "invalid_parameter", "filter[area]"),
        ("filter[bedrooms][like]=1", "invalid_parameter", "filter[bedrooms][like]"),
        // `contains` searches text, and needs something to search for.
        ("filter[bedrooms][contains]=1", "invalid_parameter", "filter[bedrooms][contains]"),
        ("filter[currency][contains]=US", "invalid_parameter", "filter[currency][contains]"),
        ("filter[number][contains]=", "invalid_parameter", "filter[number][contains]"),
        // A value the field cannot hold, as the description's filter schema says.
        ("filter[number]=123456789012345678901234567890123456789012345678901", "invalid_parameter", "filter[number]"),
        ("filter[bedrooms]=two", "invalid_parameter", "filter[bedrooms]"),
        ("filter[market_rent][gt]=5", "invalid_parameter", "filter[market_rent][gt]"),
        ("fields[leases]=id", "invalid_parameter", "fields[leases]"),
        ("fields[units]=id,secret", "invalid_parameter", "fields[units]"),
        ("page=2", "invalid_parameter", "page"),
        ("cursor=garbage", "invalid_cursor", "cursor"),
        ("cursor=", "invalid_cursor", "cursor"),
        // U+0000, which PostgreSQL's text cannot hold: refused alike on both databases.
        ("filter[number]=a%00b", "invalid_parameter", "filter[number]"),
        ("filter[number][in]=a,%00", "invalid_parameter", "filter[number][in]"),
    ];
    for (q, code, param) in cases {
        let r = app.call(&t.test_key, "GET", &format!("/v1/units?{q}"), None).await;
        r.assert_error(400, code);
        assert_eq!(r.param(), *param, "{q}");
    }
    // A real cursor, altered by one character, or used on another list or tenant, is refused.
    let r = app.call(&t.test_key, "GET", "/v1/units?limit=1&sort=number", None).await;
    let cursor = r.body["meta"]["next_cursor"].as_str().unwrap().to_string();
    let ok = app.call(&t.test_key, "GET", &format!("/v1/units?limit=1&sort=number&cursor={}", urlencode(&cursor)), None).await;
    assert_eq!(ok.status, 200);
    let mut bytes = cursor.clone().into_bytes();
    let i = bytes.len() / 3;
    bytes[i] = if bytes[i] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).unwrap();
    app.call(&t.test_key, "GET", &format!("/v1/units?limit=1&sort=number&cursor={}", urlencode(&tampered)), None)
        .await
        .assert_error(400, "invalid_cursor");
    app.call(&t.test_key, "GET", &format!("/v1/units?limit=1&sort=-number&cursor={}", urlencode(&cursor)), None)
        .await
        .assert_error(400, "invalid_cursor");
    app.call(&t.test_key, "GET", &format!("/v1/units?limit=1&sort=number&filter[bedrooms]=1&cursor={}", urlencode(&cursor)), None)
        .await
        .assert_error(400, "invalid_cursor");
    app.call(&t.test_key, "GET", &format!("/v1/leases?limit=1&sort=number&cursor={}", urlencode(&cursor)), None)
        .await
        .assert_error(400, "invalid_parameter");
    let other = app.tenant("B").await;
    app.call(&other.test_key, "GET", &format!("/v1/units?limit=1&sort=number&cursor={}", urlencode(&cursor)), None)
        .await
        .assert_error(400, "invalid_cursor");
}
both!(bad_list_parameters_are_named);
