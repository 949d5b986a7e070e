//! A stored record in its typed form, and its JSON rendering.

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::{Map, Value as Json};
use uuid::Uuid;

use super::registry::{Collection, Field, Ty};
use super::value::{format_datetime, to_json, Val};

#[derive(Debug, Clone)]
pub struct Record {
    pub id: Uuid,
    pub livemode: bool,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
    pub values: HashMap<&'static str, Val>,
    pub metadata: Option<Json>,
}

/// The system fields as registry fields, so lists can filter and sort on them like any other.
pub static ID: Field = Field::new("id", Ty::Uuid).sort();
pub static CREATED_AT: Field = Field::new("created_at", Ty::DateTime).sort();
pub static UPDATED_AT: Field = Field::new("updated_at", Ty::DateTime).sort();

impl Record {
    pub fn get(&self, name: &str) -> &Val {
        static NULL: Val = Val::Null;
        self.values.get(name).unwrap_or(&NULL)
    }

    pub fn currency(&self) -> Option<&str> {
        self.get("currency").as_str()
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

    /// Renders the record; `fields` limits it to a sparse fieldset (`id` and `object`
    /// are always present).
    pub fn to_json(&self, c: &Collection, fields: Option<&[&str]>) -> Json {
        let want = |name: &str| fields.is_none_or(|f| f.contains(&name));
        let mut out = Map::new();
        out.insert("id".into(), Json::String(self.id.to_string()));
        out.insert("object".into(), Json::String(c.object.into()));
        if want("livemode") {
            out.insert("livemode".into(), Json::Bool(self.livemode));
        }
        if want("created_at") {
            out.insert("created_at".into(), Json::String(format_datetime(&self.created_at)));
        }
        if want("updated_at") {
            out.insert("updated_at".into(), Json::String(format_datetime(&self.updated_at)));
        }
        let currency = self.currency();
        for f in c.fields {
            if want(f.name) {
                out.insert(f.name.into(), to_json(self.get(f.name), currency));
            }
        }
        if c.metadata && want("metadata") {
            out.insert("metadata".into(), self.metadata.clone().unwrap_or_else(|| Json::Object(Map::new())));
        }
        Json::Object(out)
    }
}
