//! Bulk import in the console (`Imports`) on both databases: a CSV with its own headers,
//! mapped to fields (chosen or matched by name), checked with its errors by line,
//! committed once however often the form is sent, and written; and from the attacker's
//! side, a viewer, a role that may not write the file's records, a demoted user and
//! another tenant reach nothing of it.

use gable::accounts::service::{ConsoleError, ImportUpload, ImportView, Imports, Me, NewUser, Sessions, Team};
use gable::accounts::AccountService;
use gable_tests::{both, TestApp};
use serde_json::json;

use super::{failure, service, sign_up, tenant, PASSWORD};

const UNITS: &str = "Unit No,Property,Beds,Notes\n1A,P-1,2,corner\n1B,P-1,two,\n1C,P-2,1,\n";

fn upload(collection: &str, columns: Vec<(usize, Option<&str>)>) -> ImportUpload {
    ImportUpload {
        collection: Some(collection.into()),
        file_name: format!("{collection}.csv"),
        ndjson: false,
        columns: columns.into_iter().map(|(at, c)| (at, c.map(String::from))).collect(),
    }
}

fn file(text: &str) -> Box<dyn std::io::Read + Send> {
    Box::new(std::io::Cursor::new(text.as_bytes().to_vec()))
}

/// Runs the workers until the import has ended (the test's service wakes none of them).
async fn finished(app: &TestApp, svc: &AccountService, me: &Me, id: &str) -> ImportView {
    for _ in 0..50 {
        let view = svc.import(me, id, 0).await.expect("the import");
        if !view.summary.working() {
            return view;
        }
        app.run_jobs().await;
    }
    panic!("the import did not end");
}

/// The properties the units refer to, by external id.
async fn properties(app: &TestApp, key: &str) {
    for (ext, name) in [("P-1", "Maple Court"), ("P-2", "Oak House")] {
        let r = app.call(key, "POST", "/v1/properties", Some(json!({ "name": name, "kind": "residential", "external_id": ext, "address": { "line1": "1 Main St", "city": "Portland", "postal_code": "97201", "country": "US" } }))).await;
        assert_eq!(r.status, 201, "{}", r.text);
    }
}

async fn a_file_is_mapped_checked_and_committed_once(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let me = sign_up(&svc, "Maple", "olivia@maple.example").await.me;
    let key = app.key(tenant(&me), false, &["*"], None).await;
    properties(app, &key).await;

    // What the form offers: every importable collection, the columns, the template.
    let targets = svc.imports(&me).await.expect("the imports page").targets;
    assert!(targets.iter().any(|t| t.name == "units") && targets.iter().any(|t| t.name == "leases"), "{targets:?}");
    assert!(!targets.iter().any(|t| t.name == "events" || t.name == "imports"));
    let units = svc.target(&me, "units").expect("units");
    assert!(units.template.starts_with("external_id,property_id.external_id,number"), "{}", units.template);
    assert!(units.columns.iter().any(|c| c.name == "number" && c.required));
    assert!(units.columns.iter().any(|c| c.name == "property_id.external_id" && !c.required));
    let headers: Vec<String> = ["Unit No", "Property", "Beds", "Notes"].map(String::from).to_vec();
    assert_eq!(
        svc.match_columns(&me, "units", &headers).unwrap(),
        [None, Some("property_id.external_id".to_string()), None, None],
        "what the names say is matched; the rest is for the user to choose"
    );

    // Unmatched columns the user did not map: refused whole, naming the column.
    let refused = failure(svc.upload(&me, upload("units", vec![]), file(UNITS)).await);
    assert!(matches!(&refused, ConsoleError::Invalid { field, message } if field == "file" && message.contains("Unit No")), "{refused:?}");
    assert!(svc.imports(&me).await.unwrap().imports.is_empty(), "a refused file leaves nothing");

    // Mapped: Unit No → number, Beds → bedrooms, Notes → metadata; Property matched by name.
    let mapping = vec![(0, Some("number")), (2, Some("bedrooms")), (3, Some("metadata.notes"))];
    let id = svc.upload(&me, upload("units", mapping), file(UNITS)).await.expect("the upload");
    let view = svc.import(&me, &id, 0).await.unwrap();
    let s = &view.summary;
    assert_eq!((s.status.as_str(), s.total_rows, s.valid_rows, s.invalid_rows), ("validated", 3, 2, 1), "{s:?}");
    assert_eq!(s.what, "Units");
    assert!(view.can_commit);
    assert_eq!(view.errors.len(), 1, "{:?}", view.errors);
    assert_eq!((view.errors[0].line, view.errors[0].field.as_deref()), (3, Some("bedrooms")));
    assert_eq!(view.errors[0].code, "invalid_value");
    let units_now = app.call(&key, "GET", "/v1/units", None).await;
    assert_eq!(units_now.body["data"].as_array().unwrap().len(), 0, "checking writes nothing");

    // The rows with errors are not imported unless the user says so.
    let once = view.once.clone();
    let e = failure(svc.commit(&me, &id, false, &once).await);
    assert!(matches!(&e, ConsoleError::Invalid { field, .. } if field == "skip_invalid"), "{e:?}");
    svc.commit(&me, &id, true, &once).await.expect("the commit");
    // The same form again is answered from its key: no second commit (which the import,
    // importing now, would refuse), no error.
    svc.commit(&me, &id, true, &once).await.expect("the same form sent twice");
    let done = finished(app, &svc, &me, &id).await;
    let s = &done.summary;
    assert_eq!((s.status.as_str(), s.created, s.skipped, s.processed_rows), ("completed", 2, 1, 3), "{s:?}");
    assert_eq!(s.collections.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["units"]);
    let listed = app.call(&key, "GET", "/v1/units?filter[number]=1A", None).await;
    let unit = &listed.body["data"][0];
    assert_eq!(unit["bedrooms"], 2);
    assert_eq!(unit["metadata"]["notes"], "corner");
    // The list shows it; its page follows the import to its end.
    let list = svc.imports(&me).await.unwrap().imports;
    assert_eq!(list.len(), 1);
    assert_eq!((list[0].id.as_str(), list[0].status.as_str()), (id.as_str(), "completed"));
    // Cancel after the end is refused in words.
    assert!(matches!(failure(svc.cancel(&me, &id, "cancel-after-end").await), ConsoleError::Conflict(_)));
}

async fn a_file_can_be_cancelled_before_it_is_written(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let me = sign_up(&svc, "Birch", "bea@birch.example").await.me;
    let text = "Name,Kind,Street,City,ZIP,Country\nBirch Court,residential,1 Birch St,Portland,97201,US\n";
    // Without a mapping, every column is matched by its name (a form sent without WebAssembly).
    let id = svc.upload(&me, upload("properties", vec![]), file(text)).await.expect("the upload");
    let view = svc.import(&me, &id, 0).await.unwrap();
    assert_eq!((view.summary.valid_rows, view.summary.invalid_rows), (1, 0), "{:?}", view.errors);
    svc.cancel(&me, &id, &view.once).await.expect("the cancel");
    assert_eq!(svc.import(&me, &id, 0).await.unwrap().summary.status, "cancelled");
    let key = app.key(tenant(&me), false, &["*"], None).await;
    let listed = app.call(&key, "GET", "/v1/properties", None).await;
    assert_eq!(listed.body["data"].as_array().unwrap().len(), 0);
}

/// A user of `owner`'s tenant with a role of these permissions, signed in.
async fn staff(app: &TestApp, svc: &AccountService, owner: &Me, email: &str, permissions: &[&str]) -> (Me, String, String) {
    let live = app.key(tenant(owner), true, &["*"], None).await;
    let role = app.call_on(true, &live, "POST", "/v1/roles", Some(json!({ "name": email, "permissions": permissions }))).await;
    assert_eq!(role.status, 201, "{}", role.text);
    let role_id = role.body["data"]["id"].as_str().unwrap().to_string();
    let new = NewUser { email: email.into(), name: "Sam Staff".into(), role_id: role_id.clone(), password: PASSWORD.into() };
    svc.create_user(owner, new).await.expect("a staff user");
    let s = svc.sign_in(email, PASSWORD, &format!("10.8.{}.1", email.len()), None).await.expect("sign-in");
    (s.me, s.token, role_id)
}

fn forbidden<T: std::fmt::Debug>(what: &str, r: Result<T, ConsoleError>) {
    match r {
        Err(ConsoleError::Forbidden(why)) => assert!(why.contains("permission"), "{what}: {why}"),
        other => panic!("{what}: expected Forbidden, got {other:?}"),
    }
}

async fn weaker_roles_demoted_users_and_other_tenants_reach_nothing(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let owner = sign_up(&svc, "Cedar", "cora@cedar.example").await.me;
    let key = app.key(tenant(&owner), false, &["*"], None).await;
    properties(app, &key).await;
    let text = "number,property_id.external_id\n1A,P-1\n";
    let id = svc.upload(&owner, upload("units", vec![]), file(text)).await.expect("the owner's upload");

    // A viewer (`*:read`) sees imports but may not make, commit or cancel one.
    let (viewer, _, _) = staff(app, &svc, &owner, "val@cedar.example", &["*:read"]).await;
    let page = svc.imports(&viewer).await.expect("a viewer lists imports");
    assert!(page.targets.is_empty(), "nothing to import into: {:?}", page.targets);
    forbidden("viewer: target", svc.target(&viewer, "units"));
    forbidden("viewer: upload", svc.upload(&viewer, upload("units", vec![]), file(text)).await);
    let seen = svc.import(&viewer, &id, 0).await.expect("a viewer reads the import");
    assert!(!seen.can_commit);
    forbidden("viewer: commit", svc.commit(&viewer, &id, false, "viewer-commit-1").await);
    forbidden("viewer: cancel", svc.cancel(&viewer, &id, "viewer-cancel-1").await);

    // A role that writes imports and properties, not units: units are not its to import.
    let (clerk, _, _) = staff(app, &svc, &owner, "cal@cedar.example", &["imports:write", "properties:write"]).await;
    let targets = svc.imports(&clerk).await.unwrap().targets;
    assert_eq!(targets.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(), ["properties"]);
    forbidden("clerk: units target", svc.target(&clerk, "units"));
    forbidden("clerk: units upload", svc.upload(&clerk, upload("units", vec![]), file(text)).await);
    forbidden("clerk: commit of units", svc.commit(&clerk, &id, false, "clerk-commit-1").await);
    assert!(!svc.import(&clerk, &id, 0).await.unwrap().can_commit);

    // A user demoted while signed in is refused at the next call.
    let (dana, token, role) = staff(app, &svc, &owner, "dana@cedar.example", &["*"]).await;
    assert!(svc.target(&dana, "units").is_ok());
    let live = app.key(tenant(&owner), true, &["*"], None).await;
    let r = app.call_on(true, &live, "PATCH", &format!("/v1/roles/{role}"), Some(json!({ "permissions": ["*:read"] }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    // The session's permissions are the role's, read again at every call.
    let dana = svc.session(&token).await.unwrap().expect("still signed in");
    forbidden("demoted: commit", svc.commit(&dana, &id, false, "dana-commit-1").await);

    // Another tenant: the import is not found, whatever is asked of it.
    let other = sign_up(&svc, "Elm", "eli@elm.example").await.me;
    for r in [
        svc.import(&other, &id, 0).await.map(|_| ()),
        svc.commit(&other, &id, false, "elm-commit-1").await,
        svc.cancel(&other, &id, "elm-cancel-1").await,
    ] {
        assert!(matches!(r, Err(ConsoleError::NotFound(_))), "{r:?}");
    }
    assert!(svc.imports(&other).await.unwrap().imports.is_empty());

    // None of it changed the owner's import.
    let view = svc.import(&owner, &id, 0).await.unwrap();
    assert_eq!(view.summary.status, "validated");
    assert_eq!(app.call(&key, "GET", "/v1/units", None).await.body["data"].as_array().unwrap().len(), 0);
}

both!(a_file_is_mapped_checked_and_committed_once);
both!(a_file_can_be_cancelled_before_it_is_written);
both!(weaker_roles_demoted_users_and_other_tenants_reach_nothing);
