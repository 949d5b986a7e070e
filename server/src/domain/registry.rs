//! The collection registry: one declarative description per collection.
//!
//! Validation (`domain::validate`), storage (`store::schema`, `store::records`) and the API
//! description (`http::api::openapi`) are all driven from these descriptions, so a new
//! collection is one entry in `domain::collections`.

use crate::error::Error;

/// How a field is typed. Each type maps to one column type per database and one JSON
/// schema; see `store::schema` and `http::api::openapi`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ty {
    /// A single-line string of at most `max` characters.
    Str {
        max: usize,
    },
    /// Free text of at most 10,000 characters.
    Text,
    Email,
    /// An absolute `http`/`https` URL.
    Url,
    /// An origin: scheme, host and optional port, nothing else.
    Origin,
    Enum(&'static [&'static str]),
    Int {
        min: i64,
        max: i64,
    },
    /// A non-money quantity (area, bathrooms). Money is never a float: see `Money`.
    Num {
        min: f64,
        max: f64,
    },
    /// A decimal amount in the currency's major unit, stored as integer minor units.
    /// Requires a `currency` field on the same collection.
    Money,
    /// An ISO 4217 code.
    Currency,
    Bool,
    Date,
    DateTime,
    /// The id of a record of the named collection, in the same tenant and environment.
    Ref(&'static str),
    /// A free-form id (a polymorphic reference that is not a foreign key).
    Uuid,
    /// A list of short strings (scopes, event names).
    StrList {
        max_items: usize,
    },
    /// A list of ids of the named collection.
    RefList(&'static str),
    /// A structured JSON value with a known shape.
    Json(JsonShape),
    /// A string-to-string map of at most 50 keys.
    Metadata,
}

/// Known shapes of structured fields, each with its own validation and JSON schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JsonShape {
    /// `{line1, line2?, city, region?, postal_code?, country}`
    Address,
    /// `[{name, email?, phone?}]`
    People,
    /// `[{account, debit, credit}]` (accounting lines; amounts in major units)
    LedgerLines,
    /// `[{description, quantity, unit_amount}]`
    OrderLines,
    /// `[{name, condition?, notes?}]`
    InspectionItems,
    /// `[{name, relationship?, email?, phone?}]` (an application's references)
    References,
    /// Any JSON object (event payloads, report results, delivery headers).
    Object,
    /// `{property_id?, as_of?}`: what a report runs over (`domain::reports::Parameters`).
    ReportParameters,
}

/// Who may write a field.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Set on create and changeable by PATCH.
    Write,
    /// Set on create only; PATCH refuses it (structural parents: a unit never moves).
    CreateOnly,
    /// Written by Gable only (state-machine status, derived values, timestamps).
    ReadOnly,
}

/// A default applied on create when the field is absent.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Default {
    None,
    Str(&'static str),
    Int(i64),
    Bool(bool),
    /// Money zero.
    Zero,
}

#[derive(Debug, Clone, Copy)]
pub struct Field {
    pub name: &'static str,
    pub ty: Ty,
    pub required: bool,
    pub access: Access,
    pub default: Default,
    pub filterable: bool,
    pub sortable: bool,
    /// At most one record of the collection per tenant and environment holds a value (a
    /// null is no value): a unique index where it is not null, and an empty or padded
    /// value is refused.
    pub unique: bool,
    /// How the field's rules differ between live mode and the sandbox.
    pub env: EnvRule,
    pub doc: &'static str,
}

/// A field rule that depends on the environment: validation knows which one it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EnvRule {
    /// The same in both.
    Same,
    /// Only the sandbox takes the field (test scenarios); live mode refuses it.
    SandboxOnly,
    /// The sandbox requires the field on create (a test payment's scenario); live mode
    /// refuses it.
    SandboxRequired,
    /// A URL or origin that must use https in live mode (the sandbox also takes http).
    HttpsInLive,
    /// In live mode the field takes only these values.
    LiveValues(&'static [&'static str]),
}

impl EnvRule {
    /// The rule in words, for the API description.
    pub fn describe(&self) -> Option<String> {
        match self {
            EnvRule::Same => None,
            EnvRule::SandboxOnly => Some("Sandbox only: refused in live mode.".into()),
            EnvRule::SandboxRequired => Some("Required in the sandbox; refused in live mode.".into()),
            EnvRule::HttpsInLive => Some("Must use `https` in live mode; the sandbox also takes `http`.".into()),
            EnvRule::LiveValues(v) => {
                Some(format!("In live mode one of: {}.", v.iter().map(|x| format!("`{x}`")).collect::<Vec<_>>().join(", ")))
            }
        }
    }
}

impl Field {
    pub const fn new(name: &'static str, ty: Ty) -> Self {
        Field {
            name,
            ty,
            required: false,
            access: Access::Write,
            default: Default::None,
            filterable: false,
            sortable: false,
            unique: false,
            env: EnvRule::Same,
            doc: "",
        }
    }
    pub const fn required(mut self) -> Self {
        self.required = true;
        self
    }
    pub const fn create_only(mut self) -> Self {
        self.access = Access::CreateOnly;
        self
    }
    pub const fn read_only(mut self) -> Self {
        self.access = Access::ReadOnly;
        self
    }
    pub const fn default(mut self, d: Default) -> Self {
        self.default = d;
        self
    }
    pub const fn filter(mut self) -> Self {
        self.filterable = true;
        self
    }
    /// Sortable fields are also filterable. Only fields that are never null may be
    /// sortable, so keyset cursors never have to order NULLs.
    pub const fn sort(mut self) -> Self {
        self.sortable = true;
        self.filterable = true;
        self
    }
    pub const fn unique(mut self) -> Self {
        self.unique = true;
        self
    }
    pub const fn env(mut self, rule: EnvRule) -> Self {
        self.env = rule;
        self
    }
    pub const fn doc(mut self, doc: &'static str) -> Self {
        self.doc = doc;
        self
    }
    /// Whether the stored column can hold NULL.
    pub const fn nullable(&self) -> bool {
        !self.required && matches!(self.default, Default::None)
    }
}

/// How a record finds the property it belongs to, for property-constrained credentials.
#[derive(Debug, Clone, Copy)]
pub enum PropertyPath {
    /// Tenant-wide: invisible to a property-constrained credential.
    None,
    /// The record is a property.
    SelfId,
    /// The `property_id` field is set by the client.
    Direct,
    /// Derived from the first present reference among these fields (each to a collection
    /// that itself stores `property_id`). Exposed as a read-only `property_id`.
    Via(&'static [&'static str]),
}

/// Which write operations the API offers on a collection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// Create, update, delete.
    Full,
    /// Create and update; delete is `409 immutable_resource` (financial records).
    NoDelete,
    /// Create only; never changed or deleted afterwards (journal entries).
    CreateOnly,
    /// Written by Gable only; every write is `405 method_not_allowed`.
    None,
}

#[derive(Debug)]
pub struct Collection {
    /// The path segment, e.g. `purchase-orders`.
    pub name: &'static str,
    /// The `object` value of one record, e.g. `purchase_order`.
    pub object: &'static str,
    /// The table name in both databases.
    pub table: &'static str,
    pub doc: &'static str,
    pub fields: &'static [Field],
    pub property: PropertyPath,
    pub writes: Writes,
    pub metadata: bool,
    /// Extra cross-field rules, checked after field validation (no HTTP, no SQL).
    pub rules: &'static [Rule],
    /// Composite indexes beyond the per-field ones, for hot list queries.
    pub indexes: &'static [&'static [&'static str]],
    /// A secret that only the create response shows (a token), kept as a hash.
    pub secret: Option<Secret>,
}

/// A secret issued with a record: returned once in `field` of the create response, and
/// kept in the hidden column `column` as `stored` says, never in plain.
#[derive(Debug, Clone, Copy)]
pub struct Secret {
    pub field: &'static str,
    pub column: &'static str,
    pub stored: SecretStore,
    pub doc: &'static str,
}

/// How Gable keeps a secret.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SecretStore {
    /// Only its SHA-256: Gable checks it when it comes back (tokens).
    Hashed,
    /// Sealed under the master key (`crypto`): Gable uses it itself (signing secrets).
    Sealed,
}

/// Cross-field rules, declared per collection.
#[derive(Debug, Clone, Copy)]
pub enum Rule {
    /// At least one of these fields must be present.
    OneOf(&'static [&'static str]),
    /// `later` must be after `earlier` when both are present.
    After { earlier: &'static str, later: &'static str },
    /// The ledger lines must balance (debits equal credits, and both positive).
    Balanced(&'static str),
    /// A referenced record must belong to the same property as this one.
    SameProperty(&'static str),
}

impl Collection {
    pub fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }

    /// Whether records store a `property_id` column (direct or derived).
    pub fn has_property_column(&self) -> bool {
        matches!(self.property, PropertyPath::Direct | PropertyPath::Via(_))
    }

    pub fn has_money(&self) -> bool {
        self.fields.iter().any(|f| f.ty == Ty::Money)
    }

    pub fn read_scope(&self) -> String {
        format!("{}:read", self.name)
    }

    pub fn write_scope(&self) -> String {
        format!("{}:write", self.name)
    }

    /// The error a write operation gets on this collection, if it is refused outright.
    pub fn refuse(&self, op: WriteOp) -> Option<Error> {
        match (self.writes, op) {
            (Writes::None, _) => Some(Error::MethodNotAllowed {
                message: format!("{} are written by Gable only", self.name),
                allow: self.methods(matches!(op, WriteOp::Update | WriteOp::Delete)),
            }),
            (Writes::CreateOnly, WriteOp::Update | WriteOp::Delete) => {
                Some(Error::Immutable(format!("{} cannot be changed once created", self.name)))
            }
            (Writes::NoDelete, WriteOp::Delete) => Some(Error::Immutable(format!("{} are never deleted", self.name))),
            _ => None,
        }
    }
}

impl Collection {
    /// The HTTP methods the API serves on the collection's path, or (`item`) on one
    /// record's path: the `Allow` of a 405 there. A write refused as immutable (409) is
    /// still served; only collections written by Gable alone serve reads only.
    pub fn methods(&self, item: bool) -> Vec<&'static str> {
        match (self.writes, item) {
            (Writes::None, _) => vec!["GET", "HEAD"],
            (_, false) => vec!["GET", "HEAD", "POST"],
            (_, true) => vec!["GET", "HEAD", "PATCH", "DELETE"],
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteOp {
    Create,
    Update,
    Delete,
}

/// Fields every record has, managed by Gable, in the order records render them.
pub const SYSTEM_FIELDS: &[&str] = &["id", "object", "livemode", "created_at", "updated_at"];
/// The system fields stored as columns of every collection table: all but `object`,
/// which is the collection's own.
pub fn stored_system_fields() -> impl Iterator<Item = &'static str> {
    SYSTEM_FIELDS.iter().copied().filter(|f| *f != "object")
}

/// The system fields lists filter and sort on, as registry fields.
pub static ID: Field = Field::new("id", Ty::Uuid).sort();
pub static CREATED_AT: Field = Field::new("created_at", Ty::DateTime).sort();
pub static UPDATED_AT: Field = Field::new("updated_at", Ty::DateTime).sort();

impl PropertyPath {
    /// Whether `property_id` is derived from parents rather than given.
    pub const fn is_derived(&self) -> bool {
        matches!(self, PropertyPath::Via(_))
    }
}
