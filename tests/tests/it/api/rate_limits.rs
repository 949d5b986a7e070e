//! Rate limits per credential (`docs/api.md`, "Rate limits"): every authenticated `/v1`
//! response carries `RateLimit-Policy` and `RateLimit` (IETF draft, structured fields);
//! over the limit a request is `429 rate_limited` with a `Retry-After` that holds (a
//! request sent that many seconds later is allowed), it changes nothing, and another key
//! is not affected. Each story runs on a server with limits of its own (the harness's
//! default servers are unlimited).

use gable::config::{DEFAULT_RATE_LIMIT_LIVE, DEFAULT_RATE_LIMIT_TEST};
use gable_tests::{both, Res, TestApp};
use serde_json::json;

fn header<'a>(r: &'a Res, name: &str) -> Option<&'a str> {
    r.headers.get(name).and_then(|v| v.to_str().ok())
}

/// `RateLimit: "default";r=<remaining>;t=<seconds>` as (remaining, seconds).
fn ratelimit(r: &Res) -> (u64, u64) {
    let v = header(r, "ratelimit").unwrap_or_else(|| panic!("no RateLimit header: {} {}", r.status, r.text));
    let rest = v.strip_prefix("\"default\";").unwrap_or_else(|| panic!("RateLimit {v:?}"));
    let mut remaining = None;
    let mut seconds = None;
    for param in rest.split(';') {
        match param.split_once('=') {
            Some(("r", n)) => remaining = n.parse().ok(),
            Some(("t", n)) => seconds = n.parse().ok(),
            _ => panic!("RateLimit {v:?}: unexpected {param:?}"),
        }
    }
    (remaining.unwrap_or_else(|| panic!("RateLimit {v:?}: no r")), seconds.unwrap_or_else(|| panic!("RateLimit {v:?}: no t")))
}

fn assert_policy(r: &Res, quota: u32) {
    assert_eq!(header(r, "ratelimit-policy"), Some(format!("\"default\";q={quota};w=1").as_str()), "{} {}", r.status, r.text);
}

fn assert_no_fields(r: &Res) {
    assert!(header(r, "ratelimit").is_none() && header(r, "ratelimit-policy").is_none(), "{} {:?}", r.status, r.headers);
}

fn property(i: usize) -> serde_json::Value {
    json!({ "name": format!("Court {i}"), "kind": "residential", "address": { "line1": "1 Maple St", "city": "Portland", "country": "US" } })
}

/// With the default limits: the fields on successes and errors, each environment its
/// own quota, and none on what the credential layer refuses.
async fn every_authenticated_response_carries_the_fields(app: &TestApp) {
    let t = app.tenant("A").await;
    let test_q = DEFAULT_RATE_LIMIT_TEST;
    let live_q = DEFAULT_RATE_LIMIT_LIVE;
    assert_eq!((live_q, test_q), (100, 25), "the documented defaults");

    // A fresh key starts with its full quota: this request leaves all but one.
    let ok = app.call(&t.test_key, "GET", "/v1/properties", None).await;
    assert_eq!(ok.status, 200, "{}", ok.text);
    assert_policy(&ok, test_q);
    assert_eq!(ratelimit(&ok), (u64::from(test_q) - 1, 1));

    // Errors after the credential layer count and carry the fields too.
    let missing = app.call(&t.test_key, "GET", "/v1/properties/01932c5e-0000-7000-8000-000000000000", None).await;
    missing.assert_error(404, "not_found");
    assert_policy(&missing, test_q);
    let (remaining, seconds) = ratelimit(&missing);
    // 23, or 24 again if a 40 ms emission interval passed since the first request.
    assert!(remaining < u64::from(test_q), "{remaining}");
    assert_eq!(seconds, 1, "the quota is back within the one-second window");
    let unknown = app.call(&t.test_key, "GET", "/v1/nonesuch", None).await;
    unknown.assert_error(404, "not_found");
    assert_policy(&unknown, test_q);
    let invalid = app.call(&t.test_key, "POST", "/v1/properties", Some(json!({ "name": "No kind" }))).await;
    invalid.assert_error(400, "validation_failed");
    assert_policy(&invalid, test_q);
    assert!(ratelimit(&invalid).0 < u64::from(test_q), "{:?}", ratelimit(&invalid));

    // A live key on production: the live quota.
    let live = app.call_on(true, &t.live_key, "GET", "/v1/properties", None).await;
    assert_eq!(live.status, 200, "{}", live.text);
    assert_policy(&live, live_q);
    assert_eq!(ratelimit(&live), (u64::from(live_q) - 1, 1));

    // Refused before a credential is known: not counted, no fields.
    let anonymous = app.raw(app.client.get(format!("{}/v1/properties", app.sandbox))).await;
    anonymous.assert_error(401, "unauthenticated");
    assert_no_fields(&anonymous);
    let wrong_env = app.call(&t.live_key, "GET", "/v1/properties", None).await;
    wrong_env.assert_error(401, "key_environment_mismatch");
    assert_no_fields(&wrong_env);
    let not_allowed = app.raw(app.client.put(format!("{}/v1/properties", app.sandbox)).bearer_auth(&t.test_key)).await;
    not_allowed.assert_error(405, "method_not_allowed");
    assert_no_fields(&not_allowed);
    let description = app.raw(app.client.get(format!("{}/v1/openapi.json", app.sandbox))).await;
    assert_eq!(description.status, 200);
    assert_no_fields(&description);
}
both!(every_authenticated_response_carries_the_fields, |b| b.rate_limits(DEFAULT_RATE_LIMIT_LIVE, DEFAULT_RATE_LIMIT_TEST));

/// Test keys limited to 2 requests a second, live keys unlimited.
async fn over_the_limit_is_429_until_retry_after(app: &TestApp) {
    let t = app.tenant("A").await;
    let a = t.test_key.as_str();
    let b = app.key(t.id, false, &["*"], None).await;

    // Creates as fast as they go, each with its own idempotency key: the first two are
    // the burst; soon one is refused.
    let post = |i: usize, idempotency_key: &str| {
        let url = format!("{}/v1/properties", app.sandbox);
        app.client.post(url).bearer_auth(a).header("Idempotency-Key", idempotency_key).json(&property(i))
    };
    let mut created = 0;
    let mut refused = None;
    for i in 0..50 {
        let idempotency_key = format!("create-{i}");
        let r = app.raw(post(i, &idempotency_key)).await;
        match r.status {
            201 => {
                assert_policy(&r, 2);
                created += 1;
            }
            429 => {
                refused = Some((i, idempotency_key, r));
                break;
            }
            _ => panic!("creating a property: {}", r.text),
        }
    }
    let (i, idempotency_key, refused) = refused.expect("50 creates at full speed stay under 2 a second");
    assert!(created >= 2, "the burst is one second's quota: {created}");
    refused.assert_error(429, "rate_limited");
    assert_policy(&refused, 2);
    let retry_after: u64 = header(&refused, "retry-after").and_then(|v| v.parse().ok()).expect("an integer Retry-After");
    // The next request is allowed at most one emission interval (0.5 s) later.
    assert_eq!(retry_after, 1);
    assert_eq!(ratelimit(&refused), (0, 1), "nothing left; the full quota back within a second");

    // Another key of the same tenant has its own quota, untouched.
    let other = app.call(&b, "GET", "/v1/properties?limit=100", None).await;
    assert_eq!(other.status, 200, "{}", other.text);
    assert_eq!(ratelimit(&other), (1, 1));
    // The refused create changed nothing: exactly the allowed ones exist.
    assert_eq!(other.body["data"].as_array().map(Vec::len), Some(created), "{}", other.text);

    // Live keys are unlimited here: no fields, never refused.
    for _ in 0..10 {
        let r = app.call_on(true, &t.live_key, "GET", "/v1/properties", None).await;
        assert_eq!(r.status, 200, "{}", r.text);
        assert_no_fields(&r);
    }

    // Retry-After holds: that many seconds later the key is allowed again, and since `t`
    // said the full quota would be back by then, all of it is. The refusal was not
    // recorded under its idempotency key either: the retry runs, it is no replay.
    tokio::time::sleep(std::time::Duration::from_secs(retry_after)).await;
    let again = app.raw(post(i, &idempotency_key)).await;
    assert_eq!(again.status, 201, "{}", again.text);
    assert!(again.headers.get("idempotent-replayed").is_none(), "{:?}", again.headers);
    assert_eq!(ratelimit(&again), (1, 1));
    let all = app.call(&b, "GET", "/v1/properties?limit=100", None).await;
    assert_eq!(all.body["data"].as_array().map(Vec::len), Some(created + 1), "{}", all.text);
}
both!(over_the_limit_is_429_until_retry_after, |b| b.rate_limits(0, 2));
