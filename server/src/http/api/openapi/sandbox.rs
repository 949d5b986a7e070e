//! The sandbox clock's two operations (`http::api::sandbox`): `GET /v1/sandbox/clock` and
//! `POST /v1/sandbox/clock/advance`. They act on no collection, so they are described here
//! rather than by the registry; `tests/tests/it/api/openapi.rs` provokes every status.

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, PathItemBuilder};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::AdditionalProperties;
use utoipa::openapi::{ComponentsBuilder, ObjectBuilder, PathItem, Required, Type};

use super::errors::{with_errors, with_layers, Method, Route};
use super::parts::{idempotency_parameter, success, version_parameter};
use super::schema_ref;
use super::schemas::{date_time, envelope};

pub(super) const TAG: &str = "sandbox";
pub(super) const CLOCK: &str = "/v1/sandbox/clock";
pub(super) const ADVANCE: &str = "/v1/sandbox/clock/advance";

/// Reading the clock: production (404); the layers add theirs (`errors::layered`).
const CLOCK_ERRORS: &[u16] = &[404, 500];
/// Advancing: a missing, malformed or backward `to` (400), a key without the scope `*`
/// (403), production (404), a body that is not JSON (415).
const ADVANCE_ERRORS: &[u16] = &[400, 403, 404, 415, 500];

fn base(id: &str, summary: &str, description: &str, errors: &[u16], scope: Option<&str>) -> OperationBuilder {
    let op = OperationBuilder::new()
        .tag(TAG)
        .operation_id(Some(id))
        .summary(Some(summary))
        .description(Some(description))
        .securities(Some(super::securities(scope)))
        .parameter(version_parameter());
    with_errors(op, errors)
}

pub(super) fn paths() -> Vec<(&'static str, PathItem)> {
    let clock = base(
        "get_sandbox_clock",
        "Retrieve the sandbox's time",
        "The sandbox's time now: real time plus how far this tenant's sandbox clock was advanced (real time \
         until it is first advanced). Every sandbox record and event is dated by it. Any sandbox key may read \
         it. The sandbox address only: on production it is `404`, since live data runs on real time.",
        &with_layers(Route::Api(Method::Get), CLOCK_ERRORS),
        None,
    )
    .response("200", success("The sandbox's time.", "SandboxClockEnvelope"));
    let advance = base(
        "advance_sandbox_clock",
        "Advance the sandbox's time",
        "Moves this tenant's sandbox clock forward to `to` (never back; at most two years per call) and runs, \
         in order, everything that time causes in the sandbox: rent charges billed a week before they fall due, \
         `rent.due`, `lease.expiring`, `document.expiring`, and leases ending after their last day, day by day \
         and each once, dated in sandbox time. Webhooks follow as for any event. Answers the new time and \
         what happened on the way. Needs the scope `*`. The sandbox address only: on production it is `404`.",
        &with_layers(Route::Api(Method::Post), ADVANCE_ERRORS),
        Some("*"),
    )
    .parameter(idempotency_parameter(false))
    .request_body(Some(
        RequestBodyBuilder::new()
            .required(Some(Required::True))
            .content("application/json", ContentBuilder::new().schema(Some(schema_ref("AdvanceSandboxClockBody"))).build())
            .build(),
    ))
    .response("200", success("The sandbox's new time, and what advancing it caused.", "SandboxClockEnvelope"));
    vec![
        (CLOCK, PathItemBuilder::new().operation(HttpMethod::Get, clock.build()).build()),
        (ADVANCE, PathItemBuilder::new().operation(HttpMethod::Post, advance.build()).build()),
    ]
}

fn count(what: &str) -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0)).description(Some(what))
}

pub(super) fn register(b: ComponentsBuilder) -> ComponentsBuilder {
    let body = ObjectBuilder::new()
        .schema_type(Type::Object)
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        .property("to", date_time().description(Some("The sandbox time to move to (RFC 3339): later than its time now.")))
        .required("to");
    let advanced = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("What advancing caused (only in the answer to an advance)."))
        .property("rent_billed", count("Rent charges billed, each with its invoice."))
        .property("leases_ended", count("Leases that reached their end."))
        .property("events_fired", count("Scheduled events fired: `rent.due`, `lease.expiring`, `document.expiring`."))
        .required("rent_billed")
        .required("leases_ended")
        .required("events_fired");
    let clock = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("A tenant's sandbox clock."))
        .property("object", ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["sandbox_clock"])))
        .property("now", date_time().description(Some("The sandbox's time (RFC 3339, UTC, milliseconds).")))
        .property("advanced", advanced)
        .required("object")
        .required("now");
    b.schema("AdvanceSandboxClockBody", body).schema("SandboxClock", clock).schema(
        "SandboxClockEnvelope",
        envelope(ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["sandbox_clock"])), schema_ref("SandboxClock"), None),
    )
}
