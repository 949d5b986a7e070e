//! A record as the API shows it: its JSON rendering, shaped by a sparse fieldset and, in
//! an answer that expands references, with the records they name in place of their ids.

use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value as Json};
use uuid::Uuid;

use super::answer::Fieldsets;
use super::expand::{self, Related, RelatedPath};
use super::record::Record;
use super::registry::Collection;
use super::value::{JsonView, TimeView};

impl Record {
    /// Renders the record as a JSON value; `fields` limits it to a sparse fieldset
    /// (`id` and `object` are always present).
    pub fn to_json(&self, c: &Collection, fields: Option<&[&str]>) -> Json {
        serde_json::to_value(self.view(c, fields)).unwrap_or(Json::Null)
    }

    /// A serialisable view of the record: lists serialise straight to bytes through it,
    /// without building a JSON tree per record.
    pub fn view<'a>(&'a self, c: &'a Collection, fields: Option<&'a [&'a str]>) -> RecordView<'a> {
        RecordView { rec: self, c, fields, related: None }
    }

    /// The record as an answer shapes it: its collection's fieldset of `fields`, and in
    /// place of each expanded reference the record `related` found for it (the id when
    /// none was).
    pub fn view_with<'a>(&'a self, c: &'a Collection, fields: &'a Fieldsets, related: &'a Related) -> RecordView<'a> {
        RecordView { rec: self, c, fields: fields.of(c), related: Some((fields, related)) }
    }
}

pub struct RecordView<'a> {
    rec: &'a Record,
    c: &'a Collection,
    fields: Option<&'a [&'a str]>,
    /// The fieldsets of the answer and the records expanded at this level, if any.
    related: Option<(&'a Fieldsets, &'a Related)>,
}

/// An expanded reference: the record, shown as its own read shows it (with what is
/// expanded below it), or the id when the reader may not see it.
struct Expanded<'a> {
    id: Uuid,
    path: &'a RelatedPath,
    fields: &'a Fieldsets,
}

impl Serialize for Expanded<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let target = self.path.reference.target;
        match self.path.records.get(&self.id) {
            Some(rec) => {
                RecordView { rec, c: target, fields: self.fields.of(target), related: Some((self.fields, &self.path.then)) }.serialize(s)
            }
            None => self.id.serialize(s),
        }
    }
}

impl Serialize for RecordView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let want = |name: &str| self.fields.is_none_or(|f| f.contains(&name));
        let (r, c) = (self.rec, self.c);
        let expanded = |name: &str| self.related.and_then(|(fields, related)| Some((fields, related.of(name)?)));
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("id", &r.id)?;
        m.serialize_entry("object", c.object)?;
        if want("livemode") {
            m.serialize_entry("livemode", &r.livemode)?;
        }
        if want("created_at") {
            m.serialize_entry("created_at", &TimeView(&r.created_at))?;
        }
        if want("updated_at") {
            m.serialize_entry("updated_at", &TimeView(&r.updated_at))?;
        }
        let currency = r.currency();
        for f in c.fields {
            // An expanded reference is shown even when a fieldset leaves it out: asking
            // for it named it.
            if let Some((fields, path)) = expanded(f.name) {
                let ids = expand::ids(r, path.reference);
                match (path.reference.many, ids.as_slice()) {
                    (true, _) if !r.get(f.name).is_null() => {
                        let all: Vec<Expanded> = ids.iter().map(|&id| Expanded { id, path, fields }).collect();
                        m.serialize_entry(f.name, &all)?;
                    }
                    (false, [id]) => m.serialize_entry(f.name, &Expanded { id: *id, path, fields })?,
                    _ => m.serialize_entry(f.name, &JsonView(r.get(f.name), currency))?,
                }
            } else if want(f.name) {
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
