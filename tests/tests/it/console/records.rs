//! The portfolio in the console (`Records`) on both databases: every collection of the
//! areas lists and reads; staff create, edit and act through the API's operations (the
//! same validation, events and ledger), once per form however often it is sent; and from
//! the attacker's side, a viewer, a narrower role, a demoted user and another tenant reach
//! nothing they must not.

use gable::accounts::records::{AREAS, ELSEWHERE};
use gable::accounts::service::{ConsoleError, Me, NewUser, RecordForm, Records, Sandbox, Sessions, Shown, Team};
use gable_tests::{both, world, TestApp};
use serde_json::json;
use uuid::Uuid;

use super::{failure, service, sign_up, tenant, PASSWORD};

fn form(values: &[(&str, &str)]) -> RecordForm {
    RecordForm { values: values.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(), once: Uuid::new_v4().to_string() }
}

fn text(s: &Shown) -> String {
    match s {
        Shown::Text(t) | Shown::Badge(t) | Shown::Money(t) | Shown::Code(t) => t.clone(),
        Shown::Link { text, .. } => text.clone(),
        Shown::Links(l) => l.iter().map(|(t, _)| t.clone()).collect::<Vec<_>>().join(", "),
        Shown::Empty => String::new(),
    }
}

fn field<'a>(view: &'a gable::accounts::service::RecordView, name: &str) -> &'a Shown {
    &view.fields.iter().find(|f| f.name == name).unwrap_or_else(|| panic!("no field {name}")).shown
}

/// How many records of `collection` the sandbox holds, as the API counts them.
async fn count(app: &TestApp, key: &str, collection: &str) -> usize {
    let r = app.call(key, "GET", &format!("/v1/{collection}?limit=100"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    r.body["data"].as_array().unwrap().len()
}

/// A staff user of `owner`'s tenant with a role of these permissions, signed in.
async fn staff(app: &TestApp, svc: &gable::accounts::AccountService, owner: &Me, email: &str, permissions: &[&str]) -> (Me, String) {
    let live = app.key(tenant(owner), true, &["*"], None).await;
    let role = app.call_on(true, &live, "POST", "/v1/roles", Some(json!({ "name": email, "permissions": permissions }))).await;
    assert_eq!(role.status, 201, "{}", role.text);
    let new = NewUser {
        email: email.into(),
        name: "Sam Staff".into(),
        role_id: role.body["data"]["id"].as_str().unwrap().into(),
        password: PASSWORD.into(),
    };
    svc.create_user(owner, new).await.expect("a staff user");
    let s = svc.sign_in(email, PASSWORD, &format!("10.9.{}.1", email.len()), None).await.expect("sign-in");
    (s.me, s.token)
}

async fn every_collection_lists_and_reads(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let me = sign_up(&svc, "Maple", "olivia@maple.example").await.me;
    let key = app.key(tenant(&me), false, &["*"], None).await;
    let w = world::build(app, tenant(&me), &key).await;

    let areas = svc.areas(&me);
    let names: Vec<&str> = areas.iter().map(|a| a.name.as_str()).collect();
    assert_eq!(names, ["Portfolio", "Leasing", "Stays", "Money", "Maintenance", "Records", "Developers"]);
    let listed: usize = areas.iter().map(|a| a.collections.len()).sum();
    assert_eq!(listed + ELSEWHERE.len(), gable::domain::collections::COLLECTIONS.len());

    for (_, collections) in AREAS {
        for c in *collections {
            let list = svc.list_records(&me, c, "").await.unwrap_or_else(|e| panic!("{c}: {e:?}"));
            assert_eq!(list.problem, None, "{c}");
            let id = w.id(c);
            let row = list.rows.iter().find(|r| r.id == id).unwrap_or_else(|| panic!("{c}: the world's record is listed"));
            assert_eq!(row.href, format!("/console/{c}/{id}"));
            assert_eq!(row.cells.len(), list.columns.len(), "{c}");
            let view = svc.record(&me, c, id).await.unwrap_or_else(|e| panic!("{c}: {e:?}"));
            assert!(!view.title.is_empty() && view.id == id, "{c}");
            assert!(view.fields.iter().any(|f| f.name == "created_at"), "{c}");
        }
    }
    // For people: references named by their record, amounts with their currency, dates in words.
    let unit = svc.record(&me, "units", w.id("units")).await.unwrap();
    assert_eq!(unit.title, "1A");
    assert_eq!(
        field(&unit, "property_id"),
        &Shown::Link { text: "Maple Court".into(), href: format!("/console/properties/{}", w.id("properties")) }
    );
    assert_eq!(field(&unit, "market_rent"), &Shown::Money("1,450.00 USD".into()));
    let lease = svc.record(&me, "leases", w.id("leases")).await.unwrap();
    assert_eq!(text(field(&lease, "start_date")), "1 Jan 2027");
    assert_eq!(field(&lease, "status"), &Shown::Badge("draft".into()));
    assert_eq!(lease.actions.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["send", "cancel"]);
    assert!(lease.actions.iter().any(|a| a.name == "cancel" && a.destructive));
    // Related both ways: the unit's leases and work orders; the lease's charges and tenancies.
    let related = |v: &gable::accounts::service::RecordView, c: &str| {
        v.related.iter().find(|r| r.collection == c).unwrap_or_else(|| panic!("{c} related to {}", v.info.name)).rows.len()
    };
    assert_eq!(
        (related(&unit, "leases"), related(&unit, "workorders"), related(&unit, "inspections"), related(&unit, "assets")),
        (1, 1, 1, 1)
    );
    assert_eq!((related(&lease, "charges"), related(&lease, "tenancies"), related(&lease, "signatures")), (1, 1, 1));
    let property = svc.record(&me, "properties", w.id("properties")).await.unwrap();
    assert_eq!((related(&property, "buildings"), related(&property, "units")), (1, 1));
    // Money records show their ledger lines: the payment's posting.
    let payment = svc.record(&me, "payments", w.id("payments")).await.unwrap();
    assert!(payment.ledger.len() >= 2, "{:?}", payment.ledger);
    assert!(payment.ledger.iter().any(|l| l.debit == "1,000.00 USD" || l.credit == "1,000.00 USD"), "{:?}", payment.ledger);
    let invoice = svc.record(&me, "invoices", w.id("invoices")).await.unwrap();
    assert!(invoice.ledger.len() >= payment.ledger.len() + 2, "the invoice's charges and payments: {:?}", invoice.ledger);
    // The collections with pages of their own are not reached here.
    for c in ELSEWHERE {
        assert!(matches!(failure(svc.list_records(&me, c, "").await), ConsoleError::NotFound(_)), "{c}");
    }
}
both!(every_collection_lists_and_reads);

async fn lists_take_the_apis_query(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let me = sign_up(&svc, "Maple", "olivia@maple.example").await.me;
    let key = app.key(tenant(&me), false, &["*"], None).await;
    let p = app.property(&key).await;
    for (n, beds) in [("1A", 1), ("1B", 2), ("2A", 3), ("2B", 2), ("PH", 4)] {
        app.create(&key, "units", json!({ "property_id": p["id"], "number": n, "bedrooms": beds })).await;
    }
    // Filters, an operator, the quick search, a sort and chosen columns: all in the address.
    let list =
        svc.list_records(&me, "units", "add_field=bedrooms&add_op=gte&add_value=2&sort=number&columns=number,bedrooms").await.unwrap();
    assert_eq!(list.rows.iter().map(|r| r.title.as_str()).collect::<Vec<_>>(), ["1B", "2A", "2B", "PH"]);
    assert_eq!(list.columns, ["number", "bedrooms"]);
    assert_eq!(list.sort, "number");
    assert_eq!(list.chips.len(), 1);
    assert_eq!(list.chips[0].text, "Bedrooms ≥ 2");
    assert_eq!(list.chips[0].remove_href, "/console/units?columns=number%2Cbedrooms&sort=number");
    let searched = svc.list_records(&me, "units", "q=b&sort=-number").await.unwrap();
    assert_eq!(searched.rows.iter().map(|r| r.title.as_str()).collect::<Vec<_>>(), ["2B", "1B"], "contains, any case");
    assert_eq!(searched.chips[0].param, "filter[number][contains]");
    // Cursor paging: the next page's address carries the query and the cursor.
    let first = svc.list_records(&me, "units", "limit=2&sort=number").await.unwrap();
    let next = first.next_href.clone().expect("a next page");
    let query = next.split_once('?').unwrap().1;
    let second = svc.list_records(&me, "units", query).await.unwrap();
    assert_eq!(second.rows.iter().map(|r| r.title.as_str()).collect::<Vec<_>>(), ["2A", "2B"]);
    assert_eq!(second.first_href.as_deref(), Some("/console/units?limit=2&sort=number"));
    // A query the API refuses is said, in its words, and lists nothing; nothing breaks.
    for bad in ["filter[nope]=1", "filter[bedrooms][gte]=many", "sort=floor", "cursor=forged", "filter[status][contains]=x"] {
        let list = svc.list_records(&me, "units", bad).await.unwrap_or_else(|e| panic!("{bad}: {e:?}"));
        assert!(list.problem.is_some() && list.rows.is_empty(), "{bad}: {list:?}");
    }
}
both!(lists_take_the_apis_query);

async fn staff_run_a_lease_from_draft_to_tenancy(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let me = sign_up(&svc, "Maple", "olivia@maple.example").await.me;
    let key = app.key(tenant(&me), false, &["*"], None).await;
    let address = r#"{"line1": "1 Oak St", "city": "Portland", "country": "US"}"#;
    let property =
        svc.create_record(&me, "properties", form(&[("name", "Oak Court"), ("kind", "residential"), ("address", address)])).await.unwrap();
    let unit = svc.create_record(&me, "units", form(&[("property_id", &property), ("number", "4B"), ("bedrooms", "2")])).await.unwrap();

    // The API's validation, named by field; nothing is written.
    let bad = form(&[("unit_id", &unit), ("start_date", "2027-01-01"), ("rent", "12.345"), ("currency", "USD")]);
    match failure(svc.create_record(&me, "leases", bad).await) {
        ConsoleError::Invalid { field, message } => assert_eq!((field.as_str(), message.contains("decimals")), ("rent", true), "{message}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(failure(svc.create_record(&me, "leases", form(&[("unit_id", &unit)])).await), ConsoleError::Invalid { .. }));
    assert_eq!(count(app, &key, "leases").await, 0);

    // A form sent twice writes once.
    let lease_form = form(&[("unit_id", &unit), ("start_date", "2027-01-01"), ("rent", "1,450.00"), ("currency", "USD")]);
    let lease = svc.create_record(&me, "leases", lease_form.clone()).await.unwrap();
    assert_eq!(svc.create_record(&me, "leases", lease_form.clone()).await.unwrap(), lease);
    assert_eq!(count(app, &key, "leases").await, 1);
    // The same form with other values is refused rather than run.
    let mut changed = lease_form.clone();
    changed.values[1].1 = "2027-02-01".into();
    assert!(matches!(failure(svc.create_record(&me, "leases", changed).await), ConsoleError::Conflict(_)));

    // Edits send what changed; actions follow the state machine.
    svc.update_record(&me, "leases", &lease, form(&[("rent_due_day", "5"), ("deposit", "")])).await.unwrap();
    let view = svc.record(&me, "leases", &lease).await.unwrap();
    assert_eq!(text(field(&view, "rent_due_day")), "5");
    assert!(matches!(failure(svc.act_on_record(&me, "leases", &lease, "activate", form(&[])).await), ConsoleError::Conflict(_)));
    svc.act_on_record(&me, "leases", &lease, "send", form(&[])).await.unwrap();
    let signature = svc
        .create_record(
            &me,
            "signatures",
            form(&[("lease_id", &lease), ("signer_name", "Lee Resident"), ("signer_email", "lee@example.com")]),
        )
        .await
        .unwrap();
    let sign = form(&[]);
    svc.act_on_record(&me, "signatures", &signature, "sign", sign.clone()).await.unwrap();
    svc.act_on_record(&me, "signatures", &signature, "sign", sign).await.expect("a second submit of the same form answers as the first");
    let view = svc.record(&me, "leases", &lease).await.unwrap();
    assert_eq!(view.status.as_deref(), Some("signed"), "the last signature signs the lease");
    svc.act_on_record(&me, "leases", &lease, "activate", form(&[])).await.unwrap();
    let view = svc.record(&me, "leases", &lease).await.unwrap();
    let tenancies = view.related.iter().find(|r| r.collection == "tenancies").unwrap();
    assert_eq!(tenancies.rows.len(), 1);
    assert_eq!(tenancies.rows[0].cells.first(), Some(&Shown::Badge("current".into())), "the tenancy started");
    // The history: the events the writes emitted, the same as the API's.
    let types: Vec<&str> = view.history.iter().map(|h| h.event_type.as_str()).collect();
    assert!(types.contains(&"lease.sent") && types.contains(&"lease.signed"), "{types:?}");
    let events = app.call(&key, "GET", &format!("/v1/events?filter[related_object_id]={lease}"), None).await;
    assert_eq!(events.body["data"].as_array().unwrap().len(), view.history.len());
    // Who did what, in the console: every write once, the double submits not twice.
    let acts: Vec<String> = view.activity.iter().map(|a| format!("{}: {}", a.who, a.what)).collect();
    assert_eq!(
        acts,
        [
            "Olivia Owner: ran “activate”",
            "Olivia Owner: ran “send”",
            "Olivia Owner: changed rent due day",
            "Olivia Owner: created this lease"
        ]
    );

    // Money: an invoice, a payment against it, and the ledger it posts.
    let charge = svc
        .create_record(
            &me,
            "charges",
            form(&[("lease_id", &lease), ("kind", "rent"), ("amount", "1450"), ("currency", "USD"), ("due_date", "2027-01-01")]),
        )
        .await
        .unwrap();
    let invoice = svc
        .create_record(
            &me,
            "invoices",
            form(&[("lease_id", &lease), ("charge_ids", &charge), ("amount_due", "1450"), ("currency", "USD"), ("due_date", "2027-01-01")]),
        )
        .await
        .unwrap();
    svc.act_on_record(&me, "invoices", &invoice, "open", form(&[])).await.unwrap();
    let payment = svc
        .create_record(
            &me,
            "payments",
            form(&[("invoice_id", &invoice), ("amount", "1450"), ("currency", "USD"), ("scenario", "succeeded")]),
        )
        .await
        .unwrap();
    let view = svc.record(&me, "invoices", &invoice).await.unwrap();
    assert_eq!(view.status.as_deref(), Some("paid"));
    let paid = svc.record(&me, "payments", &payment).await.unwrap();
    assert!(paid.ledger.iter().any(|l| l.debit == "1,450.00 USD"), "{:?}", paid.ledger);
    // Work orders: open, start, complete.
    let wo = svc
        .create_record(&me, "workorders", form(&[("property_id", &property), ("unit_id", &unit), ("title", "Leaking tap")]))
        .await
        .unwrap();
    svc.act_on_record(&me, "workorders", &wo, "start", form(&[])).await.unwrap();
    svc.act_on_record(&me, "workorders", &wo, "complete", form(&[])).await.unwrap();
    let view = svc.record(&me, "workorders", &wo).await.unwrap();
    assert_eq!(view.status.as_deref(), Some("completed"));
    assert!(view.actions.is_empty(), "nothing follows completion");
    // Delete where the collection allows it; never a payment.
    assert!(matches!(failure(svc.delete_record(&me, "payments", &payment).await), ConsoleError::Conflict(_)));
    svc.delete_record(&me, "workorders", &wo).await.unwrap();
    assert!(matches!(failure(svc.record(&me, "workorders", &wo).await), ConsoleError::NotFound(_)));
    // The sandbox's reset takes its console activity along.
    let signature_view = svc.record(&me, "signatures", &signature).await.unwrap();
    assert_eq!(signature_view.activity.len(), 2, "created and signed: {:?}", signature_view.activity);
    assert!(app.count_rows("console_activity").await >= 10);
    svc.reset_sandbox(&me, false).await.expect("a sandbox reset");
    assert_eq!(app.count_rows("console_activity").await, 0);
}
both!(staff_run_a_lease_from_draft_to_tenancy);

async fn roles_decide_on_the_server(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let owner = sign_up(&svc, "Maple", "olivia@maple.example").await.me;
    let key = app.key(tenant(&owner), false, &["*"], None).await;
    let w = world::build(app, tenant(&owner), &key).await;
    let lease = w.id("leases");

    // A viewer reads everything and changes nothing, whatever it sends.
    let (viewer, _) = staff(app, &svc, &owner, "vic@maple.example", &["*:read"]).await;
    assert!(svc.record(&viewer, "leases", lease).await.is_ok());
    let info = svc.collection_info(&viewer, "leases").unwrap();
    assert!(!info.can_create && !info.can_edit && !info.can_act && !info.can_delete);
    assert!(svc.record(&viewer, "leases", lease).await.unwrap().actions.is_empty(), "no action buttons");
    let refused = |e: ConsoleError, scope: &str| {
        assert!(matches!(&e, ConsoleError::Forbidden(m) if m.contains(scope)), "{e:?}");
    };
    refused(
        failure(
            svc.create_record(
                &viewer,
                "leases",
                form(&[("unit_id", w.id("units")), ("start_date", "2027-01-01"), ("rent", "1"), ("currency", "USD")]),
            )
            .await,
        ),
        "leases:write",
    );
    refused(failure(svc.update_record(&viewer, "leases", lease, form(&[("rent_due_day", "9")])).await), "leases:write");
    refused(failure(svc.act_on_record(&viewer, "leases", lease, "send", form(&[])).await), "leases:write");
    refused(failure(svc.delete_record(&viewer, "leases", lease).await), "leases:write");
    let r = app.call(&key, "GET", &format!("/v1/leases/{lease}"), None).await;
    assert_eq!((r.body["data"]["status"].as_str(), r.body["data"]["rent_due_day"].as_i64()), (Some("draft"), Some(1)), "nothing changed");
    assert_eq!(count(app, &key, "leases").await, 1);

    // A leasing role sees Leasing only, and is refused the rest even when it asks directly.
    let (agent, agent_token) = staff(app, &svc, &owner, "ann@maple.example", &["leases:write", "units:read"]).await;
    let areas = svc.areas(&agent);
    assert_eq!(areas.iter().map(|a| a.name.as_str()).collect::<Vec<_>>(), ["Portfolio", "Leasing"]);
    assert!(matches!(failure(svc.list_records(&agent, "payments", "").await), ConsoleError::Forbidden(m) if m.contains("payments:read")));
    assert!(matches!(failure(svc.record(&agent, "payments", w.id("payments")).await), ConsoleError::Forbidden(_)));
    refused(
        failure(svc.create_record(&agent, "units", form(&[("property_id", w.id("properties")), ("number", "9Z")])).await),
        "units:write",
    );
    // What it cannot read stays an id: no name of a property leaks through a reference.
    let unit = svc.record(&agent, "units", w.id("units")).await.unwrap();
    assert!(
        matches!(field(&unit, "property_id"), Shown::Link { text, .. } if !text.contains("Maple Court")),
        "{:?}",
        field(&unit, "property_id")
    );
    assert!(
        unit.related.iter().all(|r| r.collection == "leases"),
        "only what it may read: {:?}",
        unit.related.iter().map(|r| &r.collection).collect::<Vec<_>>()
    );
    assert_eq!(unit.history_note.as_deref().map(|n| n.contains("events:read")), Some(true));
    svc.update_record(&agent, "leases", lease, form(&[("rent_due_day", "3")])).await.unwrap();

    // Demoted: the role loses leases:write, and the next call is refused (the session reads the role anew).
    let live = app.key(tenant(&owner), true, &["*"], None).await;
    let roles = app.call_on(true, &live, "GET", "/v1/roles?limit=100", None).await;
    let role = roles.body["data"].as_array().unwrap().iter().find(|r| r["name"] == "ann@maple.example").unwrap()["id"]
        .as_str()
        .unwrap()
        .to_string();
    let r = app.call_on(true, &live, "PATCH", &format!("/v1/roles/{role}"), Some(json!({ "permissions": ["leases:read"] }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let demoted = svc.session(&agent_token).await.unwrap().expect("still signed in");
    refused(failure(svc.update_record(&demoted, "leases", lease, form(&[("rent_due_day", "4")])).await), "leases:write");
    assert!(!svc.collection_info(&demoted, "leases").unwrap().can_edit);

    // Another tenant sees none of it, by list, by id or by picker.
    let other = sign_up(&svc, "Other", "mallory@other.example").await.me;
    assert!(matches!(failure(svc.record(&other, "leases", lease).await), ConsoleError::NotFound(_)));
    assert!(svc.list_records(&other, "leases", "").await.unwrap().rows.is_empty());
    assert!(svc.choices(&other, "units", "1A").await.unwrap().is_empty());
    assert!(matches!(failure(svc.act_on_record(&other, "leases", lease, "send", form(&[])).await), ConsoleError::NotFound(_)));
    assert!(matches!(failure(svc.delete_record(&other, "leases", lease).await), ConsoleError::NotFound(_)));
    assert_eq!(svc.choices(&owner, "units", "1a").await.unwrap().len(), 1);
    // The other environment is another wall: the owner's live console has no sandbox lease.
    let live_me = Me { livemode: true, ..owner.clone() };
    assert!(matches!(failure(svc.record(&live_me, "leases", lease).await), ConsoleError::NotFound(_)));
}
both!(roles_decide_on_the_server);
