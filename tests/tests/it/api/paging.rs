//! Property test: for random data full of ties, random page sizes and an optional
//! filter, paging through a list under any sort returns exactly the rows in exactly the
//! order the API promises: nothing skipped, nothing repeated. The order is computed
//! here from the generated rows (an independent model of docs/api.md "Lists"), not taken
//! from the server, so a wrong order the server applied consistently would still fail.

use std::cmp::Ordering;
use std::collections::HashMap;

use chrono::{Duration, NaiveDate, Utc};
use gable::domain::collections::collection;
use gable::domain::value::Val;
use gable::store::records::NewRow;
use gable_tests::{Backend, TestApp};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use serde_json::json;
use uuid::Uuid;

const SORTS: &[&str] = &["start_date", "-start_date", "status,-start_date", "-status,start_date,-created_at", "-created_at", "status"];
const STATUSES: &[&str] = &["draft", "active", "ended"];

#[derive(Debug, Clone)]
struct Case {
    rows: Vec<(u8, u8, u8)>, // (day offset, status index, created_at offset): few values, many ties
    limit: u32,
    sort: usize,
    status_filter: Option<u8>, // filter[status]=STATUSES[i]
}

fn cases() -> impl Strategy<Value = Case> {
    (prop::collection::vec((0u8..4, 0u8..3, 0u8..3), 1..40), 1u32..7, 0..SORTS.len(), prop::option::of(0u8..3))
        .prop_map(|(rows, limit, sort, status_filter)| Case { rows, limit, sort, status_filter })
}

/// The model: the generated rows that pass the filter, ordered by the sort keys with
/// `id` breaking ties in the direction of the last key. Statuses compare as text
/// (bytewise, like PostgreSQL's `COLLATE "C"`), ids as UUIDs (bytewise, like both
/// databases).
fn model_order(case: &Case, ids: &[Uuid], sort: &str) -> Vec<String> {
    let mut keys: Vec<(&str, bool)> = sort.split(',').map(|k| k.strip_prefix('-').map_or((k, false), |n| (n, true))).collect();
    keys.push(("id", keys.last().unwrap().1));
    let mut rows: Vec<(Uuid, (u8, u8, u8))> =
        ids.iter().copied().zip(case.rows.iter().copied()).filter(|(_, (_, s, _))| case.status_filter.is_none_or(|f| f == *s)).collect();
    rows.sort_by(|(ia, (da, sa, ca)), (ib, (db, sb, cb))| {
        keys.iter()
            .map(|(field, desc)| {
                let ord = match *field {
                    "start_date" => da.cmp(db),
                    "status" => STATUSES[*sa as usize].cmp(STATUSES[*sb as usize]),
                    "created_at" => ca.cmp(cb),
                    "id" => ia.cmp(ib),
                    other => unreachable!("no model for sort key {other}"),
                };
                if *desc {
                    ord.reverse()
                } else {
                    ord
                }
            })
            .find(|o| *o != Ordering::Equal)
            .unwrap_or(Ordering::Equal)
    });
    rows.into_iter().map(|(id, _)| id.to_string()).collect()
}

async fn check(app: &TestApp, case: Case) -> Result<(), TestCaseError> {
    let t = app.tenant("P").await;
    let p = app
        .create(
            &t.test_key,
            "properties",
            json!({ "name": "P", "kind": "mixed", "address": { "line1": "1", "city": "X", "country": "US" } }),
        )
        .await;
    let pid: Uuid = p["id"].as_str().unwrap().parse().unwrap();
    let u = app.create(&t.test_key, "units", json!({ "property_id": pid, "number": "1" })).await;
    let uid: Uuid = u["id"].as_str().unwrap().parse().unwrap();
    let base = Utc::now() - Duration::days(1);
    let day0 = NaiveDate::from_ymd_opt(2027, 1, 1).unwrap();
    let rows: Vec<NewRow> = case
        .rows
        .iter()
        .map(|(d, s, c)| NewRow {
            id: Uuid::now_v7(),
            created_at: base + Duration::seconds(*c as i64),
            values: HashMap::from([
                ("unit_id", Val::Uuid(uid)),
                ("property_id", Val::Uuid(pid)),
                ("start_date", Val::Date(day0 + Duration::days(*d as i64))),
                ("rent", Val::Money(100_000)),
                ("currency", Val::Str("USD".into())),
                ("rent_due_day", Val::Int(1)),
                ("status", Val::Str(STATUSES[*s as usize].into())),
            ]),
        })
        .collect();
    app.store.insert_many(t.id, false, collection("leases").unwrap(), &rows).await.unwrap();
    let sort = SORTS[case.sort];
    let ids: Vec<Uuid> = rows.iter().map(|r| r.id).collect();
    let expected = model_order(&case, &ids, sort);
    let filter = case.status_filter.map(|s| format!("&filter[status]={}", STATUSES[s as usize])).unwrap_or_default();
    // The server's one-page answer (at most 40 rows, so limit=100 is every row) must be
    // the model's order too.
    let whole = app.call(&t.test_key, "GET", &format!("/v1/leases?limit=100&sort={sort}{filter}"), None).await;
    prop_assert_eq!(whole.status, 200, "{}", whole.text);
    prop_assert!(whole.body["meta"]["next_cursor"].is_null());
    let one_page: Vec<String> = whole.body["data"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    prop_assert_eq!(&one_page, &expected, "one page, sort {}{}", sort, filter);
    let mut paged = vec![];
    let mut cursor: Option<String> = None;
    loop {
        let mut url = format!("/v1/leases?limit={}&sort={sort}{filter}", case.limit);
        if let Some(c) = &cursor {
            url.push_str(&format!("&cursor={c}"));
        }
        let r = app.call(&t.test_key, "GET", &url, None).await;
        prop_assert_eq!(r.status, 200, "{}", r.text);
        paged.extend(r.body["data"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()));
        prop_assert!(paged.len() <= case.rows.len() * 2, "paging does not end");
        match r.body["meta"]["next_cursor"].as_str() {
            Some(c) => cursor = Some(c.to_string()),
            None => break,
        }
    }
    prop_assert_eq!(paged, expected, "pages of {}, sort {}{}", case.limit, sort, filter);
    Ok(())
}

fn run(backend: Backend) {
    let rt = gable_tests::runtime();
    let Some(app) = rt.block_on(TestApp::builder(backend).try_spawn()) else { return };
    let mut runner = TestRunner::new(Config { cases: 32, failure_persistence: None, ..Config::default() });
    runner.run(&cases(), |case| rt.block_on(check(&app, case))).unwrap();
    rt.block_on(app.stop());
}

#[test]
fn paging_matches_one_query_on_sqlite() {
    run(Backend::Sqlite);
}

#[test]
fn paging_matches_one_query_on_postgres() {
    run(Backend::Postgres);
}
