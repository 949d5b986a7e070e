//! The import endpoints of their own (`http::api::imports`): the upload, whose body is a
//! file rather than JSON (it replaces the create the `imports` collection would otherwise
//! have), and the error report. Every status is provoked by `tests/tests/it/api/openapi.rs`.

use utoipa::openapi::content::ContentBuilder;
use utoipa::openapi::path::{HttpMethod, Operation, OperationBuilder, PathItem, PathItemBuilder};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::SchemaType;
use utoipa::openapi::{ArrayBuilder, ComponentsBuilder, ObjectBuilder, Required, Type};

use super::errors::{with_errors, with_layers, Method, Route};
use super::parts::{id_parameter, operation, query, success, version_parameter};
use super::schemas::envelope;
use super::{pascal, schema_ref};
use crate::domain::import::importable;
use crate::domain::registry::Collection;
use crate::ops::imports::MAX_FILE_BYTES;

pub(super) const ERRORS_PATH: &str = "/v1/imports/{id}/errors";

/// The upload's own refusals: a bad parameter, header or encoding (400), the scopes or a
/// property-limited key (403), over 100 MiB (413), another content type (415).
const UPLOAD_ERRORS: &[u16] = &[400, 403, 413, 415, 500];
/// The report's: a bad parameter (400), the read scope (403), no such import (404).
const REPORT_ERRORS: &[u16] = &[400, 403, 404, 500];

fn text_or_null() -> SchemaType {
    [Type::String, Type::Null].into_iter().collect()
}

pub(super) fn register(b: ComponentsBuilder) -> ComponentsBuilder {
    let text = || ObjectBuilder::new().schema_type(Type::String);
    let item = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("One error of one row of an import's file."))
        .property("object", text().enum_values(Some(["import_error"])))
        .property(
            "line",
            ObjectBuilder::new().schema_type(Type::Integer).description(Some("The row's line in the file (a CSV's header is line 1).")),
        )
        .property(
            "collection",
            ObjectBuilder::new()
                .schema_type(text_or_null())
                .description(Some("The row's collection (null for a line that could not be read).")),
        )
        .property("external_id", ObjectBuilder::new().schema_type(text_or_null()))
        .property("field", ObjectBuilder::new().schema_type(text_or_null()).description(Some("The field or column at fault, if one is.")))
        .property(
            "code",
            text().description(Some("`validation_failed` and the API's other codes, or one of the file's (docs/imports.md).")),
        )
        .property("message", text())
        .required("object")
        .required("line")
        .required("code")
        .required("message");
    b.schema("ImportError", item).schema(
        "ImportErrorList",
        envelope(
            text().enum_values(Some(["list"])),
            ArrayBuilder::new().items(schema_ref("ImportError")).into(),
            Some("A page of an import's row errors, in line order.".into()),
        ),
    )
}

/// `POST /v1/imports`: the file as the body.
pub(super) fn upload_operation(c: &'static Collection) -> Operation {
    let importable: Vec<&str> = crate::domain::collections::COLLECTIONS.iter().filter(|c| importable(c)).map(|c| c.name).collect();
    let file = |what: &str| {
        ContentBuilder::new().schema(Some(ObjectBuilder::new().schema_type(Type::String).description(Some(what.to_string())))).build()
    };
    let body = RequestBodyBuilder::new()
        .required(Some(Required::True))
        .description(Some("The file itself, read as a stream."))
        .content("text/csv", file("UTF-8 CSV with a header row (`gable import template <collection>` prints one); needs `collection`."))
        .content(
            "application/x-ndjson",
            file("One create body per line; without `collection`, a bundle whose lines name theirs (`\"collection\": \"units\"`)."),
        )
        .build();
    let op = operation(c, "create_import".into(), "Upload a file to import".into(), &[], &c.write_scope())
        .description(Some(format!(
            "Reads the file and checks every row as the collection's create would (references by external id resolve to a \
             line above or to a record in Gable), writing no record: answers the import, `validated`, with its counts \
             (`GET /v1/imports/{{id}}/errors` lists the bad rows; the `commit` action writes it). Needs the scope `{}` and \
             the write scope of every collection the file holds rows of. A file over {} MiB is `413`; one that is not UTF-8, \
             or whose header names no field or one twice, is `400` naming the line; nothing of a refused file is kept. Not \
             held for replay under an `Idempotency-Key`: uploading again makes another import. Collections: {}.",
            c.write_scope(),
            MAX_FILE_BYTES >> 20,
            importable.join(", ")
        )))
        .parameter(
            query(
                "collection",
                "The collection of every row (required for CSV).",
                ObjectBuilder::new().schema_type(Type::String).enum_values(Some(importable.clone())),
            )
            .build(),
        )
        .parameter(
            query(
                "file_name",
                "The file's name, kept on the import.",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .min_length(Some(1))
                    .max_length(Some(255))
                    .pattern(Some("^[^\\u0000-\\u001f\\u007f-\\u009f]+$")),
            )
            .build(),
        )
        .request_body(Some(body))
        .response("201", success("The import, every row checked.", &format!("{}Envelope", pascal(c.object))));
    with_errors(op, &with_layers(Route::Api(Method::Upload), UPLOAD_ERRORS)).build()
}

/// `GET /v1/imports/{id}/errors`.
pub(super) fn errors_path_item(c: &'static Collection) -> PathItem {
    let op = OperationBuilder::new()
        .tag(c.name)
        .operation_id(Some("list_import_errors"))
        .summary(Some("List an import's row errors"))
        .description(Some(format!(
            "Every error of every bad row, in line order: the line, field, code and message (the create's own for what the \
             API would refuse). Pages by line: while `meta.has_more` is true, ask again with `after_line` set to the last \
             `line` of this page. Needs the scope `{}`.",
            c.read_scope()
        )))
        .securities(Some(super::securities(Some(&c.read_scope()))))
        .parameter(version_parameter())
        .parameter(id_parameter(c))
        .parameter(
            query(
                "limit",
                "Rows per page (1 to 1000; 100 unless given).",
                ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(1)).maximum(Some(1000)),
            )
            .build(),
        )
        .parameter(
            query("after_line", "The page after this line.", ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(0))).build(),
        )
        .response("200", success("A page of the import's row errors.", "ImportErrorList"));
    let op = with_errors(op, &with_layers(Route::Api(Method::Get), REPORT_ERRORS));
    PathItemBuilder::new().operation(HttpMethod::Get, op.build()).build()
}
