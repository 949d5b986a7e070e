//! Writing: `POST /v1/flow/{applications,bookings,payments,workorders}`.

use std::sync::Arc;

use chrono::NaiveDate;
use serde_json::{json, Map, Value as Json};
use uuid::Uuid;

use super::{nightly_rate, ref_of, system, view};
use crate::domain::collections::named;
use crate::domain::flows::{self, Flow, FlowWrite, Grant, Stay};
use crate::domain::record::Record;
use crate::domain::registry::Collection;
use crate::domain::validate::Changes;
use crate::domain::value::{format_datetime, money_json, Val};
use crate::error::{Error, Result};
use crate::ops::{Actor, Operations, Work};
use crate::store::records;

/// Begins the unit of work of a flow's write: the tenant environment of the grant, with
/// only the scopes the write needs. Ids come from the grant, so no property constraint is
/// needed to keep the write on its subject (and a booking's guest is tenant-wide).
pub async fn begin(ops: &Operations, tenant: Uuid, livemode: bool, g: &Grant, write: FlowWrite) -> Result<Work> {
    if !g.flow.allows(write) {
        return Err(Error::InsufficientScope {
            message: format!("the `{}` flow cannot make {}; its token serves its own flow only", g.flow.name(), write.collection()),
            scope: write.scope(),
            param: None,
        });
    }
    let grants: Vec<String> = write.grants().iter().map(|s| s.to_string()).collect();
    ops.begin(&Actor { scope: system(tenant, livemode), grants: Arc::from(grants) }).await
}

/// Makes the flow's write; returns the object kind and its data for the answer.
pub async fn write(w: &mut Work, g: &Grant, write: FlowWrite, body: &Json) -> Result<(&'static str, Json)> {
    let body =
        body.as_object().ok_or_else(|| Error::InvalidRequest { message: "the request body must be a JSON object".into(), param: None })?;
    // The token, locked: a `revoke` that committed after the credential was resolved is
    // seen here, and one that comes later waits for this write (so it holds at once).
    let token = records::fetch(&mut w.tx, &w.system.clone(), named("flow-tokens")?, g.token_id, true).await?;
    if token.status() != "active" {
        return Err(Error::Unauthenticated(flows::REVOKED.into()));
    }
    if g.flow.completes_once() {
        if let (Some(object), Some(id)) = (token.get("result_object").as_str(), token.get("result_id").as_uuid()) {
            return Err(Error::Conflict(format!("this flow is complete: it already made {object} {id}")));
        }
    }
    let (object, rec) = match write {
        FlowWrite::Application => ("application", application(w, g, body).await?),
        FlowWrite::Booking => ("booking", booking(w, g, body).await?),
        FlowWrite::Payment => ("payment", payment(w, g, body).await?),
        FlowWrite::Workorder => ("workorder", workorder(w, g, body).await?),
    };
    if g.flow.completes_once() {
        let tokens = named("flow-tokens")?;
        let system = w.system.clone();
        let ch = Changes::of([
            ("completed_at", Val::DateTime(w.now)),
            ("result_object", Val::Str(object.into())),
            ("result_id", Val::Uuid(rec.id)),
        ]);
        records::write_changes(&mut w.tx, &system, tokens, token, ch, w.now).await?;
    }
    let c = named(write.collection())?;
    Ok((object, answer(&rec, c, write)))
}

/// What the flow's page needs of the record it made.
fn answer(rec: &Record, c: &Collection, write: FlowWrite) -> Json {
    let fields: &[&str] = match write {
        FlowWrite::Application => &["status", "submitted_at", "listing_id"],
        FlowWrite::Booking => &["status", "check_in", "check_out", "guests_count", "total", "currency", "guest_id", "unit_id"],
        FlowWrite::Payment => &["status", "amount", "currency", "invoice_id", "failure_code", "failure_message"],
        FlowWrite::Workorder => &["status", "title", "description", "category", "priority", "created_at"],
    };
    let mut v = view(rec, c, fields);
    if let (Some(a), Some(b)) = (rec.get("check_in").as_date(), rec.get("check_out").as_date()) {
        v["nights"] = json!((b - a).num_days());
    }
    v
}

/// Refuses keys the flow's write does not take, naming the first.
fn only(body: &Map<String, Json>, allowed: &[&str]) -> Result<()> {
    match body.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(k) => Err(Error::validation(k, format!("is not a field of this flow; it takes {}", allowed.join(", ")))),
        None => Ok(()),
    }
}

fn required<'b>(body: &'b Map<String, Json>, key: &str) -> Result<&'b Json> {
    body.get(key).filter(|v| !v.is_null()).ok_or_else(|| Error::validation(key, "is required"))
}

/// A validation error of the collection, named as the flow's page names the field.
fn renamed(e: Error, names: &[(&str, &str)]) -> Error {
    match e {
        Error::Validation { param, message } => {
            let (param, message) = names.iter().fold((param, message), |(p, m), (from, to)| {
                if p.starts_with(from) {
                    (p.replacen(from, to, 1), m.replacen(from, to, 1))
                } else {
                    (p, m)
                }
            });
            Error::Validation { param, message }
        }
        e => e,
    }
}

const APPLICATION_FIELDS: &[&str] = &[
    "applicants",
    "adults",
    "children",
    "pets",
    "desired_move_in",
    "employment_status",
    "employer",
    "job_title",
    "employed_since",
    "monthly_income",
    "references",
    "consent",
];

/// Creates the application for the grant's listing and submits it.
async fn application(w: &mut Work, g: &Grant, body: &Map<String, Json>) -> Result<Record> {
    only(body, APPLICATION_FIELDS)?;
    let applicants = required(body, "applicants")?.as_array().ok_or_else(|| Error::validation("applicants", "must be a list"))?;
    if applicants.is_empty() || applicants.len() > 6 {
        return Err(Error::validation("applicants", "must name 1 to 6 applicants"));
    }
    if applicants[0].get("email").and_then(Json::as_str).is_none_or(|e| e.trim().is_empty()) {
        return Err(Error::validation("applicants[0].email", "is required: the property answers the first applicant by email"));
    }
    for key in ["adults", "employment_status", "monthly_income"] {
        required(body, key)?;
    }
    let consent = required(body, "consent")?.as_object().ok_or_else(|| Error::validation("consent", "must be an object"))?;
    only(consent, &["screening", "terms", "signature"]).map_err(|e| renamed(e, &[("", "consent.")]))?;
    for key in ["screening", "terms"] {
        if consent.get(key) != Some(&Json::Bool(true)) {
            return Err(Error::validation(format!("consent.{key}"), "must be true: the application needs this consent"));
        }
    }
    let signature = consent.get("signature").and_then(Json::as_str).map(str::trim).unwrap_or_default();
    if signature.is_empty() {
        return Err(Error::validation("consent.signature", "is required: type your full name to sign"));
    }
    let listing = records::fetch(&mut w.tx, &w.system.clone(), named("listings")?, g.subject.1, false).await?;
    if listing.status() != "published" {
        return Err(Error::Conflict(format!("the listing is {}; it no longer takes applications", listing.status())));
    }
    let mut app = Map::new();
    app.insert("listing_id".into(), json!(listing.id));
    for key in APPLICATION_FIELDS.iter().filter(|k| !matches!(**k, "references" | "consent")) {
        if let Some(v) = body.get(*key).filter(|v| !v.is_null()) {
            app.insert((*key).into(), v.clone());
        }
    }
    app.insert("currency".into(), json!(listing.currency()));
    if let Some(r) = body.get("references").filter(|v| !v.is_null()) {
        if r.as_array().is_some_and(|a| a.len() > 5) {
            return Err(Error::validation("references", "must name at most 5 references"));
        }
        app.insert("reference_contacts".into(), r.clone());
    }
    app.insert("consent_signature".into(), json!(signature));
    app.insert("consented_at".into(), json!(format_datetime(&w.now)));
    let names = [("reference_contacts", "references"), ("consent_signature", "consent.signature")];
    let c = named("applications")?;
    let created = w.create(c, &Json::Object(app)).await.map_err(|e| renamed(e, &names))?;
    w.act_named(c, "submit", created.record.id, &Map::new()).await
}

/// Creates the guest and a confirmed booking of the grant's listing or unit, if its
/// nights are free. The unit is locked first, so two bookings of one unit are ordered.
async fn booking(w: &mut Work, g: &Grant, body: &Map<String, Json>) -> Result<Record> {
    only(body, &["check_in", "check_out", "guests_count", "guest"])?;
    let date = |key: &str| -> Result<NaiveDate> {
        required(body, key)?.as_str().and_then(|s| s.parse().ok()).ok_or_else(|| Error::validation(key, "must be a date (YYYY-MM-DD)"))
    };
    let stay = Stay { start: date("check_in")?, end: date("check_out")? };
    let guest = required(body, "guest")?.as_object().ok_or_else(|| Error::validation("guest", "must be an object"))?;
    only(guest, &["name", "email", "phone"]).map_err(|e| renamed(e, &[("", "guest.")]))?;
    if guest.get("email").and_then(Json::as_str).is_none_or(|e| e.trim().is_empty()) {
        return Err(Error::validation("guest.email", "is required: the confirmation goes there"));
    }
    flows::check_stay(&stay, w.now.date_naive()).map_err(|(p, m)| Error::validation(p, m))?;
    let system = w.system.clone();
    let listing = match g.subject {
        ("listing_id", id) => Some(records::fetch(&mut w.tx, &system, named("listings")?, id, false).await?),
        _ => None,
    };
    let unit_id = match &listing {
        Some(l) => ref_of(l, "unit_id")?,
        None => g.subject.1,
    };
    let unit = records::fetch(&mut w.tx, &system, named("units")?, unit_id, true).await?;
    if let Some(l) = listing.as_ref().filter(|l| l.status() != "published") {
        return Err(Error::Conflict(format!("the listing is {}; it no longer takes bookings", l.status())));
    }
    let bookings = named("bookings")?;
    let taken = records::find(&mut w.tx, &system, bookings, &[("unit_id", Val::Uuid(unit_id))]).await?;
    if let Some(b) = taken.iter().filter(|b| b.status() != "cancelled").find_map(|b| {
        let other = Stay { start: b.get("check_in").as_date()?, end: b.get("check_out").as_date()? };
        stay.overlaps(&other).then_some(other)
    }) {
        return Err(Error::Conflict(format!(
            "those dates are no longer available: the nights from {} to {} are booked; choose other dates",
            b.start, b.end
        )));
    }
    let (rate, currency) = nightly_rate(listing.as_ref(), &unit)?;
    let total = flows::stay_total(stay.nights(), rate).ok_or_else(|| Error::validation("check_out", "the stay is too long"))?;
    let guest = w.create(named("guests")?, &Json::Object(guest.clone())).await.map_err(|e| renamed(e, &[("", "guest.")]))?;
    let mut b = json!({
        "unit_id": unit_id,
        "guest_id": guest.record.id,
        "check_in": stay.start.to_string(),
        "check_out": stay.end.to_string(),
        "total": money_json(total, Some(&currency)),
        "currency": currency,
    });
    if let Some(l) = &listing {
        b["listing_id"] = json!(l.id);
    }
    if let Some(n) = body.get("guests_count") {
        b["guests_count"] = n.clone();
    }
    let created = w.create(bookings, &b).await?;
    // The flow books at once (instant book): see docs/embed.md, "Decisions".
    w.act_named(bookings, "confirm", created.record.id, &Map::new()).await
}

/// Pays what remains of an invoice with the sandbox scenario chosen, as
/// `POST /v1/payments` would. Live mode takes no cards: see docs/embed.md.
async fn payment(w: &mut Work, g: &Grant, body: &Map<String, Json>) -> Result<Record> {
    only(body, &["scenario", "invoice_id"])?;
    if w.scope.livemode {
        return Err(Error::InvalidRequest {
            message: "Gable takes no card payments in live mode (that needs a payment provider); the flow shows the property's payment instructions".into(),
            param: None,
        });
    }
    let system = w.system.clone();
    let invoices = named("invoices")?;
    let invoice_id = match (g.flow, body.get("invoice_id").filter(|v| !v.is_null())) {
        (Flow::TenantPortal, Some(v)) => {
            v.as_str().and_then(|s| s.parse::<Uuid>().ok()).ok_or_else(|| Error::validation("invoice_id", "must be an id"))?
        }
        (Flow::TenantPortal, None) => return Err(Error::validation("invoice_id", "is required: name the invoice to pay")),
        (_, Some(v)) if v.as_str() != Some(&g.subject.1.to_string()) => {
            return Err(Error::validation("invoice_id", "the payment flow pays its own invoice only"))
        }
        _ => g.subject.1,
    };
    let invoice = records::fetch(&mut w.tx, &system, invoices, invoice_id, true).await?;
    // The portal pays its own lease's invoices only; another is as good as missing.
    if g.flow == Flow::TenantPortal && invoice.get("lease_id").as_uuid() != Some(g.subject.1) {
        return Err(Error::missing_reference("invoice_id", "invoice", invoice_id));
    }
    let remaining = invoice.money("amount_due") - invoice.money("amount_paid");
    if invoice.status() != "open" || remaining <= 0 {
        return Err(Error::Conflict(format!("the invoice is {}; there is nothing to pay", invoice.status())));
    }
    let mut p = json!({
        "scenario": required(body, "scenario")?,
        "amount": money_json(remaining, invoice.currency()),
        "currency": invoice.currency(),
        "invoice_id": invoice.id,
        "description": format!("Invoice due {}", invoice.get("due_date").as_date().map(|d| d.to_string()).unwrap_or_default()),
    });
    if let Some(lease) = invoice.get("lease_id").as_uuid() {
        p["lease_id"] = json!(lease);
    }
    Ok(w.create(named("payments")?, &p).await?.record)
}

/// A maintenance request of the portal's resident: a work order of the lease's unit.
async fn workorder(w: &mut Work, g: &Grant, body: &Map<String, Json>) -> Result<Record> {
    only(body, &["title", "description", "category", "priority"])?;
    let system = w.system.clone();
    let lease = records::fetch(&mut w.tx, &system, named("leases")?, g.subject.1, false).await?;
    let unit = records::fetch(&mut w.tx, &system, named("units")?, ref_of(&lease, "unit_id")?, false).await?;
    let mut o = body.clone();
    o.insert("property_id".into(), json!(ref_of(&unit, "property_id")?));
    o.insert("unit_id".into(), json!(unit.id));
    o.insert("lease_id".into(), json!(lease.id));
    Ok(w.create(named("workorders")?, &Json::Object(o)).await?.record)
}
