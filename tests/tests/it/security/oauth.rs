//! OAuth 2.1 (second review, points 1, 2 and 6): an app's access follows its user's
//! current role at every use and refresh; a disabled user's grants end in the same
//! transaction as the change; the authorization endpoint never bounces anyone to an app
//! before a signed-in user has decided; "Connected apps" shows one entry per app and
//! revoking it ends every grant the user gave the app.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use gable::accounts::service::{Me, NewUser, OAuthApps, Sessions, SignUp, Team};
use gable::accounts::AccountService;
use gable::store::oauth::OAuthClient;
use gable_tests::{Backend, Res, TestApp};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

const REDIRECT: &str = "https://evil.example/callback";
const VERIFIER: &str = "security-verifier-0123456789-0123456789-0123456789";
const PASSWORD: &str = "correct horse battery staple";

fn challenge() -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(VERIFIER.as_bytes()))
}

/// A tenant signed up in the console: its owner, the console service, and a `*` key.
struct Account {
    console: AccountService,
    owner: Me,
    owner_token: String,
    tenant: Uuid,
    key: String,
}

async fn account(app: &TestApp, email: &str) -> Account {
    let console = AccountService::new(app.state.ops.clone());
    let form = SignUp { company: "Maple PM".into(), name: "Olive".into(), email: email.into(), password: PASSWORD.into() };
    let s = console.sign_up(form, "127.0.0.1").await.expect("sign-up");
    let tenant: Uuid = s.me.tenant_id.parse().unwrap();
    let key = app.key(tenant, true, &["*"], None).await;
    Account { console, owner: s.me, owner_token: s.token, tenant, key }
}

impl Account {
    async fn call(&self, app: &TestApp, key: &str, method: &str, path: &str, body: Option<Value>) -> Res {
        app.call_on(true, key, method, path, body).await
    }

    /// A role made through the API by the owner's key.
    async fn role(&self, app: &TestApp, name: &str, permissions: &[&str]) -> String {
        let r = self.call(app, &self.key, "POST", "/v1/roles", Some(json!({ "name": name, "permissions": permissions }))).await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["data"]["id"].as_str().unwrap().to_string()
    }

    /// A console user with the role.
    async fn user(&self, email: &str, role: &str) -> Uuid {
        let u = NewUser { email: email.into(), name: "Una".into(), role_id: role.into(), password: PASSWORD.into() };
        self.console.create_user(&self.owner, u).await.expect("user").id.parse().unwrap()
    }
}

/// An app registered by another tenant (anyone can sign up and register one).
async fn app_of_someone_else(app: &TestApp) -> OAuthClient {
    let vendor = app.store.create_tenant("Vendor").await.unwrap();
    let uris = vec![REDIRECT.to_string()];
    gable::oauth::register_client(&app.store, vendor, "Ledger Sync", &uris, true, true, app.clock.now()).await.unwrap().0
}

/// What a user's consent makes: a code, exchanged for tokens at the token endpoint.
async fn authorize(app: &TestApp, c: &OAuthClient, tenant: Uuid, user: Uuid, scopes: &[&str]) -> Res {
    let scopes: Vec<String> = scopes.iter().map(|s| s.to_string()).collect();
    let code = app.store.oauth_issue_code(c, tenant, user, &scopes, REDIRECT, &challenge(), app.clock.now()).await.unwrap();
    let form = [
        ("grant_type", "authorization_code"),
        ("code", code.as_str()),
        ("redirect_uri", REDIRECT),
        ("code_verifier", VERIFIER),
        ("client_id", c.client_id.as_str()),
    ];
    app.raw(app.client.post(format!("{}/oauth/token", app.live)).form(&form)).await
}

async fn tokens(app: &TestApp, c: &OAuthClient, tenant: Uuid, user: Uuid, scopes: &[&str]) -> (String, String) {
    let r = authorize(app, c, tenant, user, scopes).await;
    assert_eq!(r.status, 200, "{}", r.text);
    (r.body["access_token"].as_str().unwrap().to_string(), r.body["refresh_token"].as_str().unwrap().to_string())
}

async fn refresh(app: &TestApp, c: &OAuthClient, token: &str) -> Res {
    let form = [("grant_type", "refresh_token"), ("refresh_token", token), ("client_id", c.client_id.as_str())];
    app.raw(app.client.post(format!("{}/oauth/token", app.live)).form(&form)).await
}

fn refused(r: &Res, scope: &str) {
    r.assert_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required_scope"], scope, "{}", r.text);
}

/// Finding 2.1 (high): a demoted user's app kept the scopes of the role they had, and
/// could set the user's role back to Owner. Now every use is capped by the current role.
async fn oauth_access_follows_a_demotion_at_once(app: &TestApp) {
    let a = account(app, "olive@maple.example").await;
    let manager = a.role(app, "Manager", &["*"]).await;
    let reader = a.role(app, "Reader", &["*:read"]).await;
    let clerk = a.role(app, "Clerk", &["properties:write", "users:write"]).await;
    let una = a.user("una@maple.example", &manager).await;
    let c = app_of_someone_else(app).await;
    let (access, _) = tokens(app, &c, a.tenant, una, &["users:write", "properties:write"]).await;
    let property =
        json!({ "name": "Maple Court", "kind": "residential", "address": { "line1": "1 Maple St", "city": "Portland", "country": "US" } });
    let r = a.call(app, &access, "POST", "/v1/properties", Some(property.clone())).await;
    assert_eq!(r.status, 201, "before the demotion the app writes: {}", r.text);

    // The owner demotes Una to read-only: her app may now only read, at once.
    let r = a.call(app, &a.key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "role_id": reader }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    refused(&a.call(app, &access, "POST", "/v1/properties", Some(property.clone())).await, "properties:write");
    assert_eq!(a.call(app, &access, "GET", "/v1/properties", None).await.status, 200, "reading stays within both");
    // The escalation the review found: the app sets Una's role back to Manager.
    let r = a.call(app, &access, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "role_id": manager }))).await;
    refused(&r, "users:write");
    let r = a.call(app, &a.key, "GET", &format!("/v1/users/{una}"), None).await;
    assert_eq!(r.body["data"]["role_id"], json!(reader), "the role is unchanged");

    // Narrowing the role's permissions counts as much as changing the role.
    let r = a.call(app, &a.key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "role_id": clerk }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(a.call(app, &access, "POST", "/v1/properties", Some(property.clone())).await.status, 201);
    let r = a.call(app, &a.key, "PATCH", &format!("/v1/roles/{clerk}"), Some(json!({ "permissions": ["properties:read"] }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    refused(&a.call(app, &access, "POST", "/v1/properties", Some(property)).await, "properties:write");
    let r = a.call(app, &access, "GET", "/v1/users", None).await;
    refused(&r, "users:read");
}

/// Finding 2.1: a refresh issued the grant's scopes whatever the user's role had become,
/// and a disabled user's refresh token still worked.
async fn oauth_refresh_follows_the_role_and_refuses_a_disabled_user(app: &TestApp) {
    let a = account(app, "olive@maple.example").await;
    let manager = a.role(app, "Manager", &["*"]).await;
    let reader = a.role(app, "Reader", &["*:read"]).await;
    let una = a.user("una@maple.example", &manager).await;
    let c = app_of_someone_else(app).await;
    let (_, refresh_token) = tokens(app, &c, a.tenant, una, &["users:write", "properties:read"]).await;

    a.call(app, &a.key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "role_id": reader }))).await;
    let r = refresh(app, &c, &refresh_token).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["scope"], json!("users:read properties:read"), "the answer names what the app may do now");
    let (access, next) = (r.body["access_token"].as_str().unwrap(), r.body["refresh_token"].as_str().unwrap().to_string());
    refused(&a.call(app, access, "POST", "/v1/users", Some(json!({ "email": "x@maple.example", "name": "X" }))).await, "users:write");

    // Disabled: the refresh is `invalid_grant`, and enabling Una again revives nothing.
    let r = a.call(app, &a.key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "status": "disabled" }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = refresh(app, &c, &next).await;
    assert_eq!((r.status, r.body["error"].clone()), (400, json!("invalid_grant")), "{}", r.text);
    a.call(app, &a.key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "status": "active" }))).await;
    let r = refresh(app, &c, &next).await;
    assert_eq!((r.status, r.body["error"].clone()), (400, json!("invalid_grant")), "{}", r.text);
    assert_eq!(a.call(app, access, "GET", "/v1/properties", None).await.status, 401);
}

/// Finding 2.1: the revocation of a disabled user's grants ran after the change had
/// committed, and a failure there was only logged, so enabling the user again revived
/// the app. Now both are one transaction: if the revocation fails, so does the change.
async fn disabling_a_user_revokes_their_grants_in_the_same_transaction(app: &TestApp) {
    let a = account(app, "olive@maple.example").await;
    let manager = a.role(app, "Manager", &["*"]).await;
    let una = a.user("una@maple.example", &manager).await;
    let c = app_of_someone_else(app).await;
    let (access, _) = tokens(app, &c, a.tenant, una, &["properties:read"]).await;
    assert_eq!(a.call(app, &access, "GET", "/v1/properties", None).await.status, 200);

    // Make every change to a grant fail, as a broken disk or a lost connection would.
    match app.backend {
        Backend::Sqlite => {
            app.exec("CREATE TRIGGER refuse_grant_changes BEFORE UPDATE ON oauth_grants BEGIN SELECT RAISE(ABORT, 'refused'); END").await;
        }
        Backend::Postgres => {
            app.exec(
                "CREATE FUNCTION refuse_grant_changes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$",
            )
            .await;
            app.exec(
                "CREATE TRIGGER refuse_grant_changes BEFORE UPDATE ON oauth_grants FOR EACH ROW EXECUTE FUNCTION refuse_grant_changes()",
            )
            .await;
        }
    }
    let r = a.call(app, &a.key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "status": "disabled" }))).await;
    assert!(r.status >= 500, "the change cannot commit without its revocation: {}", r.text);
    let r = a.call(app, &a.key, "GET", &format!("/v1/users/{una}"), None).await;
    assert_eq!(r.body["data"]["status"], json!("active"), "nothing half-written");
    app.exec(match app.backend {
        Backend::Sqlite => "DROP TRIGGER refuse_grant_changes",
        Backend::Postgres => "DROP TRIGGER refuse_grant_changes ON oauth_grants",
    })
    .await;

    let r = a.call(app, &a.key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "status": "disabled" }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(app.count_where("oauth_grants", "revoked_at IS NULL").await, 0, "revoked with the change");
    a.call(app, &a.key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "status": "active" }))).await;
    assert_eq!(a.call(app, &access, "GET", "/v1/properties", None).await.status, 401, "enabling again revives nothing");
}

/// Finding 2.2: `/oauth/authorize` redirected some errors to the app's redirect URI
/// before anyone had signed in, so anyone who registered an app could use Gable's
/// address to bounce people to any site.
async fn authorize_errors_are_shown_never_bounced_to_the_app(app: &TestApp) {
    let a = account(app, "olive@maple.example").await;
    let c = app_of_someone_else(app).await;
    let no_redirects = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().unwrap();
    let query = |response_type: &str, scope: &str, method: Option<&str>, with_challenge: bool| {
        let mut q = url::form_urlencoded::Serializer::new(String::new());
        q.append_pair("response_type", response_type)
            .append_pair("client_id", &c.client_id)
            .append_pair("redirect_uri", REDIRECT)
            .append_pair("scope", scope)
            .append_pair("state", "s");
        if with_challenge {
            q.append_pair("code_challenge", &challenge());
        }
        if let Some(m) = method {
            q.append_pair("code_challenge_method", m);
        }
        q.finish()
    };
    let cases = [
        ("unsupported_response_type", query("token", "properties:read", Some("S256"), true)),
        ("invalid_request", query("code", "properties:read", Some("plain"), true)),
        ("invalid_request", query("code", "properties:read", None, true)),
        ("invalid_request", query("code", "properties:read", Some("S256"), false)),
        ("invalid_scope", query("code", "root", Some("S256"), true)),
    ];
    for (error, q) in &cases {
        for cookie in [None, Some(a.owner_token.as_str())] {
            let mut req = no_redirects.get(format!("{}/oauth/authorize?{q}", app.live));
            if let Some(c) = cookie {
                req = req.header("Cookie", format!("gable_session={c}"));
            }
            let r = app.raw(req).await;
            assert_eq!(r.status, 400, "{error} (signed in: {}): {}", cookie.is_some(), r.text);
            assert!(r.headers.get("location").is_none(), "never a redirect: {:?}", r.headers);
            assert!(!r.text.contains("evil.example"), "the page does not even link to the app");
            assert!(r.text.contains(error), "{}", r.text);
        }
    }
}

/// Finding 2.6: authorizing an app twice listed it twice under "Connected apps", and
/// revoking one entry left the app's other tokens working.
async fn connected_apps_show_one_entry_per_app_and_revoke_it_whole(app: &TestApp) {
    let a = account(app, "olive@maple.example").await;
    let owner: Uuid = a.owner.user_id.parse().unwrap();
    let c = app_of_someone_else(app).await;
    let (first, first_refresh) = tokens(app, &c, a.tenant, owner, &["properties:read"]).await;
    let (second, _) = tokens(app, &c, a.tenant, owner, &["leases:read"]).await;

    let listed = a.console.connected_apps(&a.owner).await.unwrap();
    assert_eq!(listed.len(), 1, "{listed:?}");
    let mut scopes = listed[0].scopes.clone();
    scopes.sort();
    assert_eq!(scopes, vec!["leases:read", "properties:read"]);

    a.console.revoke_connected_app(&a.owner, &listed[0].id).await.unwrap();
    for token in [&first, &second] {
        assert_eq!(a.call(app, token, "GET", "/v1/properties", None).await.status, 401);
    }
    let r = refresh(app, &c, &first_refresh).await;
    assert_eq!(r.body["error"], json!("invalid_grant"), "{}", r.text);
    assert!(a.console.connected_apps(&a.owner).await.unwrap().is_empty());
}

/// An app's expansions are reads like any other: within the token's scopes and the
/// user's current role, refused naming the path once a demotion takes the read away.
async fn oauth_expansions_follow_the_token_and_the_role(app: &TestApp) {
    let a = account(app, "olive@maple.example").await;
    let reader = a.role(app, "Reader", &["*:read"]).await;
    let leases_only = a.role(app, "Leases", &["leases:read"]).await;
    let una = a.user("una@maple.example", &reader).await;
    let property =
        json!({ "name": "Maple Court", "kind": "residential", "address": { "line1": "1 Maple St", "city": "Portland", "country": "US" } });
    let p = a.call(app, &a.key, "POST", "/v1/properties", Some(property)).await.body["data"]["id"].clone();
    let unit = a.call(app, &a.key, "POST", "/v1/units", Some(json!({ "property_id": p, "number": "1A" }))).await.body["data"]["id"].clone();
    let body = json!({ "unit_id": unit, "start_date": "2027-01-01", "rent": 1450, "currency": "USD" });
    let lease = a.call(app, &a.key, "POST", "/v1/leases", Some(body)).await.body["data"]["id"].as_str().unwrap().to_string();
    let c = app_of_someone_else(app).await;
    let (access, _) = tokens(app, &c, a.tenant, una, &["leases:read", "units:read"]).await;
    let path = format!("/v1/leases/{lease}?expand[]=unit");
    let r = a.call(app, &access, "GET", &path, None).await;
    assert_eq!(r.body["data"]["unit_id"]["object"], "unit", "{}", r.text);
    // The token was not granted properties:read, though the role holds it.
    let r = a.call(app, &access, "GET", &format!("{path}.property"), None).await;
    super::expansions::refused_path(&r, "unit.property", "properties:read");
    // Demoted to leases only: the unit is no longer the app's to expand.
    let r = a.call(app, &a.key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "role_id": leases_only }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    super::expansions::refused_path(&a.call(app, &access, "GET", &path, None).await, "unit", "units:read");
    assert_eq!(a.call(app, &access, "GET", &format!("/v1/leases/{lease}"), None).await.status, 200, "the lease itself still reads");
}

gable_tests::both!(oauth_access_follows_a_demotion_at_once);
gable_tests::both!(oauth_expansions_follow_the_token_and_the_role);
gable_tests::both!(oauth_refresh_follows_the_role_and_refuses_a_disabled_user);
gable_tests::both!(disabling_a_user_revokes_their_grants_in_the_same_transaction);
gable_tests::both!(authorize_errors_are_shown_never_bounced_to_the_app);
gable_tests::both!(connected_apps_show_one_entry_per_app_and_revoke_it_whole);

/// The request log through an app: its calls are recorded as the app's (its
/// app and user named), it reads the log while the user's role allows, and not from the
/// moment the user is demoted below `request-logs:read`.
async fn oauth_request_log_follows_a_demotion(app: &TestApp) {
    let a = account(app, "olive@maple.example").await;
    let analyst = a.role(app, "Analyst", &["request-logs:read", "properties:read"]).await;
    let clerk = a.role(app, "Clerk", &["properties:read"]).await;
    let una = a.user("una@maple.example", &analyst).await;
    let c = app_of_someone_else(app).await;
    let (access, _) = tokens(app, &c, a.tenant, una, &["request-logs:read", "properties:read"]).await;
    let call = a.call(app, &access, "GET", "/v1/properties", None).await;
    assert_eq!(call.status, 200, "{}", call.text);
    let id = call.headers["request-id"].to_str().unwrap().to_string();
    let log = crate::api::request_logs::logged(app, true, &access, &id).await;
    assert_eq!(log["credential_type"], "oauth");
    assert_eq!(log["oauth_client_id"], json!(c.id.to_string()));
    assert_eq!(log["user_id"], json!(una.to_string()));
    // The owner demotes Una: her app may not read the log any more, at once.
    let r = a.call(app, &a.key, "PATCH", &format!("/v1/users/{una}"), Some(json!({ "role_id": clerk }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    refused(&a.call(app, &access, "GET", &format!("/v1/request-logs/{id}"), None).await, "request-logs:read");
    refused(&a.call(app, &access, "GET", "/v1/request-logs", None).await, "request-logs:read");
    assert_eq!(a.call(app, &access, "GET", "/v1/properties", None).await.status, 200, "what the role still allows");
    // Nor is the token itself in the log.
    let stored = format!(
        "COALESCE(request_body, '') || COALESCE(response_body, '') || COALESCE(CAST(request_headers AS TEXT), '') LIKE '%{}%'",
        &access[4..]
    );
    assert_eq!(app.count_where("request_logs", &stored).await, 0, "the access token is not stored");
}
gable_tests::both!(oauth_request_log_follows_a_demotion);

/// An OAuth token's event stream follows its user's role: demoted below what the events
/// carry, the stream ends at its next look, saying why, and cannot be opened again.
async fn oauth_event_stream_follows_a_demotion(app: &TestApp) {
    use gable_tests::sse::{data, EventStream};
    let a = account(app, "otto@maple.example").await;
    let listener = a.role(app, "Listener", &["events:read", "leads:read"]).await;
    let clerk = a.role(app, "Clerk", &["events:read", "properties:read"]).await;
    let uma = a.user("uma@maple.example", &listener).await;
    let c = app_of_someone_else(app).await;
    let (access, _) = tokens(app, &c, a.tenant, uma, &["events:read", "leads:read"]).await;
    let url = format!("{}/v1/events/stream?events=lead.created", app.base(true));
    let mut s = EventStream::open(&app.client, &url, &access, None).await.expect("the token listens");
    let r = a.call(app, &a.key, "POST", "/v1/leads", Some(json!({ "name": "Heard", "email": "h@example.com" }))).await;
    assert_eq!(r.status, 201, "{}", r.text);
    let heard = s.next(std::time::Duration::from_secs(5)).await.expect("the lead's event");
    assert_eq!(data(&heard)["type"], "lead.created");
    // The owner demotes Uma: her app's stream ends at once.
    let r = a.call(app, &a.key, "PATCH", &format!("/v1/users/{uma}"), Some(json!({ "role_id": clerk }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let end = s.next(std::time::Duration::from_secs(5)).await.expect("the stream says why it ends");
    assert_eq!(end.event, "end");
    assert_eq!(data(&end)["error"]["code"], "insufficient_scope", "{end:?}");
    let again = EventStream::open(&app.client, &url, &access, None).await.err().expect("refused");
    assert_eq!((again.status, again.code()), (403, "insufficient_scope"), "{:?}", again.body);
}
gable_tests::both!(oauth_event_stream_follows_a_demotion);

/// The request log's stream follows a demotion too: the user's role loses
/// `request-logs:read`, and the app's stream of calls ends at its next look.
async fn oauth_request_log_stream_follows_a_demotion(app: &TestApp) {
    use gable_tests::sse::{data, EventStream};
    let a = account(app, "rex@maple.example").await;
    let auditor = a.role(app, "Auditor", &["request-logs:read"]).await;
    let clerk = a.role(app, "Clerk", &["properties:read"]).await;
    let rita = a.user("rita@maple.example", &auditor).await;
    let c = app_of_someone_else(app).await;
    let (access, _) = tokens(app, &c, a.tenant, rita, &["request-logs:read"]).await;
    let url = format!("{}/v1/request-logs/stream", app.base(true));
    let mut s = EventStream::open(&app.client, &url, &access, None).await.expect("the token follows the log");
    let r = a.call(app, &a.key, "PATCH", &format!("/v1/users/{rita}"), Some(json!({ "role_id": clerk }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    // Calls recorded before the next look may still come; then the stream says why it ends.
    let mut end = None;
    while let Some(e) = s.next(std::time::Duration::from_secs(15)).await {
        if e.event == "end" {
            end = Some(e);
            break;
        }
    }
    let end = end.expect("the stream ends");
    assert_eq!(data(&end)["error"]["code"], "insufficient_scope", "{end:?}");
    let again = EventStream::open(&app.client, &url, &access, None).await.err().expect("refused");
    assert_eq!((again.status, again.code()), (403, "insufficient_scope"), "{:?}", again.body);
}
gable_tests::both!(oauth_request_log_stream_follows_a_demotion);
