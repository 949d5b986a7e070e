//! PostgreSQL row-level security: the second wall. The checks go through the
//! application's own tenant-transaction path (`Store::begin_tenant`), so they fail if
//! Gable stops switching to `gable_app` or stops setting the tenant and environment:
//! a query that forgets its tenant condition still sees one tenant's one environment,
//! and no table of Gable's own bookkeeping at all.

use gable::store::{Intent, Row, Tx};
use gable_tests::{Backend, TestApp};
use sea_query::{Alias, Expr, Query};
use serde_json::json;
use sqlx::Row as _;

fn alias(s: &str) -> Alias {
    Alias::new(s)
}

/// The names of every vendor a statement without any condition returns.
async fn all_vendor_names(tx: &mut Tx) -> Vec<String> {
    let rows: Vec<Row> =
        tx.fetch_all(&Query::select().column(alias("name")).from(alias("vendors")).to_owned()).await.expect("select vendors");
    let mut names: Vec<String> = rows.iter().map(|r| r.opt_string("name").unwrap().unwrap()).collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tenant_transactions_see_one_tenant_and_one_environment() {
    let Some(app) = TestApp::builder(Backend::Postgres).try_spawn().await else { return };
    let a = app.tenant("A").await;
    let b = app.tenant("B").await;
    app.create(&a.test_key, "vendors", json!({ "name": "A sandbox vendor" })).await;
    let live = app.call_on(true, &a.live_key, "POST", "/v1/vendors", Some(json!({ "name": "A live vendor" }))).await;
    assert_eq!(live.status, 201, "{}", live.text);
    app.create(&b.test_key, "vendors", json!({ "name": "B sandbox vendor" })).await;

    let mut tx = app.store.begin_tenant(a.id, false, Intent::Read).await.unwrap();
    assert_eq!(all_vendor_names(&mut tx).await, ["A sandbox vendor"]);
    tx.commit().await.unwrap();
    let mut tx = app.store.begin_tenant(a.id, true, Intent::Read).await.unwrap();
    assert_eq!(all_vendor_names(&mut tx).await, ["A live vendor"]);
    tx.commit().await.unwrap();

    // Writing a row for another tenant, or for the other environment, is refused.
    for (tenant, livemode) in [(b.id, false), (a.id, true)] {
        let mut tx = app.store.begin_tenant(a.id, false, Intent::Write).await.unwrap();
        let ins = vendor_insert(tenant, livemode, "intruder");
        assert!(tx.execute(&ins).await.is_err(), "the wall let in a row of tenant {tenant}, livemode {livemode}");
    }

    // Gable's own bookkeeping is out of reach of every tenant transaction.
    for table in
        ["tenants", "api_keys", "service_accounts", "instance_secrets", "console_credentials", "console_sessions", "_sqlx_migrations"]
    {
        let mut tx = app.store.begin_tenant(a.id, false, Intent::Read).await.unwrap();
        let r = tx.fetch_all(&Query::select().expr(Expr::cust("1")).from(alias(table)).to_owned()).await;
        assert!(r.is_err(), "a tenant transaction could read {table}");
    }
    app.stop().await;
}

/// Every table is either tenant data (granted to `gable_app`, behind a policy on the
/// tenant and the environment) or Gable's own (not granted at all): a new table that is
/// neither fails here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_table_is_walled_or_out_of_reach() {
    let Some(app) = TestApp::builder(Backend::Postgres).try_spawn().await else { return };
    let mut db = sqlx::PgConnection::connect(&app.database_url).await.unwrap();
    let tables = sqlx::query(
        "SELECT c.relname AS name, has_table_privilege('gable_app', c.oid, 'SELECT') AS granted, c.relrowsecurity AS rls, \
         (SELECT string_agg(coalesce(p.qual, '') || ' ' || coalesce(p.with_check, ''), ' ') FROM pg_policies p \
          WHERE p.tablename = c.relname AND p.schemaname = 'public') AS policy \
         FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = 'public' AND c.relkind = 'r'",
    )
    .fetch_all(&mut db)
    .await
    .unwrap();
    let tenant_tables: Vec<&str> = gable::domain::collections::COLLECTIONS
        .iter()
        .map(|c| c.table)
        .chain(["ledger_lines", "idempotency_keys", "sandbox_clocks", "console_activity", "import_rows"])
        .collect();
    assert!(tables.len() > tenant_tables.len(), "the schema has Gable's own tables too");
    for t in &tables {
        let name: String = t.get("name");
        let granted: bool = t.get("granted");
        if tenant_tables.contains(&name.as_str()) {
            let policy: Option<String> = t.get("policy");
            let policy = policy.unwrap_or_default();
            assert!(granted && t.get::<bool, _>("rls"), "{name}: tenant data must be granted and walled");
            assert!(policy.contains("gable.tenant_id") && policy.contains("gable.livemode"), "{name}: policy {policy}");
        } else {
            assert!(!granted, "{name} is Gable's own bookkeeping but gable_app can read it");
        }
    }
    app.stop().await;
}

use sqlx::Connection as _;

/// A vendor row of tenant `tenant`'s environment, named `name`, as a raw insert.
fn vendor_insert(tenant: uuid::Uuid, livemode: bool, name: &str) -> sea_query::InsertStatement {
    let mut ins = Query::insert();
    ins.into_table(alias("vendors"))
        .columns(["tenant_id", "livemode", "id", "created_at", "updated_at", "metadata", "name", "status"].map(alias))
        .values_panic([
            tenant.into(),
            livemode.into(),
            uuid::Uuid::now_v7().into(),
            chrono::Utc::now().into(),
            chrono::Utc::now().into(),
            json!({}).into(),
            name.into(),
            "active".into(),
        ]);
    ins
}

/// A unit of work begun to read ends without a commit (on PostgreSQL its `ROLLBACK`
/// travels with the pool's check of the returned connection). That is only safe because
/// such a unit refuses every write, loudly, on both databases: a write slipped into a
/// read would otherwise be lost in silence. And the connections it returns serve the
/// next units of work, reads and writes, as if it had committed.
async fn read_units_refuse_writes_and_end_cleanly(app: &TestApp) {
    let a = app.tenant("A").await;
    let mut tx = app.store.begin_tenant(a.id, false, Intent::Read).await.unwrap();
    assert!(tx.execute(&vendor_insert(a.id, false, "slipped into a read")).await.is_err(), "a read unit of work took a write");
    drop(tx);
    // Many read units in a row on the pool's few connections, then a write: each
    // connection comes back clean (no transaction left open, no tenant setting kept).
    for _ in 0..40 {
        let mut tx = app.store.begin_tenant(a.id, false, Intent::Read).await.unwrap();
        assert!(all_vendor_names(&mut tx).await.is_empty());
        tx.commit().await.unwrap();
    }
    let mut tx = app.store.begin_tenant(a.id, false, Intent::Write).await.unwrap();
    tx.execute(&vendor_insert(a.id, false, "written")).await.unwrap();
    tx.commit().await.unwrap();
    let mut tx = app.store.begin_tenant(a.id, false, Intent::Read).await.unwrap();
    assert_eq!(all_vendor_names(&mut tx).await, ["written"], "the write was lost, or the refused one was kept");
    tx.commit().await.unwrap();
    let mut tx = app.store.begin_system(Intent::Read).await.unwrap();
    let ins = vendor_insert(a.id, false, "slipped into a system read");
    assert!(tx.execute(&ins).await.is_err(), "a read unit of Gable's own work took a write");
}
gable_tests::both!(read_units_refuse_writes_and_end_cleanly);
