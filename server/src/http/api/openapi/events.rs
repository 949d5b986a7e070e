//! Events: the `webhooks` section, one entry and one payload schema per event type of
//! `domain::events::EVENT_TYPES`. utoipa has no builder for `webhooks`, so it is plain JSON
//! added to the serialised document.

use serde_json::{json, Map, Value as Json};

use super::pascal;
use crate::domain::collections::collection;
use crate::domain::events::EVENT_TYPES;

/// `lease.signed` → `LeaseSignedEvent`.
fn event_schema_name(kind: &str) -> String {
    let words: String = kind.split(['.', '_']).map(pascal).collect();
    format!("{words}Event")
}

/// One `webhooks` entry and one component schema per event type: the payload Gable
/// POSTs to subscribed endpoints, which is also what `GET /v1/events/{id}` returns.
pub(super) fn add_webhooks(doc: &mut Json) {
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
                "description": format!("{} Delivered to webhook endpoints subscribed to `{}` (or `*`); listed at `GET /v1/events`.", e.doc, e.name),
                "tags": ["events"],
                "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": format!("#/components/schemas/{name}")}}}},
                "responses": {"2XX": {"description": "Any 2xx status acknowledges the delivery; anything else is retried."}},
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
    fn webhooks_describe_the_23_events() {
        let d = doc();
        let hooks = d["webhooks"].as_object().unwrap();
        assert_eq!(hooks.len(), 23);
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
}
