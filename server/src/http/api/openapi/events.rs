//! Events: the `webhooks` section, one entry and one payload schema per event type of
//! `domain::events::EVENT_TYPES`, and how deliveries are signed and retried
//! (`delivery_text`, from the constants the delivery worker uses). utoipa has no builder for
//! `webhooks`, so it is plain JSON added to the serialised document.

use serde_json::{json, Map, Value as Json};

use super::pascal;
use crate::domain::collections::collection;
use crate::domain::events::EVENT_TYPES;
use crate::domain::webhooks::{DISABLE_AFTER, RETRY_SCHEDULE, ROTATION_OVERLAP, TOLERANCE_SECS};
use crate::outbound::{DEFAULT_TIMEOUT, USER_AGENT};

/// `300` → `5 min`: a wait as the retry schedule is usually written.
fn wait(secs: i64) -> String {
    match secs {
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s => format!("{} h", s / 3600),
    }
}

/// The paragraph of the API description on receiving webhooks: what a delivery carries, how
/// to verify it, and what Gable does with the answer (`jobs::deliveries`, `domain::webhooks`).
pub(super) fn delivery_text() -> String {
    let schedule: Vec<String> = RETRY_SCHEDULE.iter().map(|s| wait(*s)).collect();
    let (last, first) = schedule.split_last().expect("a retry schedule");
    format!(
        "**Webhooks.** A subscription (`POST /v1/webhooks`) receives the events it takes (the `webhooks` of \
         this document) as `POST`s of the event's JSON (the `data` of `GET /v1/events/{{id}}`), with \
         `Content-Type: application/json`, `User-Agent: {USER_AGENT}`, `Gable-Event-Id` (the event's id), \
         `Gable-Timestamp` (unix seconds) and `Gable-Signature: v1=<signature>`: the lowercase hex \
         HMAC-SHA256, keyed with the subscription's whole secret string (`whsec_…`), of \
         `<Gable-Timestamp>.<raw body>`. To verify, compute it from the raw bytes received, compare it in \
         constant time with each `v1=` value (space-separated: for {overlap} h after `rotate_secret` there \
         are two, one per secret; accept if any matches), and refuse timestamps more than {tolerance} s \
         from your clock.\n\n\
         Any 2xx within {timeout} s acknowledges; redirects are not followed. A `410 Gone` disables the \
         subscription, as do {days} days of nothing but failures. Anything else (another status, a \
         timeout, a refused connection) is retried after {first} and {last} (each ±20 %); then the \
         delivery is `failed`, and can still be replayed. Every attempt is in the delivery register \
         (`/v1/webhook-deliveries`); attempts made by `replay`, `recover` and `test` are made once, not \
         retried. Gable does not promise delivery order, and an event may arrive more than once: order \
         events by `created_at` and deduplicate on `Gable-Event-Id`.",
        overlap = ROTATION_OVERLAP.num_hours(),
        tolerance = TOLERANCE_SECS,
        timeout = DEFAULT_TIMEOUT.as_secs(),
        first = first.join(", "),
        days = DISABLE_AFTER.num_days(),
    )
}

/// The headers of every delivery, as `components.parameters` (name, key, schema, description).
fn delivery_headers() -> [(&'static str, &'static str, Json, String); 3] {
    [
        (
            "Gable-Event-Id",
            "WebhookEventId",
            json!({"type": "string", "format": "uuid"}),
            "The id of the event in the body (deliveries of one event, retries and replays included, share it).".into(),
        ),
        (
            "Gable-Timestamp",
            "WebhookTimestamp",
            json!({"type": "string", "pattern": "^[0-9]+$"}),
            format!("When this attempt was signed, in unix seconds; refuse it more than {TOLERANCE_SECS} s from your clock."),
        ),
        (
            "Gable-Signature",
            "WebhookSignature",
            json!({"type": "string", "pattern": "^v1=[0-9a-f]{64}( v1=[0-9a-f]{64})*$"}),
            format!(
                "`v1=` and the lowercase hex HMAC-SHA256 of `<Gable-Timestamp>.<raw body>` keyed with the secret; \
                 two space-separated values for {} h after a rotation, one per secret.",
                ROTATION_OVERLAP.num_hours()
            ),
        ),
    ]
}

/// `lease.signed` → `LeaseSignedEvent`.
fn event_schema_name(kind: &str) -> String {
    let words: String = kind.split(['.', '_']).map(pascal).collect();
    format!("{words}Event")
}

/// One `webhooks` entry and one component schema per event type: the payload Gable
/// POSTs to subscribed endpoints, which is also what `GET /v1/events/{id}` returns.
pub(super) fn add_webhooks(doc: &mut Json) {
    let mut parameters = vec![];
    for (name, key, schema, description) in delivery_headers() {
        let p = json!({"name": name, "in": "header", "required": true, "schema": schema, "description": description});
        if let Some(shared) = doc.pointer_mut("/components/parameters").and_then(Json::as_object_mut) {
            shared.insert(key.into(), p);
        }
        parameters.push(json!({ "$ref": format!("#/components/parameters/{key}") }));
    }
    let mut hooks = Map::new();
    for e in EVENT_TYPES {
        let c = collection(e.collection).expect("events name real collections");
        let name = event_schema_name(e.name);
        let mut data_props = Map::new();
        data_props.insert(
            "object".into(),
            json!({"$ref": format!("#/components/schemas/{}", pascal(c.object)), "description": format!("The {} after the change.", c.object.replace('_', " "))}),
        );
        data_props.insert(
            "previous_attributes".into(),
            json!({"type": "object", "description": "The attributes the change altered, with their values before it; empty for creations and scheduled events."}),
        );
        let mut data_required = vec![json!("object"), json!("previous_attributes")];
        for (key, doc) in e.extra {
            data_props.insert((*key).into(), json!({"type": "integer", "description": doc}));
            data_required.push(json!(key));
        }
        let schema = json!({
            "type": "object",
            "description": format!("`{}`: {}", e.name, e.doc),
            "required": ["id", "object", "type", "created_at", "livemode", "api_version", "data", "related_object_id"],
            "properties": {
                "id": {"type": "string", "format": "uuid"},
                "object": {"const": "event"},
                "type": {"const": e.name},
                "created_at": {"type": "string", "format": "date-time", "description": "When it happened (RFC 3339, UTC)."},
                "livemode": {"type": "boolean"},
                "api_version": {"type": "string", "description": "The API version `data.object` is rendered in."},
                "related_object_id": {"type": "string", "format": "uuid", "description": "The id of `data.object`."},
                "property_id": {"type": ["string", "null"], "format": "uuid", "description": "The property the event concerns, if any."},
                "data": {"type": "object", "required": data_required, "properties": data_props},
                // `type: boolean` rather than `const: true`: openapi-python-client 0.29 writes
                // invalid Python for a boolean `const`.
                "test": {"type": "boolean", "description": "Present, and `true`, only on sample events sent by `POST /v1/webhooks/{id}/test`."},
            },
        });
        if let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Json::as_object_mut) {
            schemas.insert(name.clone(), schema);
        }
        hooks.insert(
            e.name.into(),
            json!({"post": {
                "operationId": format!("event_{}", e.name.replace('.', "_")),
                "summary": e.name,
                "description": format!(
                    "{} Delivered to webhook endpoints subscribed to `{}` (or `*`), signed as the API description's \
                     **Webhooks** section says; listed at `GET /v1/events`.",
                    e.doc, e.name
                ),
                "tags": ["events"],
                "parameters": parameters,
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}}},
                "responses": {
                    "2XX": {"description": format!("Any 2xx status within {} s acknowledges the delivery.", DEFAULT_TIMEOUT.as_secs())},
                    "410": {"description": "Gone: Gable disables the subscription and stops delivering to it."},
                    "default": {"description": "Anything else, or no answer in time, fails the attempt; attempts of new events are retried on the schedule."},
                },
            }}),
        );
    }
    doc["webhooks"] = Json::Object(hooks);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::pascal;
    use super::super::tests::{doc, resolve};
    use super::*;

    /// Every event type has a webhook whose payload schema names its type and resource.
    #[test]
    fn webhooks_describe_every_event_type() {
        let d = doc();
        let hooks = d["webhooks"].as_object().unwrap();
        let mut described: Vec<&str> = hooks.keys().map(String::as_str).collect();
        let mut types: Vec<&str> = EVENT_TYPES.iter().map(|e| e.name).collect();
        described.sort_unstable();
        types.sort_unstable();
        assert_eq!(described, types, "one webhook per event type, and nothing else");
        for e in EVENT_TYPES {
            let r = hooks[e.name]["post"]["requestBody"]["content"]["application/json"]["schema"]["$ref"].as_str().unwrap();
            let reference = json!({ "$ref": r });
            let schema = resolve(&d, &reference);
            assert_eq!(schema["properties"]["type"]["const"], json!(e.name));
            let object = schema["properties"]["data"]["properties"]["object"]["$ref"].as_str().unwrap();
            let c = collection(e.collection).unwrap();
            assert_eq!(object, format!("#/components/schemas/{}", pascal(c.object)));
        }
        assert_eq!(event_schema_name("application.status_changed"), "ApplicationStatusChangedEvent");
    }

    /// What the description says a receiver computes is what the delivery worker sends: HMAC-SHA256
    /// keyed with the whole secret string, of `<timestamp>.<body>`, lowercase hex after `v1=`,
    /// one value per secret; and the schedule is the worker's.
    #[test]
    fn the_signature_scheme_is_the_one_gable_signs_with() {
        use hmac::{Hmac, Mac};

        use crate::domain::webhooks::{signature_header, RETRY_SCHEDULE};

        let text = delivery_text();
        assert!(text.contains("after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h (each ±20 %)"), "{text}");
        assert!(text.contains("more than 300 s") && text.contains("for 24 h after `rotate_secret`"), "{text}");
        assert_eq!(RETRY_SCHEDULE.len(), 7);
        let (old, new, ts, body) = ("whsec_old", "whsec_new", 1_700_000_000_i64, br#"{"id":"e"}"#);
        let described = |secret: &str| {
            let mut mac = <Hmac<sha2::Sha256> as Mac>::new_from_slice(secret.as_bytes()).unwrap();
            mac.update(format!("{ts}.").as_bytes());
            mac.update(body);
            format!("v1={}", hex::encode(mac.finalize().into_bytes()))
        };
        let header = signature_header(&[new, old], ts, body);
        assert_eq!(header, format!("{} {}", described(new), described(old)));
        let d = doc();
        let pattern = d["components"]["parameters"]["WebhookSignature"]["schema"]["pattern"].as_str().unwrap();
        assert_eq!(pattern, "^v1=[0-9a-f]{64}( v1=[0-9a-f]{64})*$");
        for hook in d["webhooks"].as_object().unwrap().values() {
            assert_eq!(hook["post"]["parameters"].as_array().unwrap().len(), 3);
        }
    }
}
