//! The `gable` command, run as a real process against SQLite and PostgreSQL: tenant
//! and key creation, seeding, and the first-run welcome of `serve`.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::common::{stores, BIN, MASTER_KEY};

fn gable(store: &[String], args: &[&str]) -> (bool, String, String) {
    let out = Command::new(BIN).args(store).args(args).env_remove("DATABASE_URL").env_remove("GABLE_DATA_DIR").output().unwrap();
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}

fn json_out(store: &[String], args: &[&str]) -> Value {
    let (ok, out, err) = gable(store, args);
    assert!(ok, "gable {args:?} failed: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("gable {args:?} printed no JSON ({e}): {out}"))
}

#[test]
fn tenants_keys_and_seeds() {
    for (name, store, _dir) in stores() {
        let tenant = json_out(&store, &["tenant", "create", "--name", "Harbor Homes"]);
        let tid = tenant["id"].as_str().unwrap().to_string();
        assert_eq!(tenant["name"], "Harbor Homes", "{name}");
        let key = json_out(&store, &["key", "create", "--tenant", &tid, "--env", "test", "--scopes", "units:read,leases:write"]);
        assert!(key["secret"].as_str().unwrap().starts_with("gbl_test_"), "{name}");
        assert_eq!(key["scopes"], serde_json::json!(["units:read", "leases:write"]));
        let live = json_out(&store, &["key", "create", "--tenant", &tid, "--env", "live", "--scopes", "*"]);
        assert!(live["secret"].as_str().unwrap().starts_with("gbl_live_"));
        // Bad input: a clear error and a failing exit status.
        let (ok, _, err) = gable(&store, &["key", "create", "--tenant", &tid, "--env", "test", "--scopes", "units:admin"]);
        assert!(!ok && err.contains("units:admin"), "{name}: {err}");
        let (ok, _, err) =
            gable(&store, &["key", "create", "--tenant", &uuid::Uuid::new_v4().to_string(), "--env", "test", "--scopes", "*"]);
        assert!(!ok && err.contains("no tenant"), "{name}: {err}");
        let (ok, _, err) = gable(
            &store,
            &["key", "create", "--tenant", &tid, "--env", "test", "--scopes", "*", "--properties", &uuid::Uuid::new_v4().to_string()],
        );
        assert!(!ok && err.contains("no such property"), "{name}: {err}");
        // Seeding makes a portfolio in proportion.
        let counts = json_out(&store, &["seed", "--tenant", &tid, "--env", "test", "--size", "120"]);
        assert_eq!(counts["units"], 120, "{name}");
        assert_eq!(counts["properties"], 3);
        assert_eq!(counts["buildings"], 6);
        let leases = counts["leases"].as_u64().unwrap();
        assert!((90..=120).contains(&leases), "{name}: {leases} leases");
        assert_eq!(counts["leases"].as_u64().unwrap() + counts["listings"].as_u64().unwrap(), 120);
        assert_eq!(counts["workorders"], 12);
    }
}

#[test]
fn first_serve_welcomes_with_a_working_sandbox_key() {
    for (name, store, _dir) in stores() {
        // Port 0: the welcome prints the addresses actually bound (no race for a port).
        let mut child = Command::new(BIN)
            .args(&store)
            .args(["serve", "--addr", "127.0.0.1:0", "--sandbox-addr", "127.0.0.1:0"])
            .env_remove("DATABASE_URL")
            .env("GABLE_MASTER_KEY", MASTER_KEY)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let (mut key, mut sandbox) = (None, None);
        let deadline = Instant::now() + Duration::from_secs(60);
        for line in lines.by_ref() {
            let line = line.unwrap();
            if let Some(rest) = line.trim().strip_prefix("Sandbox API:") {
                sandbox = Some(rest.trim().to_string());
            }
            if let Some(pos) = line.find("gbl_test_") {
                key = Some(line[pos..].split_whitespace().next().unwrap().to_string());
                break;
            }
            assert!(Instant::now() < deadline, "no key printed");
        }
        // Keep reading, so the server never writes into a closed pipe.
        std::thread::spawn(move || lines.for_each(drop));
        let key = key.unwrap_or_else(|| panic!("{name}: the first run printed no sandbox key"));
        let sandbox = sandbox.unwrap_or_else(|| panic!("{name}: the first run printed no sandbox address"));
        let url = format!("{sandbox}/properties");
        let mut status = 0;
        let mut last_error = String::new();
        for _ in 0..100 {
            match ureq_get(&url, &key) {
                Ok(r) => {
                    status = r;
                    break;
                }
                Err(e) => last_error = e,
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        // The demo tenant's sandbox holds the demo portfolio: the first call returns data.
        let props = get_json(&url, &key);
        let invoices = get_json(&format!("{sandbox}/invoices?filter[status]=open"), &key);
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(status, 200, "{name}: the printed key did not work ({last_error})");
        assert_eq!(props["data"].as_array().map(Vec::len), Some(1), "{name}: {props}");
        assert!(invoices["data"].as_array().is_some_and(|a| !a.is_empty()), "{name}: an open rent invoice to pay: {invoices}");
        // A second start on the same store creates no further tenant.
        let (ok, out, err) = gable(&store, &["tenant", "create", "--name", "Second"]);
        assert!(ok, "{err}");
        assert!(!out.contains("Welcome"));
    }
}

/// A blocking GET with a bearer key; returns the JSON body (Null when it failed).
fn get_json(url: &str, key: &str) -> Value {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let Ok(r) = reqwest::Client::new().get(url).bearer_auth(key).send().await else { return Value::Null };
        r.json().await.unwrap_or(Value::Null)
    })
}

#[test]
fn sandbox_reset_deletes_the_sandbox_and_can_make_the_demo() {
    for (name, store, _dir) in stores() {
        let tid = json_out(&store, &["tenant", "create", "--name", "Harbor Homes"])["id"].as_str().unwrap().to_string();
        json_out(&store, &["seed", "--tenant", &tid, "--env", "test", "--size", "40"]);
        let live = json_out(&store, &["seed", "--tenant", &tid, "--env", "live", "--size", "40"]);
        assert_eq!(live["units"], 40);
        // Reset with the demo: the seeded sandbox goes, the demo comes.
        let args = ["sandbox", "reset", "--tenant", tid.as_str(), "--demo"];
        let out = std::process::Command::new(BIN)
            .args(&store)
            .args(args)
            .env_remove("DATABASE_URL")
            .env("GABLE_MASTER_KEY", MASTER_KEY)
            .output()
            .unwrap();
        assert!(out.status.success(), "{name}: {}", String::from_utf8_lossy(&out.stderr));
        let reset: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(reset["object"], "sandbox_reset");
        assert!(reset["rows_deleted"].as_u64().unwrap() > 100, "{name}: {reset}");
        assert_eq!(reset["demo"]["unit_ids"].as_array().map(Vec::len), Some(3), "{name}: {reset}");
        // A second reset deletes exactly the demo (live data was never the sandbox's).
        let again = json_out(&store, &["sandbox", "reset", "--tenant", &tid]);
        let demo_rows = again["rows_deleted"].as_u64().unwrap();
        assert!((10..100).contains(&demo_rows), "{name}: {again}");
        assert!(again["demo"].is_null());
        assert_eq!(json_out(&store, &["sandbox", "reset", "--tenant", &tid])["rows_deleted"], 0);
        let (ok, _, err) = gable(&store, &["sandbox", "reset", "--tenant", &uuid::Uuid::new_v4().to_string()]);
        assert!(!ok && err.contains("no tenant"), "{name}: {err}");
    }
}

/// A blocking GET with a bearer key; returns the status.
fn ureq_get(url: &str, key: &str) -> Result<u16, String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let r = reqwest::Client::new().get(url).bearer_auth(key).send().await.map_err(|e| format!("{e:?}"))?;
        Ok(r.status().as_u16())
    })
}

/// A blocking GET with a bearer key; returns the status and the `Request-Id` header.
fn get_with_id(url: &str, key: &str) -> Result<(u16, String), String> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().map_err(|e| e.to_string())?;
    rt.block_on(async {
        let r = reqwest::Client::new().get(url).bearer_auth(key).send().await.map_err(|e| format!("{e:?}"))?;
        let id = r.headers().get("request-id").and_then(|v| v.to_str().ok()).unwrap_or_default().to_string();
        Ok((r.status().as_u16(), id))
    })
}

/// Starts `gable serve` on free ports with these extra arguments and environment, and
/// returns the process, the sandbox key and the first-run lines it printed.
fn serve(store: &[String], args: &[&str], env: &[(&str, &str)]) -> (std::process::Child, String, Vec<String>) {
    let mut cmd = Command::new(BIN);
    cmd.args(store).arg("serve").args(args);
    for var in ["DATABASE_URL", "GABLE_LOG", "GABLE_LOG_FORMAT", "GABLE_CONFIG", "GABLE_ADDR", "GABLE_SANDBOX_ADDR", "GABLE_PUBLIC_URL"] {
        cmd.env_remove(var);
    }
    cmd.env("GABLE_MASTER_KEY", MASTER_KEY);
    let mut child = cmd.envs(env.iter().copied()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut printed = vec![];
    let deadline = Instant::now() + Duration::from_secs(60);
    let key = loop {
        let line = lines.next().expect("the first run prints a key").unwrap();
        if let Some(pos) = line.find("gbl_test_") {
            break line[pos..].split_whitespace().next().unwrap().to_string();
        }
        printed.push(line);
        assert!(Instant::now() < deadline, "no key printed");
    };
    std::thread::spawn(move || lines.for_each(drop));
    (child, key, printed)
}

fn printed_address(printed: &[String], label: &str) -> String {
    printed.iter().find_map(|l| l.trim().strip_prefix(label)).unwrap_or_else(|| panic!("no {label} in {printed:?}")).trim().to_string()
}

#[test]
fn serve_logs_one_access_line_per_request_and_no_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let store = vec!["--data-dir".to_string(), dir.path().display().to_string()];
    let (mut child, key, printed) =
        serve(&store, &["--addr", "127.0.0.1:0", "--sandbox-addr", "127.0.0.1:0"], &[("GABLE_LOG_FORMAT", "json")]);
    let stderr = child.stderr.take().unwrap();
    let log = std::thread::spawn(move || BufReader::new(stderr).lines().map_while(Result::ok).collect::<Vec<String>>());
    let sandbox = printed_address(&printed, "Sandbox API:");
    let id = uuid::Uuid::new_v4();
    let mut answered = None;
    for _ in 0..100 {
        if let Ok(r) = get_with_id(&format!("{sandbox}/properties/{id}?access_token=query-secret-123"), &key) {
            answered = Some(r);
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let (status, request_id) = answered.expect("the server answered");
    let (unmatched_status, unmatched_id) =
        get_with_id(&format!("{}/nowhere/path-secret-456?x=1", sandbox.trim_end_matches("/v1")), &key).unwrap();
    // Stopped as a service manager stops it: the log is written by a thread, and a SIGKILL
    // would lose what it had not written yet.
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let _ = child.wait();
    let lines = log.join().unwrap();
    let access: Vec<Value> = lines
        .iter()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["target"] == "gable::access" && v["level"] == "INFO")
        .collect();
    let line_of = |rid: &str| {
        let found: Vec<&Value> = access.iter().filter(|v| v["fields"]["request_id"] == rid).collect();
        assert_eq!(found.len(), 1, "one access line for request {rid}: {lines:#?}");
        found[0]["fields"].clone()
    };
    let f = line_of(&request_id);
    assert_eq!((f["method"].as_str(), f["path"].as_str()), (Some("GET"), Some("/v1/{resource}/{id}")), "{f}");
    assert_eq!(f["status"].as_u64(), Some(u64::from(status)), "{f}");
    assert!(f["latency_ms"].as_f64().is_some_and(|ms| ms >= 0.0), "{f}");
    let f = line_of(&unmatched_id);
    assert_eq!((f["path"].as_str(), f["status"].as_u64()), (Some("<unmatched>"), Some(u64::from(unmatched_status))), "{f}");
    // No secret of the request reaches the log: not the key, not the query, not the path as sent.
    let all = lines.join("\n");
    for secret in [key.as_str(), "query-secret-123", "access_token"] {
        assert!(!all.contains(secret), "the log holds {secret}: {all}");
    }
    for as_sent in [id.to_string(), "path-secret-456".to_string()] {
        assert!(!access.iter().any(|v| v.to_string().contains(&as_sent)), "an access line holds the path as sent: {access:?}");
    }
}

#[test]
fn settings_come_from_the_file_then_the_environment_then_flags() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("gable.toml");
    let data = dir.path().join("from-file");
    let settings = r#"
        addr = "127.0.0.1:0"
        sandbox_addr = "127.0.0.1:0"
        public_url = "https://file.example"
        sandbox_public_url = "https://sandbox.file.example"
    "#;
    std::fs::write(&file, format!("data_dir = {:?}\n{settings}", data.display().to_string())).unwrap();
    let config = file.display().to_string();
    // The file alone: its data directory and public addresses.
    let (mut child, _, printed) = serve(&[], &["--config", &config], &[]);
    let _ = child.kill();
    let _ = child.wait();
    assert!(data.join("gable.db").exists(), "the file's data_dir was not used");
    assert_eq!(printed_address(&printed, "Console:"), "https://file.example/");
    assert_eq!(printed_address(&printed, "Sandbox API:"), "https://sandbox.file.example/v1");
    // The environment over the file (GABLE_CONFIG names it), a flag over both.
    let data2 = dir.path().join("from-flag");
    let (mut child, _, printed) = serve(
        &["--data-dir".to_string(), data2.display().to_string()],
        &["--sandbox-public-url", "https://sandbox.flag.example"],
        &[
            ("GABLE_CONFIG", &config),
            ("GABLE_PUBLIC_URL", "https://env.example"),
            ("GABLE_SANDBOX_PUBLIC_URL", "https://sandbox.env.example"),
        ],
    );
    let _ = child.kill();
    let _ = child.wait();
    assert!(data2.join("gable.db").exists(), "the flag's data_dir was not used");
    assert_eq!(printed_address(&printed, "Console:"), "https://env.example/");
    assert_eq!(printed_address(&printed, "Sandbox API:"), "https://sandbox.flag.example/v1");
    // A file with an unknown key does not start, and says which key.
    std::fs::write(&file, "adress = \"127.0.0.1:0\"\n").unwrap();
    let (ok, _, err) = gable(&["--config".to_string(), config.clone()], &["migrate"]);
    assert!(!ok && err.contains("adress") && err.contains(&config), "{err}");
    let (ok, _, err) = gable(&["--config".to_string(), dir.path().join("missing.toml").display().to_string()], &["migrate"]);
    assert!(!ok && err.contains("missing.toml"), "{err}");
}

/// A reader that goes away (`gable tenant create … | head -c0`) ends the command quietly:
/// the write fails with a broken pipe, which is not the command's error (a `println!`
/// there used to panic with a backtrace).
#[test]
fn a_closed_stdout_is_no_panic() {
    for (name, store, _dir) in stores() {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let out = Command::new(BIN)
            .args(&store)
            .args(["tenant", "create", "--name", "Piped Homes"])
            .env_remove("DATABASE_URL")
            .env_remove("GABLE_DATA_DIR")
            .stdout(writer)
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{name}: exit {:?}: {err}", out.status);
        assert!(!err.contains("panicked"), "{name}: {err}");
    }
}
