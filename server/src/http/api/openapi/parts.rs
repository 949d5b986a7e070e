//! The pieces every operation of the description is made of, shared by the collections'
//! paths (`paths`), the commands (`commands`) and the sandbox's clock (`sandbox`): the
//! operation's frame, a success response, and the standard parameters (a list's filters
//! among them: its stream takes them too).

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::{OperationBuilder, Parameter, ParameterBuilder, ParameterIn, ParameterStyle};
use utoipa::openapi::{KnownFormat, ObjectBuilder, RefOr, Required, ResponseBuilder, Schema, SchemaFormat, Type};

use super::errors::with_errors;
use super::schemas::uuid;
use super::{pascal, schema_ref, with_standard_headers};
use crate::domain::registry::Collection;
use crate::http::version;

/// What every operation on a collection shares: tag, id, summary, credentials, version
/// header, and the shared responses of the error statuses it can answer with.
pub(super) fn operation(c: &Collection, id: String, summary: String, errors: &[u16], scope: &str) -> OperationBuilder {
    let op = OperationBuilder::new()
        .tag(c.name)
        .operation_id(Some(id))
        .summary(Some(summary))
        .securities(Some(super::securities(Some(scope))))
        .parameter(version_parameter());
    with_errors(op, errors)
}

pub(super) fn success(description: &str, schema: &str) -> RefOr<utoipa::openapi::Response> {
    with_standard_headers(
        ResponseBuilder::new()
            .description(description)
            .content("application/json", ContentBuilder::new().schema(Some(schema_ref(schema))).build()),
    )
    .build()
    .into()
}

pub(super) fn version_parameter() -> Parameter {
    ParameterBuilder::new()
        .name("Gable-Version")
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(format!(
            "Pins a dated API version; without it the current one (`{}`) serves. An unknown version is \
             `400 unsupported_version`.",
            version::CURRENT
        )))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
                .enum_values(Some(version::SUPPORTED.iter().copied())),
        ))
        .build()
}

/// `Idempotency-Key` on every `POST` (`http::idempotency`): required on `POST /v1/payments`.
pub(super) fn idempotency_parameter(required: bool) -> Parameter {
    ParameterBuilder::new()
        .name("Idempotency-Key")
        .parameter_in(ParameterIn::Header)
        .required(if required { Required::True } else { Required::False })
        .description(Some(
            "Makes a retry safe (IETF Idempotency-Key draft): the same key with the same request replays the first answer \
             with `Idempotent-Replayed: true`; while the first request runs it is `409 idempotency_key_in_use`; with another \
             method, path or body `422 idempotency_key_reused`. 8 to 200 visible ASCII characters (a UUID is a good key), \
             kept 24 hours per credential. Required on `POST /v1/payments` (`400 missing_idempotency_key`).",
        ))
        .schema(Some(
            ObjectBuilder::new()
                .schema_type(Type::String)
                .min_length(Some(8))
                .max_length(Some(200))
                // Visible ASCII, as `http::idempotency::key_of` checks it.
                .pattern(Some("^[!-~]{8,200}$")),
        ))
        .build()
}

pub(super) fn id_parameter(_: &Collection) -> Parameter {
    ParameterBuilder::new()
        .name("id")
        .parameter_in(ParameterIn::Path)
        .required(Required::True)
        .description(Some("The record's id."))
        .schema(Some(uuid()))
        .build()
}

/// An optional query parameter.
pub(super) fn query(name: impl Into<String>, description: impl Into<String>, schema: impl Into<RefOr<Schema>>) -> ParameterBuilder {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description.into()))
        .schema(Some(schema))
}

/// The name of a collection's filter schema in `components.schemas`.
pub(super) fn filter_schema_name(c: &Collection) -> String {
    format!("{}Filter", pascal(c.object))
}

/// All of a list's filters as one parameter: an object whose property names are the query
/// keys themselves (`filter[status]`, `filter[rent][gte]`). `form` style with `explode` sends
/// each property as its own `key=value` pair, so a generator that follows the specification
/// produces exactly the wire form, and a generated list function takes one `filter` argument
/// instead of one per field and operator (leases had 76). A `deepObject` would need nested
/// objects for the operators, which neither the specification nor common generators define.
pub(super) fn filter_parameter(c: &Collection) -> Parameter {
    query("filter", "The filters, one query parameter per property; all must hold.", schema_ref(&filter_schema_name(c)))
        .style(Some(ParameterStyle::Form))
        .explode(Some(true))
        .build()
}
