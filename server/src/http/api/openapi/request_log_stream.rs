//! `GET /v1/request-logs/stream` (`http::api::request_log_stream`): the request log's calls
//! as server-sent events. Described here, beside the event stream, for the same reasons:
//! no JSON envelope, an answer that does not end (the fuzzer leaves it out), every status
//! provoked by `tests/tests/it/api/openapi.rs`.

use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItemBuilder};
use utoipa::openapi::PathItem;

use super::errors::{with_errors, with_layers, Method, Route};
use super::event_stream::{last_event_id, stream_answer};
use super::parts::version_parameter;
use crate::domain::registry::Collection;

pub(super) const PATH: &str = "/v1/request-logs/stream";

/// A key without `request-logs:read` (403); the layers add theirs, `429` for a sixth stream.
const ERRORS: &[u16] = &[400, 403, 500];

pub(super) fn path_item(c: &'static Collection) -> PathItem {
    let op = OperationBuilder::new()
        .tag(c.name)
        .operation_id(Some("stream_request_logs"))
        .summary(Some("Stream the request log's calls as they are recorded"))
        .description(Some(
            "The environment's calls of the API as server-sent events (`text/event-stream`), as the request log \
             records them (within about a second of the answer): what `gable logs tail` shows. It takes the list's \
             filters (`filter[status_class]=4xx`, `filter[path][contains]=/v1/leases`, …) and fieldset, and no other \
             parameter. First a `ready` event (`{\"object\": \"request_log_stream\", \"livemode\", \"resumed_after\"}`); \
             then each call recorded after the stream began as a message whose `id` is the call's id (its \
             `Request-Id`) and whose data is the call as `GET /v1/request-logs/{id}` shows it; a comment line every \
             15 s while nothing happens. Calls are recorded in batches, not strictly in the order they were made: \
             each look (every 250 ms) sends the newest calls not sent yet, up to 100. The credential is checked \
             again at every look: revoked, expired or without `request-logs:read`, the stream sends an `end` event \
             (`{\"error\": {\"code\", \"message\"}}`) and closes; so does a server that shuts down \
             (`shutting_down`). A credential holds at most 5 streams (of events and calls together) on one server: \
             one more is `429 too_many_streams`.",
        ))
        .securities(Some(super::securities(Some("request-logs:read"))))
        .parameter(version_parameter())
        .parameter(super::parts::filter_parameter(c))
        .parameter(super::answers::fields_parameter(c))
        .parameter(last_event_id(
            "The id of the last call received: the stream begins with the calls made after it that are still among \
             the newest, instead of with the next call recorded.",
        ))
        .response("200", stream_answer("The stream: `ready`, then calls as they are recorded, until the client leaves or `end`."));
    let op = with_errors(op, &with_layers(Route::Api(Method::Get), ERRORS));
    PathItemBuilder::new().operation(HttpMethod::Get, op.build()).build()
}
