//! What an operation causes beyond its own record, collection by collection: checks
//! that need other records, the couplings between records, the events and the
//! postings. Every function runs inside the operation's transaction.
//!
//! Locking: an operation locks the record it acts on, then the parent it may change
//! (a signature, then its lease); sibling sets are read without locks. Writers of one
//! parent are thereby ordered and cannot deadlock.

use serde_json::{Map, Value as Json};
use uuid::Uuid;

use super::outbox::emit;
use super::postings;
use super::{Work, SET_BY_CONVERT};
use crate::domain::collections::collection;
use crate::domain::events;
use crate::domain::ledger;
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::reports::Parameters;
use crate::domain::validate::{self, Changes};
use crate::domain::value::{money_json, to_json, Val};
use crate::domain::workflow::{machine, Action};
use crate::error::{Error, Result};
use crate::store::records;

fn col(name: &str) -> &'static Collection {
    collection(name).expect("couplings name real collections")
}

fn changes(pairs: impl IntoIterator<Item = (&'static str, Val)>) -> Changes {
    Changes { values: pairs.into_iter().collect(), metadata: None }
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

/// Checks a new record against the records it depends on.
pub(super) async fn before_create(w: &mut Work, c: &'static Collection, ch: &mut Changes) -> Result<()> {
    let get = |n: &str| ch.values.get(n).cloned().unwrap_or(Val::Null);
    // Money that moves is never zero: a zero charge or payment would post an empty entry.
    if matches!(c.name, "charges" | "payments" | "refunds") && get("amount") == Val::Money(0) {
        return Err(Error::validation("amount", "must be greater than zero"));
    }
    // What is owed under a lease or booking is in its currency.
    if matches!(c.name, "charges" | "invoices") {
        for (param, parent) in [("lease_id", col("leases")), ("booking_id", col("bookings"))] {
            let Some(parent_id) = get(param).as_uuid() else { continue };
            let rec = referenced(w, param, parent, parent_id).await?;
            if let Some(cur) = rec.currency().filter(|cur| get("currency").as_str() != Some(*cur)) {
                return Err(Error::validation("currency", format!("must be the {}'s currency, {cur}", parent.object)));
            }
        }
    }
    match c.name {
        "payments" => {
            let Some(invoice_id) = get("invoice_id").as_uuid() else { return Ok(()) };
            let invoice = referenced(w, "invoice_id", col("invoices"), invoice_id).await?;
            if invoice.status() != "open" {
                return Err(Error::validation(
                    "invoice_id",
                    format!("the invoice is {}; only an open invoice takes payments", invoice.status()),
                ));
            }
            if invoice.currency() != get("currency").as_str() {
                return Err(Error::validation(
                    "currency",
                    format!("must be the invoice's currency, {}", invoice.currency().unwrap_or_default()),
                ));
            }
        }
        "refunds" => {
            let Some(payment_id) = get("payment_id").as_uuid() else { return Ok(()) };
            let payment = referenced(w, "payment_id", col("payments"), payment_id).await?;
            if payment.status() != "succeeded" {
                return Err(Error::validation(
                    "payment_id",
                    format!("the payment is {}; only a succeeded payment can be refunded", payment.status()),
                ));
            }
            let currency = payment.currency().unwrap_or_default().to_string();
            if get("currency").as_str() != Some(currency.as_str()) {
                return Err(Error::validation("currency", format!("must be the payment's currency, {currency}")));
            }
            let system = w.system.clone();
            let earlier = records::find(&mut w.tx, &system, c, &[("payment_id", Val::Uuid(payment_id))]).await?;
            let taken: i64 = earlier.iter().filter(|r| r.status() != "failed").map(|r| r.money("amount")).sum();
            let left = payment.money("amount") - taken;
            if matches!(get("amount"), Val::Money(a) if a > left) {
                return Err(Error::validation(
                    "amount",
                    format!("is more than is left to refund on the payment ({})", money_json(left, Some(&currency))),
                ));
            }
        }
        "accounting-entries" => {
            if let Some(source) = get("source_type").as_str().filter(|s| postings::GABLE_SOURCES.contains(s)) {
                return Err(Error::validation("source_type", format!("`{source}` is reserved for the entries Gable posts itself")));
            }
            if let (Some(reverses), Val::Json(lines), Val::Str(currency)) = (get("reverses_id").as_uuid(), get("lines"), get("currency")) {
                postings::check_manual_reversal(w, &lines, &currency, reverses).await?;
            }
        }
        "reports" => {
            let params = Parameters::parse(&get("parameters"))?;
            if let Some(p) = params.property_id {
                referenced(w, "parameters.property_id", col("properties"), p).await?;
            }
        }
        _ => {}
    }
    Ok(())
}

/// Checks a PATCH against the record's state: a bill's amount is fixed once it is issued.
pub(super) fn check_update(c: &Collection, current: &Record, ch: &Changes) -> Result<()> {
    if c.name == "invoices" && ch.values.contains_key("amount_due") && current.status() != "draft" {
        return Err(Error::validation("amount_due", format!("can change only while the invoice is a draft; it is {}", current.status())));
    }
    Ok(())
}

/// The events and postings of a new record.
pub(super) async fn after_create(w: &mut Work, c: &'static Collection, rec: &Record) -> Result<()> {
    if let Some(kind) = events::emitted_by_create(c.name) {
        emit(w, kind, c, rec, None, None).await?;
    }
    match c.name {
        "charges" => {
            let kind = rec.get("kind").as_str().unwrap_or("fee");
            let Val::Date(due) = rec.get("due_date") else { return Err(Error::internal(anyhow::anyhow!("charge without due date"))) };
            postings::post_for(w, c, rec, ledger::charge(kind, rec.money("amount")), *due, &format!("{kind} charge")).await?;
        }
        // A balanced manual entry: its lines join the ledger's sums.
        "accounting-entries" => postings::write_lines(w, rec, &postings::lines_of(rec)?).await?,
        _ => {}
    }
    Ok(())
}

/// A refusal because of another record's state, in the shape of a state error.
fn blocked(c: &Collection, a: &Action, current: &Record, why: String) -> Error {
    let allowed: Vec<String> = machine(c.name)
        .map(|m| m.allowed(current.status()).into_iter().filter(|n| *n != a.name).map(String::from).collect())
        .unwrap_or_default();
    Error::InvalidStateTransition { message: why, current: current.status().to_string(), allowed }
}

/// Before an action changes its record: the checks that need other records, the
/// fields the action fills in, and the records it makes first.
pub(super) async fn prepare(
    w: &mut Work,
    c: &'static Collection,
    a: &Action,
    current: &Record,
    body: &Map<String, Json>,
    ch: &mut Changes,
) -> Result<()> {
    match (c.name, a.name) {
        ("signatures", "sign") => {
            // Locks the lease: signatures of one lease are signed one after another.
            let lease_id = current.get("lease_id").as_uuid().unwrap_or_default();
            let lease = related(w, col("leases"), lease_id).await?;
            if lease.status() != "sent" {
                let why = format!("the lease is {}; its signatures can be signed once it is sent", lease.status());
                return Err(blocked(c, a, current, why));
            }
        }
        ("invoices", "void") => {
            let system = w.system.clone();
            let payments = records::find(&mut w.tx, &system, col("payments"), &[("invoice_id", Val::Uuid(current.id))]).await?;
            if let Some(p) = payments.iter().find(|p| matches!(p.status(), "pending" | "succeeded")) {
                let why = format!("the invoice has a {} payment ({}); fail or reverse it before voiding the invoice", p.status(), p.id);
                return Err(blocked(c, a, current, why));
            }
        }
        ("payments", "reverse") => {
            let system = w.system.clone();
            let refunds = records::find(&mut w.tx, &system, col("refunds"), &[("payment_id", Val::Uuid(current.id))]).await?;
            if refunds.iter().any(|r| r.status() != "failed") {
                return Err(blocked(c, a, current, "a payment with refunds cannot be reversed; its refunds already return money".into()));
            }
        }
        ("applications", "convert") => {
            let lease = convert(w, current, body).await?;
            ch.values.insert("lease_id", Val::Uuid(lease.id));
        }
        _ => {}
    }
    amend(c, a, current, ch, w.now.date_naive());
    Ok(())
}

/// Fields an action fills in when they are still empty.
fn amend(c: &Collection, a: &Action, current: &Record, ch: &mut Changes, today: chrono::NaiveDate) {
    let fill = match (c.name, a.name) {
        ("tenancies", "start") => Some("move_in_date"),
        ("tenancies", "move_out") => Some("move_out_date"),
        _ => None,
    };
    if let Some(field) = fill.filter(|f| current.get(f).is_null()) {
        ch.values.insert(field, Val::Date(today));
    }
}

/// Makes the draft lease of an approved application from the `convert` body.
async fn convert(w: &mut Work, app: &Record, body: &Map<String, Json>) -> Result<Record> {
    let leases = col("leases");
    if let Some(f) = SET_BY_CONVERT.iter().find(|f| body.contains_key(**f)) {
        return Err(Error::validation(*f, "is set by Gable from the application"));
    }
    let listing = match app.get("listing_id").as_uuid() {
        Some(id) => Some(related(w, col("listings"), id).await?),
        None => None,
    };
    let unit = app.get("unit_id").as_uuid().or_else(|| listing.as_ref().and_then(|l| l.get("unit_id").as_uuid()));
    let mut lease = body.clone();
    lease.insert("unit_id".into(), unit.map(|u| Json::String(u.to_string())).unwrap_or(Json::Null));
    lease.insert("application_id".into(), Json::String(app.id.to_string()));
    if let Some(l) = &listing {
        for f in ["rent", "deposit", "currency"] {
            if !lease.contains_key(f) && !l.get(f).is_null() {
                lease.insert(f.into(), to_json(l.get(f), l.currency()));
            }
        }
    }
    let ch = validate::create(leases, &Json::Object(lease))?;
    let scope = w.scope.clone();
    records::insert(&mut w.tx, &scope, leases, ch, vec![], w.now).await
}

/// The events an action emits on its own record.
async fn emit_action_events(
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

/// After an action changed its record: its own events, then what it causes elsewhere.
pub(super) async fn follow(w: &mut Work, c: &'static Collection, a: &Action, before: &Record, after: &Record) -> Result<()> {
    emit_action_events(w, c, a, before, after, None).await?;
    let today = w.now.date_naive();
    match (c.name, a.name) {
        ("signatures", "sign") => sign_lease_when_complete(w, after).await?,
        ("leases", "activate") => start_tenancy(w, after).await?,
        ("bookings", "check_in") => move_guest(w, after, "check_in").await?,
        ("bookings", "check_out") => move_guest(w, after, "check_out").await?,
        ("payments", "succeed") => {
            postings::post_for(w, c, after, ledger::payment(after.money("amount")), today, "payment received").await?;
            settle_invoice(w, after, after.money("amount")).await?;
        }
        ("payments", "reverse") => {
            postings::reverse_posting_of(w, c, after, "payment reversed").await?;
            settle_invoice(w, after, -after.money("amount")).await?;
        }
        ("refunds", "succeed") => {
            postings::post_for(w, c, after, ledger::refund(after.money("amount")), today, "refund paid").await?;
        }
        ("charges", "void") => postings::reverse_posting_of(w, c, after, "charge voided").await?,
        _ => {}
    }
    Ok(())
}

/// A coupled record's own action, run as the coupling's consequence: the machine's
/// rules (checked on the record as locked here), the fields the action fills in, and
/// the events of that action.
async fn step(w: &mut Work, c: &'static Collection, action: &str, id: Uuid, property: Option<Uuid>) -> Result<Record> {
    let m = machine(c.name).expect("coupled records have state machines");
    let a = m.action(action).expect("couplings name real actions");
    let (now, system) = (w.now, w.system.clone());
    let (before, after) = records::modify(&mut w.tx, &system, c, id, now, |current| {
        let mut ch = m.apply(c, a, current, &Map::new(), now)?;
        amend(c, a, current, &mut ch, now.date_naive());
        Ok(ch)
    })
    .await?;
    emit_action_events(w, c, a, &before, &after, property).await?;
    Ok(after)
}

/// The last signature signed signs a sent lease (the lease is locked by `prepare`).
async fn sign_lease_when_complete(w: &mut Work, signature: &Record) -> Result<()> {
    let lease_id = signature.get("lease_id").as_uuid().unwrap_or_default();
    let system = w.system.clone();
    let all = records::find(&mut w.tx, &system, col("signatures"), &[("lease_id", Val::Uuid(lease_id))]).await?;
    if !all.iter().all(|s| s.status() == "signed") {
        return Ok(());
    }
    // `prepare` checked that the lease is sent, and holds its lock.
    let leases = col("leases");
    let (before, after) =
        records::modify(&mut w.tx, &system, leases, lease_id, w.now, |_| Ok(changes([("status", Val::Str("signed".into()))]))).await?;
    emit(w, "lease.signed", leases, &after, Some(&before), None).await
}

/// Activating a lease starts its tenancy: the upcoming one, or a new one.
async fn start_tenancy(w: &mut Work, lease: &Record) -> Result<()> {
    let tenancies = col("tenancies");
    let system = w.system.clone();
    let existing = records::find(&mut w.tx, &system, tenancies, &[("lease_id", Val::Uuid(lease.id))]).await?;
    if let Some(t) = existing.iter().find(|t| t.status() == "upcoming") {
        step(w, tenancies, "start", t.id, None).await?;
        return Ok(());
    }
    if existing.iter().any(|t| t.status() == "current") {
        return Ok(());
    }
    let occupants = match lease.get("application_id").as_uuid() {
        Some(id) => related(w, col("applications"), id).await?.get("applicants").clone(),
        None => Val::Null,
    };
    let ch = changes([
        ("lease_id", Val::Uuid(lease.id)),
        ("unit_id", lease.get("unit_id").clone()),
        ("occupants", occupants),
        ("move_in_date", lease.get("start_date").clone()),
        ("status", Val::Str("current".into())),
    ]);
    let t = records::insert(&mut w.tx, &system, tenancies, ch, vec![], w.now).await?;
    emit(w, "tenancy.started", tenancies, &t, None, None).await
}

/// A booking's check-in checks its guest in (and its check-out out), when the guest's
/// own state allows it: a guest already checked in by another booking stays so.
async fn move_guest(w: &mut Work, booking: &Record, action: &str) -> Result<()> {
    let Some(guest_id) = booking.get("guest_id").as_uuid() else { return Ok(()) };
    let guests = col("guests");
    let guest = related(w, guests, guest_id).await?;
    let allowed = machine("guests").is_some_and(|m| m.allowed(guest.status()).contains(&action));
    if allowed {
        step(w, guests, action, guest.id, booking.get("property_id").as_uuid()).await?;
    }
    Ok(())
}

/// A payment settles its invoice (a negative amount unsettles it, on reversal).
async fn settle_invoice(w: &mut Work, payment: &Record, amount: i64) -> Result<()> {
    let Some(invoice_id) = payment.get("invoice_id").as_uuid() else { return Ok(()) };
    let invoices = col("invoices");
    let system = w.system.clone();
    records::modify(&mut w.tx, &system, invoices, invoice_id, w.now, |inv| {
        let paid = inv.money("amount_paid") + amount;
        let mut ch = changes([("amount_paid", Val::Money(paid))]);
        let settled = paid >= inv.money("amount_due");
        match inv.status() {
            "open" if settled => ch.values.insert("status", Val::Str("paid".into())),
            "paid" if !settled => ch.values.insert("status", Val::Str("open".into())),
            _ => None,
        };
        Ok(ch)
    })
    .await?;
    Ok(())
}
