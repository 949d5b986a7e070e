//! What a credential learns beyond its scopes (third review): a webhook delivery's
//! response excerpt and the reports. Each runs on SQLite and PostgreSQL.

use gable::accounts::service::{ConsoleError, NewUser, Team, Webhooks};
use gable_tests::receiver::Receiver;
use gable_tests::TestApp;
use serde_json::json;

use super::console::staff;
use super::scopes::{id, refused};

/// What the lead carries, and what an echoing receiver sends back.
const EMAIL: &str = "lee.private@example.com";

/// A subscription to `lead.created` at a receiver that echoes what it gets, and one lead
/// delivered to it: the delivery's id.
async fn echoed_lead(app: &TestApp, livemode: bool, key: &str, rx: &Receiver) -> String {
    let r = app.call_on(livemode, key, "POST", "/v1/webhooks", Some(json!({ "url": rx.url("/echo"), "events": ["lead.created"] }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let r = app.call_on(livemode, key, "POST", "/v1/leads", Some(json!({ "name": "Lee Lead", "email": EMAIL }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    gable::jobs::deliver_due(&app.background).await.expect("deliveries");
    rx.wait_for(1, 10).await;
    // The background worker may have made the attempt instead: its outcome is recorded
    // after the receiver answered, so wait for the register to show it.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let delivery = loop {
        let r = app.call_on(livemode, key, "GET", "/v1/webhook-deliveries?filter[event_type]=lead.created", None).await;
        let d = r.body["data"][0].clone();
        if d["status"] == "succeeded" {
            break d;
        }
        assert!(std::time::Instant::now() < deadline, "the attempt was not recorded: {}", r.text);
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    };
    // The receiver did echo the record: the excerpt holds it for a reader who may see it.
    assert!(delivery["response_excerpt"].as_str().is_some_and(|e| e.contains(EMAIL)), "the echo: {delivery}");
    id(&delivery)
}

/// Finding 3: the register kept the first 4 KB of the receiver's answer and showed it to
/// any `webhook-deliveries:read` credential, even where the body it answered (the event,
/// with its record) was hidden: a receiver that echoes gave away a lead's e-mail address.
async fn a_delivery_s_answer_is_shown_only_to_who_may_read_its_record(app: &TestApp) {
    let t = app.tenant("A").await;
    let rx = Receiver::start().await;
    let delivery = echoed_lead(app, false, &t.test_key, &rx).await;

    let register_only = app.key(t.id, false, &["webhook-deliveries:read"], None).await;
    let listed = app.all_pages(&register_only, "/v1/webhook-deliveries").await;
    assert!(!listed.is_empty(), "the register itself is readable");
    assert!(listed.iter().all(|d| d["response_excerpt"].is_null()), "{listed:?}");
    let one = app.call(&register_only, "GET", &format!("/v1/webhook-deliveries/{delivery}"), None).await;
    assert_eq!(one.status, 200, "{}", one.text);
    assert!(one.body["data"]["response_excerpt"].is_null() && !one.text.contains(EMAIL), "{}", one.text);
    // Asking for the field alone changes nothing.
    let path = format!("/v1/webhook-deliveries/{delivery}?fields[webhook-deliveries]=response_excerpt");
    let only = app.call(&register_only, "GET", &path, None).await;
    assert!(!only.text.contains(EMAIL), "{}", only.text);
    // Other parts of the attempt stay: the status and the receiver's headers.
    assert_eq!(one.body["data"]["response_status"], 200, "{}", one.text);

    // With the read of what the event carries, the answer is shown.
    let able = app.key(t.id, false, &["webhook-deliveries:read", "leads:read"], None).await;
    let one = app.call(&able, "GET", &format!("/v1/webhook-deliveries/{delivery}"), None).await;
    assert!(one.body["data"]["response_excerpt"].as_str().is_some_and(|e| e.contains(EMAIL)), "{}", one.text);
}

/// Finding 3, in the console: the delivery page kept the body from a role without the
/// record's read, but showed the receiver's answer beside it.
async fn the_console_keeps_a_delivery_s_answer_from_a_role_that_may_not_read_its_record(app: &TestApp) {
    let s = staff(app).await;
    let rx = Receiver::start().await;
    let delivery = echoed_lead(app, s.owner.livemode, &s.key, &rx).await;

    let (_, clerk) = s.signed_in(app, "clerk@maple.example", &["webhooks:read", "webhook-deliveries:read"]).await;
    let page = s.console.webhook_delivery(&clerk, &delivery).await.expect("the register is readable");
    assert!(page.request_body.is_none(), "{page:?}");
    assert!(page.response_excerpt.is_none(), "the answer reached the page: {:?}", page.response_excerpt);
    assert!(page.response_note.is_some(), "the page says why: {page:?}");
    assert!(!format!("{page:?}").contains(EMAIL), "{page:?}");

    let (_, leasing) = s.signed_in(app, "leasing@maple.example", &["webhooks:read", "webhook-deliveries:read", "leads:read"]).await;
    let page = s.console.webhook_delivery(&leasing, &delivery).await.expect("readable");
    assert!(page.response_excerpt.as_deref().is_some_and(|e| e.contains(EMAIL)), "{page:?}");
    assert!(page.response_note.is_none());
}

/// Finding 4: `reports:write` alone made a rent roll (each lease's rent, deposit and
/// balance) and a delinquency report (each invoice's outstanding amount) while
/// `GET /v1/leases` answered it 403. A report needs the reads of what it aggregates, to be
/// made and to be read (a list, a single read, and a change, which answers with the report).
async fn a_report_needs_the_reads_of_what_it_shows(app: &TestApp) {
    let t = app.tenant("A").await;
    let writer = app.key(t.id, false, &["reports:write"], None).await;
    for (kind, scope) in
        [("rent_roll", "units:read"), ("occupancy", "units:read"), ("delinquency", "invoices:read"), ("ledger", "accounting-entries:read")]
    {
        refused(&app.call(&writer, "POST", "/v1/reports", Some(json!({ "kind": kind }))).await, scope);
    }
    assert_eq!(app.count_rows("reports").await, 0, "nothing was written");
    // Each missing read is named in turn.
    let partial = app.key(t.id, false, &["reports:write", "units:read", "leases:read"], None).await;
    refused(&app.call(&partial, "POST", "/v1/reports", Some(json!({ "kind": "rent_roll" }))).await, "charges:read");
    // With the reads, the report is made.
    let invoices = app.key(t.id, false, &["reports:write", "invoices:read"], None).await;
    let r = app.call(&invoices, "POST", "/v1/reports", Some(json!({ "kind": "delinquency" }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let delinquency = id(&r.body["data"]);

    // Reading one is reading what it shows.
    let rent_roll = id(&app.create(&t.test_key, "reports", json!({ "kind": "rent_roll" })).await);
    let reader = app.key(t.id, false, &["reports:read"], None).await;
    refused(&app.call(&reader, "GET", &format!("/v1/reports/{rent_roll}"), None).await, "units:read");
    refused(&app.call(&reader, "GET", &format!("/v1/reports/{delinquency}"), None).await, "invoices:read");
    assert_eq!(app.call(&reader, "GET", "/v1/reports", None).await.body["data"], json!([]));
    // A list shows the kinds whose reads the credential holds, and filters cannot widen it.
    let invoice_reader = app.key(t.id, false, &["reports:read", "invoices:read"], None).await;
    let listed = app.all_pages(&invoice_reader, "/v1/reports").await;
    assert_eq!(listed.iter().map(id).collect::<Vec<_>>(), vec![delinquency.clone()], "{listed:?}");
    let r = app.call(&invoice_reader, "GET", "/v1/reports?filter[kind]=rent_roll", None).await;
    assert_eq!(r.body["data"], json!([]), "{}", r.text);
    assert_eq!(app.call(&invoice_reader, "GET", &format!("/v1/reports/{delinquency}"), None).await.status, 200);
    // `*:read` reads them all.
    let all = app.key(t.id, false, &["*:read"], None).await;
    assert_eq!(app.all_pages(&all, "/v1/reports").await.len(), 2);

    // A change answers with the whole report, result included: changing one is reading it.
    app.run_jobs().await;
    let done = app.call(&t.test_key, "GET", &format!("/v1/reports/{rent_roll}"), None).await;
    assert_eq!(done.body["data"]["status"], "completed", "{}", done.text);
    let path = format!("/v1/reports/{rent_roll}");
    let r = app.call(&writer, "PATCH", &path, Some(json!({ "metadata": { "by": "mallory" } }))).await;
    refused(&r, "units:read");
    assert!(r.body.get("data").is_none(), "{}", r.text);
    let after = app.call(&t.test_key, "GET", &path, None).await;
    assert!(after.body["data"]["metadata"].get("by").is_none(), "nothing was written: {}", after.text);
    let r = app.call(&invoices, "PATCH", &format!("/v1/reports/{delinquency}"), Some(json!({ "metadata": { "by": "ivy" } }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
}

/// Finding 7: the console made users as one who holds everything (`*`), which was the
/// same as its caller's role only while adding users needs `*`. It now acts with the
/// signed-in user's own permissions: were a role to manage users without `*`, it still
/// could not make an owner.
async fn the_console_adds_users_with_the_signed_in_user_s_own_permissions(app: &TestApp) {
    let s = staff(app).await;
    let roles = s.console.roles(&s.owner).await.expect("roles");
    let owner_role = roles.iter().find(|r| r.name == "Owner").expect("the owner role").id.clone();
    // A manager whose role carries user management but not `*` (no such role ships today).
    let mut manager = s.owner.clone();
    manager.permissions = vec!["users:write".into(), "roles:read".into()];
    let form = NewUser { email: "mallory@maple.example".into(), name: "Mallory".into(), role_id: owner_role, password: PASSWORD.into() };
    match s.console.create_user(&manager, form).await {
        Err(ConsoleError::Forbidden(m)) | Err(ConsoleError::Invalid { message: m, .. }) => assert!(m.contains('*'), "{m}"),
        other => panic!("a manager without `*` made an owner: {other:?}"),
    }
    let users = s.console.users(&s.owner).await.expect("users");
    assert!(users.iter().all(|u| u.email != "mallory@maple.example"), "nothing was made: {users:?}");
}

const PASSWORD: &str = "correct horse battery staple";

gable_tests::both!(a_delivery_s_answer_is_shown_only_to_who_may_read_its_record, |b| b.local_webhooks());
gable_tests::both!(the_console_keeps_a_delivery_s_answer_from_a_role_that_may_not_read_its_record, |b| b.local_webhooks());
gable_tests::both!(a_report_needs_the_reads_of_what_it_shows);
gable_tests::both!(the_console_adds_users_with_the_signed_in_user_s_own_permissions);
