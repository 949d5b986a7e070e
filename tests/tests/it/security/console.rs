//! The console shows each staff member what their role may read (second review, point
//! 4). The console's pages call the console service with the signed-in user; these
//! tests call it as those pages do, as a user whose role reads only leases, and as a
//! user who is demoted while signed in. Every read is checked on the server; hiding a
//! link protects nothing.

use gable::accounts::service::{
    ConsoleError, DeliveryFilter, Me, NewUser, OAuthApps, ServiceAccounts, Sessions, SignUp, Team, WebhookForm, Webhooks,
};
use gable::accounts::AccountService;
use gable_tests::TestApp;
use serde_json::json;
use uuid::Uuid;

const PASSWORD: &str = "correct horse battery staple";

fn forbidden<T: std::fmt::Debug>(what: &str, r: Result<T, ConsoleError>) {
    match r {
        Err(ConsoleError::Forbidden(m)) => assert!(m.contains('`'), "{what}: the refusal names the permission: {m}"),
        other => panic!("{what}: expected Forbidden, got {other:?}"),
    }
}

pub(super) struct Staff {
    pub(super) console: AccountService,
    pub(super) owner: Me,
    /// A `*` key of the environment the console shows.
    pub(super) key: String,
    /// A `*` live key: users and roles are live records.
    live: String,
}

pub(super) async fn staff(app: &TestApp) -> Staff {
    let console = AccountService::new(app.state.ops.clone());
    let form = SignUp { company: "Maple PM".into(), name: "Olive".into(), email: "olive@maple.example".into(), password: PASSWORD.into() };
    let owner = console.sign_up(form, "127.0.0.1").await.expect("sign-up").me;
    let tenant: Uuid = owner.tenant_id.parse().unwrap();
    let key = app.key(tenant, owner.livemode, &["*"], None).await;
    let live = app.key(tenant, true, &["*"], None).await;
    Staff { console, owner, key, live }
}

impl Staff {
    /// A user with a role of these permissions, signed in: their session token and `Me`.
    pub(super) async fn signed_in(&self, app: &TestApp, email: &str, permissions: &[&str]) -> (String, Me) {
        let r = app.call_on(true, &self.live, "POST", "/v1/roles", Some(json!({ "name": email, "permissions": permissions }))).await;
        let role = r.body["data"]["id"].as_str().unwrap_or_else(|| panic!("{}", r.text)).to_string();
        let user = NewUser { email: email.into(), name: "Staff".into(), role_id: role, password: PASSWORD.into() };
        self.console.create_user(&self.owner, user).await.expect("user");
        let s = self.console.sign_in(email, PASSWORD, "127.0.0.1", None).await.expect("sign-in");
        (s.token, s.me)
    }
}

/// Finding 4: every signed-in user could fetch webhook subscriptions, the delivery
/// register with the bodies sent, users, service accounts and keys, whatever their role.
async fn console_reads_follow_the_role(app: &TestApp) {
    let s = staff(app).await;
    let form = WebhookForm { url: "https://hooks.example.com/gable".into(), events: vec!["*".into()], description: String::new() };
    let hook = s.console.create_webhook(&s.owner, form).await.expect("webhook").webhook;
    app.call_on(
        s.owner.livemode,
        &s.key,
        "POST",
        "/v1/payments",
        Some(json!({ "amount": 10, "currency": "USD", "method": "cash", "scenario": "succeeded" })),
    )
    .await;
    app.call_on(s.owner.livemode, &s.key, "POST", "/v1/leads", Some(json!({ "name": "Lee", "email": "lee@example.com" }))).await;
    let deliveries = s.console.webhook_deliveries(&s.owner, &hook.id, DeliveryFilter::default()).await.unwrap();
    let of = |t: &str| deliveries.iter().find(|d| d.event_type == t).unwrap_or_else(|| panic!("a {t} delivery")).id.clone();
    let (payment, lead) = (of("payment.succeeded"), of("lead.created"));
    let sa = s.console.create_service_account(&s.owner, "Website").await.expect("service account");

    // A leasing clerk reads leases only: none of the console's administration.
    let (_, clerk) = s.signed_in(app, "clerk@maple.example", &["leases:read"]).await;
    forbidden("webhooks", s.console.webhooks(&clerk).await);
    forbidden("a webhook", s.console.webhook(&clerk, &hook.id).await);
    forbidden("the register", s.console.webhook_deliveries(&clerk, &hook.id, DeliveryFilter::default()).await);
    forbidden("a delivery", s.console.webhook_delivery(&clerk, &payment).await);
    forbidden("users", s.console.users(&clerk).await);
    forbidden("roles", s.console.roles(&clerk).await);
    forbidden("service accounts", s.console.service_accounts(&clerk).await);
    forbidden("a service account", s.console.service_account(&clerk, &sa.id).await);
    forbidden("keys", s.console.keys(&clerk, &sa.id).await);
    forbidden("OAuth apps", s.console.oauth_apps(&clerk).await);
    assert!(s.console.connected_apps(&clerk).await.is_ok(), "everyone sees the apps they connected themselves");

    // The register without payments: the list, and bodies only of what the role reads.
    let (_, ops) = s.signed_in(app, "ops@maple.example", &["webhooks:read", "webhook-deliveries:read", "leads:read"]).await;
    assert_eq!(s.console.webhooks(&ops).await.unwrap().len(), 1);
    let paid = s.console.webhook_delivery(&ops, &payment).await.unwrap();
    assert!(paid.request_body.is_none(), "a payment's body is not shown to a role without payments:read");
    assert!(paid.request_body_note.as_deref().is_some_and(|n| n.contains("payments:read")), "{:?}", paid.request_body_note);
    let led = s.console.webhook_delivery(&ops, &lead).await.unwrap();
    assert!(led.request_body.as_deref().is_some_and(|b| b.contains("lead.created")), "{:?}", led.request_body);
    forbidden("users", s.console.users(&ops).await);

    // Read-only staff (`*:read`) see everything, change nothing.
    let (_, reader) = s.signed_in(app, "rory@maple.example", &["*:read"]).await;
    assert!(s.console.users(&reader).await.is_ok() && s.console.service_accounts(&reader).await.is_ok());
    assert!(s.console.webhook_delivery(&reader, &payment).await.unwrap().request_body.is_some());
    assert!(matches!(s.console.create_service_account(&reader, "Nope").await, Err(ConsoleError::Forbidden(_))));
}

/// Finding 4: a user demoted while signed in keeps no read their new role lacks: the
/// session's permissions are the role's, read at every request.
async fn a_demoted_console_user_loses_reads_at_once(app: &TestApp) {
    let s = staff(app).await;
    let (token, before) = s.signed_in(app, "una@maple.example", &["*:read"]).await;
    assert!(s.console.users(&before).await.is_ok());
    let narrow = app.call_on(true, &s.live, "POST", "/v1/roles", Some(json!({ "name": "Narrow", "permissions": ["leases:read"] }))).await;
    let users = app.call_on(true, &s.live, "GET", "/v1/users?filter[email]=una@maple.example", None).await;
    let una = users.body["data"][0]["id"].as_str().unwrap_or_else(|| panic!("{}", users.text)).to_string();
    let r = app.call_on(true, &s.live, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "role_id": narrow.body["data"]["id"] }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let after = s.console.session(&token).await.unwrap().expect("still signed in");
    assert_eq!(after.permissions, vec!["leases:read".to_string()]);
    forbidden("users", s.console.users(&after).await);
    forbidden("service accounts", s.console.service_accounts(&after).await);
}

gable_tests::both!(console_reads_follow_the_role);
gable_tests::both!(a_demoted_console_user_loses_reads_at_once);
