//! Reading: `GET /v1/flow`, the session a flow's page shows.

use chrono::NaiveDate;
use serde_json::{json, Value as Json};
use uuid::Uuid;

use super::{nightly_rate, ref_of, system, view};
use crate::domain::collections::named;
use crate::domain::flows::{self, Flow, Grant, Stay};
use crate::domain::reach::Scope;
use crate::domain::record::Record;
use crate::domain::value::{format_datetime, money_fixed, Val};
use crate::error::{Error, Result};
use crate::ops::Operations;
use crate::store::records;
use crate::store::{Intent, Tx};

/// The flow's session: what its page shows (see docs/embed.md for the shape).
pub async fn session(ops: &Operations, tenant: Uuid, livemode: bool, g: &Grant) -> Result<Json> {
    let mut tx = ops.store().begin_tenant(tenant, livemode, Intent::Read).await?;
    let ahead = if livemode { chrono::Duration::zero() } else { crate::store::sandbox::offset(&mut tx, tenant).await? };
    let now = ops.clock().now() + ahead;
    let mut r = Reader { tx: &mut tx, scope: system(tenant, livemode) };
    let token = r.get("flow-tokens", g.token_id).await?;
    // Revoked since the credential was resolved: nothing more is shown.
    if token.status() != "active" {
        return Err(Error::Unauthenticated(flows::REVOKED.into()));
    }
    let mut data = json!({
        "flow": g.flow.name(),
        "livemode": livemode,
        "expires_at": format_datetime(&g.expires_at),
        "origin": g.origin,
        "today": now.date_naive().to_string(),
        "completed": match (token.get("result_object").as_str(), token.get("result_id").as_uuid()) {
            (Some(object), Some(id)) => json!({ "object": object, "id": id }),
            _ => Json::Null,
        },
    });
    let (field, id) = g.subject;
    match g.flow {
        Flow::RentalApplication => {
            let listing = r.get("listings", id).await?;
            let unit = r.get("units", ref_of(&listing, "unit_id")?).await?;
            data["listing"] = listing_view(&listing, Some(&unit));
            data["property"] = r.property(&unit).await?;
        }
        Flow::Booking => {
            let listing = if field == "listing_id" { Some(r.get("listings", id).await?) } else { None };
            let unit_id = match &listing {
                Some(l) => ref_of(l, "unit_id")?,
                None => id,
            };
            let unit = r.get("units", unit_id).await?;
            let (rate, currency) = nightly_rate(listing.as_ref(), &unit)?;
            let listings = named("listings")?;
            data["listing"] = listing.as_ref().map_or(Json::Null, |l| view(l, listings, &["title", "description"]));
            data["unit"] = unit_view(&unit);
            data["property"] = r.property(&unit).await?;
            data["nightly_rate"] = json!(money_fixed(rate, Some(&currency)));
            data["currency"] = json!(currency);
            data["unavailable"] = Json::Array(
                r.booked(unit_id).await?.iter().map(|s| json!({ "start": s.start.to_string(), "end": s.end.to_string() })).collect(),
            );
        }
        Flow::Payment => {
            let invoice = r.get("invoices", id).await?;
            data["invoice"] = r.invoice(&invoice, now.date_naive()).await?;
            let unit = r.unit_of_invoice(&invoice).await?;
            data["unit"] = unit.as_ref().map_or(Json::Null, unit_view);
            data["property"] = match &unit {
                Some(u) => r.property(u).await?,
                None => Json::Null,
            };
            payment_options(&mut data, livemode, r.payment_instructions(&unit).await?);
        }
        Flow::TenantPortal => {
            let lease = r.get("leases", id).await?;
            let unit = r.get("units", ref_of(&lease, "unit_id")?).await?;
            let leases = named("leases")?;
            data["lease"] = view(&lease, leases, &["status", "start_date", "end_date", "rent", "deposit", "currency", "rent_due_day"]);
            data["unit"] = unit_view(&unit);
            data["property"] = r.property(&unit).await?;
            data["residents"] = Json::Array(r.residents(&lease).await?.into_iter().map(|name| json!({ "name": name })).collect());
            let today = now.date_naive();
            let mut invoices = r.find("invoices", "lease_id", lease.id).await?;
            invoices.retain(|i| i.status() != "draft");
            invoices.sort_by(|a, b| b.get("due_date").as_date().cmp(&a.get("due_date").as_date()).then(b.id.cmp(&a.id)));
            let currency = lease.currency().unwrap_or("USD").to_string();
            let balance: i64 =
                invoices.iter().filter(|i| i.status() == "open").map(|i| i.money("amount_due") - i.money("amount_paid")).sum();
            data["balance"] = json!({ "amount": money_fixed(balance, Some(&currency)), "currency": currency });
            let mut shown = vec![];
            for inv in invoices.iter().take(flows::PORTAL_INVOICES as usize) {
                shown.push(r.invoice(inv, today).await?);
            }
            data["invoices"] = Json::Array(shown);
            let paid = ["invoice_id", "amount", "currency", "status", "method", "created_at", "failure_message"];
            data["payments"] = r.newest("payments", "lease_id", lease.id, &paid).await?;
            let asked = ["title", "description", "category", "priority", "status", "created_at", "completed_at"];
            data["workorders"] = r.newest("workorders", "lease_id", lease.id, &asked).await?;
            payment_options(&mut data, livemode, r.payment_instructions(&Some(unit)).await?);
        }
    }
    tx.commit().await?;
    Ok(data)
}

/// The sandbox offers scenarios; live mode the property's own payment instructions.
fn payment_options(data: &mut Json, livemode: bool, instructions: Option<String>) {
    if livemode {
        data["scenarios"] = Json::Null;
        data["payment_instructions"] = json!(instructions.unwrap_or_else(|| {
            "Card payments are not taken online for this property. Contact the property manager for how to pay.".into()
        }));
    } else {
        data["scenarios"] = json!(["succeeded", "failed", "reversed"]);
        data["payment_instructions"] = Json::Null;
    }
}

/// Reads of one session, in one read transaction.
struct Reader<'a> {
    tx: &'a mut Tx,
    scope: Scope,
}

impl Reader<'_> {
    async fn get(&mut self, collection: &str, id: Uuid) -> Result<Record> {
        records::fetch(self.tx, &self.scope, named(collection)?, id, false).await
    }

    async fn find(&mut self, collection: &str, field: &str, id: Uuid) -> Result<Vec<Record>> {
        records::find(self.tx, &self.scope, named(collection)?, &[(field, Val::Uuid(id))]).await
    }

    /// The records of `collection` whose `field` is `id`, newest first, each as its
    /// `fields` read.
    async fn newest(&mut self, collection: &str, field: &str, id: Uuid, fields: &[&str]) -> Result<Json> {
        let c = named(collection)?;
        let mut found = self.find(collection, field, id).await?;
        found.sort_by_key(|r| std::cmp::Reverse(r.created_at));
        Ok(Json::Array(found.iter().map(|r| view(r, c, fields)).collect()))
    }

    async fn property(&mut self, unit: &Record) -> Result<Json> {
        let p = self.get("properties", ref_of(unit, "property_id")?).await?;
        Ok(view(&p, named("properties")?, &["name", "address", "kind"]))
    }

    async fn payment_instructions(&mut self, unit: &Option<Record>) -> Result<Option<String>> {
        let Some(unit) = unit else { return Ok(None) };
        let p = self.get("properties", ref_of(unit, "property_id")?).await?;
        Ok(p.get("payment_instructions").as_str().map(str::to_string))
    }

    /// The nights of a unit that bookings hold (every booking but a cancelled one).
    async fn booked(&mut self, unit: Uuid) -> Result<Vec<Stay>> {
        let mut stays: Vec<Stay> = self
            .find("bookings", "unit_id", unit)
            .await?
            .iter()
            .filter(|b| b.status() != "cancelled")
            .filter_map(|b| Some(Stay { start: b.get("check_in").as_date()?, end: b.get("check_out").as_date()? }))
            .collect();
        stays.sort_by_key(|s| s.start);
        Ok(stays)
    }

    async fn unit_of_invoice(&mut self, invoice: &Record) -> Result<Option<Record>> {
        let parent = match (invoice.get("lease_id").as_uuid(), invoice.get("booking_id").as_uuid()) {
            (Some(lease), _) => self.get("leases", lease).await?,
            (None, Some(booking)) => self.get("bookings", booking).await?,
            _ => return Ok(None),
        };
        Ok(Some(self.get("units", ref_of(&parent, "unit_id")?).await?))
    }

    /// The people of a lease: its tenant signers, or else its tenancy's occupants.
    async fn residents(&mut self, lease: &Record) -> Result<Vec<String>> {
        let mut names: Vec<String> = self
            .find("signatures", "lease_id", lease.id)
            .await?
            .iter()
            .filter(|s| s.get("role").as_str() == Some("tenant"))
            .filter_map(|s| s.get("signer_name").as_str().map(str::to_string))
            .collect();
        if names.is_empty() {
            for t in self.find("tenancies", "lease_id", lease.id).await? {
                if let Val::Json(Json::Array(people)) = t.get("occupants") {
                    names.extend(people.iter().filter_map(|p| p["name"].as_str().map(str::to_string)));
                }
            }
        }
        Ok(names)
    }

    /// An invoice as a payer reads it: what is due, what for, and what was paid.
    async fn invoice(&mut self, inv: &Record, today: NaiveDate) -> Result<Json> {
        let ic = named("invoices")?;
        let cur = inv.currency();
        let mut v = view(inv, ic, &["status", "amount_due", "amount_paid", "currency", "due_date"]);
        let remaining = (inv.money("amount_due") - inv.money("amount_paid")).max(0);
        v["amount_remaining"] = json!(money_fixed(if inv.status() == "open" { remaining } else { 0 }, cur));
        v["overdue"] = json!(inv.status() == "open" && inv.get("due_date").as_date().is_some_and(|d| d < today));
        let mut lines = vec![];
        if let Val::Json(Json::Array(ids)) = inv.get("charge_ids") {
            let cc = named("charges")?;
            for id in ids.iter().filter_map(|i| i.as_str()).filter_map(|s| s.parse::<Uuid>().ok()) {
                let ch = self.get("charges", id).await?;
                lines.push(view(&ch, cc, &["kind", "description", "amount", "due_date", "period"]));
            }
        }
        v["lines"] = Json::Array(lines);
        v["payments"] = self.newest("payments", "invoice_id", inv.id, &["amount", "status", "created_at", "failure_message"]).await?;
        Ok(v)
    }
}

fn unit_view(unit: &Record) -> Json {
    named("units").map_or(Json::Null, |c| view(unit, c, &["number", "bedrooms", "bathrooms", "area", "area_unit"]))
}

fn listing_view(listing: &Record, unit: Option<&Record>) -> Json {
    let Ok(c) = named("listings") else { return Json::Null };
    let mut v = view(listing, c, &["title", "description", "rent", "deposit", "currency", "available_on"]);
    v["unit"] = unit.map_or(Json::Null, unit_view);
    v
}
