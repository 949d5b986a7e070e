//! Operations inside a caller's transaction: what a caller writes
//! beside an operation through `Work::tx` commits or rolls back together with it, so a
//! stored idempotent response can never exist without its write, or the reverse.

use gable::domain::collections::collection;
use gable::ops::Actor;
use gable_tests::{both, TestApp};
use sea_query::{Alias, Query};
use serde_json::json;

async fn a_unit_of_work_commits_or_rolls_back_as_one(app: &TestApp) {
    let t = app.tenant("A").await;
    let ops = &app.state.ops;
    let actor = Actor::system(t.id, false);
    let (vendors, workorders) = (collection("vendors").unwrap(), collection("workorders").unwrap());
    let property = app.property(&t.test_key).await;
    let counts = || async { (app.count_rows("vendors").await, app.count_rows("workorders").await, app.count_rows("events").await) };
    let before = counts().await;

    // Two operations and a write of the caller's own, then dropped: nothing stays.
    {
        let mut w = ops.begin(&actor).await.unwrap();
        w.create(vendors, &json!({ "name": "V" })).await.unwrap();
        w.create(workorders, &json!({ "property_id": property["id"], "title": "Leak" })).await.unwrap();
        let mut ins = Query::insert();
        ins.into_table(Alias::new("instance_secrets"))
            .columns([Alias::new("name"), Alias::new("value")])
            .values_panic(["x".into(), "y".into()]);
        // Tenant transactions cannot reach Gable's own tables on PostgreSQL; on SQLite the
        // write goes in and must vanish with the rest.
        let _ = w.tx().execute(&ins).await;
    }
    assert_eq!(counts().await, before, "a dropped unit of work left writes behind");
    assert_eq!(app.count_where("instance_secrets", "name = 'x'").await, 0);

    // A failing step inside the unit leaves the caller free to give up: nothing stays.
    {
        let mut w = ops.begin(&actor).await.unwrap();
        w.create(vendors, &json!({ "name": "V" })).await.unwrap();
        let err = w.create(workorders, &json!({ "title": "no property" })).await;
        assert!(err.is_err());
    }
    assert_eq!(counts().await, before);

    // Committed: both records and the work order's event, at once.
    let mut w = ops.begin(&actor).await.unwrap();
    let v = w.create(vendors, &json!({ "name": "V" })).await.unwrap();
    let wo = w.create(workorders, &json!({ "property_id": property["id"], "title": "Leak", "vendor_id": v.record.id })).await.unwrap();
    w.commit().await.unwrap();
    let after = counts().await;
    assert_eq!((after.0, after.1, after.2), (before.0 + 1, before.1 + 1, before.2 + 1), "workorder.created follows its create");
    let r = app.call(&t.test_key, "GET", &format!("/v1/workorders/{}", wo.record.id), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
}
both!(a_unit_of_work_commits_or_rolls_back_as_one);
