//! The portfolio: every collection of the tenant's data, browsed, read, created, edited
//! and moved through its workflow by property staff. The server describes each collection
//! from the same registry that drives the API (fields, types, enums, references, state
//! machines), so these types carry that description to the pages; every read and write
//! acts as the signed-in user, through the API's own operations.

use serde::{Deserialize, Serialize};

#[cfg(feature = "ssr")]
use super::{Me, Result};

/// A part of the navigation (Portfolio, Leasing, Stays, Money, Maintenance, Records) with
/// the collections of it the role may read.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Area {
    pub name: String,
    pub collections: Vec<CollectionLink>,
}

/// A collection as the navigation shows it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectionLink {
    /// The API's path segment (`purchase-orders`): also the console's.
    pub name: String,
    /// For people, plural (`Purchase orders`).
    pub label: String,
}

/// How a field is entered and shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum FieldKind {
    /// One line of text, at most `max` characters.
    Text {
        max: usize,
    },
    /// Several lines.
    LongText,
    Email,
    Url,
    /// One of `options`.
    Choice,
    Integer {
        min: i64,
        max: i64,
    },
    Number {
        min: f64,
        max: f64,
    },
    /// An amount in the record's currency (its `currency` field).
    Money,
    Currency,
    YesNo,
    Date,
    DateTime,
    /// The id of a record of `target`, picked among the tenant's.
    Reference,
    /// A free-form id.
    Id,
    /// A list of short texts, one per line.
    List,
    /// A list of ids of `target`.
    References,
    /// A postal address, entered part by part (`ADDRESS_PARTS`).
    Address,
    /// A structured value, entered as JSON.
    Structured,
    /// Keys and values (`metadata`), entered as JSON.
    Metadata,
}

/// The parts of an address, as the API names them, and their labels: a form names each
/// input `<field>.<part>` (`address.city`).
pub const ADDRESS_PARTS: &[(&str, &str)] = &[
    ("line1", "Street"),
    ("line2", "Street, line 2"),
    ("city", "City"),
    ("region", "Region or state"),
    ("postal_code", "Postal code"),
    ("country", "Country"),
];

/// Who may set a field, as the API decides.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FieldAccess {
    /// Set on create and changed by an edit.
    Write,
    /// Set on create only.
    CreateOnly,
    /// Set by Gable (statuses, derived values, times).
    ReadOnly,
}

/// A field of a collection, from the registry.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldInfo {
    pub name: String,
    /// For people (`Rent due day`).
    pub label: String,
    pub kind: FieldKind,
    pub required: bool,
    pub access: FieldAccess,
    /// A choice's values (in the registry's order).
    pub options: Vec<String>,
    /// A reference's collection.
    pub target: Option<String>,
    pub filterable: bool,
    pub sortable: bool,
    /// The registry's description, as a hint.
    pub hint: String,
    /// What a create fills in when the field is left empty, in words.
    pub default: Option<String>,
}

/// An action of a collection's state machine (`send`, `approve`, `void` …).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActionInfo {
    pub name: String,
    /// For people (`Start screening`).
    pub label: String,
    /// Asks to be confirmed first (cancelling, voiding, denying …).
    pub destructive: bool,
    /// What the action takes (a screening's result; a conversion's new lease).
    pub inputs: Vec<FieldInfo>,
    /// An action that makes a record of another collection: that collection.
    pub makes: Option<String>,
}

/// A collection as its pages need it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CollectionInfo {
    pub name: String,
    pub label: String,
    /// One record, for people (`purchase order`).
    pub singular: String,
    pub area: String,
    pub doc: String,
    /// Every field, the system ones (`id`, `created_at`, `updated_at`) included.
    pub fields: Vec<FieldInfo>,
    /// The columns a list shows when none are chosen.
    pub default_columns: Vec<String>,
    /// The field the quick search looks in (its `contains` filter), if any.
    pub search: Option<String>,
    /// The role may create records here (and the collection takes creates).
    pub can_create: bool,
    pub can_edit: bool,
    pub can_delete: bool,
    /// The role may run this collection's actions.
    pub can_act: bool,
    /// Files of it can be imported, and the role may (`imports:write` and its write).
    pub can_import: bool,
    /// A fresh key for a form drawn from this description (`RecordForm::once`).
    pub once: String,
}

impl CollectionInfo {
    pub fn field(&self, name: &str) -> Option<&FieldInfo> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A value shown to people.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Shown {
    Empty,
    Text(String),
    /// A status or a choice: shown as a badge.
    Badge(String),
    /// A reference: the referenced record's name and its page.
    Link {
        text: String,
        href: String,
    },
    /// Several references.
    Links(Vec<(String, String)>),
    /// An amount with its currency (`1,250.00 USD`).
    Money(String),
    /// Structured data, pretty-printed.
    Code(String),
}

/// A record as a row of a list.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Row {
    pub id: String,
    pub href: String,
    /// The record's name for people.
    pub title: String,
    /// One per column asked for.
    pub cells: Vec<Shown>,
}

/// A filter of the list in force: a chip, with the list's address without it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Chip {
    /// For people: `Status is one of active, ended`.
    pub text: String,
    /// The query parameter (`filter[status][in]`) and its value.
    pub param: String,
    pub value: String,
    /// The list without this filter (and at its first page).
    pub remove_href: String,
}

/// A page of a collection's list, as the query asked (the API's list semantics).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ListView {
    pub info: CollectionInfo,
    /// The columns shown (field names), in order.
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
    pub chips: Vec<Chip>,
    /// The sort in force, as the API writes it (`-created_at`).
    pub sort: String,
    /// The list's query without `cursor` (what the form's hidden inputs carry).
    pub query: Vec<(String, String)>,
    /// The next page's address, when there is one.
    pub next_href: Option<String>,
    /// The first page's address, when this is not it.
    pub first_href: Option<String>,
    /// The query is not one the API takes: why, in its words (the list is then empty).
    pub problem: Option<String>,
}

/// A field of a record with its value for people.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FieldValue {
    pub name: String,
    pub label: String,
    pub shown: Shown,
}

/// Records of another collection that refer to this one (units of a property), the first
/// few, with the whole list's address.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RelatedList {
    pub collection: String,
    /// `Units`, or `Leases (as application)` when several fields refer here.
    pub label: String,
    pub columns: Vec<String>,
    /// The columns' labels.
    pub headers: Vec<String>,
    pub rows: Vec<Row>,
    pub has_more: bool,
    /// The list of all of them (filtered on this record).
    pub href: String,
    /// Where a new one starts, this record filled in (when the role may create one).
    pub new_href: Option<String>,
}

/// Something that happened to the record (an event), with where it was delivered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct HistoryItem {
    pub event_id: String,
    pub event_type: String,
    pub at: String,
    /// Delivery attempts of this event: status, the subscription's URL, the attempt's page.
    pub deliveries: Vec<(String, String, String)>,
}

/// A write a console user made to the record: when, who, and what.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ActivityItem {
    pub at: String,
    /// The user's name when they acted.
    pub who: String,
    /// `created this lease`, `changed rent, rent due day`, `ran send`.
    pub what: String,
}

/// One line of the ledger a money record posted.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct LedgerLine {
    pub entry_id: String,
    pub posted_on: String,
    pub memo: String,
    pub account: String,
    pub debit: String,
    pub credit: String,
}

/// A record's page.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordView {
    pub info: CollectionInfo,
    pub id: String,
    pub title: String,
    pub status: Option<String>,
    pub fields: Vec<FieldValue>,
    /// The values as an edit form starts with them (`name` → text as entered).
    pub form: Vec<(String, String)>,
    /// The actions the record's state allows (when the role may act).
    pub actions: Vec<ActionInfo>,
    pub related: Vec<RelatedList>,
    /// Events about it, newest first (when the role may read them).
    pub history: Vec<HistoryItem>,
    /// Why the history is not shown, when it is not.
    pub history_note: Option<String>,
    /// Who changed it in the console, newest first.
    pub activity: Vec<ActivityItem>,
    /// The ledger lines it posted (money records), when the role may read them.
    pub ledger: Vec<LedgerLine>,
    /// A fresh key for the forms of this page (`RecordForm::once`; each action's form
    /// adds its name).
    pub once: String,
}

/// A record a picker offers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Choice {
    pub id: String,
    pub title: String,
}

/// A create, an edit or an action, as a form sent it: every field as text.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct RecordForm {
    pub values: Vec<(String, String)>,
    /// A key the form was drawn with: a second submit of the same form does nothing twice.
    pub once: String,
}

/// The portfolio (`server/src/accounts/records.rs`). Reads and writes act as the
/// signed-in user with their role's permissions, through the API's operations: the same
/// refusals (`Forbidden` naming the permission), validation (`Invalid` naming the field),
/// events and webhooks.
#[cfg(feature = "ssr")]
#[async_trait::async_trait]
pub trait Records: Send + Sync + 'static {
    /// The navigation: each area with the collections the role may read.
    fn areas(&self, me: &Me) -> Vec<Area>;
    /// A collection's description for this user (what they may do in it).
    fn collection_info(&self, me: &Me, collection: &str) -> Result<CollectionInfo>;
    /// A page of a list; `query` is the page's address's query string (the API's
    /// parameters, with `columns` for the chosen columns, `q` for the quick search and
    /// `add_field`, `add_op`, `add_value` for a filter being added).
    async fn list_records(&self, me: &Me, collection: &str, query: &str) -> Result<ListView>;
    async fn record(&self, me: &Me, collection: &str, id: &str) -> Result<RecordView>;
    /// Records of `collection` whose name starts with or contains `search`, for a picker.
    async fn choices(&self, me: &Me, collection: &str, search: &str) -> Result<Vec<Choice>>;
    /// Creates a record; returns its id.
    async fn create_record(&self, me: &Me, collection: &str, form: RecordForm) -> Result<String>;
    async fn update_record(&self, me: &Me, collection: &str, id: &str, form: RecordForm) -> Result<()>;
    /// Runs an action of the record's state machine.
    async fn act_on_record(&self, me: &Me, collection: &str, id: &str, action: &str, form: RecordForm) -> Result<()>;
    async fn delete_record(&self, me: &Me, collection: &str, id: &str) -> Result<()>;
}
