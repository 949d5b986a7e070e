//! A stored record in its typed form, and its JSON rendering.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value as Json};
use uuid::Uuid;

use super::registry::{Collection, Field};
use super::value::{format_datetime, JsonView, Val};

#[derive(Debug, Clone)]
pub struct Record {
    pub id: Uuid,
    pub livemode: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub values: HashMap<&'static str, Val>,
    pub metadata: Option<Json>,
}

/// The system fields as registry fields (declared in the registry, with the list of them).
pub use super::registry::{CREATED_AT, ID, UPDATED_AT};

impl Record {
    pub fn get(&self, name: &str) -> &Val {
        static NULL: Val = Val::Null;
        self.values.get(name).unwrap_or(&NULL)
    }

    pub fn currency(&self) -> Option<&str> {
        self.get("currency").as_str()
    }

    /// The state of a record with a state machine (empty for others).
    pub fn status(&self) -> &str {
        self.get("status").as_str().unwrap_or_default()
    }

    /// A money field in minor units (0 when empty).
    pub fn money(&self, field: &str) -> i64 {
        match self.get(field) {
            Val::Money(m) => *m,
            _ => 0,
        }
    }

    /// The property the record belongs to (its own id for a property).
    pub fn property_id(&self, c: &Collection) -> Option<Uuid> {
        match c.property {
            super::registry::PropertyPath::SelfId => Some(self.id),
            _ => self.get("property_id").as_uuid(),
        }
    }

    /// A sort key's value, system fields included.
    pub fn sort_value(&self, field: &Field) -> Val {
        match field.name {
            "id" => Val::Uuid(self.id),
            "created_at" => Val::DateTime(self.created_at),
            "updated_at" => Val::DateTime(self.updated_at),
            name => self.get(name).clone(),
        }
    }

    /// Renders the record as a JSON value; `fields` limits it to a sparse fieldset
    /// (`id` and `object` are always present).
    pub fn to_json(&self, c: &Collection, fields: Option<&[&str]>) -> Json {
        serde_json::to_value(self.view(c, fields)).unwrap_or(Json::Null)
    }

    /// A serialisable view of the record: lists serialise straight to bytes through it,
    /// without building a JSON tree per record.
    pub fn view<'a>(&'a self, c: &'a Collection, fields: Option<&'a [&'a str]>) -> RecordView<'a> {
        RecordView { rec: self, c, fields }
    }
}

pub struct RecordView<'a> {
    rec: &'a Record,
    c: &'a Collection,
    fields: Option<&'a [&'a str]>,
}

impl Serialize for RecordView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let want = |name: &str| self.fields.is_none_or(|f| f.contains(&name));
        let (r, c) = (self.rec, self.c);
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &r.id)?;
        m.serialize_entry("object", c.object)?;
        if want("livemode") {
            m.serialize_entry("livemode", &r.livemode)?;
        }
        if want("created_at") {
            m.serialize_entry("created_at", &format_datetime(&r.created_at))?;
        }
        if want("updated_at") {
            m.serialize_entry("updated_at", &format_datetime(&r.updated_at))?;
        }
        let currency = r.currency();
        for f in c.fields {
            if want(f.name) {
                m.serialize_entry(f.name, &JsonView(r.get(f.name), currency))?;
            }
        }
        if c.metadata && want("metadata") {
            match &r.metadata {
                Some(meta) => m.serialize_entry("metadata", meta)?,
                None => m.serialize_entry("metadata", &Map::new())?,
            }
        }
        m.end()
    }
}
