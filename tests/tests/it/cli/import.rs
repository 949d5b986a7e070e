//! `gable import`: a file checked, its errors reported as CSV, then written with a summary
//! (docs/cli.md); and `gable import template`, a collection's CSV template from the
//! registry (the header a file needs, an example row), for every collection that can be
//! imported; any other is refused with the list of those that can.

use gable::domain::collections::COLLECTIONS;
use gable::domain::import::importable;
use gable_tests::cli::Cli;
use gable_tests::{both, TestApp};
use serde_json::{json, Value};

#[tokio::test]
async fn every_importable_collection_prints_its_template() {
    let cli = Cli::bare();
    for c in COLLECTIONS.iter().filter(|c| importable(c)) {
        let out = cli.run(&["import", "template", c.name]).await;
        assert!(out.success, "{}: {out:?}", c.name);
        let lines: Vec<&str> = out.stdout.lines().collect();
        assert_eq!(lines.len(), 2, "{}: a header and an example row: {}", c.name, out.stdout);
        assert!(lines[0].starts_with("external_id,"), "{}: {}", c.name, lines[0]);
        assert!(out.stderr.contains(&format!("The columns of {}", c.name)), "{out:?}");
    }
    let header = cli.run(&["import", "template", "units", "--no-example"]).await;
    assert_eq!(header.stdout.lines().count(), 1, "{header:?}");
    assert!(header.stdout.starts_with("external_id,property_id.external_id,number,"), "{header:?}");
    for not in ["events", "users", "nothing"] {
        let refused = cli.run(&["import", "template", not]).await;
        assert!(!refused.success && refused.stderr.contains("cannot be imported; these can: organizations,"), "{not}: {refused:?}");
    }
}

/// `gable import FILE`: checked, the errors written to a CSV report, nothing written while a
/// row has errors unless `--skip-invalid`; `--dry-run` writes nothing; a clean file is
/// written and summarised; importing it again creates nothing.
async fn a_file_is_imported_with_its_errors_reported(app: &TestApp) {
    let t = app.tenant("Import CLI").await;
    let key = &t.test_key;
    app.create(
        key,
        "properties",
        json!({ "name": "Ash Court", "kind": "residential", "external_id": "P-1",
            "address": { "line1": "1 Ash St", "city": "Leeds", "country": "GB" } }),
    )
    .await;
    let cli = Cli::new(&app.sandbox, key);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("units.csv");
    std::fs::write(&file, "external_id,property_id.external_id,number,bedrooms\nU-1,P-1,1A,2\nU-2,P-1,1B,two\nU-3,P-9,1C,1\n").unwrap();
    let path = file.to_str().unwrap();

    // Errors: reported, nothing written.
    let out = cli.run(&["import", path, "--collection", "units"]).await;
    assert!(!out.success, "{out:?}");
    assert!(out.stderr.contains("the sandbox (test mode)") && out.stderr.contains("Checked 3 rows: 1 valid, 2 with errors"), "{out:?}");
    assert!(out.stderr.contains("2 rows have errors") && out.stderr.contains("--skip-invalid"), "{out:?}");
    let report = std::fs::read_to_string(dir.path().join("units.errors.csv")).unwrap();
    let lines: Vec<&str> = report.lines().collect();
    assert_eq!(lines[0], "line,collection,external_id,field,code,message");
    assert!(lines[1].starts_with("3,units,U-2,bedrooms,invalid_value,"), "{report}");
    assert!(lines[2].starts_with("4,units,U-3,property_id,missing_reference,"), "{report}");
    assert_eq!(lines.len(), 3, "{report}");
    assert_eq!(app.count_rows("units").await, 0);

    // --dry-run: checked, nothing written, success.
    let dry = cli.run(&["import", path, "--collection", "units", "--dry-run", "--skip-invalid"]).await;
    assert!(dry.success && dry.stderr.contains("Nothing was written (--dry-run)"), "{dry:?}");
    assert_eq!(app.count_rows("units").await, 0);

    // --skip-invalid: the valid row written, the summary says so; JSON on standard output.
    let done = cli.run(&["import", path, "--collection", "units", "--skip-invalid", "--format", "json"]).await;
    assert!(done.success, "{done:?}");
    let import: Value = serde_json::from_str(done.stdout.trim()).expect("the import as JSON");
    assert_eq!((import["status"].as_str(), import["created"].as_u64(), import["skipped"].as_u64()), (Some("completed"), Some(1), Some(2)));
    assert!(done.stderr.contains("Imported: 1 created, 0 updated, 0 unchanged, 2 skipped"), "{done:?}");
    assert_eq!(app.count_rows("units").await, 1);

    // A clean NDJSON bundle, twice: the second creates nothing.
    let bundle = dir.path().join("portfolio.ndjson");
    let lines = [
        json!({ "collection": "properties", "external_id": "P-2", "name": "Birch House", "kind": "residential",
                "address": { "line1": "2 Birch St", "city": "York", "country": "GB" } }),
        json!({ "collection": "units", "external_id": "U-9", "property_id": { "external_id": "P-2" }, "number": "G1" }),
    ];
    std::fs::write(&bundle, lines.iter().map(|l| format!("{l}\n")).collect::<String>()).unwrap();
    let first = cli.run(&["import", bundle.to_str().unwrap()]).await;
    assert!(first.success && first.stderr.contains("Imported: 2 created"), "{first:?}");
    let again = cli.run(&["import", bundle.to_str().unwrap()]).await;
    assert!(again.success && again.stderr.contains("Imported: 0 created, 0 updated, 2 unchanged"), "{again:?}");

    // What the command refuses before anything is sent.
    let no_collection = cli.run(&["import", path]).await;
    assert!(!no_collection.success && no_collection.stderr.contains("--collection units"), "{no_collection:?}");
    let text = dir.path().join("units.txt");
    std::fs::write(&text, "x").unwrap();
    let wrong = cli.run(&["import", text.to_str().unwrap(), "--collection", "units"]).await;
    assert!(!wrong.success && wrong.stderr.contains(".csv"), "{wrong:?}");
}
both!(a_file_is_imported_with_its_errors_reported);
