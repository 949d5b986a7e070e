//! Schemas: what a record looks like (responses), what create and update bodies may carry
//! (requests), the envelopes around them, and the structured values inside them. Each is
//! derived from the collection's registry entry, as `domain::validate` checks bodies and
//! `domain::record` renders records.

use serde_json::{json, Map, Value as Json};
use utoipa::openapi::schema::{AdditionalProperties, AllOfBuilder, AnyOfBuilder, SchemaType};
use utoipa::openapi::{ArrayBuilder, ComponentsBuilder, KnownFormat, ObjectBuilder, RefOr, Schema, SchemaFormat, Type};

use super::{a_record, offers, pascal, schema_ref};
use crate::domain::collections::COLLECTIONS;
use crate::domain::ledger::ACCOUNTS;
use crate::domain::registry::{Access, Collection, Default as D, EnvRule, Field, JsonShape, Rule, Ty, WriteOp};
use crate::domain::validate;

/// The component of an enumerated field's values: `<Object><Field>`, e.g. `LeaseStatus`,
/// one type for generated clients wherever the field appears (records, bodies, filters).
pub(super) fn enum_schema_name(c: &Collection, f: &Field) -> String {
    format!("{}{}", pascal(c.object), pascal(f.name))
}

/// Every shared schema and every collection's: records, envelopes, write bodies.
pub(super) fn register(mut b: ComponentsBuilder) -> ComponentsBuilder {
    b = b
        .schema("Meta", meta_schema())
        .schema("Deleted", deleted_schema())
        .schema("DeletedEnvelope", envelope(ObjectBuilder::new().schema_type(Type::String), schema_ref("Deleted"), None))
        .schema("Metadata", metadata_schema())
        .schema("Currency", currency_schema());
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
    if offers(c, WriteOp::Create) {
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
    let mut schema = match f.ty {
        Ty::Enum(_) => schema_ref(&enum_schema_name(c, f)),
        ty => ty_schema(ty, side),
    };
    if allow_null {
        schema = nullable(schema);
    }
    let mut description = f.doc.to_string();
    let reference = match f.ty {
        Ty::Ref(target) => format!("Id of a record of `{target}`."),
        Ty::RefList(target) => format!("Ids of records of `{target}`."),
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

// ---------------------------------------------------------------------------------------------
// Cross-field rules JSON Schema can say, added to the JSON (utoipa's object builder has no
// `anyOf` beside `properties`, and no `dependentRequired`)
// ---------------------------------------------------------------------------------------------

/// Adds to each `*Create` schema the rules of `validate::create` that JSON Schema can state,
/// so validators and generated clients know them, not only readers of the description:
///
/// - `Rule::OneOf`: `anyOf` of one `required` list per field, each also not `null` (the
///   server counts a `null` as absent);
/// - `Rule::Balanced`: `minItems: 2` on the lines (that debits equal credits is arithmetic
///   over the items, which JSON Schema cannot do);
/// - an amount given where `currency` is optional needs `currency` (`if`/`then`: a `null`
///   counts as not given, on either side).
///
/// `Rule::After` compares two values of the body, and `Rule::SameProperty` needs the stored
/// record a field names; JSON Schema can say neither, so they stay in words only. `*Update`
/// schemas get none of these: the server checks the rules on the record as it will be
/// after the change, which depends on stored values a schema cannot see.
pub(super) fn add_cross_field_rules(doc: &mut Json) {
    for c in COLLECTIONS.iter().filter(|c| offers(c, WriteOp::Create)) {
        let Some(schema) = doc.pointer_mut(&format!("/components/schemas/{}Create", pascal(c.object))).and_then(Json::as_object_mut) else {
            continue;
        };
        let mut any_of = vec![];
        for rule in c.rules {
            match rule {
                Rule::OneOf(names) => any_of.push(json!({
                    "anyOf": names
                        .iter()
                        .map(|n| json!({ "required": [n], "properties": { *n: { "not": { "type": "null" } } } }))
                        .collect::<Vec<_>>()
                })),
                Rule::Balanced(field) => {
                    if let Some(lines) = schema.get_mut("properties").and_then(|p| p.get_mut(*field)).and_then(Json::as_object_mut) {
                        lines.insert("minItems".into(), json!(2));
                    }
                }
                // Not expressible: see above.
                Rule::After { .. } | Rule::SameProperty(_) => {}
            }
        }
        // An amount given (not `null`) where `currency` is optional needs a currency (not `null`).
        let mut all_of = vec![];
        if c.field("currency").is_some_and(|f| !f.required) {
            for f in validate::create_fields(c).filter(|f| f.ty == Ty::Money) {
                all_of.push(json!({
                    "if": { "required": [f.name], "properties": { f.name: { "not": { "type": "null" } } } },
                    "then": { "required": ["currency"], "properties": { "currency": { "not": { "type": "null" } } } },
                }));
            }
        }
        // One `anyOf` rule is the schema's own `anyOf`; with more rules, each is one `allOf` item.
        if any_of.len() == 1 && all_of.is_empty() {
            schema.insert("anyOf".into(), any_of.remove(0)["anyOf"].take());
        } else {
            all_of.extend(any_of);
            if !all_of.is_empty() {
                schema.insert("allOf".into(), Json::Array(all_of));
            }
        }
    }
    add_domain_rules(doc);
}

/// What differs between the two listeners' documents: each states its own environment's
/// rules (`EnvRule`) in its write schemas, where one document for both could only say them
/// in words. Production: sandbox-only fields are gone, URLs and origins need `https`, and
/// fields with live values take only those. The sandbox: fields it requires are required.
pub(super) fn add_environment_rules(doc: &mut Json, livemode: bool) {
    for c in COLLECTIONS {
        for f in c.fields.iter().filter(|f| f.env != EnvRule::Same) {
            for body in ["Create", "Update"] {
                let pointer = format!("/components/schemas/{}{body}", pascal(c.object));
                let Some(schema) = doc.pointer_mut(&pointer).and_then(Json::as_object_mut) else { continue };
                let Some(properties) = schema.get_mut("properties").and_then(Json::as_object_mut) else { continue };
                if !properties.contains_key(f.name) {
                    continue;
                }
                match (f.env, livemode) {
                    (EnvRule::SandboxOnly | EnvRule::SandboxRequired, true) => {
                        properties.remove(f.name);
                        if let Some(required) = schema.get_mut("required").and_then(Json::as_array_mut) {
                            required.retain(|r| r != f.name);
                        }
                    }
                    (EnvRule::SandboxRequired, false) if body == "Create" => {
                        let required = schema.entry("required").or_insert_with(|| json!([]));
                        if let Some(list) = required.as_array_mut() {
                            list.push(json!(f.name));
                        }
                    }
                    (EnvRule::HttpsInLive, true) => {
                        let pattern = if f.ty == Ty::Origin {
                            r"^https://[A-Za-z0-9\-._~:\[\]@!$&'()*+,;=%]+/?$"
                        } else {
                            r"^https://[A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=%]+$"
                        };
                        if let Some(p) = properties.get_mut(f.name).and_then(Json::as_object_mut) {
                            p.insert("pattern".into(), json!(pattern));
                        }
                    }
                    (EnvRule::LiveValues(values), true) => {
                        let mut only: Vec<Json> = values.iter().map(|v| json!(v)).collect();
                        if f.nullable() {
                            only.push(Json::Null);
                        }
                        let mut live = json!({ "enum": only });
                        if let Some(d) = properties[f.name].get("description").cloned() {
                            live["description"] = d;
                        }
                        properties.insert(f.name.into(), live);
                    }
                    _ => {}
                }
            }
        }
    }
}

/// Rules of particular collections' behaviours, stated from the domain's own lists so they
/// cannot drift from what the behaviours check:
/// - a webhook's `events`: event types (`domain::events::EVENT_TYPES`), at least one, or `*`
///   alone (`domain::webhooks::check_events`);
/// - a role's `permissions`: scopes (`domain::scopes::all`), at least one;
/// - a flow token names exactly one subject of its flow, and no other
///   (`domain::flows::Flow::subjects`, checked by `ops::behaviour::flow_tokens`).
fn add_domain_rules(doc: &mut Json) {
    let event_types: Vec<&str> = crate::domain::events::EVENT_TYPES.iter().map(|e| e.name).collect();
    let scopes = crate::domain::scopes::all();
    if let Some(schemas) = doc.pointer_mut("/components/schemas").and_then(Json::as_object_mut) {
        schemas.insert(
            "EventType".into(),
            json!({ "type": "string", "enum": event_types, "description": "An event type (the `webhooks` section)." }),
        );
        schemas.insert("Scope".into(), json!({ "type": "string", "enum": scopes, "description": "A scope: `{collection}:read`, `{collection}:write`, `*:read` or `*`." }));
        // A journal line has exactly one side above zero (`domain::ledger`).
        schemas.insert(
            "ZeroAmount".into(),
            json!({ "anyOf": [{ "type": "number", "const": 0 }, { "type": "string", "pattern": "^0+(\\.0*)?$" }] }),
        );
        if let Some(line) = schemas.get_mut("LedgerLine").and_then(Json::as_object_mut) {
            let side = |positive: &str, zero: &str| json!({ "properties": { positive: { "$ref": "#/components/schemas/PositiveAmountInput" }, zero: { "$ref": "#/components/schemas/ZeroAmount" } } });
            line.insert("oneOf".into(), json!([side("debit", "credit"), side("credit", "debit")]));
        }
    }
    let events = json!({
        "description": "Event types, or `[\"*\"]` alone for all.",
        "anyOf": [
            { "type": "array", "items": { "$ref": "#/components/schemas/EventType" }, "minItems": 1, "maxItems": 50 },
            { "type": "array", "items": { "const": "*" }, "minItems": 1, "maxItems": 1 },
        ],
    });
    let permissions = json!({ "type": "array", "items": { "$ref": "#/components/schemas/Scope" }, "minItems": 1, "maxItems": 100 });
    let positive = json!({ "$ref": "#/components/schemas/PositiveAmountInput" });
    let nonzero: Vec<(String, &str, &Json)> = crate::ops::NONZERO_AMOUNT
        .iter()
        .filter_map(|name| crate::domain::collections::collection(name))
        .map(|c| (format!("{}Create", pascal(c.object)), "amount", &positive))
        .collect();
    for (schema, field, value) in nonzero.iter().map(|(s, f, v)| (s.as_str(), *f, *v)).chain([
        ("WebhookCreate", "events", &events),
        ("WebhookUpdate", "events", &events),
        ("RoleCreate", "permissions", &permissions),
        ("RoleUpdate", "permissions", &permissions),
    ]) {
        if let Some(p) = doc.pointer_mut(&format!("/components/schemas/{schema}/properties/{field}")) {
            let description = p.get("description").cloned();
            *p = value.clone();
            if let (Some(d), Some(o)) = (description, p.as_object_mut()) {
                o.insert("description".into(), d);
            }
        }
    }
    // Each flow: one subject of its own, given (not `null`), and none of the others.
    use crate::domain::flows::{Flow, SUBJECT_FIELDS};
    let rules: Vec<Json> = Flow::ALL
        .iter()
        .map(|flow| {
            let others: Map<String, Json> = SUBJECT_FIELDS
                .iter()
                .filter(|f| !flow.subjects().contains(f))
                .map(|f| (f.to_string(), json!({ "type": "null" })))
                .collect();
            let one_of: Vec<Json> =
                flow.subjects().iter().map(|s| json!({ "required": [s], "properties": { *s: { "not": { "type": "null" } } } })).collect();
            json!({
                "if": { "properties": { "flow": { "const": flow.name() } }, "required": ["flow"] },
                "then": { "properties": others, "oneOf": one_of },
            })
        })
        .collect();
    if let Some(o) = doc.pointer_mut("/components/schemas/FlowTokenCreate").and_then(Json::as_object_mut) {
        match o.get_mut("allOf").and_then(Json::as_array_mut) {
            Some(existing) => existing.extend(rules),
            None => {
                o.insert("allOf".into(), Json::Array(rules));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    //! Bodies made from the create/update schemas alone (no registry knowledge beyond the
    //! rules JSON Schema cannot say) must validate, and the rules the schemas do state must be
    //! the ones `validate::create` enforces.

    use chrono::Utc;
    use serde_json::{json, Map, Value as Json};

    use super::super::tests::{doc, resolve};
    use super::*;
    use crate::domain::record::Record;

    /// Bodies are validated as the sandbox does: one schema serves both listeners, and what
    /// live mode refuses besides (sandbox-only fields, http URLs) is said in words.
    const SANDBOX: bool = false;

    /// Builds a body from a schema alone. `full`: every property; otherwise the required
    /// ones. `nulls`: nullable optional properties are sent as `null`.
    struct Sampler<'a> {
        doc: &'a Json,
        counter: i64,
    }

    impl Sampler<'_> {
        fn value(&mut self, s: &Json, full: bool, nulls: bool) -> Json {
            let s = resolve(self.doc, s);
            // A bare `anyOf` of alternatives (a nullable reference); an object's `anyOf` of
            // required lists is handled with its properties.
            if let (Some(first), None) = (s.get("anyOf").and_then(|a| a.get(0)), s.get("type")) {
                return self.value(first, full, nulls);
            }
            if let Some(d) = s.get("default") {
                return d.clone();
            }
            if let Some(first) = s.get("enum").and_then(|e| e.get(0)) {
                return first.clone();
            }
            let types: Vec<&str> = match &s["type"] {
                Json::String(t) => vec![t.as_str()],
                Json::Array(ts) => ts.iter().filter_map(Json::as_str).collect(),
                _ => vec![],
            };
            self.counter += 1;
            let n = self.counter;
            match (types.first().copied(), s["format"].as_str()) {
                (Some("object"), _) => self.object(s, full, nulls),
                (Some("array"), _) => {
                    let min = s["minItems"].as_u64().unwrap_or(0).max(1) as usize;
                    Json::Array((0..min).map(|_| self.value(&s["items"], full, nulls)).collect())
                }
                (_, Some("uuid")) => json!(uuid::Uuid::now_v7().to_string()),
                // Increasing, so "later" fields in declaration order come after "earlier" ones.
                (_, Some("date")) => json!(format!("2026-01-{:02}", 1 + n % 28)),
                (_, Some("date-time")) => json!(format!("2026-01-01T{:02}:00:00Z", n % 24)),
                (_, Some("email")) => json!("someone@example.com"),
                (_, Some("uri")) => json!("https://www.example.com"),
                (Some("integer"), _) => s.get("minimum").cloned().unwrap_or(json!(1)),
                (Some("number"), _) => {
                    let min = s["minimum"].as_f64().or(s["exclusiveMinimum"].as_f64().map(|m| m + 1.0)).unwrap_or(1.0);
                    json!(min + 12.5)
                }
                (Some("boolean"), _) => json!(true),
                _ if s["pattern"] == "^[A-Z]{3}$" => json!("USD"),
                _ if s["pattern"] == "^[A-Z]{2}$" => json!("US"),
                _ => json!("text"),
            }
        }

        fn object(&mut self, s: &Json, full: bool, nulls: bool) -> Json {
            let required: Vec<&str> = s["required"].as_array().into_iter().flatten().filter_map(Json::as_str).collect();
            let mut out = Map::new();
            for (k, p) in s["properties"].as_object().into_iter().flatten() {
                let rp = resolve(self.doc, p);
                let can_null = rp["type"].as_array().is_some_and(|t| t.contains(&json!("null")))
                    || rp["anyOf"].as_array().is_some_and(|a| a.contains(&json!({"type": "null"})));
                if required.contains(&k.as_str()) || full {
                    out.insert(k.clone(), self.value(p, full, nulls));
                } else if nulls && can_null {
                    out.insert(k.clone(), Json::Null);
                }
            }
            // `anyOf` of required lists: satisfy the first alternative if none is.
            let groups: Vec<&Json> = match (s.get("anyOf"), s["allOf"].as_array()) {
                (Some(a), _) => vec![a],
                (None, Some(all)) => all.iter().map(|x| &x["anyOf"]).collect(),
                _ => vec![],
            };
            for alternatives in groups.into_iter().filter_map(Json::as_array) {
                let names = |alt: &Json| {
                    alt["required"].as_array().into_iter().flatten().filter_map(Json::as_str).map(String::from).collect::<Vec<_>>()
                };
                if !alternatives.iter().any(|alt| names(alt).iter().all(|n| out.get(n).is_some_and(|v| !v.is_null()))) {
                    for n in names(&alternatives[0]) {
                        let v = self.value(&s["properties"][&n], full, false);
                        out.insert(n, v);
                    }
                }
            }
            // JSON Schema `dependentRequired`: a present key brings its dependencies.
            for (k, deps) in s["dependentRequired"].as_object().into_iter().flatten() {
                if out.contains_key(k) {
                    for dep in deps.as_array().into_iter().flatten().filter_map(Json::as_str) {
                        if !out.contains_key(dep) || out[dep].is_null() {
                            let v = self.value(&s["properties"][dep], full, false);
                            out.insert(dep.into(), v);
                        }
                    }
                }
            }
            Json::Object(out)
        }
    }

    /// The rules JSON Schema cannot say (they are in the schema's description), applied the
    /// way a reader of that description would.
    fn apply_rules(c: &Collection, body: &mut Json) {
        // A field the sandbox requires (its description says so; the schema serves both
        // environments) is given, as a sandbox client gives it.
        for f in c.fields.iter().filter(|f| f.env == crate::domain::registry::EnvRule::SandboxRequired) {
            if body.get(f.name).is_none() {
                if let crate::domain::registry::Ty::Enum(values) = f.ty {
                    body[f.name] = json!(values[0]);
                }
            }
        }
        for rule in c.rules {
            if let Rule::Balanced(field) = rule {
                body[field] = json!([
                    { "account": "cash", "debit": 100.5, "credit": 0 },
                    { "account": "rent_income", "debit": 0, "credit": 100.5 },
                ]);
            }
        }
    }

    /// A stored record to update: it already satisfies the "one of" rules, as any stored record does.
    fn current(c: &Collection) -> Record {
        let mut values = std::collections::HashMap::new();
        for rule in c.rules {
            if let Rule::OneOf(names) = rule {
                values.insert(names[0], crate::domain::value::Val::Uuid(uuid::Uuid::now_v7()));
            }
        }
        // A stored record has its currency (create-only on some collections, so an
        // update body cannot give it).
        if c.field("currency").is_some_and(|f| f.required) {
            values.insert("currency", crate::domain::value::Val::Str("USD".into()));
        }
        Record { id: uuid::Uuid::now_v7(), livemode: false, created_at: Utc::now(), updated_at: Utc::now(), values, metadata: None }
    }

    #[test]
    fn bodies_made_from_the_write_schemas_are_accepted() {
        let d = doc();
        // A fresh sampler per body, so its dates and times increase within the body.
        let sampler = || Sampler { doc: &d, counter: 0 };
        for c in COLLECTIONS {
            let name = pascal(c.object);
            if offers(c, WriteOp::Create) {
                let schema = &d["components"]["schemas"][format!("{name}Create")];
                for (full, nulls) in [(false, false), (true, false), (false, true)] {
                    let mut body = sampler().value(schema, full, nulls);
                    apply_rules(c, &mut body);
                    if let Err(e) = validate::create(c, &body, SANDBOX) {
                        panic!("{name}Create refuses a body built from its schema: {e}\n{body:#}");
                    }
                }
            }
            if offers(c, WriteOp::Update) {
                let schema = &d["components"]["schemas"][format!("{name}Update")];
                let body = sampler().value(schema, true, false);
                if body.as_object().is_some_and(|o| !o.is_empty()) {
                    if let Err(e) = validate::update(c, &body, &current(c), SANDBOX) {
                        panic!("{name}Update refuses a body built from its schema: {e}\n{body:#}");
                    }
                }
            }
        }
    }

    #[test]
    fn write_schemas_are_closed_and_list_only_writable_fields() {
        let d = doc();
        for c in COLLECTIONS.iter().filter(|c| offers(c, WriteOp::Create)) {
            let s = &d["components"]["schemas"][format!("{}Create", pascal(c.object))];
            assert_eq!(s["additionalProperties"], json!(false));
            for f in c.fields.iter().filter(|f| f.access == Access::ReadOnly) {
                assert!(s["properties"].get(f.name).is_none(), "{}.{} is read-only", c.name, f.name);
            }
        }
    }

    /// "At least one of" is an `anyOf` of `required` lists, and it means what the server
    /// does: each alternative alone is accepted; none of them, or only `null`s, is refused.
    #[test]
    fn one_of_rules_are_any_of_required_lists() {
        let d = doc();
        let mut seen = 0;
        for c in COLLECTIONS.iter().filter(|c| offers(c, WriteOp::Create)) {
            let schema = &d["components"]["schemas"][format!("{}Create", pascal(c.object))];
            for rule in c.rules {
                let Rule::OneOf(names) = rule else { continue };
                seen += 1;
                // The schema's own `anyOf`, or one item of its `allOf` beside other rules.
                let any_of = schema["anyOf"].as_array().or_else(|| schema["allOf"].as_array()?.iter().find_map(|r| r["anyOf"].as_array()));
                let alternatives: Vec<Vec<&str>> = any_of
                    .unwrap_or_else(|| panic!("{}Create has no anyOf for {names:?}", pascal(c.object)))
                    .iter()
                    .map(|alt| alt["required"].as_array().unwrap().iter().filter_map(Json::as_str).collect())
                    .collect();
                assert_eq!(alternatives, names.iter().map(|n| vec![*n]).collect::<Vec<_>>(), "{}", c.name);
                let mut base = Sampler { doc: &d, counter: 0 }.value(schema, false, false);
                for n in names.iter() {
                    base.as_object_mut().unwrap().remove(*n);
                }
                for n in names.iter() {
                    let mut body = base.clone();
                    body[*n] = json!(uuid::Uuid::now_v7().to_string());
                    assert!(validate::create(c, &body, SANDBOX).is_ok(), "{}: {n} alone is refused: {body}", c.name);
                }
                assert!(validate::create(c, &base, SANDBOX).is_err(), "{}: none of {names:?} is accepted", c.name);
                let mut nulls = base.clone();
                for n in names.iter() {
                    nulls[*n] = Json::Null;
                }
                assert!(validate::create(c, &nulls, SANDBOX).is_err(), "{}: only nulls for {names:?} is accepted", c.name);
                for (alt, n) in any_of.unwrap().iter().zip(names.iter()) {
                    assert_eq!(alt["properties"][*n]["not"], json!({"type": "null"}), "{}: {n}", c.name);
                }
            }
        }
        assert!(seen >= 3, "charges, invoices and viewings have one-of rules; found {seen}");
    }

    /// Each listener's document states its environment's rules, as `validate::create` applies
    /// them: the sandbox requires a test payment's scenario; production refuses it, takes
    /// only live payment methods and https webhook URLs.
    #[test]
    fn each_environment_has_its_own_rules() {
        let sandbox = doc();
        let live = super::super::document("http://127.0.0.1:8080", true);
        let payment = |d: &Json| d["components"]["schemas"]["PaymentCreate"].clone();
        assert!(payment(&sandbox)["required"].as_array().unwrap().contains(&json!("scenario")));
        assert!(payment(&live)["properties"].get("scenario").is_none());
        let c = crate::domain::collections::collection("payments").unwrap();
        let f = c.field("scenario").unwrap();
        assert_eq!(f.env, EnvRule::SandboxRequired);
        let methods = payment(&live)["properties"]["method"]["enum"].clone();
        let EnvRule::LiveValues(values) = c.field("method").unwrap().env else { panic!("payment methods have live values") };
        assert!(values.iter().all(|v| methods.as_array().unwrap().contains(&json!(v))));
        let webhook = &live["components"]["schemas"]["WebhookCreate"]["properties"]["url"];
        assert!(webhook["pattern"].as_str().unwrap().starts_with("^https://["));
        let hooks = crate::domain::collections::collection("webhooks").unwrap();
        let body = |url: &str| json!({ "url": url, "events": ["*"] });
        assert!(validate::create(hooks, &body("http://example.com/h"), true).is_err(), "live mode refuses http");
        assert!(validate::create(hooks, &body("http://example.com/h"), false).is_ok(), "the sandbox takes http");
    }

    /// A balanced entry needs two lines: the schema says so, and one line is refused.
    #[test]
    fn balanced_lines_need_two_items() {
        let d = doc();
        for c in COLLECTIONS.iter().filter(|c| offers(c, WriteOp::Create)) {
            for rule in c.rules {
                let Rule::Balanced(field) = rule else { continue };
                let schema = &d["components"]["schemas"][format!("{}Create", pascal(c.object))];
                assert_eq!(schema["properties"][*field]["minItems"], json!(2), "{}.{field}", c.name);
                let mut body = Sampler { doc: &d, counter: 0 }.value(schema, false, false);
                apply_rules(c, &mut body);
                assert!(validate::create(c, &body, SANDBOX).is_ok(), "{}: {body}", c.name);
                body[*field].as_array_mut().unwrap().truncate(1);
                assert!(validate::create(c, &body, SANDBOX).is_err(), "{}: one line is accepted", c.name);
            }
        }
    }
}
