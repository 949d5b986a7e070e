//! Property test: for random data full of ties and random page sizes, paging through a
//! list under any sort returns exactly the rows in exactly the order one query would:
//! nothing skipped, nothing repeated.

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
}

fn cases() -> impl Strategy<Value = Case> {
    (prop::collection::vec((0u8..4, 0u8..3, 0u8..3), 1..40), 1u32..7, 0..SORTS.len()).prop_map(|(rows, limit, sort)| Case {
        rows,
        limit,
        sort,
    })
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
    let whole = app.call(&t.test_key, "GET", &format!("/v1/leases?limit=100&sort={sort}"), None).await;
    prop_assert_eq!(whole.status, 200);
    let expected: Vec<String> = whole.body["data"].as_array().unwrap().iter().map(|r| r["id"].as_str().unwrap().to_string()).collect();
    prop_assert_eq!(expected.len(), case.rows.len());
    let mut paged = vec![];
    let mut cursor: Option<String> = None;
    loop {
        let mut url = format!("/v1/leases?limit={}&sort={sort}", case.limit);
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
    prop_assert_eq!(paged, expected, "sort {}", sort);
    Ok(())
}

fn run(backend: Backend) {
    let Some((rt, app)) = TestApp::with_runtime(backend) else { return };
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
