//! Schemas: what a record looks like (responses), what create and update bodies may carry
//! (requests), the envelopes around them, and the structured values inside them. Each is
//! derived from the collection's registry entry, as `domain::validate` checks bodies and
//! `domain::record` renders records.

use serde_json::{json, Value as Json};
use utoipa::openapi::schema::{AdditionalProperties, AllOfBuilder, AnyOfBuilder, SchemaType};
use utoipa::openapi::{ArrayBuilder, ComponentsBuilder, KnownFormat, ObjectBuilder, RefOr, Schema, SchemaFormat, Type};

#[cfg(test)]
use super::json_create;
use super::{a_record, offers, pascal, schema_ref};
use crate::domain::collections::COLLECTIONS;
use crate::domain::ledger::ACCOUNTS;
use crate::domain::registry::{Access, Collection, Default as D, Field, JsonShape, Rule, Ty, WriteOp};
use crate::domain::validate;

/// The component of an enumerated field's values: `<Object><Field>`, e.g. `LeaseStatus`,
/// one type for generated clients wherever the field appears (records, bodies, filters).
pub(super) fn enum_schema_name(c: &Collection, f: &Field) -> String {
    format!("{}{}", pascal(c.object), pascal(f.name))
}

/// The component of a unique text field's values: `ExternalId`.
pub(super) fn unique_schema_name(f: &Field) -> String {
    pascal(f.name)
}

/// Every shared schema and every collection's: records, envelopes, write bodies.
pub(super) fn register(mut b: ComponentsBuilder) -> ComponentsBuilder {
    b = b
        .schema("Meta", meta_schema())
        .schema("Deleted", deleted_schema())
        .schema("DeletedEnvelope", envelope(ObjectBuilder::new().schema_type(Type::String), schema_ref("Deleted"), None))
        .schema("Metadata", metadata_schema())
        .schema("Currency", currency_schema());
    // One component per unique text field (`external_id`): the rule once, not per use.
    let mut unique: Vec<&Field> = crate::domain::collections::COLLECTIONS.iter().flat_map(|c| c.fields).filter(|f| f.unique).collect();
    unique.dedup_by_key(|f| f.name);
    for f in unique {
        if let Ty::Str { max } = f.ty {
            b = b.schema(
                unique_schema_name(f),
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .description(Some(f.doc))
                    .min_length(Some(1))
                    .max_length(Some(max))
                    .pattern(Some(UNIQUE_TEXT)),
            );
        }
    }
    for (name, schema) in amount_schemas() {
        b = b.schema(name, schema);
    }
    for shape in [
        JsonShape::Address,
        JsonShape::People,
        JsonShape::LedgerLines,
        JsonShape::OrderLines,
        JsonShape::InspectionItems,
        JsonShape::References,
        JsonShape::ReportParameters,
    ] {
        let (name, schema) = shape_item_schema(shape);
        b = b.schema(name, schema);
    }
    for c in COLLECTIONS {
        b = collection_schemas(b, c);
        for f in c.fields {
            if let Ty::Enum(values) = f.ty {
                b = b.schema(
                    enum_schema_name(c, f),
                    ObjectBuilder::new().schema_type(Type::String).enum_values(Some(values.iter().copied())),
                );
            }
        }
    }
    b
}

/// The secret a collection's create response carries and never shows again:
/// (property, description). `resources::create` adds it to the record.
pub(super) fn secret_on_create(c: &Collection) -> Option<(&'static str, &'static str)> {
    c.secret.map(|s| (s.field, s.doc))
}

/// Every schema of one collection: the record, its envelopes and its write bodies.
fn collection_schemas(mut b: ComponentsBuilder, c: &'static Collection) -> ComponentsBuilder {
    let name = pascal(c.object);
    let object_value = || ObjectBuilder::new().schema_type(Type::String).enum_values(Some([c.object]));
    b = b
        .schema(&name, record_schema(c, None))
        .schema(format!("{name}Envelope"), envelope(object_value(), schema_ref(&name), None))
        .schema(
            format!("{name}List"),
            envelope(
                ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["list"])),
                ArrayBuilder::new().items(schema_ref(&name)).into(),
                Some(format!("A page of {}.", c.name)),
            ),
        );
    // An uploaded collection's create body is a file (`openapi::imports`).
    if offers(c, WriteOp::Create) && !crate::domain::import::is_uploaded(c) {
        b = b.schema(format!("{name}Create"), create_schema(c));
        if let Some(secret) = secret_on_create(c) {
            b = b
                .schema(format!("{name}Created"), record_schema(c, Some(secret)))
                .schema(format!("{name}CreatedEnvelope"), envelope(object_value(), schema_ref(&format!("{name}Created")), None));
        }
    }
    if offers(c, WriteOp::Update) {
        b = b.schema(format!("{name}Update"), update_schema(c));
    }
    b
}

pub(super) fn envelope(object: ObjectBuilder, data: RefOr<Schema>, description: Option<String>) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(description)
        .property("object", object)
        .property("data", data)
        .property("meta", schema_ref("Meta"))
        .required("object")
        .required("data")
        .required("meta")
}

fn meta_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("request_id", uuid().description(Some("Identifies the request.")))
        .property(
            "next_cursor",
            ObjectBuilder::new()
                .schema_type([Type::String, Type::Null].into_iter().collect::<SchemaType>())
                .description(Some("Pass as `cursor` for the next page; null when there is none.")),
        )
        .property("has_more", ObjectBuilder::new().schema_type(Type::Boolean).description(Some("Whether more results follow.")))
        .required("request_id")
        .required("next_cursor")
        .required("has_more")
}

fn deleted_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .property("id", uuid())
        .property("object", ObjectBuilder::new().schema_type(Type::String))
        .property("deleted", ObjectBuilder::new().schema_type(Type::Boolean).enum_values(Some([true])))
        .required("id")
        .required("object")
        .required("deleted")
}

/// The ISO 4217 codes Gable knows (`domain::value::currencies`).
fn currency_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .description(Some("An ISO 4217 currency code, e.g. `USD`. Amounts in it have no more decimals than it has."))
        .enum_values(Some(crate::domain::value::currencies().into_iter().map(|(code, _)| code)))
}

/// As `domain::value::metadata` checks it.
fn metadata_schema() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some("Your own key-value pairs: at most 50 keys of 1 to 40 characters, string values of at most 500."))
        .max_properties(Some(50))
        .property_names(Some(ObjectBuilder::new().schema_type(Type::String).min_length(Some(1)).max_length(Some(40)).pattern(Some(NO_NUL))))
        .additional_properties(Some(ObjectBuilder::new().schema_type(Type::String).max_length(Some(500)).pattern(Some(NO_NUL))))
}

/// Text without U+0000, which no body may hold (`http::body`): a regular expression
/// escape, so the document itself holds no NUL.
pub(super) const NO_NUL: &str = r"^[^\u0000]*$";

/// A unique field's text (`domain::value`): no control character anywhere, no white space
/// at either end.
const UNIQUE_TEXT: &str = r"^[^\s\u0000-\u001f\u007f-\u009f](?:[^\u0000-\u001f\u007f-\u009f]*[^\s\u0000-\u001f\u007f-\u009f])?$";

// ---------------------------------------------------------------------------------------------
// Records and bodies
// ---------------------------------------------------------------------------------------------

/// Which side of the API a schema describes: what clients send, or what Gable returns.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Side {
    Request,
    Response,
}

pub(super) fn uuid() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String).format(Some(SchemaFormat::Custom("uuid".into())))
}

pub(super) fn date_time() -> ObjectBuilder {
    ObjectBuilder::new().schema_type(Type::String).format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
}

/// A record as `Record::to_json` renders it: system fields, every field in order, metadata.
/// Only `id` and `object` are required, because a sparse fieldset may leave out the rest.
fn record_schema(c: &Collection, secret: Option<(&str, &str)>) -> ObjectBuilder {
    let mut o = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(format!("{} Every property is present unless a sparse fieldset (`fields[{}]`) leaves it out.", c.doc, c.name)))
        .property("id", uuid().description(Some("Unique id.")))
        .property("object", ObjectBuilder::new().schema_type(Type::String).enum_values(Some([c.object])))
        .property(
            "livemode",
            ObjectBuilder::new().schema_type(Type::Boolean).description(Some("`true` in production, `false` in the sandbox.")),
        )
        .property("created_at", date_time().description(Some("When the record was created (RFC 3339, UTC).")))
        .property("updated_at", date_time().description(Some("When the record last changed (RFC 3339, UTC).")))
        .required("id")
        .required("object");
    for f in c.fields {
        o = o.property(f.name, field_schema(c, f, Side::Response));
    }
    if c.metadata {
        o = o.property("metadata", schema_ref("Metadata"));
    }
    if let Some((name, description)) = secret {
        o = o.property(name, ObjectBuilder::new().schema_type(Type::String).description(Some(description))).required(name);
    }
    o
}

/// Exactly what `validate::create` accepts: the writable fields, the required ones required,
/// nothing else. Every cross-field rule is in the description; those JSON Schema can say are
/// also added to the schema by `add_cross_field_rules`.
fn create_schema(c: &Collection) -> ObjectBuilder {
    let mut o = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(format!("Creates {}.{}", a_record(c), rules_text(c))))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)));
    for f in validate::create_fields(c) {
        o = o.property(f.name, field_schema(c, f, Side::Request));
        if f.required && f.access != Access::ReadOnly {
            o = o.required(f.name);
        }
    }
    if c.metadata {
        o = o.property("metadata", nullable(schema_ref("Metadata")));
    }
    o
}

/// Exactly what `validate::update` accepts: the changeable fields, all optional, at least one.
fn update_schema(c: &Collection) -> ObjectBuilder {
    let create_only: Vec<String> = c.fields.iter().filter(|f| f.access == Access::CreateOnly).map(|f| format!("`{}`", f.name)).collect();
    let fixed =
        if create_only.is_empty() { String::new() } else { format!(" Set at creation only, never changed: {}.", create_only.join(", ")) };
    let money = if c.has_money() { " Changing `currency` needs every amount on the record given again in the same request." } else { "" };
    let mut o = ObjectBuilder::new()
        .schema_type(Type::Object)
        .description(Some(format!("The fields to change; `null` removes an optional value.{fixed}{money}{}", rules_text(c))))
        .additional_properties(Some(AdditionalProperties::FreeForm(false)))
        .min_properties(Some(1));
    // Each field's description is the record's and the create's; here only its type.
    for f in validate::update_fields(c) {
        o = o.property(f.name, undescribed(field_schema(c, f, Side::Request)));
    }
    if c.metadata {
        o = o.property("metadata", nullable(schema_ref("Metadata")));
    }
    o
}

/// The collection's cross-field rules, in words.
fn rules_text(c: &Collection) -> String {
    let mut text = String::new();
    for rule in c.rules {
        text.push(' ');
        text.push_str(&match rule {
            Rule::OneOf(names) => {
                let names: Vec<String> = names.iter().map(|n| format!("`{n}`")).collect();
                format!("At least one of {} is required.", names.join(", "))
            }
            Rule::After { earlier, later } => format!("`{later}` must be after `{earlier}`."),
            Rule::Balanced(field) => format!(
                "`{field}` must balance: at least two lines, each with exactly one of `debit` or `credit` above \
                 zero, and debits equal to credits."
            ),
            Rule::SameProperty(field) => format!("`{field}` must belong to the same property as this record."),
        });
    }
    text
}

/// One field's schema: its type's, described, with its default, nullable where the
/// field can be absent (not required and without a default, as `Field::nullable` says).
pub(super) fn field_schema(c: &Collection, f: &Field, side: Side) -> RefOr<Schema> {
    field_schema_as(c, f, side, f.nullable())
}

/// As `field_schema`, with `null` allowed or not whatever the field says: an action's
/// required input is never `null`.
pub(super) fn field_schema_as(c: &Collection, f: &Field, side: Side, allow_null: bool) -> RefOr<Schema> {
    let mut schema = match (f.ty, side) {
        (Ty::Enum(_), _) => schema_ref(&enum_schema_name(c, f)),
        // In an answer a reference is its id, or, expanded, the record (`expand[]`).
        (Ty::Ref(target), Side::Response) => id_or_record(target),
        (Ty::RefList(target), Side::Response) => ArrayBuilder::new().items(id_or_record(target)).max_items(Some(100)).into(),
        // An identifying value (`Field::unique`): its component says the rule.
        (Ty::Str { .. }, _) if f.unique => schema_ref(&unique_schema_name(f)),
        (ty, _) => ty_schema(ty, side),
    };
    if allow_null {
        schema = nullable(schema);
    }
    // A unique field's component carries its doc: not repeated at every use.
    let mut description = if f.unique { String::new() } else { f.doc.to_string() };
    let expanded = |target: &str| {
        let name = crate::domain::expand::references(c).iter().find(|r| r.field.name == f.name).map(|r| r.name.clone()).unwrap_or_default();
        format!(" Expanded (`expand[]={name}`), the record instead, as its own `GET` shows it (`{}`).", pascal_of(target))
    };
    let reference = match (f.ty, side) {
        (Ty::Ref(target), Side::Request) => format!("Id of a record of `{target}`."),
        (Ty::RefList(target), Side::Request) => format!("Ids of records of `{target}`."),
        (Ty::Ref(target), Side::Response) => format!("Id of a record of `{target}`.{}", expanded(target)),
        (Ty::RefList(target), Side::Response) => format!("Ids of records of `{target}`.{}", expanded(target)),
        _ => String::new(),
    };
    if !reference.is_empty() {
        description = if description.is_empty() { reference } else { format!("{reference} {description}") };
    }
    // Rules that differ between live mode and the sandbox, which one schema serves both.
    if let Some(env) = f.env.describe() {
        description = if description.is_empty() { env } else { format!("{description} {env}") };
    }
    let default = match (side, f.default) {
        (Side::Request, D::Str(s)) => Some(json!(s)),
        (Side::Request, D::Int(i)) => Some(json!(i)),
        (Side::Request, D::Bool(b)) => Some(json!(b)),
        (Side::Request, D::Zero) => Some(json!(0)),
        _ => None,
    };
    annotate(schema, (!description.is_empty()).then_some(description), default)
}

/// The id of a record of `target`, or the record itself (an expanded reference).
fn id_or_record(target: &str) -> RefOr<Schema> {
    AnyOfBuilder::new().item(uuid()).item(schema_ref(&pascal_of(target))).into()
}

/// The name of the record schema of the collection named `target`.
fn pascal_of(target: &str) -> String {
    crate::domain::collections::collection(target).map(|t| pascal(t.object)).unwrap_or_default()
}

/// A schema without its description and default: an update's field (leaving a field out of
/// an update keeps its value, so no default applies).
fn undescribed(schema: RefOr<Schema>) -> RefOr<Schema> {
    match schema {
        RefOr::T(Schema::Object(mut o)) => {
            o.description = None;
            o.default = None;
            RefOr::T(Schema::Object(o))
        }
        RefOr::T(Schema::Array(mut a)) => {
            a.description = None;
            a.default = None;
            RefOr::T(Schema::Array(a))
        }
        RefOr::T(Schema::AnyOf(mut a)) => {
            a.description = None;
            a.default = None;
            RefOr::T(Schema::AnyOf(a))
        }
        // `annotate`'s wrapper of a reference with a default: the reference alone.
        RefOr::T(Schema::AllOf(mut a)) if a.items.len() == 1 => undescribed(a.items.remove(0)),
        RefOr::Ref(mut r) => {
            r.description = String::new();
            RefOr::Ref(r)
        }
        other => other,
    }
}

/// Sets a description and default on a schema, whatever kind it is.
fn annotate(schema: RefOr<Schema>, description: Option<String>, default: Option<Json>) -> RefOr<Schema> {
    match schema {
        RefOr::T(Schema::Object(mut o)) => {
            o.description = description.or(o.description);
            o.default = default.or(o.default);
            RefOr::T(Schema::Object(o))
        }
        RefOr::T(Schema::Array(mut a)) => {
            a.description = description.or(a.description);
            a.default = default.or(a.default);
            RefOr::T(Schema::Array(a))
        }
        RefOr::T(Schema::AnyOf(mut a)) => {
            a.description = description.or(a.description);
            a.default = default.or(a.default);
            RefOr::T(Schema::AnyOf(a))
        }
        // A reference holds no default beside it (utoipa's `Ref`): one item of an `allOf` does.
        RefOr::Ref(r) if default.is_some() => {
            let mut all = AllOfBuilder::new().item(RefOr::Ref(r)).build();
            all.description = description;
            all.default = default;
            RefOr::T(Schema::AllOf(all))
        }
        RefOr::Ref(mut r) => {
            if let Some(d) = description {
                r.description = d;
            }
            RefOr::Ref(r)
        }
        other => other,
    }
}

/// Adds `null` to a schema: to its `type` (and `enum`), or, for a reference, as an
/// alternative (`anyOf: [$ref, {type: null}]`, which generators read as "nullable").
fn nullable(schema: RefOr<Schema>) -> RefOr<Schema> {
    fn with_null(t: SchemaType) -> SchemaType {
        match t {
            SchemaType::Type(t) => [t, Type::Null].into_iter().collect(),
            SchemaType::Array(mut ts) => {
                ts.push(Type::Null);
                SchemaType::Array(ts)
            }
            SchemaType::AnyValue => SchemaType::AnyValue,
        }
    }
    match schema {
        RefOr::T(Schema::Object(mut o)) => {
            o.schema_type = with_null(o.schema_type);
            if let Some(values) = o.enum_values.as_mut() {
                values.push(Json::Null);
            }
            RefOr::T(Schema::Object(o))
        }
        RefOr::T(Schema::Array(mut a)) => {
            a.schema_type = with_null(a.schema_type);
            RefOr::T(Schema::Array(a))
        }
        // One more alternative rather than an `anyOf` inside an `anyOf`.
        RefOr::T(Schema::AnyOf(mut a)) => {
            a.items.push(ObjectBuilder::new().schema_type(Type::Null).into());
            RefOr::T(Schema::AnyOf(a))
        }
        other => AnyOfBuilder::new().item(other).item(ObjectBuilder::new().schema_type(Type::Null)).into(),
    }
}

/// The schema of a value of a type, as `domain::value::from_json` checks it (requests) and
/// `domain::value::to_json` renders it (responses).
pub(super) fn ty_schema(ty: Ty, side: Side) -> RefOr<Schema> {
    let string = || ObjectBuilder::new().schema_type(Type::String);
    match ty {
        Ty::Str { max } => string().max_length(Some(max)).pattern(Some(NO_NUL)).into(),
        Ty::Text => string().max_length(Some(10_000)).pattern(Some(NO_NUL)).into(),
        Ty::Email => string().format(Some(SchemaFormat::KnownFormat(KnownFormat::Email))).max_length(Some(320)).into(),
        Ty::Url => string()
            .format(Some(SchemaFormat::Custom("uri".into())))
            .pattern(Some(r"^https?://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$"))
            .max_length(Some(2048))
            .description(Some("An absolute http or https URL, in URI characters (RFC 3986)."))
            .into(),
        Ty::Origin => string()
            .format(Some(SchemaFormat::Custom("uri".into())))
            .pattern(Some(r"^https?://[A-Za-z0-9\-._~:\[\]@!$&'()*+,;=%]+/?$"))
            .max_length(Some(2048))
            .description(Some("An origin: scheme, host and optional port, e.g. `https://www.example.com`."))
            .into(),
        Ty::Enum(values) => string().enum_values(Some(values.iter().copied())).into(),
        Ty::Int { min, max } => ObjectBuilder::new()
            .schema_type(Type::Integer)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Int64)))
            .minimum(Some(min))
            .maximum(Some(max))
            .into(),
        Ty::Num { min, max } => ObjectBuilder::new().schema_type(Type::Number).minimum(Some(min)).maximum(Some(max)).into(),
        Ty::Money => money_schema(side),
        Ty::Currency => schema_ref("Currency"),
        Ty::Bool => ObjectBuilder::new().schema_type(Type::Boolean).into(),
        Ty::Date => string().format(Some(SchemaFormat::KnownFormat(KnownFormat::Date))).into(),
        Ty::DateTime => date_time().into(),
        Ty::Ref(_) | Ty::Uuid => uuid().into(),
        Ty::StrList { max_items } => ArrayBuilder::new()
            .items(string().min_length(Some(1)).max_length(Some(100)).pattern(Some(NO_NUL)))
            .max_items(Some(max_items))
            .into(),
        Ty::RefList(_) => ArrayBuilder::new().items(uuid()).max_items(Some(100)).into(),
        Ty::Json(JsonShape::Object) => {
            ObjectBuilder::new().schema_type(Type::Object).description(Some("A JSON object (at most 64 KiB).")).into()
        }
        Ty::Json(shape @ (JsonShape::Address | JsonShape::ReportParameters)) => schema_ref(shape_item_schema(shape).0),
        Ty::Json(shape) => {
            let (item, _) = shape_item_schema(shape);
            // People, ledger lines and order lines must not be empty.
            let min = matches!(shape, JsonShape::People | JsonShape::LedgerLines | JsonShape::OrderLines).then_some(1);
            ArrayBuilder::new().items(schema_ref(item)).min_items(min).max_items(Some(200)).into()
        }
        Ty::Metadata => schema_ref("Metadata"),
    }
}

/// Money: a decimal amount in the currency's major unit, one component per side (`Amount`,
/// `AmountInput`), referenced by every amount.
fn money_schema(side: Side) -> RefOr<Schema> {
    schema_ref(match side {
        Side::Response => "Amount",
        Side::Request => "AmountInput",
    })
}

/// Gable renders an amount as a number; a client may send a number or a decimal string
/// (exact, whatever its JSON library does), below 10^12 (`domain::value::parse_money`).
fn amount_schemas() -> [(&'static str, ObjectBuilder); 3] {
    let text = "A decimal amount in the major unit of the record's `currency` (e.g. `1250.50`), with no more \
                decimals than the currency has.";
    [
        ("Amount", ObjectBuilder::new().schema_type(Type::Number).minimum(Some(0)).description(Some(text))),
        (
            "AmountInput",
            ObjectBuilder::new()
                .schema_type([Type::Number, Type::String].into_iter().collect::<SchemaType>())
                .minimum(Some(0))
                .exclusive_maximum(Some(1.0e12))
                .pattern(Some(r"^0*[0-9]{1,12}(\.[0-9]+)?$"))
                .description(Some(format!("{text} A JSON number or a decimal string."))),
        ),
        (
            "PositiveAmountInput",
            ObjectBuilder::new()
                .schema_type([Type::Number, Type::String].into_iter().collect::<SchemaType>())
                .exclusive_minimum(Some(0))
                .exclusive_maximum(Some(1.0e12))
                .pattern(Some(r"^(0*[1-9][0-9]{0,11}(\.[0-9]+)?|0+\.[0-9]*[1-9][0-9]*)$"))
                .description(Some(format!("{text} Above zero. A JSON number or a decimal string."))),
        ),
    ]
}

/// The component schema of a structured field's value (or of one item of a list), with the
/// keys and required keys `domain::value::shape_check` enforces. Values are strings of at most
/// 500 characters unless noted.
fn shape_item_schema(shape: JsonShape) -> (&'static str, ObjectBuilder) {
    let text = || ObjectBuilder::new().schema_type(Type::String).max_length(Some(500)).pattern(Some(NO_NUL));
    let amount = || schema_ref("AmountInput");
    let closed = || ObjectBuilder::new().schema_type(Type::Object).additional_properties(Some(AdditionalProperties::FreeForm(false)));
    match shape {
        JsonShape::Address => (
            "Address",
            closed()
                .description(Some("A postal address."))
                .property("line1", text())
                .property("line2", text())
                .property("city", text())
                .property("region", text())
                .property("postal_code", text())
                .property("country", text().pattern(Some("^[A-Z]{2}$")).description(Some("ISO 3166-1 alpha-2 code, e.g. `US`.")))
                .required("line1")
                .required("city")
                .required("country"),
        ),
        JsonShape::People => (
            "Person",
            closed()
                .description(Some("A person named on a record."))
                .property("name", text())
                .property("email", text())
                .property("phone", text())
                .required("name"),
        ),
        JsonShape::LedgerLines => (
            "LedgerLine",
            closed()
                .description(Some("One line of a journal entry: exactly one of `debit` and `credit` above zero."))
                .property("account", ObjectBuilder::new().schema_type(Type::String).enum_values(Some(ACCOUNTS.iter().copied())))
                .property("debit", amount())
                .property("credit", amount())
                .required("account")
                .required("debit")
                .required("credit"),
        ),
        JsonShape::OrderLines => (
            "OrderLine",
            closed()
                .description(Some("One line of a purchase order."))
                .property("description", text())
                .property("quantity", ObjectBuilder::new().schema_type(Type::Number).exclusive_minimum(Some(0)))
                .property("unit_amount", amount())
                .required("description")
                .required("quantity")
                .required("unit_amount"),
        ),
        JsonShape::InspectionItems => (
            "InspectionItem",
            closed()
                .description(Some("One checked item of an inspection."))
                .property("name", text())
                .property("condition", text())
                .property("notes", text())
                .required("name"),
        ),
        JsonShape::References => (
            "Reference",
            closed()
                .description(Some("Someone who can vouch for an applicant."))
                .property("name", text())
                .property("relationship", text().description(Some("e.g. `landlord`, `employer`.")))
                .property("email", text())
                .property("phone", text())
                .required("name"),
        ),
        JsonShape::Object => ("JsonObject", ObjectBuilder::new().schema_type(Type::Object)),
        JsonShape::ReportParameters => (
            "ReportParameters",
            closed()
                .description(Some("What a report runs over; every key optional."))
                .property(
                    "property_id",
                    uuid()
                        .schema_type([Type::String, Type::Null].into_iter().collect::<SchemaType>())
                        .description(Some("Only this property (it must exist: `404` naming `parameters.property_id`).")),
                )
                .property(
                    "as_of",
                    ObjectBuilder::new()
                        .schema_type([Type::String, Type::Null].into_iter().collect::<SchemaType>())
                        .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
                        .description(Some("The day the report is as of (absent: the day it runs).")),
                ),
        ),
    }
}

#[cfg(test)]
mod tests;
