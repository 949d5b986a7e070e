//! `gable import template`: a collection's CSV template from the registry, printed as CSV
//! (the header a file needs, an example row), for every collection that can be imported;
//! any other is refused with the list of those that can.

use gable::domain::collections::COLLECTIONS;
use gable::domain::import::importable;
use gable_tests::cli::Cli;

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
