//! What an operation on a collection does beyond validating and storing its record:
//! checks that need other records or the actor, fields Gable fills in, couplings to
//! other records, postings. One module per collection that has any of it, each
//! implementing [`Behaviour`]; `of` is the one table that maps a collection to it.
//! Events are generic (declared in `domain::events`) and emitted here for all.
//!
//! Locking: an operation locks the record it acts on, then the parent it may change
//! (a signature, then its lease); sibling sets are read without locks. Writers of one
//! parent are thereby ordered and cannot deadlock.

mod accounting_entries;
mod applications;
mod bookings;
mod charges;
mod flow_tokens;
mod imports;
mod invoices;
mod leases;
mod payments;
mod refunds;
mod reports;
mod roles;
mod signatures;
mod tenancies;
mod users;
pub(super) mod webhooks;

use async_trait::async_trait;
use serde_json::{Map, Value as Json};
use uuid::Uuid;

use super::outbox::emit;
use super::Work;
use crate::domain::collections::collection;
use crate::domain::events;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::validate::Changes;
use crate::domain::value::Val;
use crate::domain::workflow::{machine, Action};
use crate::error::{Error, Result};
use crate::store::records;

pub use applications::SET_BY_CONVERT;

/// A record about to be inserted: its validated values, the hidden columns Gable stores
/// beside them (a token's hash), and the secret its create response shows once.
pub(super) struct NewRecord {
    /// The id the record will have.
    pub id: Uuid,
    pub changes: Changes,
    pub hidden: Vec<(&'static str, String)>,
    pub secret: Option<String>,
}

/// An action about to change its record: the collection, the action, the record as
/// locked by the operation, and the action's body.
pub(super) struct Step<'a> {
    pub c: &'static Collection,
    pub a: &'a Action,
    pub current: &'a Record,
    pub body: &'a Map<String, Json>,
}

/// The hooks of a collection's operations. Every hook runs inside the operation's
/// transaction; the defaults do nothing.
#[async_trait]
pub(super) trait Behaviour: Sync {
    /// What a create can answer beyond what the collection's fields imply (the API
    /// description lists it): `404` when it looks up records none of its reference fields
    /// name, `409` when it can conflict with other records.
    fn create_answers(&self) -> &'static [u16] {
        &[]
    }
    /// Before insert: checks against other records and the actor; fields Gable sets.
    async fn before_create(&self, _w: &mut Work, _c: &'static Collection, _new: &mut NewRecord) -> Result<()> {
        Ok(())
    }
    /// After insert (and the create's events): postings and couplings.
    async fn after_create(&self, _w: &mut Work, _c: &'static Collection, _rec: &Record) -> Result<()> {
        Ok(())
    }
    /// Actions a new record runs at once, after its create (a test payment's scenario);
    /// returns the record as they leave it.
    async fn settle(&self, _w: &mut Work, _c: &'static Collection, _rec: &Record) -> Result<Option<Record>> {
        Ok(None)
    }
    /// Before a PATCH is written, with the record as locked.
    async fn before_update(&self, _w: &mut Work, _c: &'static Collection, _current: &Record, _ch: &mut Changes) -> Result<()> {
        Ok(())
    }
    /// Before a delete, with the record as locked.
    async fn before_delete(&self, _w: &mut Work, _c: &'static Collection, _current: &Record) -> Result<()> {
        Ok(())
    }
    /// Before an action changes its record: checks that need other records, the fields
    /// the action fills in, and the records it makes first.
    async fn prepare(&self, _w: &mut Work, _s: &Step<'_>, _ch: &mut Changes) -> Result<()> {
        Ok(())
    }
    /// After an action changed its record (and its events): what it causes elsewhere.
    async fn follow(&self, _w: &mut Work, _c: &'static Collection, _a: &Action, _before: &Record, _after: &Record) -> Result<()> {
        Ok(())
    }
}

/// Collections with nothing beyond validation and storage.
struct Plain;
impl Behaviour for Plain {}

/// The behaviour of a collection.
pub(super) fn of(c: &Collection) -> &'static dyn Behaviour {
    match c.name {
        "accounting-entries" => &accounting_entries::AccountingEntries,
        "applications" => &applications::Applications,
        "bookings" => &bookings::Bookings,
        "charges" => &charges::Charges,
        "flow-tokens" => &flow_tokens::FlowTokens,
        "imports" => &imports::Imports,
        "invoices" => &invoices::Invoices,
        "leases" => &leases::Leases,
        "payments" => &payments::Payments,
        "refunds" => &refunds::Refunds,
        "reports" => &reports::Reports,
        "roles" => &roles::Roles,
        "signatures" => &signatures::Signatures,
        "tenancies" => &tenancies::Tenancies,
        "users" => &users::Users,
        "webhooks" => &webhooks::Webhooks,
        _ => &Plain,
    }
}

// ---- shared by the behaviours -----------------------------------------------------

pub(super) fn col(name: &str) -> &'static Collection {
    collection(name).expect("couplings name real collections")
}

fn changes(pairs: impl IntoIterator<Item = (&'static str, Val)>) -> Changes {
    Changes::of(pairs)
}

/// A value of the new record's changes (Null when absent).
fn new_value(new: &NewRecord, field: &str) -> Val {
    new.changes.values.get(field).cloned().unwrap_or(Val::Null)
}

/// The collections whose `amount` is never zero (their behaviours call `nonzero_amount`;
/// the API description states it from this list).
pub const NONZERO_AMOUNT: &[&str] = &["charges", "payments", "refunds"];

/// Money that moves is never zero: a zero charge or payment would post an empty entry.
fn nonzero_amount(new: &NewRecord) -> Result<()> {
    if new_value(new, "amount") == Val::Money(0) {
        return Err(Error::validation("amount", "must be greater than zero"));
    }
    Ok(())
}

/// A referenced record the caller must be able to see, with the reference's own error.
async fn referenced(w: &mut Work, param: &str, target: &'static Collection, id: Uuid) -> Result<Record> {
    let scope = w.scope.clone();
    records::fetch(&mut w.tx, &scope, target, id, true).await.map_err(|e| match e {
        Error::NotFound { .. } => Error::missing_reference(param, target.object, id),
        e => e,
    })
}

/// The record a coupling changes, reached tenant-wide and locked.
async fn related(w: &mut Work, target: &'static Collection, id: Uuid) -> Result<Record> {
    let system = w.system.clone();
    records::fetch(&mut w.tx, &system, target, id, true).await
}

/// What is owed under a lease or booking is in its currency (charges, invoices).
async fn in_parent_currency(w: &mut Work, new: &NewRecord) -> Result<()> {
    for (param, parent) in [("lease_id", col("leases")), ("booking_id", col("bookings"))] {
        let Some(parent_id) = new_value(new, param).as_uuid() else { continue };
        let rec = referenced(w, param, parent, parent_id).await?;
        if let Some(cur) = rec.currency().filter(|cur| new_value(new, "currency").as_str() != Some(*cur)) {
            return Err(Error::validation("currency", format!("must be the {}'s currency, {cur}", parent.object)));
        }
    }
    Ok(())
}

/// A refusal because of another record's state, in the shape of a state error.
fn blocked(s: &Step<'_>, why: String) -> Error {
    let allowed: Vec<String> = machine(s.c.name)
        .map(|m| m.allowed(s.current.status()).into_iter().filter(|n| *n != s.a.name).map(String::from).collect())
        .unwrap_or_default();
    Error::InvalidStateTransition { message: why, current: s.current.status().to_string(), allowed }
}

/// The events a new record emits.
pub(super) async fn after_create(w: &mut Work, c: &'static Collection, rec: &Record) -> Result<()> {
    if let Some(kind) = events::emitted_by_create(c.name) {
        emit(w, kind, c, rec, None, None).await?;
    }
    Ok(())
}

/// The events an action emits on its own record.
pub(super) async fn emit_action_events(
    w: &mut Work,
    c: &'static Collection,
    a: &Action,
    before: &Record,
    after: &Record,
    property: Option<Uuid>,
) -> Result<()> {
    for kind in events::emitted_by_action(c.name, a.name, before.status()) {
        emit(w, kind, c, after, Some(before), property).await?;
    }
    Ok(())
}

/// A coupled record's own action, run as the coupling's consequence: the machine's
/// rules (checked on the record as locked here), what the action prepares, and the
/// events of that action.
async fn step(w: &mut Work, c: &'static Collection, action: &str, id: Uuid, property: Option<Uuid>) -> Result<Record> {
    let m = machine(c.name).expect("coupled records have state machines");
    let a = m.action(action).expect("couplings name real actions");
    let current = related(w, c, id).await?;
    let none = Map::new();
    let mut ch = m.apply(c, a, &current, &none, w.now)?;
    of(c).prepare(w, &Step { c, a, current: &current, body: &none }, &mut ch).await?;
    let system = w.system.clone();
    let (before, after) = records::write_changes(&mut w.tx, &system, c, current, ch, w.now).await?;
    emit_action_events(w, c, a, &before, &after, property).await?;
    Ok(after)
}
