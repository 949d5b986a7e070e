//! `GET /v1/events/stream` (`http::api::event_stream`): the events as server-sent events.
//! It answers no JSON envelope, so it is described here rather than by the registry;
//! `tests/tests/it/api/openapi.rs` provokes every status. The fuzzer leaves it out (an
//! answer that never ends is not a case it can judge; `tests/openapi/fuzz.sh`).

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, Parameter, ParameterBuilder, ParameterIn, PathItemBuilder};
use utoipa::openapi::response::{Response, ResponseBuilder};
use utoipa::openapi::{ObjectBuilder, PathItem, Required, Type};

use super::errors::{with_errors, with_layers, Method, Route};
use super::parts::version_parameter;
use super::schemas::uuid;

pub(super) const PATH: &str = "/v1/events/stream";

/// A key without `events:read` or a carried collection's read, or limited to properties
/// (403); the layers add theirs, `429` for a sixth stream among them.
const ERRORS: &[u16] = &[403, 500];

pub(super) fn path_item() -> PathItem {
    let op = OperationBuilder::new()
        .tag("events")
        .operation_id(Some("stream_events"))
        .summary(Some("Stream events as they are committed"))
        .description(Some(
            "The environment's events as server-sent events (`text/event-stream`), in the order they were \
             committed on every process. First a `ready` event (`{\"object\": \"event_stream\", \"livemode\", \
             \"events\", \"signing_secret\", \"resumed_after\"}`; `signing_secret` is what `gable listen` signs \
             forwarded events with, the same for this credential at every start); then each event as a message \
             whose `id` is the event's id and whose data is the event as `GET /v1/events/{id}` shows it; a comment \
             line every 15 s while nothing happens. Reconnecting with `Last-Event-ID` resumes right after that \
             event: none missed, none twice. The credential is checked again every 250 ms: revoked, expired or \
             narrowed, the stream sends an `end` event (`{\"error\": {\"code\", \"message\"}}`) and closes; so \
             does a server that shuts down (`shutting_down`: connect again). Listening reads what the events \
             carry, exactly as a webhook subscription does: it needs the scope `events:read` and the read scope \
             of every listened type's collection (all of them for `*`); a credential limited to properties cannot \
             listen (`403 property_forbidden`). A credential holds at most 5 streams on one server: one more is \
             `429 too_many_streams`.",
        ))
        .securities(Some(super::securities(Some("events:read"))))
        .parameter(version_parameter())
        .parameter(super::parts::query(
            "events",
            "Event types to listen to, comma-separated; `*` or none for every type.",
            ObjectBuilder::new().schema_type(Type::String),
        ))
        .parameter(last_event_id(
            "The id of the last event received: the stream resumes right after it. An id that is not an event of this \
             environment (purged after 30 days, another tenant's) is `400`.",
        ))
        .response("200", stream_answer("The stream: `ready`, then events as they come, until the client leaves or `end`."));
    let op = with_errors(op, &with_layers(Route::Api(Method::Get), ERRORS));
    PathItemBuilder::new().operation(HttpMethod::Get, op.build()).build()
}

/// The `Last-Event-ID` header a reconnecting client sends.
pub(super) fn last_event_id(description: &str) -> Parameter {
    ParameterBuilder::new()
        .name("Last-Event-ID")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(uuid()))
        .build()
}

/// A `200` of server-sent events.
pub(super) fn stream_answer(description: &str) -> Response {
    ResponseBuilder::new()
        .description(description)
        .content("text/event-stream", ContentBuilder::new().schema(Some(ObjectBuilder::new().schema_type(Type::String))).build())
        .build()
}
