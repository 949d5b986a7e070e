//! State machines: which actions move a record from which states to which
//! (`POST /v1/{resource}/{id}/{action}`). One declaration per collection, plain Rust.
//!
//! What a transition causes beyond its own record (events, couplings such as the last
//! signature signing the lease, ledger postings) is carried out by `crate::ops`.

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
    /// What the request body carries.
    pub input: Input,
}

/// The body an action takes.
#[derive(Debug, Clone, Copy)]
pub enum Input {
    None,
    /// Fields of the record that only this action sets.
    Fields {
        required: &'static [&'static str],
        optional: &'static [&'static str],
    },
    /// The create fields of a new record of another collection that the action makes
    /// (an approved application's `convert` makes a draft lease).
    NewRecord(&'static str),
}

impl Input {
    /// The record's own fields the body may set, each with whether it is required.
    pub fn fields(&self) -> impl Iterator<Item = (&'static str, bool)> {
        let (req, opt): (&[&str], &[&str]) = match self {
            Input::Fields { required, optional } => (required, optional),
            _ => (&[], &[]),
        };
        req.iter().map(|f| (*f, true)).chain(opt.iter().map(|f| (*f, false)))
    }
}

#[derive(Debug)]
pub struct Machine {
    pub collection: &'static str,
    pub actions: &'static [Action],
}

const fn act(name: &'static str, from: &'static [&'static str], to: &'static str) -> Action {
    Action { name, from, to, stamp: None, input: Input::None }
}
const fn stamped(name: &'static str, from: &'static [&'static str], to: &'static str, stamp: &'static str) -> Action {
    Action { name, from, to, stamp: Some(stamp), input: Input::None }
}

#[rustfmt::skip] // a table: one line per action
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
        Action { name: "convert", from: &["approved"], to: "converted", stamp: None, input: Input::NewRecord("leases") },
    ]},
    Machine { collection: "screening", actions: &[
        Action {
            name: "complete", from: &["pending"], to: "completed", stamp: Some("completed_at"),
            input: Input::Fields { required: &["result"], optional: &[] },
        },
    ]},
    Machine { collection: "leases", actions: &[
        act("send", &["draft"], "sent"),
        act("activate", &["signed"], "active"),
        stamped("end", &["active"], "ended", "ended_at"),
        stamped("terminate", &["active"], "terminated", "ended_at"),
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
        // A returning guest checks in again.
        act("check_in", &["expected", "checked_out"], "checked_in"),
        act("check_out", &["checked_in"], "checked_out"),
    ]},
    Machine { collection: "charges", actions: &[
        // Posts the reversing entry of the charge's posting.
        stamped("void", &["posted"], "void", "voided_at"),
    ]},
    Machine { collection: "invoices", actions: &[
        act("open", &["draft"], "open"),
        // `paid` is reached by payments settling the invoice, never by an action.
        act("void", &["draft", "open"], "void"),
    ]},
    Machine { collection: "payments", actions: &[
        stamped("succeed", &["pending"], "succeeded", "succeeded_at"),
        Action {
            name: "fail", from: &["pending"], to: "failed", stamp: None,
            input: Input::Fields { required: &[], optional: &["failure_code", "failure_message"] },
        },
        stamped("reverse", &["succeeded"], "reversed", "reversed_at"),
    ]},
    Machine { collection: "refunds", actions: &[
        stamped("succeed", &["pending"], "succeeded", "succeeded_at"),
        act("fail", &["pending"], "failed"),
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
    Machine { collection: "flow-tokens", actions: &[
        // The flow API refuses a revoked token from its next request on (`http::auth`).
        stamped("revoke", &["active"], "revoked", "revoked_at"),
    ]},
    // The import worker moves an import on from `validating`, and from `importing` to its end.
    Machine { collection: "imports", actions: &[
        Action {
            name: "commit", from: &["validated"], to: "importing", stamp: Some("committed_at"),
            input: Input::Fields { required: &[], optional: &["skip_invalid"] },
        },
        stamped("cancel", &["validating", "validated", "importing"], "cancelled", "completed_at"),
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
        let status = current.status().to_string();
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
        let mut ch = Changes::default();
        ch.values.insert("status", Val::Str(a.to.to_string()));
        if let Some(stamp) = a.stamp {
            ch.values.insert(stamp, Val::DateTime(now));
        }
        if let Input::NewRecord(_) = a.input {
            // The body describes the new record; `crate::ops` validates it.
            return Ok(ch);
        }
        let names: Vec<_> = a.input.fields().map(|(f, _)| f).collect();
        if let Some(extra) = body.keys().find(|k| !names.contains(&k.as_str())) {
            let allowed = if names.is_empty() { "none".to_string() } else { names.join(", ") };
            return Err(Error::validation(extra.as_str(), format!("is not a parameter of {}; allowed: {allowed}", a.name)));
        }
        for (p, required) in a.input.fields() {
            let field = c.field(p).expect("action parameters are fields (checked by a test)");
            match body.get(p).map(|raw| from_json(field, raw)).transpose()? {
                None | Some(Val::Null) if required => return Err(Error::validation(p, "is required")),
                None | Some(Val::Null) => {}
                Some(v) => {
                    ch.values.insert(field.name, v);
                }
            }
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
                for (p, _) in a.input.fields() {
                    assert!(c.field(p).is_some(), "{}.{}: no field {p}", c.name, a.name);
                }
                if let Input::NewRecord(target) = a.input {
                    assert!(collection(target).is_some(), "{}.{}: no collection {target}", c.name, a.name);
                }
            }
            let mut names: Vec<_> = m.actions.iter().map(|a| a.name).collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), m.actions.len(), "{}: duplicate action", c.name);
        }
    }
}
