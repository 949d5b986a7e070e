//! `expand[]` reads only what a read would. An expansion is a read of the
//! collection it brings: without that collection's read scope it is a `403` naming the
//! path, before anything is read or written; a record outside the credential's reach
//! (another property, another tenant, an event of a collection it may not read) stays an
//! id. OAuth tokens and flow tokens are covered in `oauth` and `flows`, beside their
//! other refusals.

use gable_tests::world::{self, World};
use gable_tests::{both, Backend, Res, TestApp};
use serde_json::{json, Value};
use sqlx::Connection;

/// A `403 insufficient_scope` for `expand[]`, naming the path and the scope it lacks.
pub(super) fn refused_path(r: &Res, path: &str, scope: &str) {
    r.assert_error(403, "insufficient_scope");
    assert_eq!(r.param(), "expand[]", "{}", r.text);
    assert_eq!(r.body["error"]["details"]["required_scope"], scope, "{}", r.text);
    let message = r.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(&format!("`{path}`")), "the message names `{path}`: {message}");
}

async fn world(app: &TestApp) -> (gable_tests::Tenant, World) {
    let t = app.tenant("A").await;
    let w = world::build(app, t.id, &t.test_key).await;
    (t, w)
}

async fn a_key_expands_only_the_collections_it_may_read(app: &TestApp) {
    let (t, w) = world(app).await;
    let lease = w.id("leases");
    let leases_only = app.key(t.id, false, &["leases:read"], None).await;
    for path in [format!("/v1/leases/{lease}?expand[]=unit"), "/v1/leases?expand[]=unit".to_string()] {
        refused_path(&app.call(&leases_only, "GET", &path, None).await, "unit", "units:read");
    }
    // Each level of a path is a read of its own collection.
    let with_units = app.key(t.id, false, &["leases:read", "units:read"], None).await;
    let r = app.call(&with_units, "GET", &format!("/v1/leases/{lease}?expand[]=unit.property"), None).await;
    refused_path(&r, "unit.property", "properties:read");
    let r = app.call(&with_units, "GET", &format!("/v1/leases/{lease}?expand[]=unit"), None).await;
    assert_eq!(r.body["data"]["unit_id"]["object"], "unit", "{}", r.text);

    // A write refuses before it writes: nothing is made or changed.
    let writer = app.key(t.id, false, &["leases:write", "leases:read", "listings:write"], None).await;
    let before = app.count_rows("leases").await;
    let body = json!({ "unit_id": w.id("units"), "start_date": "2028-01-01", "rent": 1500, "currency": "USD" });
    refused_path(&app.call(&writer, "POST", "/v1/leases?expand[]=unit", Some(body)).await, "unit", "units:read");
    let r = app.call(&writer, "PATCH", &format!("/v1/leases/{lease}?expand[]=unit"), Some(json!({ "rent": 1 }))).await;
    refused_path(&r, "unit", "units:read");
    let listing = w.id("listings");
    let r = app.call(&writer, "POST", &format!("/v1/listings/{listing}/publish?expand[]=unit"), None).await;
    refused_path(&r, "unit", "units:read");
    assert_eq!(app.count_rows("leases").await, before);
    let r = app.call(&t.test_key, "GET", &format!("/v1/leases/{lease}"), None).await;
    assert_eq!(r.body["data"]["rent"], json!(1450));
    let r = app.call(&t.test_key, "GET", &format!("/v1/listings/{listing}"), None).await;
    assert_eq!(r.body["data"]["status"], "draft");
}
both!(a_key_expands_only_the_collections_it_may_read);

/// An event carries a record of another collection: expanded, it is shown only to a
/// credential that may read that collection, as a read of it is.
async fn an_expanded_event_needs_the_read_of_what_it_carries(app: &TestApp) {
    let (t, w) = world(app).await;
    let delivery = w.id("webhook-deliveries");
    let path = format!("/v1/webhook-deliveries/{delivery}?expand[]=event");
    let blind = app.key(t.id, false, &["webhook-deliveries:read", "events:read"], None).await;
    let r = app.call(&blind, "GET", &path, None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["event_id"], json!(w.id("events")), "a lease's event stays an id without leases:read");
    app.call(&blind, "GET", &format!("/v1/events/{}", w.id("events")), None).await.assert_error(403, "insufficient_scope");
    let seeing = app.key(t.id, false, &["webhook-deliveries:read", "events:read", "leases:read"], None).await;
    let r = app.call(&seeing, "GET", &path, None).await;
    assert_eq!(r.body["data"]["event_id"]["type"], "lease.sent", "{}", r.text);
}
both!(an_expanded_event_needs_the_read_of_what_it_carries);

/// A key limited to a property expands what it may read there; a tenant-wide record (a
/// vendor, an owner), which it cannot read at all, stays an id.
async fn a_property_limited_key_sees_only_ids_outside_its_properties(app: &TestApp) {
    let (t, w) = world(app).await;
    let property: uuid::Uuid = w.id("properties").parse().unwrap();
    let limited = app.key(t.id, false, &["*:read"], Some(vec![property])).await;
    let order = w.id("workorders");
    let r = app.call(&limited, "GET", &format!("/v1/workorders/{order}?expand[]=vendor&expand[]=unit.property"), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["vendor_id"], json!(w.id("vendors")), "a vendor is tenant-wide: {}", r.text);
    assert_eq!(r.body["data"]["unit_id"]["property_id"]["object"], "property");
    app.call(&limited, "GET", &format!("/v1/vendors/{}", w.id("vendors")), None).await.assert_error(404, "not_found");
    let r = app.call(&limited, "GET", "/v1/properties?expand[]=owner&expand[]=company", None).await;
    let data = r.body["data"].as_array().unwrap_or_else(|| panic!("{}", r.text));
    assert_eq!(data.len(), 1);
    assert_eq!((data[0]["owner_id"].clone(), data[0]["company_id"].clone()), (json!(w.id("owners")), json!(w.id("companies"))));

    // Another property's key sees none of it, expanded or not.
    let other = app.property(&t.test_key).await;
    let elsewhere = app.key(t.id, false, &["*:read"], Some(vec![other["id"].as_str().unwrap().parse().unwrap()])).await;
    app.call(&elsewhere, "GET", &format!("/v1/workorders/{order}?expand[]=unit"), None).await.assert_error(404, "not_found");
    let r = app.call(&elsewhere, "GET", "/v1/workorders?expand[]=unit", None).await;
    assert_eq!(r.body["data"], json!([]), "{}", r.text);
}
both!(a_property_limited_key_sees_only_ids_outside_its_properties);

/// A reference planted across tenants (past the foreign keys, as only direct access to
/// the database could) still expands to nothing of the other tenant's.
async fn an_expansion_never_crosses_tenants(app: &TestApp) {
    let (a, wa) = world(app).await;
    let b = app.tenant("B").await;
    let wb = world::build(app, b.id, &b.test_key).await;
    // B cannot name A's records, expanded or not.
    let r = app.call(&b.test_key, "GET", &format!("/v1/leases/{}?expand[]=unit", wa.id("leases")), None).await;
    r.assert_error(404, "not_found");
    // B's lease made to point at A's unit.
    let plant = format!("UPDATE leases SET unit_id = '{}' WHERE id = '{}'", wa.id("units"), wb.id("leases"));
    match app.backend {
        Backend::Sqlite => {
            let mut c = sqlx::SqliteConnection::connect(&app.database_url).await.unwrap();
            sqlx::query("PRAGMA foreign_keys = OFF").execute(&mut c).await.unwrap();
            sqlx::query(&plant).execute(&mut c).await.unwrap();
        }
        Backend::Postgres => {
            let mut c = sqlx::PgConnection::connect(&app.database_url).await.unwrap();
            sqlx::query("SET session_replication_role = replica").execute(&mut c).await.unwrap();
            sqlx::query(&plant).execute(&mut c).await.unwrap();
        }
    }
    let r = app.call(&b.test_key, "GET", &format!("/v1/leases/{}?expand[]=unit.property", wb.id("leases")), None).await;
    assert_eq!(r.status, 200, "{}", r.text);
    assert_eq!(r.body["data"]["unit_id"], json!(wa.id("units")), "A's unit is not B's to see: {}", r.text);
    let r = app.call(&b.test_key, "GET", "/v1/leases?expand[]=unit", None).await;
    let shown: Vec<&Value> = r.body["data"].as_array().unwrap().iter().map(|l| &l["unit_id"]).collect();
    assert!(shown.iter().all(|u| u.is_string()), "{shown:?}");
    // A's own key still sees its unit, expanded.
    let r = app.call(&a.test_key, "GET", &format!("/v1/leases/{}?expand[]=unit", wa.id("leases")), None).await;
    assert_eq!(r.body["data"]["unit_id"]["id"], json!(wa.id("units")));
}
both!(an_expansion_never_crosses_tenants);
