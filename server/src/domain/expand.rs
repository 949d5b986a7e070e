//! Expansions: `expand[]=unit&expand[]=unit.property` answers a reference with the record
//! it names instead of its id (`docs/api.md`, "Expanding related records").
//!
//! Every reference field of the registry can be expanded under its name without `_id`
//! (`unit_id` → `unit`; a list of ids, `charge_ids`, → `charges`), and the records it
//! brings can be expanded in turn with dotted paths, up to [`MAX_DEPTH`] levels. This
//! module parses the paths into a tree ([`Expand`]) and holds what reading them found
//! ([`Related`]); reading them is `ops::reads`, showing them `record::RecordView`.

use std::collections::HashMap;
use std::sync::LazyLock;

use uuid::Uuid;

use super::collections::{collection, COLLECTIONS};
use super::record::Record;
use super::registry::{Collection, Field, Ty};
use crate::error::{Error, Result};

/// The query parameter, as errors name it.
pub const PARAM: &str = "expand[]";
/// Paths one request may expand.
pub const MAX_EXPANSIONS: usize = 10;
/// Levels one path may go down (`a.b.c`).
pub const MAX_DEPTH: usize = 3;

/// A reference field of a collection, as an expansion names it.
#[derive(Debug)]
pub struct Reference {
    /// The name an expansion uses: the field's without `_id` (or `_ids`, plural).
    pub name: String,
    pub field: &'static Field,
    pub target: &'static Collection,
    /// A list of ids (`charge_ids`) rather than one.
    pub many: bool,
}

/// Every collection's references, in field order.
static REFERENCES: LazyLock<HashMap<&'static str, Vec<Reference>>> = LazyLock::new(|| {
    COLLECTIONS
        .iter()
        .map(|c| {
            let refs = c
                .fields
                .iter()
                .filter_map(|f| {
                    let (target, many) = match f.ty {
                        Ty::Ref(t) => (t, false),
                        Ty::RefList(t) => (t, true),
                        _ => return None,
                    };
                    let name = match many {
                        false => f.name.strip_suffix("_id").unwrap_or(f.name).to_string(),
                        true => format!("{}s", f.name.strip_suffix("_ids").unwrap_or(f.name)),
                    };
                    Some(Reference { name, field: f, target: collection(target)?, many })
                })
                .collect();
            (c.name, refs)
        })
        .collect()
});

/// What records of `c` can expand.
pub fn references(c: &Collection) -> &'static [Reference] {
    REFERENCES.get(c.name).map(Vec::as_slice).unwrap_or_default()
}

fn reference(c: &Collection, name: &str) -> Option<&'static Reference> {
    references(c).iter().find(|r| r.name == name)
}

/// Every path an answer about `c` can expand, shortest first: the API description's enum.
pub fn paths(c: &'static Collection) -> Vec<String> {
    let mut out = vec![];
    let mut level: Vec<(String, &'static Collection)> = vec![(String::new(), c)];
    for _ in 0..MAX_DEPTH {
        let mut next = vec![];
        for (prefix, at) in &level {
            for r in references(at) {
                let path = if prefix.is_empty() { r.name.clone() } else { format!("{prefix}.{}", r.name) };
                out.push(path.clone());
                next.push((path, r.target));
            }
        }
        level = next;
    }
    out
}

/// Every collection an answer about `c` can hold: `c`, and what its paths reach.
pub fn reachable(c: &'static Collection) -> Vec<&'static Collection> {
    let mut out = vec![c];
    let mut level = vec![c];
    for _ in 0..MAX_DEPTH {
        let mut next = vec![];
        for at in level {
            for r in references(at) {
                if !out.iter().any(|o| o.name == r.target.name) {
                    out.push(r.target);
                }
                next.push(r.target);
            }
        }
        level = next;
    }
    out
}

/// The paths a request expands, as a tree: each level's references, and below each,
/// what its records expand in turn.
#[derive(Debug, Clone, Default)]
pub struct Expand {
    pub paths: Vec<Path>,
}

#[derive(Debug, Clone)]
pub struct Path {
    pub reference: &'static Reference,
    /// The whole dotted path from the answer's record (`unit.property`), for errors.
    pub full: String,
    pub then: Expand,
}

impl Expand {
    /// Parses the paths of a request about `c`. Each path must name references all the
    /// way down; `a.b` expands `a` too; a path given twice counts once.
    pub fn parse(c: &'static Collection, values: &[&str]) -> Result<Expand> {
        let mut out = Expand::default();
        if values.len() > MAX_EXPANSIONS {
            return Err(Error::parameter(PARAM, format!("takes at most {MAX_EXPANSIONS} paths; {} were given", values.len())));
        }
        for value in values {
            let segments: Vec<&str> = value.split('.').collect();
            if segments.iter().any(|s| s.is_empty()) {
                return Err(Error::parameter(
                    PARAM,
                    format!("`{value}` is not a path: name references separated by dots, e.g. `unit.property`"),
                ));
            }
            if segments.len() > MAX_DEPTH {
                return Err(Error::parameter(
                    PARAM,
                    format!("`{value}` is {} levels deep; a path goes at most {MAX_DEPTH} levels", segments.len()),
                ));
            }
            out.add(c, &segments, "")?;
        }
        Ok(out)
    }

    fn add(&mut self, c: &'static Collection, segments: &[&str], prefix: &str) -> Result<()> {
        let Some((first, rest)) = segments.split_first() else { return Ok(()) };
        let full = if prefix.is_empty() { first.to_string() } else { format!("{prefix}.{first}") };
        let r = reference(c, first).ok_or_else(|| not_a_reference(c, first, &full))?;
        let at = match self.paths.iter().position(|p| p.reference.name == *first) {
            Some(i) => i,
            None => {
                self.paths.push(Path { reference: r, full: full.clone(), then: Expand::default() });
                self.paths.len() - 1
            }
        };
        self.paths[at].then.add(r.target, rest, &full)
    }

    pub fn is_empty(&self) -> bool {
        self.paths.is_empty()
    }

    /// Every path of the tree, parents before their children.
    pub fn walk(&self) -> Vec<&Path> {
        let mut out = vec![];
        for p in &self.paths {
            out.push(p);
            out.extend(p.then.walk());
        }
        out
    }

    /// Whether `field` of this level's records is expanded.
    pub fn expands(&self, field: &str) -> bool {
        self.paths.iter().any(|p| p.reference.field.name == field)
    }
}

/// `400` for a segment that names no reference: says why and what the collection expands.
fn not_a_reference(c: &Collection, name: &str, full: &str) -> Error {
    let refs = references(c);
    let can = if refs.is_empty() {
        format!("{} have no references to expand", c.name)
    } else {
        let names: Vec<String> = refs.iter().map(|r| format!("`{}`", r.name)).collect();
        format!("{} can expand {}", c.name, names.join(", "))
    };
    let why = match (refs.iter().find(|r| r.field.name == name), c.field(name)) {
        (Some(r), _) => format!("`{full}`: the reference `{name}` is expanded as `{}`", r.name),
        (None, Some(_)) => format!("`{full}`: `{name}` is a field of {} but not a reference", c.name),
        (None, None) => format!("`{full}`: {} have no reference `{name}`", c.name),
    };
    Error::parameter(PARAM, format!("{why}; {can}"))
}

/// What reading an [`Expand`] found, level by level: for each path, the records its
/// references name that the reader may see, by id. A reference whose record is not here
/// (out of the reader's reach, or gone) is answered with its id, as without expansion.
#[derive(Debug, Default)]
pub struct Related {
    pub paths: Vec<RelatedPath>,
}

#[derive(Debug)]
pub struct RelatedPath {
    pub reference: &'static Reference,
    pub records: HashMap<Uuid, Record>,
    pub then: Related,
}

impl Related {
    /// What was found for `field` of this level's records, if it was expanded.
    pub fn of(&self, field: &str) -> Option<&RelatedPath> {
        self.paths.iter().find(|p| p.reference.field.name == field)
    }

    /// Takes out what was found for reference `r`, if anything was.
    pub fn take(&mut self, r: &Reference) -> Option<RelatedPath> {
        let at = self.paths.iter().position(|p| std::ptr::eq(p.reference, r))?;
        Some(self.paths.swap_remove(at))
    }
}

/// The ids a reference of `rec` names: one, none, or (a list) several.
pub fn ids(rec: &Record, r: &Reference) -> Vec<Uuid> {
    let v = rec.get(r.field.name);
    match (r.many, v.as_uuid()) {
        (false, Some(id)) => vec![id],
        (false, None) => vec![],
        (true, _) => match v {
            super::value::Val::Json(serde_json::Value::Array(items)) => {
                items.iter().filter_map(|s| s.as_str()).filter_map(|s| Uuid::parse_str(s).ok()).collect()
            }
            _ => vec![],
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::collections::named;

    fn c(name: &str) -> &'static Collection {
        named(name).unwrap()
    }

    fn refused(c: &'static Collection, values: &[&str]) -> String {
        match Expand::parse(c, values) {
            Err(Error::InvalidParameter { param, message }) => {
                assert_eq!(param, PARAM);
                message
            }
            other => panic!("{values:?} was not refused: {other:?}"),
        }
    }

    #[test]
    fn every_reference_has_a_name_of_its_own_and_ids_end_in_id() {
        for col in COLLECTIONS {
            let refs = references(col);
            for r in refs {
                assert!(r.field.name.ends_with(if r.many { "_ids" } else { "_id" }), "{}.{}", col.name, r.field.name);
                assert_eq!(refs.iter().filter(|o| o.name == r.name).count(), 1, "{}.{}", col.name, r.name);
                assert!(col.field(&r.name).is_none(), "{}: `{}` is also a field", col.name, r.name);
            }
        }
        let leases: Vec<&str> = references(c("leases")).iter().map(|r| r.name.as_str()).collect();
        assert!(leases.contains(&"unit") && leases.contains(&"property"), "{leases:?}");
        assert_eq!(reference(c("invoices"), "charges").map(|r| r.many), Some(true));
    }

    #[test]
    fn nested_paths_make_one_tree_and_imply_their_parents() {
        let e = Expand::parse(c("leases"), &["unit.property", "unit", "unit.building", "unit.property"]).unwrap();
        assert_eq!(e.paths.len(), 1);
        let unit = &e.paths[0];
        assert_eq!((unit.reference.name.as_str(), unit.reference.target.name), ("unit", "units"));
        let below: Vec<&str> = unit.then.paths.iter().map(|p| p.full.as_str()).collect();
        assert_eq!(below, ["unit.property", "unit.building"]);
        assert_eq!(e.walk().len(), 3);
        assert!(e.expands("unit_id") && !e.expands("property_id"));
    }

    #[test]
    fn bad_paths_are_refused_naming_the_path_and_what_can_be_expanded() {
        let m = refused(c("leases"), &["unit.nope"]);
        assert!(m.contains("`unit.nope`") && m.contains("units can expand") && m.contains("`building`"), "{m}");
        let m = refused(c("leases"), &["unit_id"]);
        assert!(m.contains("is expanded as `unit`"), "{m}");
        let m = refused(c("leases"), &["status"]);
        assert!(m.contains("not a reference"), "{m}");
        let m = refused(c("leases"), &["unit..property"]);
        assert!(m.contains("not a path"), "{m}");
        let m = refused(c("payments"), &["lease.unit.building.property"]);
        assert!(m.contains("4 levels deep"), "{m}");
        assert!(Expand::parse(c("payments"), &["lease.unit.building"]).is_ok());
        let eleven: Vec<&str> = std::iter::repeat_n("unit", MAX_EXPANSIONS + 1).collect();
        assert!(refused(c("leases"), &eleven).contains("at most 10"));
        let m = refused(c("roles"), &["anything"]);
        assert!(m.contains("roles have no references to expand"), "{m}");
    }

    #[test]
    fn every_listed_path_parses_and_reaches_only_reachable_collections() {
        for col in COLLECTIONS {
            let reach = reachable(col);
            for p in paths(col) {
                let e = Expand::parse(col, &[p.as_str()]).unwrap_or_else(|e| panic!("{}: {p}: {e}", col.name));
                for step in e.walk() {
                    assert!(reach.iter().any(|r| r.name == step.reference.target.name), "{}: {p}", col.name);
                }
            }
        }
    }
}
