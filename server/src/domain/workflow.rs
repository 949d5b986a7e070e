//! State machines: which actions move a record from which states to which
//! (`POST /v1/{resource}/{id}/{action}`). One declaration per collection, plain Rust.
//!
//! Events, couplings between records (the last signature signs the lease, a payment
//! settles its invoice …) and ledger postings build on these transitions (issue 4).

use chrono::{DateTime, Utc};
use serde_json::{Map, Value as Json};

use super::record::Record;
use super::registry::Collection;
use super::validate::Changes;
use super::value::{from_json, Val};
use crate::error::{Error, Result};

#[derive(Debug)]
pub struct Action {
    pub name: &'static str,
    /// The states the action is allowed from.
    pub from: &'static [&'static str],
    pub to: &'static str,
    /// A read-only timestamp field set to the time of the action.
    pub stamp: Option<&'static str>,
    /// Fields the request body must give (read-only fields only actions set).
    pub params: &'static [&'static str],
}

#[derive(Debug)]
pub struct Machine {
    pub collection: &'static str,
    pub actions: &'static [Action],
}

const fn act(name: &'static str, from: &'static [&'static str], to: &'static str) -> Action {
    Action { name, from, to, stamp: None, params: &[] }
}
const fn stamped(name: &'static str, from: &'static [&'static str], to: &'static str, stamp: &'static str) -> Action {
    Action { name, from, to, stamp: Some(stamp), params: &[] }
}

pub static MACHINES: &[Machine] = &[
    Machine { collection: "listings", actions: &[
        stamped("publish", &["draft", "unlisted"], "published", "published_at"),
        act("unlist", &["published"], "unlisted"),
    ]},
    Machine { collection: "leads", actions: &[
        act("contact", &["new"], "contacted"),
        act("qualify", &["new", "contacted"], "qualified"),
        act("convert", &["qualified"], "converted"),
        act("lose", &["new", "contacted", "qualified"], "lost"),
    ]},
    Machine { collection: "viewings", actions: &[
        act("complete", &["booked"], "completed"),
        act("cancel", &["booked"], "cancelled"),
        act("no_show", &["booked"], "no_show"),
    ]},
    Machine { collection: "applications", actions: &[
        stamped("submit", &["draft"], "submitted", "submitted_at"),
        act("start_screening", &["submitted"], "screening"),
        act("approve", &["submitted", "screening"], "approved"),
        act("deny", &["submitted", "screening"], "denied"),
        act("withdraw", &["draft", "submitted", "screening"], "withdrawn"),
        act("convert", &["approved"], "converted"),
    ]},
    Machine { collection: "screening", actions: &[
        Action { name: "complete", from: &["pending"], to: "completed", stamp: Some("completed_at"), params: &["result"] },
    ]},
    Machine { collection: "leases", actions: &[
        act("send", &["draft"], "sent"),
        act("activate", &["signed"], "active"),
        act("end", &["active"], "ended"),
        act("terminate", &["active"], "terminated"),
        act("cancel", &["draft", "sent"], "cancelled"),
    ]},
    Machine { collection: "signatures", actions: &[
        stamped("sign", &["pending"], "signed", "signed_at"),
        act("decline", &["pending"], "declined"),
    ]},
    Machine { collection: "tenancies", actions: &[
        act("start", &["upcoming"], "current"),
        act("move_out", &["current"], "moved_out"),
    ]},
    Machine { collection: "bookings", actions: &[
        act("confirm", &["inquiry"], "confirmed"),
        act("check_in", &["confirmed"], "checked_in"),
        act("check_out", &["checked_in"], "checked_out"),
        act("cancel", &["inquiry", "confirmed"], "cancelled"),
    ]},
    Machine { collection: "guests", actions: &[
        act("check_in", &["expected"], "checked_in"),
        act("check_out", &["checked_in"], "checked_out"),
    ]},
    Machine { collection: "invoices", actions: &[
        act("open", &["draft"], "open"),
        act("void", &["draft", "open"], "void"),
    ]},
    Machine { collection: "workorders", actions: &[
        act("assign", &["open"], "assigned"),
        act("start", &["open", "assigned", "on_hold"], "in_progress"),
        act("hold", &["assigned", "in_progress"], "on_hold"),
        stamped("complete", &["assigned", "in_progress", "on_hold"], "completed", "completed_at"),
        act("cancel", &["open", "assigned", "on_hold"], "cancelled"),
    ]},
    Machine { collection: "inspections", actions: &[
        stamped("complete", &["scheduled"], "completed", "completed_at"),
    ]},
    Machine { collection: "purchase-orders", actions: &[
        act("approve", &["draft"], "approved"),
        act("send", &["approved"], "sent"),
        act("receive", &["sent"], "received"),
        act("close", &["received"], "closed"),
    ]},
    Machine { collection: "tasks", actions: &[
        act("start", &["open"], "in_progress"),
        act("complete", &["open", "in_progress"], "done"),
        act("cancel", &["open", "in_progress"], "cancelled"),
    ]},
];

pub fn machine(collection: &str) -> Option<&'static Machine> {
    MACHINES.iter().find(|m| m.collection == collection)
}

impl Machine {
    pub fn action(&self, name: &str) -> Option<&'static Action> {
        self.actions.iter().find(|a| a.name == name)
    }

    /// The actions allowed from a state.
    pub fn allowed(&self, status: &str) -> Vec<&'static str> {
        self.actions.iter().filter(|a| a.from.contains(&status)).map(|a| a.name).collect()
    }

    /// The changes an action makes to the current record, or why it may not.
    pub fn apply(&self, c: &Collection, a: &Action, current: &Record, body: &Map<String, Json>, now: DateTime<Utc>) -> Result<Changes> {
        let status = current.get("status").as_str().unwrap_or_default().to_string();
        if !a.from.contains(&status.as_str()) {
            let allowed = self.allowed(&status);
            return Err(Error::InvalidStateTransition {
                message: format!(
                    "a {} that is {status} cannot {}; allowed: {}",
                    c.object,
                    a.name,
                    if allowed.is_empty() { "none".to_string() } else { allowed.join(", ") }
                ),
                current: status,
                allowed: allowed.into_iter().map(String::from).collect(),
            });
        }
        if let Some(extra) = body.keys().find(|k| !a.params.contains(&k.as_str())) {
            return Err(Error::validation(extra.as_str(), format!("is not a parameter of {}; allowed: {}", a.name, a.params.join(", "))));
        }
        let mut ch = Changes::default();
        ch.values.insert("status", Val::Str(a.to.to_string()));
        if let Some(stamp) = a.stamp {
            ch.values.insert(stamp, Val::DateTime(now));
        }
        for p in a.params {
            let field = c.field(p).expect("action parameters are fields (checked by a test)");
            let raw = body.get(*p).ok_or_else(|| Error::validation(*p, "is required"))?;
            match from_json(field, raw)? {
                Val::Null => return Err(Error::validation(*p, "is required")),
                v => ch.values.insert(field.name, v),
            };
        }
        Ok(ch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::collections::collection;
    use crate::domain::registry::{Access, Ty};

    /// Every machine names real states, stamps and parameters of its collection.
    #[test]
    fn machines_agree_with_the_registry() {
        for m in MACHINES {
            let c = collection(m.collection).unwrap_or_else(|| panic!("{} is not a collection", m.collection));
            let status = c.field("status").expect("a machine's collection has a status");
            assert_eq!(status.access, Access::ReadOnly, "{}: status must change by actions only", c.name);
            let Ty::Enum(states) = status.ty else { panic!("{}: status is an enum", c.name) };
            for a in m.actions {
                assert!(states.contains(&a.to), "{}.{}: unknown state {}", c.name, a.name, a.to);
                for f in a.from {
                    assert!(states.contains(f), "{}.{}: unknown state {f}", c.name, a.name);
                }
                if let Some(s) = a.stamp {
                    let f = c.field(s).unwrap_or_else(|| panic!("{}.{}: no field {s}", c.name, a.name));
                    assert_eq!(f.ty, Ty::DateTime);
                }
                for p in a.params {
                    assert!(c.field(p).is_some(), "{}.{}: no field {p}", c.name, a.name);
                }
            }
            let mut names: Vec<_> = m.actions.iter().map(|a| a.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), m.actions.len(), "{}: duplicate action", c.name);
        }
    }
}
