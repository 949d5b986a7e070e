//! How an answer is shaped, as its query asks: sparse fieldsets (`fields[<collection>]`)
//! and expansions (`expand[]`). Every operation that answers with records takes them; a
//! list's other parameters are `domain::list`'s.

use super::expand::{reachable, Expand, PARAM};
use super::registry::{Collection, SYSTEM_FIELDS};
use crate::error::{Error, Result};

/// The fields to show of each collection an answer holds (its own records and those
/// expansions bring); a collection without a fieldset shows every field.
#[derive(Debug, Clone, Default)]
pub struct Fieldsets(Vec<(&'static str, Vec<&'static str>)>);

impl Fieldsets {
    /// The fieldset of `c`, if the request gave one.
    pub fn of(&self, c: &Collection) -> Option<&[&'static str]> {
        self.0.iter().find(|(name, _)| *name == c.name).map(|(_, f)| f.as_slice())
    }
}

#[derive(Debug, Clone, Default)]
pub struct Answer {
    pub fields: Fieldsets,
    pub expand: Expand,
}

impl Answer {
    /// Takes the pairs that shape an answer about `c` out of a request's query, and
    /// returns the others. `fields[<collection>]` may name `c` and any collection an
    /// expansion of `c` can bring (it applies wherever that collection's records appear);
    /// both parameters may be repeated or comma-separated.
    pub fn take(c: &'static Collection, pairs: &[(String, String)]) -> Result<(Answer, Vec<(String, String)>)> {
        let mut fields: Vec<(&'static Collection, String, Vec<&'static str>)> = vec![];
        let mut expand: Vec<&str> = vec![];
        let mut rest = vec![];
        for (key, value) in pairs {
            if key == PARAM || key == "expand" {
                nul_free(key, value)?;
                expand.extend(value.split(',').map(str::trim).filter(|s| !s.is_empty()));
                if value.trim().is_empty() {
                    return Err(Error::parameter(PARAM, "must name a path"));
                }
            } else if let Some(inner) = key.strip_prefix("fields[").and_then(|k| k.strip_suffix(']')) {
                nul_free(key, value)?;
                let Some(target) = reachable(c).into_iter().find(|r| r.name == inner) else {
                    let names: Vec<String> = reachable(c).iter().map(|r| format!("fields[{}]", r.name)).collect();
                    return Err(Error::parameter(key, format!("is not a fieldset of this answer; it takes {}", names.join(", "))));
                };
                let at = match fields.iter().position(|(t, _, _)| t.name == target.name) {
                    Some(i) => i,
                    None => {
                        fields.push((target, key.clone(), vec![]));
                        fields.len() - 1
                    }
                };
                for name in value.split(',').map(str::trim).filter(|s| !s.is_empty()) {
                    let f = selectable(target, name)
                        .ok_or_else(|| Error::parameter(key, format!("`{name}` is not a field of {}", target.name)))?;
                    if !fields[at].2.contains(&f) {
                        fields[at].2.push(f);
                    }
                }
            } else {
                rest.push((key.clone(), value.clone()));
            }
        }
        if let Some((_, key, _)) = fields.iter().find(|(_, _, f)| f.is_empty()) {
            return Err(Error::parameter(key, "must name at least one field"));
        }
        let expand = Expand::parse(c, &expand)?;
        Ok((Answer { fields: Fieldsets(fields.into_iter().map(|(t, _, f)| (t.name, f)).collect()), expand }, rest))
    }

    /// An answer's shape from a query that may hold nothing else (a single record's read,
    /// a write's answer): any other parameter is a `400` naming it.
    pub fn parse(c: &'static Collection, pairs: &[(String, String)]) -> Result<Answer> {
        let (answer, rest) = Answer::take(c, pairs)?;
        match rest.first() {
            Some((k, _)) => Err(Error::parameter(k, "is not a parameter of this operation")),
            None => Ok(answer),
        }
    }
}

/// PostgreSQL cannot compare text holding U+0000; no parameter may hold it.
pub(super) fn nul_free(key: &str, value: &str) -> Result<()> {
    if key.contains('\0') || value.contains('\0') {
        return Err(Error::parameter(key, "must not contain NUL characters (U+0000)"));
    }
    Ok(())
}

/// Names usable in `fields[...]`.
fn selectable(c: &Collection, name: &str) -> Option<&'static str> {
    if let Some(s) = SYSTEM_FIELDS.iter().find(|s| **s == name) {
        return Some(s);
    }
    if c.metadata && name == "metadata" {
        return Some("metadata");
    }
    c.field(name).map(|f| f.name)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::collections::named;

    fn pairs(q: &[(&str, &str)]) -> Vec<(String, String)> {
        q.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn fieldsets_of_expanded_collections_are_taken_and_the_rest_returned() {
        let leases = named("leases").unwrap();
        let q = pairs(&[
            ("fields[units]", "number"),
            ("expand[]", "unit"),
            ("fields[units]", "bedrooms,number"),
            ("limit", "5"),
            ("expand[]", "unit.property,property"),
        ]);
        let (a, rest) = Answer::take(leases, &q).unwrap();
        assert_eq!(rest, pairs(&[("limit", "5")]));
        assert_eq!(a.fields.of(named("units").unwrap()), Some(&["number", "bedrooms"][..]));
        assert_eq!(a.fields.of(leases), None);
        assert_eq!(a.expand.walk().len(), 3);
    }

    #[test]
    fn a_fieldset_of_a_collection_no_expansion_reaches_is_refused() {
        let units = named("units").unwrap();
        let Err(Error::InvalidParameter { param, message }) = Answer::take(units, &pairs(&[("fields[leases]", "id")])) else {
            panic!("accepted")
        };
        assert_eq!(param, "fields[leases]");
        assert!(message.contains("fields[units]") && message.contains("fields[properties]"), "{message}");
        assert!(Answer::parse(units, &pairs(&[("limit", "1")])).is_err());
        assert!(Answer::parse(units, &pairs(&[("expand[]", "")])).is_err());
        assert!(Answer::parse(units, &pairs(&[("fields[units]", ",")])).is_err());
    }
}
