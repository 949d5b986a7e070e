//! A request dropped while its transaction begins (a client that disconnects, the request
//! timeout) must not leave its PostgreSQL connection inside an open transaction: the
//! next request to borrow it would run inside that stale transaction. sqlx 0.8.6's
//! `begin` has this window (sqlx issue #4393); the store begins in a task of its own
//! (`store::begin_postgres`). Without that, this test failed in each of three runs (a
//! connection left "idle in transaction"); with it, it passed in each of seven, and in
//! five more beside two busy loops once it waited for the pool instead of 300 ms.

use gable::store::Intent;
use gable_tests::{Backend, TestApp};
use sqlx::{Connection, PgConnection};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn begins_cancelled_mid_flight_leave_no_connection_in_a_transaction() {
    let Some(app) = TestApp::builder(Backend::Postgres).try_spawn().await else { return };
    let mut admin = PgConnection::connect(&app.database_url).await.unwrap();
    let tenant = app.tenant("A").await.id;
    for round in 0..3 {
        // Timers are too coarse for a window of tens of microseconds: each begin is polled
        // a few times, yielding between polls, and then dropped wherever it is.
        let mut cancelled = Vec::new();
        for i in 0..2000u64 {
            let store = app.store.clone();
            cancelled.push(tokio::spawn(async move {
                // Both kinds of begin: a plain one, and a tenant's (with its settings).
                type Begin<'a> = std::pin::Pin<Box<dyn std::future::Future<Output = gable::error::Result<gable::store::Tx>> + Send + 'a>>;
                let mut begin: Begin<'_> = if i % 2 == 0 {
                    Box::pin(store.begin_system(Intent::Read))
                } else {
                    Box::pin(store.begin_tenant(tenant, false, Intent::Read))
                };
                for _ in 0..(i % 40) {
                    if futures::poll!(begin.as_mut()).is_ready() {
                        return;
                    }
                    tokio::task::yield_now().await;
                }
            }));
        }
        for c in cancelled {
            c.await.unwrap();
        }
        // The begins that got through hand their connections back in tasks of their own,
        // each rolling back on the way; on a loaded machine that takes a while. A
        // connection is stuck when it is idle in the pool and still inside a transaction:
        // so note the time, wait until no connection is checked out, and look for
        // transactions idle since before that time. (A background job's transaction
        // began after it, or its connection would be checked out.)
        let (since,): (String,) = sqlx::query_as("SELECT clock_timestamp()::text").fetch_one(&mut admin).await.unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while app.store.connections().in_use > 0 {
            assert!(std::time::Instant::now() < deadline, "round {round}: the pool never got its connections back");
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        // Before anything reuses them: a reuse would end a stale transaction with its own
        // commit, and hide it.
        let states: Vec<(Option<String>, i64)> = sqlx::query_as(
            "SELECT state, count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid() \
             AND (state NOT LIKE 'idle in transaction%' OR state_change < $1::timestamptz) GROUP BY state",
        )
        .bind(since)
        .fetch_all(&mut admin)
        .await
        .unwrap();
        let stuck: i64 =
            states.iter().filter(|(s, _)| s.as_deref().is_some_and(|s| s.starts_with("idle in transaction"))).map(|(_, n)| n).sum();
        assert_eq!(stuck, 0, "round {round}: connections left in a transaction by cancelled begins: {states:?}");
        for _ in 0..32 {
            app.store.ping().await.expect("the pool serves");
        }
    }
    app.stop().await;
}
