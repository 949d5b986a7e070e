//! `gable trigger EVENT`: every event type of the catalogue fires in the sandbox through
//! the binary, by records it makes through the public API, and the event it prints is the
//! API's; `--set` changes the event's record; `--list` names every type; a live key, an
//! unknown type, a malformed `--set` and a key that may not write are refused with a
//! clear line and nothing written.

use gable::domain::events::EVENT_TYPES;
use gable_tests::cli::{Cli, Output};
use gable_tests::{both, TestApp};
use serde_json::Value;

/// The event id of a text run's last line: `fired TYPE: event ID (GET /v1/events/ID)`.
fn fired(out: &Output, kind: &str) -> String {
    let last = out.stdout.lines().last().unwrap_or_default();
    let rest = last.strip_prefix(&format!("fired {kind}: event ")).unwrap_or_else(|| panic!("{kind}: last line {last:?}; {out:#?}"));
    let (id, get) = rest.split_once(' ').unwrap_or_else(|| panic!("{kind}: {last:?}"));
    assert_eq!(get, format!("(GET /v1/events/{id})"));
    id.to_string()
}

fn json_of(out: &Output) -> Value {
    assert!(out.success, "{out:#?}");
    serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("--format json prints one JSON object ({e}): {out:#?}"))
}

fn first_said(out: &Output) -> &str {
    out.stderr.lines().next().unwrap_or_default()
}

/// Every record trigger could have written, and every event.
async fn written(app: &TestApp) -> i64 {
    let mut n = 0;
    for table in ["properties", "units", "listings", "leads", "leases", "payments", "guests", "documents", "events"] {
        n += app.count_rows(table).await;
    }
    n
}

async fn every_type_fires_through_the_binary(app: &TestApp) {
    let t = app.tenant("Trigger").await;
    let cli = Cli::new(&app.sandbox, &t.test_key);
    for kind in EVENT_TYPES {
        let out = cli.run(&["trigger", kind.name]).await;
        assert!(out.success, "{}: {out:#?}", kind.name);
        assert!(first_said(&out).starts_with(&format!("Triggering {} in the sandbox (test mode) at", kind.name)), "{out:#?}");
        let id = fired(&out, kind.name);
        let shown = app.call(&t.test_key, "GET", &format!("/v1/events/{id}"), None).await;
        assert_eq!(shown.status, 200, "{}: {}", kind.name, shown.text);
        let event = &shown.body["data"];
        assert_eq!(event["type"], kind.name);
        assert_eq!(event["livemode"], false);
        // About a record trigger made and said it made.
        let object = event["data"]["object"]["id"].as_str().expect("the event's record");
        let made: Vec<&str> = out.stdout.lines().filter(|l| !l.starts_with("fired ")).collect();
        assert!(made.iter().any(|l| l.starts_with("created ") && l.ends_with(object)), "{}: {made:?} names {object}", kind.name);
        assert!(made.iter().all(|l| l.split(' ').count() >= 3), "{made:?}");
    }

    // `--format json`: one object, the event and what was made, in order.
    let signed = json_of(&cli.run(&["trigger", "lease.signed", "--format", "json"]).await);
    assert_eq!(signed["event"]["type"], "lease.signed");
    let steps: Vec<(String, String)> = signed["made"]
        .as_array()
        .expect("made")
        .iter()
        .map(|m| (m["action"].as_str().unwrap_or_default().to_string(), m["object"].as_str().unwrap_or_default().to_string()))
        .collect();
    let expected = [
        ("created", "property"),
        ("created", "unit"),
        ("created", "lease"),
        ("created", "signature"),
        ("sent", "lease"),
        ("signed", "signature"),
    ];
    assert_eq!(steps, expected.map(|(a, o)| (a.to_string(), o.to_string())));
    assert_eq!(signed["event"]["data"]["object"]["id"], signed["made"][2]["id"], "the lease made");
    assert_eq!(signed["event"]["data"]["object"]["status"], "signed");
    // Named so that a developer sees in their sandbox what trigger made.
    let key = t.test_key.as_str();
    let record = |i: usize| {
        let (object, id) = (signed["made"][i]["object"].as_str().unwrap_or_default(), signed["made"][i]["id"].as_str().unwrap_or_default());
        let path = match object {
            "property" => format!("/v1/properties/{id}"),
            other => format!("/v1/{other}s/{id}"),
        };
        async move { app.call(key, "GET", &path, None).await.body["data"].clone() }
    };
    assert_eq!(record(0).await["name"], "Trigger Court");
    assert_eq!(record(1).await["number"], "T1");
    let signer = record(3).await["signer_email"].as_str().unwrap_or_default().to_string();
    assert!(signer.starts_with("trigger+") && signer.ends_with("@example.com"), "{signer}");

    // A scheduled one: the sandbox clock moved just far enough (to the start of a day, at most one ahead).
    let clock = app.call(&t.test_key, "GET", "/v1/sandbox/clock", None).await.body["data"]["now"].clone();
    let before = chrono::DateTime::parse_from_rfc3339(clock.as_str().expect("now")).expect("a time");
    let due = json_of(&cli.run(&["trigger", "rent.due", "--format", "json"]).await);
    let advanced = due["made"].as_array().expect("made").last().expect("a step").clone();
    assert_eq!((advanced["object"].as_str(), advanced["action"].as_str()), (Some("sandbox_clock"), Some("advanced")));
    let to = chrono::DateTime::parse_from_rfc3339(advanced["to"].as_str().expect("to")).expect("a time");
    assert!(to > before && to - before <= chrono::Duration::days(1), "{before} → {to}");
    assert_eq!(due["event"]["data"]["object"]["id"], due["made"][3]["id"], "the charge made: {due:#}");
    assert_eq!(due["event"]["data"]["object"]["kind"], "rent");
}
both!(every_type_fires_through_the_binary);

async fn set_changes_the_events_record(app: &TestApp) {
    let t = app.tenant("Trigger set").await;
    let cli = Cli::new(&app.sandbox, &t.test_key);
    let out = cli
        .run(&[
            "trigger",
            "payment.succeeded",
            "--set",
            "amount=12.5",
            "--set",
            "metadata.order=42",
            "--set",
            "description=Rent, May",
            "--format",
            "json",
        ])
        .await;
    let payment = &json_of(&out)["event"]["data"]["object"];
    assert_eq!(payment["amount"].to_string(), "12.5", "{payment:#}");
    assert_eq!(payment["metadata"]["order"], "42", "a nested field, text where it holds text: {payment:#}");
    assert_eq!(payment["metadata"]["made_by"], "gable trigger", "the rest of the object kept");
    assert_eq!(payment["description"], "Rent, May");
    // Fields of another event's record, a string and an amount.
    let listing =
        json_of(&cli.run(&["trigger", "listing.published", "--set", "title=Loft 7", "--set", "rent=999", "--format", "json"]).await);
    assert_eq!(listing["event"]["data"]["object"]["title"], "Loft 7");
    assert_eq!(listing["event"]["data"]["object"]["rent"].to_string(), "999");

    // A value the API refuses: its error is the command's.
    let refused = cli.run(&["trigger", "payment.failed", "--set", "amount=-5"]).await;
    assert!(!refused.success, "{refused:#?}");
    let said = refused.stderr.lines().last().unwrap_or_default();
    assert!(said.starts_with("error: creating the payment: 400 validation_failed:") && said.contains("(param `amount`)"), "{said}");

    // A malformed `--set` is refused before anything is written.
    let before = written(app).await;
    for bad in [&["trigger", "lead.created", "--set", "name"][..], &["trigger", "workorder.created", "--set", "=x"][..]] {
        let out = cli.run(bad).await;
        assert!(!out.success, "{out:#?}");
        assert!(out.stderr.contains("--set `"), "{out:#?}");
        assert!(!out.stderr.contains("Triggering"), "refused before it starts: {out:#?}");
    }
    // One that cannot apply to the body (a nested field of a number) too.
    let out = cli.run(&["trigger", "payment.succeeded", "--set", "amount.cents=5"]).await;
    assert!(!out.success && out.stderr.contains("`amount` is not an object"), "{out:#?}");
    assert_eq!(written(app).await, before, "nothing was written");
}
both!(set_changes_the_events_record);

async fn refusals_are_clear_and_write_nothing(app: &TestApp) {
    let t = app.tenant("Trigger refusals").await;
    let before = written(app).await;

    // A live key, on either address: the sandbox only.
    for base in [&app.live, &app.sandbox] {
        let out = Cli::new(base, &t.live_key).run(&["trigger", "payment.succeeded"]).await;
        assert!(!out.success, "{out:#?}");
        assert!(out.stderr.contains("sandbox only") && out.stderr.contains("live key"), "{out:#?}");
        assert!(out.stdout.is_empty());
    }

    // An unknown type, with the closest names.
    let cli = Cli::new(&app.sandbox, &t.test_key);
    let out = cli.run(&["trigger", "payment.succeed"]).await;
    assert!(!out.success);
    assert_eq!(
        out.stderr.trim_end(),
        "error: `payment.succeed` is not an event type. Did you mean `payment.succeeded`? `gable trigger --list` names them all"
    );
    let out = cli.run(&["trigger", "invoice.paid"]).await;
    assert!(
        !out.success && out.stderr.contains("`invoice.paid` is not an event type") && out.stderr.contains("gable trigger --list"),
        "{out:#?}"
    );
    assert_eq!(written(app).await, before, "nothing was written");

    // A key that may read but not write: the API's refusal, a non-zero exit.
    let reader = app.key(t.id, false, &["*:read"], None).await;
    let out = Cli::new(&app.sandbox, &reader).run(&["trigger", "listing.published"]).await;
    assert!(!out.success, "{out:#?}");
    let said = out.stderr.lines().last().unwrap_or_default();
    assert!(said.starts_with("error: creating the property: 403 insufficient_scope:"), "{said}");
    // A key that may write payments but not move the clock stops at the clock.
    let payer = app.key(t.id, false, &["properties:write", "units:write", "leases:write", "charges:write", "*:read"], None).await;
    let out = Cli::new(&app.sandbox, &payer).run(&["trigger", "rent.due"]).await;
    assert!(!out.success, "{out:#?}");
    let said = out.stderr.lines().last().unwrap_or_default();
    assert!(said.starts_with("error: advancing the sandbox clock to ") && said.contains("403 insufficient_scope"), "{said}");
}
both!(refusals_are_clear_and_write_nothing);

#[tokio::test]
async fn the_list_names_every_type() {
    let out = Cli::bare().run(&["trigger", "--list"]).await;
    assert!(out.success, "{out:#?}");
    for kind in EVENT_TYPES {
        let line = out.stdout.lines().find(|l| l.starts_with(&format!("{} ", kind.name)));
        assert!(line.is_some_and(|l| l.ends_with(kind.doc)), "{}: {}", kind.name, out.stdout);
    }
    assert_eq!(out.stdout.matches("makes: ").count(), EVENT_TYPES.len(), "{}", out.stdout);
    assert!(out.stdout.contains("makes: property, unit, listing, then publish the listing"), "{}", out.stdout);
}
