//! A stored record in its typed form (its JSON rendering is `domain::view`).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use serde_json::Value as Json;
use uuid::Uuid;

use super::registry::{Collection, Field};
use super::value::Val;

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
}
