//! One serving process per SQLite data directory; other commands work beside it.

use std::time::Duration;

use gable_tests::process::Database;
use gable_tests::Backend;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_server_on_the_same_data_directory_refuses_to_start() {
    let db = Database::fresh(Backend::Sqlite).await.expect("sqlite");
    let first = db.server().start().await;
    let (error, log) = match db.server().try_start().await {
        Ok(_) => panic!("a second gable serve started on the same data directory"),
        Err(e) => e,
    };
    assert!(error.contains("exited"), "{error}");
    assert!(log.contains("is in use by process") && log.contains(&first.pid().to_string()), "the refusal names the holder: {log}");

    // Commands that write work beside the running server.
    let (_, key) = db.tenant_and_key("test").await;
    let r = reqwest::Client::new().get(format!("{}/v1/properties", first.sandbox)).bearer_auth(&key).send().await.unwrap();
    assert_eq!(r.status(), 200, "a key the CLI made beside the server works on it");

    // However the holder ends, the lock goes with it.
    first.kill().await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let again = db.server().start().await;
    again.kill().await;
}
