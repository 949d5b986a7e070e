//! Commands: the operations on a record that are neither its collection's own (list,
//! retrieve, create, update, delete) nor a state-machine action, such as rotating a webhook's
//! secret or replaying an event. They are declared once, in `commands()`: path, operation id,
//! summary, scope, request body, answer and error statuses. `paths` adds one operation per
//! entry and `register` their schemas, so no command is a special case elsewhere.
//!
//! Each entry states what its handler (`http::api::webhooks`) and operation
//! (`ops::behaviour::webhooks`) do; `tests/tests/it/api/openapi.rs` provokes every status.

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::{HttpMethod, PathItemBuilder};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::AdditionalProperties;
use utoipa::openapi::{ComponentsBuilder, ObjectBuilder, PathItem, Required, Type};

use super::parts::{id_parameter, idempotency_parameter, operation, success};
use super::schemas::{date_time, envelope, uuid};
use super::{pascal, schema_ref};
use crate::domain::collections::collection;
use crate::domain::events::EVENT_TYPES;
use crate::domain::webhooks::ROTATION_OVERLAP;

/// One command: `POST /v1/{collection}/{id}/{name}`.
pub(super) struct Command {
    /// The collection whose record the path names; the operation is filed under its tag.
    pub collection: &'static str,
    pub name: &'static str,
    pub operation_id: &'static str,
    pub summary: &'static str,
    pub description: String,
    /// The collection whose write scope the command needs: the webhook commands all need
    /// `webhooks:write`, whatever record the path names (`Work::allow(webhooks)`).
    pub scope_of: &'static str,
    pub body: Body,
    /// The success status, what it means and the schema of its body (a component).
    pub answer: (u16, &'static str, &'static str),
    /// The error statuses a request can get.
    pub errors: &'static [u16],
}

/// What a command's request body is.
pub(super) enum Body {
    /// None: the handler reads an empty object as none, and refuses any field in it.
    Nothing,
    /// An optional body; its schema is the component `<OperationId>Body`.
    Optional(fn() -> ObjectBuilder),
    /// A required body; its schema is the component `<OperationId>Body`.
    Required(fn() -> ObjectBuilder),
}

/// Every command may meet a malformed id or body (400), a key without the scope (403), an
/// unknown id (404), a body that is not JSON (415), and a failure on Gable's side (500);
/// the layers of a `POST` add theirs (`errors::layered`).
const ERRORS: &[u16] = &[400, 403, 404, 415, 500];
/// As `ERRORS`, and the record's state refuses the command (`409 conflict`).
const ERRORS_AND_CONFLICT: &[u16] = &[400, 403, 404, 409, 415, 500];

/// The table. The replays and recoveries write new attempts into the delivery register; the
/// delivery worker makes them at once, once (only attempts for new events are retried).
pub(super) fn commands() -> Vec<Command> {
    vec![
        Command {
            collection: "webhooks",
            name: "rotate_secret",
            operation_id: "rotate_webhook_secret",
            summary: "Rotate a webhook's signing secret",
            description: format!(
                "Issues a new signing secret, returned in `secret` by this response only. For the next {} h the \
                 previous secret keeps signing beside the new one (`Gable-Signature` carries one `v1=` value for \
                 each), so a receiver can switch to the new secret without refusing a delivery; after that only \
                 the new one signs. Takes no body.",
                ROTATION_OVERLAP.num_hours()
            ),
            scope_of: "webhooks",
            body: Body::Nothing,
            answer: (200, "The webhook, with its new `secret` (shown this once).", "WebhookCreatedEnvelope"),
            errors: ERRORS,
        },
        Command {
            collection: "webhooks",
            name: "test",
            operation_id: "send_webhook_test",
            summary: "Send a test event to a webhook",
            description: "Sends a sample event of `type` to this subscription, whatever event types it takes: \
                          an event whose record has a plausible value in every field, marked `\"test\": true`, \
                          signed and delivered like any other. The answer is the attempt written to the \
                          delivery register (`trigger: test`, `status: pending`); follow it at \
                          `GET /v1/webhook-deliveries/{id}`. A disabled subscription is `409 conflict`; \
                          an unknown `type` is `400`."
                .into(),
            scope_of: "webhooks",
            body: Body::Required(test_body),
            answer: (201, "The attempt written for the sample event.", "WebhookDeliveryEnvelope"),
            errors: ERRORS_AND_CONFLICT,
        },
        Command {
            collection: "webhooks",
            name: "recover",
            operation_id: "recover_webhook",
            summary: "Send a webhook the events it missed",
            description: "Closes the gap an outage left: every event since `since` that this subscription \
                          takes and has not received is sent again now. Retries still waiting fall due at \
                          once; events whose deliveries failed for good, or were never attempted, get a new \
                          attempt (`trigger: recovery`). Answers how many attempts are queued. `since` must \
                          not be in the future; events are kept 30 days."
                .into(),
            scope_of: "webhooks",
            body: Body::Required(recover_body),
            answer: (200, "How many attempts are queued.", "WebhookRecoveryEnvelope"),
            errors: ERRORS,
        },
        Command {
            collection: "webhook-deliveries",
            name: "replay",
            operation_id: "replay_webhook_delivery",
            summary: "Replay a webhook delivery",
            description: "Sends this attempt's event (or test event) again to its subscription, at the \
                          subscription's current URL, as a new attempt (`trigger: replay`) with a fresh \
                          timestamp and signature; the attempt replayed is left as it was. Takes no body."
                .into(),
            scope_of: "webhooks",
            body: Body::Nothing,
            answer: (201, "The new attempt.", "WebhookDeliveryEnvelope"),
            errors: ERRORS,
        },
        Command {
            collection: "events",
            name: "replay",
            operation_id: "replay_event",
            summary: "Replay an event to webhooks",
            description: "Sends the event again, as a new attempt (`trigger: replay`) with a fresh timestamp \
                          and signature: to the subscription `webhook_id` names (whatever event types it \
                          takes), or without it to every enabled subscription that takes the event's type. \
                          Answers the attempts written, one per subscription (none when no subscription takes \
                          it). A `webhook_id` that names no subscription is `404`."
                .into(),
            scope_of: "webhooks",
            body: Body::Optional(replay_event_body),
            answer: (201, "The attempts written, one per subscription, in one page.", "WebhookDeliveryList"),
            errors: ERRORS,
        },
    ]
}

impl Command {
    pub(super) fn path(&self) -> String {
        format!("/v1/{}/{{id}}/{}", self.collection, self.name)
    }

    /// The name of the request body's component, when it has one.
    fn body_schema_name(&self) -> String {
        format!("{}Body", pascal(self.operation_id))
    }

    pub(super) fn scope(&self) -> String {
        collection(self.scope_of).expect("commands need real collections' scopes").write_scope()
    }
}

/// The path item of a command.
pub(super) fn path_item(cmd: &Command) -> PathItem {
    let c = collection(cmd.collection).expect("commands act on real collections");
    let (status, what, schema) = cmd.answer;
    let body = match cmd.body {
        // Closed and empty: `{}` is accepted as no body; anything in it is `400`.
        Body::Nothing => RequestBodyBuilder::new().required(Some(Required::False)).content(
            "application/json",
            ContentBuilder::new()
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::Object)
                        .description(Some("Takes no parameters: send no body, or `{}`."))
                        .max_properties(Some(0))
                        .additional_properties(Some(AdditionalProperties::FreeForm(false))),
                ))
                .build(),
        ),
        Body::Optional(_) | Body::Required(_) => {
            let required = if matches!(cmd.body, Body::Required(_)) { Required::True } else { Required::False };
            RequestBodyBuilder::new()
                .required(Some(required))
                .content("application/json", ContentBuilder::new().schema(Some(schema_ref(&cmd.body_schema_name()))).build())
        }
    };
    let statuses = super::errors::with_layers(super::errors::Route::Api(super::errors::Method::Post), cmd.errors);
    let op = operation(c, cmd.operation_id.to_string(), cmd.summary.to_string(), &statuses, &cmd.scope())
        .description(Some(format!("{} Needs the scope `{}`.", cmd.description, cmd.scope())))
        .parameter(idempotency_parameter(false))
        .request_body(Some(body.build()))
        .response(status.to_string(), success(what, schema));
    PathItemBuilder::new().parameters(Some([id_parameter(c)])).operation(HttpMethod::Post, op.build()).build()
}

/// The commands' request bodies and the answers no collection describes.
pub(super) fn register(mut b: ComponentsBuilder) -> ComponentsBuilder {
    for cmd in commands() {
        if let Body::Optional(schema) | Body::Required(schema) = cmd.body {
            b = b.schema(cmd.body_schema_name(), schema());
        }
    }
    b.schema("WebhookRecovery", recovery_schema()).schema(
        "WebhookRecoveryEnvelope",
        envelope(
            ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["webhook_recovery"])),
            schema_ref("WebhookRecovery"),
            None,
        ),
    )
}

fn closed() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Object).additional_properties(Some(AdditionalProperties::FreeForm(false)))
}

fn test_body() -> ObjectBuilder {
    closed()
        .property(
            "type",
            ObjectBuilder::new()
                .schema_type(Type::String)
                .enum_values(Some(EVENT_TYPES.iter().map(|e| e.name)))
                .description(Some("The event type to send a sample of.")),
        )
        .required("type")
}

fn recover_body() -> ObjectBuilder {
    closed().property("since", date_time().description(Some("Events from this time on (RFC 3339), not in the future."))).required("since")
}

fn replay_event_body() -> ObjectBuilder {
    closed().property(
        "webhook_id",
        uuid().description(Some("Only this subscription; without it, every enabled subscription that takes the event.")),
    )
}

fn recovery_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("What a recovery queued."))
        .property("object", ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["webhook_recovery"])))
        .property("webhook_id", uuid().description(Some("The subscription.")))
        .property("since", date_time().description(Some("`since` as given.")))
        .property(
            "deliveries_queued",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(0))
                .description(Some("How many attempts are queued: retries brought forward and new attempts.")),
        )
        .required("object")
        .required("webhook_id")
        .required("since")
        .required("deliveries_queued")
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use serde_json::json;

    use super::super::tests::{doc, resolve};
    use super::*;
    use crate::domain::workflow;

    /// Each command is one operation at its path, with its id, scope and statuses, and no
    /// command shadows a collection's action.
    #[test]
    fn every_command_is_described_once() {
        let d = doc();
        let mut paths = HashSet::new();
        for cmd in commands() {
            assert!(paths.insert(cmd.path()), "{} twice", cmd.path());
            assert!(
                workflow::machine(cmd.collection).and_then(|m| m.action(cmd.name)).is_none(),
                "{} is also an action of {}",
                cmd.name,
                cmd.collection
            );
            let op = &d["paths"][cmd.path()]["post"];
            assert_eq!(op["operationId"], json!(cmd.operation_id));
            assert_eq!(op["tags"], json!([cmd.collection]));
            assert!(op["description"].as_str().unwrap().contains(&format!("Needs the scope `{}`.", cmd.scope())));
            let mut documented: Vec<u16> = op["responses"].as_object().unwrap().keys().map(|s| s.parse().unwrap()).collect();
            documented.sort_unstable();
            let layers =
                super::super::errors::with_layers(super::super::errors::Route::Api(super::super::errors::Method::Post), cmd.errors);
            let mut want: Vec<u16> = layers.into_iter().chain([cmd.answer.0]).collect();
            want.sort_unstable();
            assert_eq!(documented, want, "{}", cmd.path());
            let body = resolve(&d, &op["requestBody"]["content"]["application/json"]["schema"]);
            assert_eq!(body["additionalProperties"], json!(false), "{}", cmd.path());
            assert_eq!(op["requestBody"]["required"], json!(matches!(cmd.body, Body::Required(_))), "{}", cmd.path());
        }
        // Every event type can be sent as a test.
        let types = &d["components"]["schemas"]["SendWebhookTestBody"]["properties"]["type"]["enum"];
        assert_eq!(types.as_array().unwrap().len(), EVENT_TYPES.len());
    }
}
