//! The console's service (`gable::accounts::AccountService`) on both databases: accounts,
//! sessions, throttling, service accounts, keys that work (and stop working) against
//! `/v1` at once, roles, and tenant isolation. Time is moved, never slept through.
//! The portfolio's pages (every collection, read and written by staff): `records`; bulk
//! import's pages: `imports`.

mod imports;
mod records;

use chrono::{Duration, Utc};
use gable::accounts::service::{ConsoleError, Me, NewKey, NewSession, NewUser, OAuthApps, ServiceAccounts, Sessions, SignUp, Team};
use gable::accounts::AccountService;
use gable::clock::Clock;
use gable::ops::Operations;
use gable::store::Store;
use gable_tests::{both, Backend, TestApp};
use serde_json::json;
use uuid::Uuid;

const PASSWORD: &str = "correct horse battery staple";

/// The service on Gable's own clock, which the test moves.
fn service(store: &Store) -> (AccountService, Clock) {
    let clock = Clock::manual(Utc::now());
    (AccountService::new(Operations::new(store.clone(), clock.clone(), gable::crypto::MasterKey::generate())), clock)
}

/// A client address of its own for each sign-up, so that tests which are not about
/// sign-up throttling never meet it.
fn anyone() -> String {
    static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(1);
    std::net::Ipv4Addr::from(0x0a00_0000 + NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)).to_string()
}

fn form(company: &str, email: &str, password: &str) -> SignUp {
    SignUp { company: company.into(), name: "Olivia Owner".into(), email: email.into(), password: password.into() }
}

async fn sign_up(svc: &AccountService, company: &str, email: &str) -> NewSession {
    svc.sign_up(form(company, email, PASSWORD), &anyone()).await.expect("sign-up")
}

fn failure<T: std::fmt::Debug>(r: Result<T, ConsoleError>) -> ConsoleError {
    r.expect_err("expected the console to refuse")
}

fn invalid_field<T: std::fmt::Debug>(r: Result<T, ConsoleError>) -> String {
    match failure(r) {
        ConsoleError::Invalid { field, message } => {
            assert!(!message.is_empty());
            field
        }
        other => panic!("expected Invalid, got {other:?}"),
    }
}

fn tenant(me: &Me) -> Uuid {
    me.tenant_id.parse().unwrap()
}

async fn sign_up_creates_the_tenant_its_roles_and_owner(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let s = sign_up(&svc, "Maple Property Management", "  Olivia@Maple.example ").await;
    let me = &s.me;
    assert_eq!(me.email, "olivia@maple.example");
    assert_eq!(me.name, "Olivia Owner");
    assert_eq!(me.tenant_name, "Maple Property Management");
    assert_eq!(me.role, "Owner");
    assert!(me.can_manage);
    assert!(!me.livemode, "newcomers start in the sandbox");
    assert!(me.csrf.len() >= 43 && s.token.len() >= 43);
    assert_ne!(me.csrf, s.token);
    assert_eq!(svc.session(&s.token).await.unwrap().as_ref(), Some(me));

    // The console's users and roles are the API's live records.
    let key = app.key(tenant(me), true, &["*"], None).await;
    let users = app.call_on(true, &key, "GET", "/v1/users", None).await;
    assert_eq!(users.status, 200, "{}", users.text);
    let list = users.body["data"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["id"], json!(me.user_id));
    assert_eq!(list[0]["email"], "olivia@maple.example");
    assert_eq!(list[0]["status"], "active");
    assert!(list[0]["last_sign_in_at"].is_string());
    let roles = app.call_on(true, &key, "GET", "/v1/roles?sort=created_at", None).await;
    let roles: Vec<(String, serde_json::Value)> = roles.body["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["name"].as_str().unwrap().to_string(), r["permissions"].clone()))
        .collect();
    assert_eq!(
        roles,
        [("Owner".to_string(), json!(["*"])), ("Admin".to_string(), json!(["*"])), ("Read-only staff".to_string(), json!(["*:read"]))]
    );
    let owner_role = app.call_on(true, &key, "GET", &format!("/v1/roles/{}", list[0]["role_id"].as_str().unwrap()), None).await;
    assert_eq!(owner_role.body["data"]["name"], "Owner");
    // The sandbox's users are its own (empty) collection.
    let test_key = app.key(tenant(me), false, &["*"], None).await;
    assert_eq!(app.call(&test_key, "GET", "/v1/users", None).await.body["data"], json!([]));

    // Through the service: the same records.
    let users = svc.users(me).await.unwrap();
    assert_eq!(users.len(), 1);
    assert_eq!((users[0].id.as_str(), users[0].role.as_deref(), users[0].status.as_str()), (me.user_id.as_str(), Some("Owner"), "active"));
    let roles = svc.roles(me).await.unwrap();
    assert_eq!(roles.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(), ["Owner", "Admin", "Read-only staff"]);

    // Stored: an argon2id hash with OWASP's parameters, and only the token's hash.
    assert_eq!(app.count_where("console_credentials", "password_hash LIKE '$argon2id$v=19$m=19456,t=2,p=1$%'").await, 1);
    assert_eq!(app.count_where("console_credentials", &format!("password_hash LIKE '%{PASSWORD}%'")).await, 0);
    assert_eq!(app.count_rows("console_sessions").await, 1);
    assert_eq!(app.count_where("console_sessions", &format!("token_hash = '{}'", s.token)).await, 0);
}
both!(sign_up_creates_the_tenant_its_roles_and_owner);

async fn sign_up_refuses_bad_forms_and_taken_emails(app: &TestApp) {
    let (svc, _) = service(&app.store);
    sign_up(&svc, "Maple", "olivia@maple.example").await;
    match failure(svc.sign_up(form("Other", "OLIVIA@maple.example", PASSWORD), &anyone()).await) {
        ConsoleError::Conflict(m) => assert_eq!(m, "An account with this email already exists."),
        other => panic!("{other:?}"),
    }
    for weak in ["short", "Password1234", "newcomer@maple.example", "aaaaaaaaaaaaaaaa", &"x1".repeat(65)] {
        assert_eq!(invalid_field(svc.sign_up(form("Maple", "newcomer@maple.example", weak), &anyone()).await), "password", "{weak}");
    }
    assert_eq!(invalid_field(svc.sign_up(form("Maple", "not-an-email", PASSWORD), &anyone()).await), "email");
    assert_eq!(invalid_field(svc.sign_up(form("Maple", "a b@maple.example", PASSWORD), &anyone()).await), "email");
    assert_eq!(invalid_field(svc.sign_up(form("   ", "newcomer@maple.example", PASSWORD), &anyone()).await), "company");
    assert_eq!(invalid_field(svc.sign_up(form(&"c".repeat(201), "newcomer@maple.example", PASSWORD), &anyone()).await), "company");
    let mut no_name = form("Maple", "newcomer@maple.example", PASSWORD);
    no_name.name = "".into();
    assert_eq!(invalid_field(svc.sign_up(no_name, &anyone()).await), "name");
    // Nothing was created by the refusals.
    assert_eq!(app.count_rows("tenants").await, 1);
    assert_eq!(app.count_rows("users").await, 1);
    assert_eq!(app.count_rows("roles").await, 3);
    // 200 characters is fine.
    sign_up(&svc, &"c".repeat(200), "newcomer@maple.example").await;
}
both!(sign_up_refuses_bad_forms_and_taken_emails);

async fn sign_in_checks_the_password_and_throttles(app: &TestApp) {
    let (svc, clock) = service(&app.store);
    let owner = sign_up(&svc, "Maple", "olivia@maple.example").await;
    let ip = "203.0.113.7";

    let s = svc.sign_in("Olivia@Maple.example", PASSWORD, ip, None).await.expect("right password");
    assert_eq!(s.me.user_id, owner.me.user_id);
    assert!(s.me.can_manage);
    assert_ne!(s.token, owner.token);
    assert_eq!(failure(svc.sign_in("olivia@maple.example", "wrong horse battery staple", ip, None).await), ConsoleError::BadCredentials);
    // An unknown email is refused in the same words.
    assert_eq!(failure(svc.sign_in("nobody@maple.example", PASSWORD, ip, None).await), ConsoleError::BadCredentials);
    // Five attempts per email (the success counted too); then even the right password waits.
    for _ in 0..3 {
        assert_eq!(failure(svc.sign_in("olivia@maple.example", "guess guess guess", ip, None).await), ConsoleError::BadCredentials);
    }
    let retry = match failure(svc.sign_in("olivia@maple.example", PASSWORD, ip, None).await) {
        ConsoleError::TooManyAttempts { retry_after_secs } => retry_after_secs,
        other => panic!("expected throttling, got {other:?}"),
    };
    assert!((1..=15 * 60).contains(&retry), "{retry}");
    // Other emails from another address are not affected.
    assert_eq!(failure(svc.sign_in("nobody@maple.example", PASSWORD, "198.51.100.1", None).await), ConsoleError::BadCredentials);
    // Time passes: the email may try again.
    clock.advance(Duration::minutes(15));
    svc.sign_in("olivia@maple.example", PASSWORD, ip, None).await.expect("after the wait");

    // Per client address: 20 attempts, whatever the emails.
    let bot = "192.0.2.99";
    for i in 0..20 {
        assert_eq!(
            failure(svc.sign_in(&format!("user{i}@spray.example"), "guess guess guess", bot, None).await),
            ConsoleError::BadCredentials
        );
    }
    assert!(matches!(failure(svc.sign_in("olivia@maple.example", PASSWORD, bot, None).await), ConsoleError::TooManyAttempts { .. }));
    svc.sign_in("olivia@maple.example", PASSWORD, "198.51.100.2", None).await.expect("another address");
}
both!(sign_in_checks_the_password_and_throttles);

async fn sign_up_is_throttled_per_client_address(app: &TestApp) {
    let (svc, clock) = service(&app.store);
    let ip = "203.0.113.40";
    let throttled = |r: Result<NewSession, ConsoleError>| match failure(r) {
        ConsoleError::TooManyAttempts { retry_after_secs } => retry_after_secs,
        other => panic!("expected throttling, got {other:?}"),
    };
    // A burst of 10 from one address, refused forms included (each is counted before
    // the form is checked, so "this email is taken" cannot be asked for freely).
    assert!(matches!(failure(svc.sign_up(form("Spray", "not-an-email", PASSWORD), ip).await), ConsoleError::Invalid { .. }));
    for i in 1..10 {
        svc.sign_up(form("Spray", &format!("owner{i}@spray.example"), PASSWORD), ip).await.expect("within the burst");
    }
    let retry = throttled(svc.sign_up(form("Spray", "owner10@spray.example", PASSWORD), ip).await);
    assert!((1..=6 * 60).contains(&retry), "one more every 6 minutes: {retry}");
    // Refused before anything was created, even for a taken email (no oracle past the limit).
    throttled(svc.sign_up(form("Spray", "owner1@spray.example", PASSWORD), ip).await);
    assert_eq!(app.count_rows("tenants").await, 9);
    // Another address is not affected; one IPv6 /64 is one client.
    svc.sign_up(form("Other", "other@spray.example", PASSWORD), "198.51.100.40").await.expect("another address");
    for i in 0..10 {
        svc.sign_up(form("V6", &format!("v6-{i}@spray.example"), PASSWORD), &format!("2001:db8:40:1::{:x}", i + 1)).await.expect("burst");
    }
    throttled(svc.sign_up(form("V6", "v6-10@spray.example", PASSWORD), "2001:db8:40:1:ffff::1").await);
    svc.sign_up(form("V6", "v6-11@spray.example", PASSWORD), "2001:db8:40:2::1").await.expect("another /64");
    // Time passes: one more.
    clock.advance(Duration::minutes(6));
    svc.sign_up(form("Spray", "owner10@spray.example", PASSWORD), ip).await.expect("after the wait");
    throttled(svc.sign_up(form("Spray", "owner11@spray.example", PASSWORD), ip).await);
}
both!(sign_up_is_throttled_per_client_address);

async fn sessions_rotate_end_and_switch_environment(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let first = sign_up(&svc, "Maple", "olivia@maple.example").await;
    let second = svc.sign_in("olivia@maple.example", PASSWORD, "ip", Some(&first.token)).await.unwrap();
    assert_eq!(svc.session(&first.token).await.unwrap(), None, "the previous session ends at sign-in");
    let me = svc.session(&second.token).await.unwrap().expect("the new session works");
    assert_ne!(me.csrf, first.me.csrf, "a new session has a new CSRF token");

    svc.set_environment(&second.token, true).await.unwrap();
    assert!(svc.session(&second.token).await.unwrap().unwrap().livemode);
    svc.set_environment(&second.token, false).await.unwrap();
    assert!(!svc.session(&second.token).await.unwrap().unwrap().livemode);

    svc.sign_out(&second.token).await.unwrap();
    assert_eq!(svc.session(&second.token).await.unwrap(), None);
    assert_eq!(failure(svc.set_environment(&second.token, true).await), ConsoleError::NotSignedIn);
    assert_eq!(svc.session("").await.unwrap(), None);
    assert_eq!(svc.session("made-up-token").await.unwrap(), None);
    assert_eq!(svc.session(&"x".repeat(10_000)).await.unwrap(), None);
    svc.sign_out("made-up-token").await.unwrap();
    assert_eq!(app.count_rows("console_sessions").await, 0);
}
both!(sessions_rotate_end_and_switch_environment);

async fn sessions_expire_when_idle_and_when_old(app: &TestApp) {
    let (svc, clock) = service(&app.store);
    let s = sign_up(&svc, "Maple", "olivia@maple.example").await;
    // Idle: 30 minutes without use ends it; use keeps it alive.
    clock.advance(Duration::minutes(29));
    assert!(svc.session(&s.token).await.unwrap().is_some());
    clock.advance(Duration::minutes(29));
    assert!(svc.session(&s.token).await.unwrap().is_some(), "used 29 minutes ago");
    clock.advance(Duration::minutes(30));
    assert_eq!(svc.session(&s.token).await.unwrap(), None, "idle for 30 minutes");
    assert_eq!(app.count_rows("console_sessions").await, 0, "an expired session is deleted");

    // Absolute: 12 hours after sign-in, however busy. The manual clock keeps running in
    // real time between its moves, so the sign-in time is only known to lie between
    // `before` and `after`; the edges are placed from those, with a margin for the
    // seconds a loaded machine may take between setting the clock and reading it.
    let before = clock.now();
    let s = svc.sign_in("olivia@maple.example", PASSWORD, "ip", None).await.unwrap();
    let after = clock.now();
    let mut elapsed = Duration::zero();
    while elapsed + Duration::minutes(25) < Duration::hours(12) {
        clock.advance(Duration::minutes(25));
        elapsed += Duration::minutes(25);
        assert!(svc.session(&s.token).await.unwrap().is_some(), "busy, {elapsed} after sign-in");
    }
    clock.set(before + Duration::hours(12) - Duration::seconds(5));
    assert!(svc.session(&s.token).await.unwrap().is_some(), "moments before 12 hours");
    clock.set(after + Duration::hours(12));
    assert_eq!(svc.session(&s.token).await.unwrap(), None, "12 hours after sign-in");
}
both!(sessions_expire_when_idle_and_when_old);

async fn service_accounts_and_keys_take_effect_at_once(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let me = sign_up(&svc, "Maple", "olivia@maple.example").await.me;
    assert_eq!(svc.service_accounts(&me).await.unwrap(), []);

    let web = svc.create_service_account(&me, "  Website ").await.unwrap();
    assert_eq!((web.name.as_str(), web.status.as_str(), web.active_keys), ("Website", "active", 0));
    let sync = svc.create_service_account(&me, "Accounting sync").await.unwrap();
    let names: Vec<String> = svc.service_accounts(&me).await.unwrap().into_iter().map(|s| s.name).collect();
    assert_eq!(names, ["Accounting sync", "Website"], "newest first");
    assert!(matches!(failure(svc.create_service_account(&me, "Website").await), ConsoleError::Conflict(_)));
    assert_eq!(invalid_field(svc.create_service_account(&me, " ").await), "name");
    assert_eq!(invalid_field(svc.create_service_account(&me, &"n".repeat(101)).await), "name");
    assert!(matches!(failure(svc.rename_service_account(&me, &sync.id, "Website").await), ConsoleError::Conflict(_)));
    let renamed = svc.rename_service_account(&me, &web.id, "Public website").await.unwrap();
    assert_eq!(renamed.name, "Public website");
    assert_eq!(svc.service_account(&me, &web.id).await.unwrap().name, "Public website");
    assert!(matches!(failure(svc.service_account(&me, "not-an-id").await), ConsoleError::NotFound(_)));
    assert!(matches!(failure(svc.service_account(&me, &Uuid::now_v7().to_string()).await), ConsoleError::NotFound(_)));

    // A live key: its secret once, working on the production listener at once.
    let new_key = |livemode: bool, scopes: &[&str], props: Option<Vec<String>>| NewKey {
        service_account_id: web.id.clone(),
        livemode,
        scopes: scopes.iter().map(|s| s.to_string()).collect(),
        property_ids: props,
    };
    let created = svc.create_key(&me, new_key(true, &["users:read", "roles:read"], None)).await.unwrap();
    let secret = created.secret.clone();
    assert!(secret.starts_with("gbl_live_"));
    assert_eq!(created.key.environment, "live");
    assert!(secret.starts_with(&created.key.prefix) && created.key.prefix.len() < secret.len());
    assert_eq!(created.key.scopes, ["users:read", "roles:read"]);
    assert_eq!(created.key.revoked_at, None);
    assert_eq!(app.call_on(true, &secret, "GET", "/v1/users", None).await.status, 200);
    app.call_on(true, &secret, "GET", "/v1/units", None).await.assert_error(403, "insufficient_scope");
    app.call_on(false, &secret, "GET", "/v1/users", None).await.assert_error(401, "key_environment_mismatch");

    // The listing shows the prefix, never the secret.
    let keys = svc.keys(&me, &web.id).await.unwrap();
    assert_eq!(keys.len(), 1);
    assert_eq!(keys[0].prefix, created.key.prefix);
    let listing = serde_json::to_string(&keys).unwrap();
    assert!(!listing.contains(&secret) && !listing.contains(&secret[13..]), "{listing}");
    assert_eq!(svc.service_account(&me, &web.id).await.unwrap().active_keys, 1);
    // last_used_at is recorded (in the background, once a minute at most).
    let mut used = None;
    for _ in 0..100 {
        used = svc.keys(&me, &web.id).await.unwrap()[0].last_used_at.clone();
        if used.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert!(used.is_some(), "last_used_at was not recorded");

    // Disabling refuses the key at once (it was just used, so it is cached); enabling restores it.
    let disabled = svc.set_service_account_active(&me, &web.id, false).await.unwrap();
    assert_eq!(disabled.status, "disabled");
    app.call_on(true, &secret, "GET", "/v1/users", None).await.assert_error(401, "unauthenticated");
    assert!(matches!(failure(svc.create_key(&me, new_key(true, &["*"], None)).await), ConsoleError::Conflict(_)));
    assert_eq!(svc.set_service_account_active(&me, &web.id, true).await.unwrap().status, "active");
    assert_eq!(app.call_on(true, &secret, "GET", "/v1/users", None).await.status, 200);

    // Revoking refuses the key at once; the listing keeps it, marked.
    svc.revoke_key(&me, &created.key.id).await.unwrap();
    app.call_on(true, &secret, "GET", "/v1/users", None).await.assert_error(401, "unauthenticated");
    svc.revoke_key(&me, &created.key.id).await.expect("revoking twice is fine");
    assert!(svc.keys(&me, &web.id).await.unwrap()[0].revoked_at.is_some());
    assert_eq!(svc.service_account(&me, &web.id).await.unwrap().active_keys, 0);
    assert!(matches!(failure(svc.revoke_key(&me, &Uuid::now_v7().to_string()).await), ConsoleError::NotFound(_)));

    // Scopes and properties are checked; a sandbox key limited to a sandbox property works there.
    assert_eq!(invalid_field(svc.create_key(&me, new_key(false, &[], None)).await), "scopes");
    assert_eq!(invalid_field(svc.create_key(&me, new_key(false, &["leases:admin"], None)).await), "scopes");
    assert_eq!(invalid_field(svc.create_key(&me, new_key(false, &["*"], Some(vec![]))).await), "property_ids");
    assert_eq!(invalid_field(svc.create_key(&me, new_key(false, &["*"], Some(vec!["x".into()]))).await), "property_ids");
    assert_eq!(invalid_field(svc.create_key(&me, new_key(false, &["*"], Some(vec![Uuid::now_v7().to_string()]))).await), "property_ids");
    let full = svc.create_key(&me, new_key(false, &["*"], None)).await.unwrap();
    let property = app
        .create(
            &full.secret,
            "properties",
            json!({ "name": "Elm House", "kind": "student", "address": { "line1": "5 Elm", "city": "Austin", "country": "US" } }),
        )
        .await;
    let pid = property["id"].as_str().unwrap().to_string();
    // The property exists in the sandbox only.
    assert_eq!(invalid_field(svc.create_key(&me, new_key(true, &["*"], Some(vec![pid.clone()]))).await), "property_ids");
    let limited = svc.create_key(&me, new_key(false, &["properties:read"], Some(vec![pid.clone()]))).await.unwrap();
    assert_eq!(limited.key.property_ids, Some(vec![pid.clone()]));
    let seen = app.call(&limited.secret, "GET", "/v1/properties", None).await;
    assert_eq!(seen.body["data"].as_array().unwrap().len(), 1);
    let keys = svc.keys(&me, &web.id).await.unwrap();
    assert_eq!(
        keys.iter().map(|k| k.id.as_str()).collect::<Vec<_>>(),
        [limited.key.id.as_str(), full.key.id.as_str(), created.key.id.as_str()]
    );
    let listing = serde_json::to_string(&keys).unwrap();
    for s in [&full.secret, &limited.secret] {
        assert!(!listing.contains(s.as_str()));
    }
    assert_eq!(app.count_where("api_keys", &format!("secret_hash = '{}' OR prefix = '{}'", full.secret, full.secret)).await, 0);

    // Deleting the account revokes its keys at once and removes it from the console.
    assert_eq!(app.call(&full.secret, "GET", "/v1/properties", None).await.status, 200);
    svc.delete_service_account(&me, &web.id).await.unwrap();
    app.call(&full.secret, "GET", "/v1/properties", None).await.assert_error(401, "unauthenticated");
    app.call(&limited.secret, "GET", "/v1/properties", None).await.assert_error(401, "unauthenticated");
    assert_eq!(app.count_where("api_keys", "revoked_at IS NULL").await, 0);
    assert!(matches!(failure(svc.service_account(&me, &web.id).await), ConsoleError::NotFound(_)));
    assert!(matches!(failure(svc.keys(&me, &web.id).await), ConsoleError::NotFound(_)));
    assert!(matches!(failure(svc.delete_service_account(&me, &web.id).await), ConsoleError::NotFound(_)));
    assert_eq!(svc.service_accounts(&me).await.unwrap().iter().map(|s| s.name.as_str()).collect::<Vec<_>>(), ["Accounting sync"]);
    // The name is free again; the CLI's get-or-create makes a new account of it.
    let again = app.store.service_account(tenant(&me), "Public website").await.unwrap();
    assert_ne!(again.to_string(), web.id);
    assert!(matches!(failure(svc.create_service_account(&me, "Public website").await), ConsoleError::Conflict(_)));
}
both!(service_accounts_and_keys_take_effect_at_once);

async fn read_only_staff_can_look_but_not_manage(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let owner = sign_up(&svc, "Maple", "olivia@maple.example").await.me;
    let web = svc.create_service_account(&owner, "Website").await.unwrap();
    let key = svc
        .create_key(&owner, NewKey { service_account_id: web.id.clone(), livemode: false, scopes: vec!["*".into()], property_ids: None })
        .await
        .unwrap();
    let roles = svc.roles(&owner).await.unwrap();
    let read_only = roles.iter().find(|r| r.name == "Read-only staff").unwrap();
    let staff_form = |email: &str, role: &str, password: &str| NewUser {
        email: email.into(),
        name: "Sam Staff".into(),
        role_id: role.into(),
        password: password.into(),
    };
    assert_eq!(invalid_field(svc.create_user(&owner, staff_form("sam@maple.example", "nope", PASSWORD)).await), "role_id");
    assert_eq!(
        invalid_field(svc.create_user(&owner, staff_form("sam@maple.example", &Uuid::now_v7().to_string(), PASSWORD)).await),
        "role_id"
    );
    assert_eq!(invalid_field(svc.create_user(&owner, staff_form("sam@maple.example", &read_only.id, "short")).await), "password");
    assert!(matches!(
        failure(svc.create_user(&owner, staff_form("Olivia@maple.example", &read_only.id, PASSWORD)).await),
        ConsoleError::Conflict(_)
    ));
    let sam = svc.create_user(&owner, staff_form("Sam@Maple.example", &read_only.id, PASSWORD)).await.unwrap();
    assert_eq!((sam.email.as_str(), sam.role.as_deref(), sam.status.as_str()), ("sam@maple.example", Some("Read-only staff"), "active"));
    assert_eq!(svc.users(&owner).await.unwrap().len(), 2);

    let staff = svc.sign_in("sam@maple.example", PASSWORD, "ip", None).await.unwrap();
    let me = staff.me.clone();
    assert_eq!((me.role.as_str(), me.can_manage, me.tenant_id.as_str()), ("Read-only staff", false, owner.tenant_id.as_str()));
    // Looking is allowed.
    assert_eq!(svc.service_accounts(&me).await.unwrap().len(), 1);
    assert_eq!(svc.service_account(&me, &web.id).await.unwrap().active_keys, 1);
    assert_eq!(svc.keys(&me, &web.id).await.unwrap().len(), 1);
    assert_eq!(svc.users(&me).await.unwrap().len(), 2);
    assert_eq!(svc.roles(&me).await.unwrap().len(), 3);
    // Managing is refused by the server, whatever the page shows.
    let forbidden =
        |e: ConsoleError| assert!(matches!(e, ConsoleError::Forbidden(ref m) if m.starts_with("Only owners and admins")), "{e:?}");
    forbidden(failure(svc.create_service_account(&me, "Mine").await));
    forbidden(failure(svc.rename_service_account(&me, &web.id, "Mine").await));
    forbidden(failure(svc.set_service_account_active(&me, &web.id, false).await));
    forbidden(failure(svc.delete_service_account(&me, &web.id).await));
    forbidden(failure(
        svc.create_key(&me, NewKey { service_account_id: web.id.clone(), livemode: true, scopes: vec!["*".into()], property_ids: None })
            .await,
    ));
    forbidden(failure(svc.revoke_key(&me, &key.key.id).await));
    forbidden(failure(svc.create_user(&me, staff_form("eve@maple.example", &roles[0].id, PASSWORD)).await));
    // Nothing changed.
    assert_eq!(app.call(&key.secret, "GET", "/v1/users", None).await.status, 200);
    assert_eq!(svc.service_accounts(&owner).await.unwrap(), svc.service_accounts(&me).await.unwrap());

    // A user disabled (here through the API) loses their sessions and cannot sign in.
    let live = app.key(tenant(&owner), true, &["*"], None).await;
    let r = app.call_on(true, &live, "PATCH", &format!("/v1/users/{}", sam.id), Some(json!({ "status": "disabled" }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(svc.session(&staff.token).await.unwrap(), None);
    assert_eq!(failure(svc.sign_in("sam@maple.example", PASSWORD, "ip", None).await), ConsoleError::BadCredentials);
    // A user deleted through the API takes their password along; the email is free again.
    let r = app.call_on(true, &live, "DELETE", &format!("/v1/users/{}", sam.id), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(app.count_rows("console_credentials").await, 1);
    assert_eq!(failure(svc.sign_in("sam@maple.example", PASSWORD, "ip2", None).await), ConsoleError::BadCredentials);
    svc.create_user(&owner, staff_form("sam@maple.example", &read_only.id, PASSWORD)).await.expect("the email is free again");
}
both!(read_only_staff_can_look_but_not_manage);

async fn a_tenant_cannot_reach_another_tenants_accounts_or_keys(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let a = sign_up(&svc, "Maple", "olivia@maple.example").await.me;
    let b = sign_up(&svc, "Birch", "bea@birch.example").await.me;
    assert_ne!(a.tenant_id, b.tenant_id);
    let mine = svc.create_service_account(&a, "Website").await.unwrap();
    let theirs = svc.create_service_account(&b, "Website").await.expect("names are per tenant");
    let their_key = svc
        .create_key(&b, NewKey { service_account_id: theirs.id.clone(), livemode: true, scopes: vec!["*".into()], property_ids: None })
        .await
        .unwrap();

    assert_eq!(svc.service_accounts(&a).await.unwrap().iter().map(|s| s.id.as_str()).collect::<Vec<_>>(), [mine.id.as_str()]);
    let not_found = |e: ConsoleError| assert!(matches!(e, ConsoleError::NotFound(_)), "{e:?}");
    not_found(failure(svc.service_account(&a, &theirs.id).await));
    not_found(failure(svc.keys(&a, &theirs.id).await));
    not_found(failure(svc.rename_service_account(&a, &theirs.id, "Mine now").await));
    not_found(failure(svc.set_service_account_active(&a, &theirs.id, false).await));
    not_found(failure(svc.delete_service_account(&a, &theirs.id).await));
    not_found(failure(svc.revoke_key(&a, &their_key.key.id).await));
    not_found(failure(
        svc.create_key(&a, NewKey { service_account_id: theirs.id.clone(), livemode: true, scopes: vec!["*".into()], property_ids: None })
            .await,
    ));
    // B's account and key are untouched.
    let still = svc.service_account(&b, &theirs.id).await.unwrap();
    assert_eq!((still.name.as_str(), still.status.as_str(), still.active_keys), ("Website", "active", 1));
    assert_eq!(app.call_on(true, &their_key.secret, "GET", "/v1/users", None).await.status, 200);
    // Users and roles are the tenant's own.
    let users = svc.users(&a).await.unwrap();
    assert_eq!(users.iter().map(|u| u.email.as_str()).collect::<Vec<_>>(), ["olivia@maple.example"]);
    let b_roles: Vec<String> = svc.roles(&b).await.unwrap().into_iter().map(|r| r.id).collect();
    assert!(svc.roles(&a).await.unwrap().iter().all(|r| !b_roles.contains(&r.id)));
    // A role of B cannot be given to a user of A.
    let b_role = b_roles[2].clone();
    let form = NewUser { email: "x@maple.example".into(), name: "X".into(), role_id: b_role, password: PASSWORD.into() };
    assert_eq!(invalid_field(svc.create_user(&a, form).await), "role_id");
}
both!(a_tenant_cannot_reach_another_tenants_accounts_or_keys);

/// PostgreSQL: a second server process on the same database stops accepting a disabled
/// account's keys at once too (NOTIFY), well inside the 2 s key cache lifetime.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn disabling_reaches_every_process() {
    let Some(app) = TestApp::builder(Backend::Postgres).try_spawn().await else { return };
    let (svc, _) = service(&app.store);
    let me = sign_up(&svc, "Maple", "olivia@maple.example").await.me;
    let web = svc.create_service_account(&me, "Website").await.unwrap();
    let key = svc
        .create_key(&me, NewKey { service_account_id: web.id.clone(), livemode: true, scopes: vec!["*".into()], property_ids: None })
        .await
        .unwrap();
    let node2 = app.second_node().spawn().await;
    // Give node 2's listener a moment to subscribe.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    assert_eq!(node2.call_on(true, &key.secret, "GET", "/v1/users", None).await.status, 200, "now cached on node 2");
    svc.set_service_account_active(&me, &web.id, false).await.unwrap();
    let started = std::time::Instant::now();
    loop {
        let status = node2.call_on(true, &key.secret, "GET", "/v1/users", None).await.status;
        if status == 401 {
            break;
        }
        assert!(started.elapsed() < std::time::Duration::from_millis(1500), "node 2 still accepts a disabled account's key");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    node2.stop().await;
    app.stop().await;
}

/// `gable user create`: an operator makes a console user of a tenant that may have no
/// roles yet (made by `gable tenant create`); the default roles are made first.
async fn operators_create_users_with_the_default_roles(app: &TestApp) {
    let (svc, _) = service(&app.store);
    let tenant = app.store.create_tenant("CLI Co").await.unwrap();
    let ro = svc.create_user_as_operator(tenant, "Rory@Example.com", "Rory", "read-only", PASSWORD).await.expect("read-only user");
    assert_eq!((ro.email.as_str(), ro.role.as_deref(), ro.status.as_str()), ("rory@example.com", Some("Read-only staff"), "active"));
    let owner = svc.create_user_as_operator(tenant, "olive@example.com", "Olive", "owner", PASSWORD).await.expect("owner");
    assert_eq!(owner.role.as_deref(), Some("Owner"));
    // The roles were made once; the users sign in with their roles' permissions.
    let session = svc.sign_in("olive@example.com", PASSWORD, &anyone(), None).await.expect("sign-in");
    assert!(session.me.can_manage);
    assert_eq!(svc.roles(&session.me).await.unwrap().len(), 3);
    let rory = svc.sign_in("rory@example.com", PASSWORD, &anyone(), None).await.expect("sign-in");
    assert!(!rory.me.can_manage);
    // Refusals: an unknown role, a taken email, a weak password; nothing is made.
    assert!(svc.create_user_as_operator(tenant, "x@example.com", "X", "superuser", PASSWORD).await.is_err());
    assert!(svc.create_user_as_operator(tenant, "rory@example.com", "R", "admin", PASSWORD).await.is_err());
    assert!(svc.create_user_as_operator(tenant, "y@example.com", "Y", "admin", "short").await.is_err());
    assert_eq!(app.count_where("users", &format!("tenant_id = '{tenant}'")).await, 2);
}
both!(operators_create_users_with_the_default_roles);

/// "OAuth apps" and "Connected apps": owners and admins register, edit, rotate
/// and delete their tenant's apps; users see and revoke the authorizations they gave
/// (managers: everyone's); deleting an app revokes what it holds.
async fn oauth_apps_and_connected_apps(app: &TestApp) {
    use gable::accounts::service::OAuthAppForm;
    let (svc, _) = service(&app.store);
    let owner = sign_up(&svc, "Maple PM", "olive@example.com").await;
    let form = |uris: &str, public: bool| OAuthAppForm { name: "Ledger Sync".into(), redirect_uris: uris.into(), public };
    // Refusals name the field; nothing is registered.
    let bad = failure(svc.create_oauth_app(&owner.me, form("http://example.com/cb", false)).await);
    assert!(matches!(&bad, ConsoleError::Invalid { field, .. } if field == "redirect_uris"), "{bad:?}");
    assert!(svc.oauth_apps(&owner.me).await.unwrap().is_empty());
    let made = svc.create_oauth_app(&owner.me, form("https://ledger.example.com/cb\n\nhttp://127.0.0.1:8765/cb", false)).await.unwrap();
    let secret = made.client_secret.clone().expect("a confidential app's secret, once");
    assert_eq!(made.app.redirect_uris.len(), 2);
    assert!(!made.app.livemode, "registered for the environment the console shows (newcomers: test)");
    let listed = svc.oauth_apps(&owner.me).await.unwrap();
    assert_eq!(listed, vec![made.app.clone()]);
    // Edit, rotate (the old secret stops), delete.
    let edited = svc.update_oauth_app(&owner.me, &made.app.id, "https://ledger.example.com/new").await.unwrap();
    assert_eq!(edited.redirect_uris, ["https://ledger.example.com/new"]);
    let rotated = svc.rotate_oauth_app_secret(&owner.me, &made.app.id).await.unwrap();
    let new_secret = rotated.client_secret.unwrap();
    assert_ne!(new_secret, secret);
    let auth = |s: &str| gable::oauth::ClientAuth { client_id: made.app.client_id.clone(), secret: Some(s.to_string()), basic: false };
    assert!(gable::oauth::authenticate_client(&app.store, &auth(&secret)).await.is_err());
    assert!(gable::oauth::authenticate_client(&app.store, &auth(&new_secret)).await.is_ok());
    let public = svc.create_oauth_app(&owner.me, form("https://spa.example.com/cb", true)).await.unwrap();
    assert!(public.client_secret.is_none() && public.app.public);
    assert!(matches!(failure(svc.rotate_oauth_app_secret(&owner.me, &public.app.id).await), ConsoleError::Conflict(_)));

    // A read-only user sees apps but cannot manage them; another tenant cannot reach them.
    let roles = svc.roles(&owner.me).await.unwrap();
    let ro_role = roles.iter().find(|r| r.permissions == ["*:read"]).unwrap().id.clone();
    let user = NewUser { email: "rory@example.com".into(), name: "Rory".into(), role_id: ro_role, password: PASSWORD.into() };
    svc.create_user(&owner.me, user).await.unwrap();
    let rory = svc.sign_in("rory@example.com", PASSWORD, &anyone(), None).await.unwrap();
    assert_eq!(svc.oauth_apps(&rory.me).await.unwrap().len(), 2);
    assert!(matches!(failure(svc.delete_oauth_app(&rory.me, &made.app.id).await), ConsoleError::Forbidden(_)));
    let other = sign_up(&svc, "Other PM", "otto@example.com").await;
    assert!(matches!(failure(svc.delete_oauth_app(&other.me, &made.app.id).await), ConsoleError::NotFound(_)));

    // Connected apps: Rory and Olive each authorize the app (as consent does).
    let client = app.store.oauth_client(&made.app.client_id).await.unwrap().unwrap();
    let challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    for me in [&rory.me, &owner.me] {
        let (tenant, user) = (me.tenant_id.parse().unwrap(), me.user_id.parse().unwrap());
        let scopes = vec!["properties:read".to_string()];
        app.store.oauth_issue_code(&client, tenant, user, &scopes, "https://ledger.example.com/new", challenge, Utc::now()).await.unwrap();
    }
    let mine = svc.connected_apps(&rory.me).await.unwrap();
    assert_eq!(mine.len(), 1, "a read-only user sees their own");
    assert_eq!((mine[0].app_name.as_str(), mine[0].user_email.as_str()), ("Ledger Sync", "rory@example.com"));
    let all = svc.connected_apps(&owner.me).await.unwrap();
    assert_eq!(all.len(), 2, "owners see everyone's");
    let olives = all.iter().find(|g| g.user_email == "olive@example.com").unwrap();
    assert!(matches!(failure(svc.revoke_connected_app(&rory.me, &olives.id).await), ConsoleError::NotFound(_)), "not Rory's to revoke");
    svc.revoke_connected_app(&rory.me, &mine[0].id).await.unwrap();
    assert_eq!(svc.connected_apps(&owner.me).await.unwrap().len(), 1);
    // Deleting the app revokes what it still holds.
    svc.delete_oauth_app(&owner.me, &made.app.id).await.unwrap();
    assert!(svc.connected_apps(&owner.me).await.unwrap().is_empty());
    assert_eq!(svc.oauth_apps(&owner.me).await.unwrap().len(), 1);
    assert!(app.store.oauth_client(&made.app.client_id).await.unwrap().is_none());
}
both!(oauth_apps_and_connected_apps);
