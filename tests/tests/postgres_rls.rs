//! PostgreSQL row-level security: the second wall. Even a query that forgets the
//! tenant condition sees only the tenant set for the transaction.

use gable_tests::TestApp;
use serde_json::json;
use sqlx::{Connection, Executor, PgConnection, Row};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn row_level_security_walls_off_other_tenants() {
    let Some(app) = TestApp::spawn_postgres().await else { return };
    let a = app.tenant("A").await;
    let b = app.tenant("B").await;
    for (t, name) in [(&a, "A vendor"), (&b, "B vendor")] {
        app.create(&t.test_key, "vendors", json!({ "name": name })).await;
    }
    let mut c = PgConnection::connect(&app.database_url).await.unwrap();
    let mut tx = c.begin().await.unwrap();
    tx.execute(format!("SELECT set_config('role', 'gable_app', true), set_config('gable.tenant_id', '{}', true)", a.id).as_str())
        .await
        .unwrap();
    let rows = sqlx::query("SELECT name FROM vendors").fetch_all(&mut *tx).await.unwrap();
    let names: Vec<String> = rows.iter().map(|r| r.get("name")).collect();
    assert_eq!(names, ["A vendor"]);
    // Writing a row for another tenant is refused by the policy.
    let err = tx
        .execute(format!("INSERT INTO vendors (tenant_id, livemode, id, created_at, updated_at, metadata, name, status) VALUES ('{}', false, gen_random_uuid(), now(), now(), '{{}}', 'x', 'active')", b.id).as_str())
        .await;
    assert!(err.is_err(), "the policy let a row for another tenant in");
    tx.rollback().await.unwrap();
    // Without a tenant set, the app role sees nothing at all.
    let mut tx = c.begin().await.unwrap();
    tx.execute("SELECT set_config('role', 'gable_app', true)").await.unwrap();
    let n: i64 = sqlx::query("SELECT COUNT(*) FROM vendors").fetch_one(&mut *tx).await.unwrap().get(0);
    assert_eq!(n, 0);
    tx.rollback().await.unwrap();
    app.stop().await;
}
