//! No credential grants what it does not hold (`docs/api.md`, "Who may grant what"). Console
//! authority comes from the live `roles` and `users` records, so a key with only
//! `roles:write` or `users:write` must not be able to make anyone an owner: creating or
//! changing a role, assigning one, or changing the role or status of a user whose role
//! carries more than the key holds is `403 insufficient_scope` naming what is missing,
//! and changes nothing.

use gable_tests::{Res, TestApp};
use serde_json::{json, Value};

struct Live<'a> {
    app: &'a TestApp,
}

impl Live<'_> {
    async fn call(&self, key: &str, method: &str, path: &str, body: Option<Value>) -> Res {
        self.app.call_on(true, key, method, path, body).await
    }
    async fn create(&self, key: &str, resource: &str, body: Value) -> String {
        let r = self.call(key, "POST", &format!("/v1/{resource}"), Some(body)).await;
        assert_eq!(r.status, 201, "{}", r.text);
        r.body["data"]["id"].as_str().unwrap().to_string()
    }
    async fn get(&self, key: &str, path: &str) -> Value {
        let r = self.call(key, "GET", path, None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        r.body["data"].clone()
    }
}

fn refused(r: &Res, missing: &str) {
    r.assert_error(403, "insufficient_scope");
    assert_eq!(r.body["error"]["details"]["required_scope"], missing, "{}", r.text);
}

async fn no_credential_grants_more_than_it_holds(app: &TestApp) {
    let t = app.tenant("A").await;
    let live = Live { app };
    let owner = &t.live_key; // `*`
    let manager = live.create(owner, "roles", json!({ "name": "Manager", "permissions": ["*"] })).await;
    let viewer = live.create(owner, "roles", json!({ "name": "Viewer", "permissions": ["*:read"] })).await;
    let clerk = live.create(owner, "roles", json!({ "name": "Clerk", "permissions": ["leases:write"] })).await;
    let boss = live.create(owner, "users", json!({ "email": "boss@a.example", "name": "Boss", "role_id": manager })).await;
    let staff = live.create(owner, "users", json!({ "email": "staff@a.example", "name": "Staff", "role_id": clerk })).await;

    // A key that manages roles and users, but holds nothing else.
    let admin = app.key(t.id, true, &["roles:write", "users:write"], None).await;
    let users_before = live.get(owner, "/v1/users?limit=100").await;
    let roles_before = live.get(owner, "/v1/roles?limit=100").await;

    // Roles that carry more than the key holds: not created, not changed, not deleted.
    refused(&live.call(&admin, "POST", "/v1/roles", Some(json!({ "name": "Escalate", "permissions": ["*"] }))).await, "*");
    refused(&live.call(&admin, "POST", "/v1/roles", Some(json!({ "name": "Peek", "permissions": ["*:read"] }))).await, "*:read");
    refused(
        &live.call(&admin, "POST", "/v1/roles", Some(json!({ "name": "Pay", "permissions": ["roles:read", "payments:write"] }))).await,
        "payments:write",
    );
    refused(&live.call(&admin, "PATCH", &format!("/v1/roles/{clerk}"), Some(json!({ "permissions": ["*"] }))).await, "leases:write");
    refused(&live.call(&admin, "PATCH", &format!("/v1/roles/{manager}"), Some(json!({ "name": "Renamed" }))).await, "*");
    refused(&live.call(&admin, "DELETE", &format!("/v1/roles/{manager}"), None).await, "*");
    // Users: no assigning a stronger role, no touching a stronger user's role or status.
    let new_owner = json!({ "email": "mallory@a.example", "name": "Mallory", "role_id": manager });
    refused(&live.call(&admin, "POST", "/v1/users", Some(new_owner)).await, "*");
    refused(&live.call(&admin, "PATCH", &format!("/v1/users/{staff}"), Some(json!({ "role_id": manager }))).await, "leases:write");
    refused(&live.call(&admin, "PATCH", &format!("/v1/users/{boss}"), Some(json!({ "status": "disabled" }))).await, "*");
    refused(&live.call(&admin, "PATCH", &format!("/v1/users/{boss}"), Some(json!({ "role_id": viewer }))).await, "*");
    refused(&live.call(&admin, "DELETE", &format!("/v1/users/{boss}"), None).await, "*");
    // The refusals changed nothing.
    assert_eq!(live.get(owner, "/v1/users?limit=100").await, users_before);
    assert_eq!(live.get(owner, "/v1/roles?limit=100").await, roles_before);

    // What the key does hold, it can grant: a role within its own scopes, assigned to a
    // user with no stronger role; and harmless fields of a stronger user stay editable.
    let helper = live.create(&admin, "roles", json!({ "name": "Helper", "permissions": ["roles:read", "users:write"] })).await;
    live.create(&admin, "users", json!({ "email": "helper@a.example", "name": "Helper", "role_id": helper })).await;
    let r = live.call(&admin, "PATCH", &format!("/v1/users/{boss}"), Some(json!({ "name": "The Boss" }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    // Permissions must be real scopes.
    let r = live.call(owner, "POST", "/v1/roles", Some(json!({ "name": "Odd", "permissions": ["leases:admin"] }))).await;
    r.assert_error(400, "validation_failed");
    assert_eq!(r.param(), "permissions");

    // Only `*` makes someone a manager.
    let r = live.call(owner, "PATCH", &format!("/v1/users/{staff}"), Some(json!({ "role_id": manager }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
    let r = live.call(owner, "PATCH", &format!("/v1/roles/{clerk}"), Some(json!({ "permissions": ["*"] }))).await;
    assert_eq!(r.status, 200, "{}", r.text);
}
gable_tests::both!(no_credential_grants_more_than_it_holds);
