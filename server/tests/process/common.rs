//! What the tests that run the real `gable` binary share.

use std::process::Command;

pub const BIN: &str = env!("CARGO_BIN_EXE_gable");

/// The master key the servers of these tests share (PostgreSQL requires one).
pub const MASTER_KEY: &str = "7f3c0e5d9a2b4c6e8f1a3b5c7d9e0f2a4b6c8d0e1f3a5b7c9d2e4f6a8b0c1d3e";

/// Store arguments for a fresh database: a temp dir, or a new PostgreSQL database.
pub fn stores() -> Vec<(&'static str, Vec<String>, Option<tempfile::TempDir>)> {
    let dir = tempfile::tempdir().unwrap();
    let mut v = vec![("sqlite", vec!["--data-dir".to_string(), dir.path().display().to_string()], Some(dir))];
    let admin = std::env::var("GABLE_TEST_DATABASE_URL").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/postgres".into());
    let db = format!("gable_test_{}_cli{}", now_secs(), uuid::Uuid::new_v4().simple());
    let created = Command::new("psql").args([admin.as_str(), "-XAtqc", &format!("CREATE DATABASE {db}")]).status();
    match created {
        Ok(s) if s.success() => {
            let mut url = url::Url::parse(&admin).unwrap();
            url.set_path(&format!("/{db}"));
            v.push(("postgres", vec!["--database-url".to_string(), url.to_string()], None));
        }
        _ if std::env::var("GABLE_REQUIRE_POSTGRES").is_ok_and(|v| v == "1") => panic!("PostgreSQL is required but unreachable at {admin}"),
        _ => eprintln!("SKIPPED the PostgreSQL half: PostgreSQL unreachable at {admin}"),
    }
    v
}

pub fn now_secs() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs()
}
