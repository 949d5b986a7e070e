//! A sandbox worth trying: the small portfolio the demo tenant of a first start gets (and
//! a sandbox reset, on request: `setup`), made through the operations like any write, so that the
//! README's first call returns data and the first test payment has an invoice to pay.
//!
//! One property with three units, a published listing of the vacant one, an active
//! lease of another from the first of this month for a year, whose rent Gable bills at
//! once (a charge and its open invoice), and a tenancy.

use chrono::{Datelike, Duration};
use serde_json::{json, Map, Value as Json};
use uuid::Uuid;

use super::time::leases;
use super::{Actor, Operations, Work};
use crate::domain::collections::named;
use crate::domain::reach::Reach;
use crate::error::Result;

/// What the portfolio holds.
#[derive(Debug, serde::Serialize)]
pub struct Portfolio {
    pub property_id: Uuid,
    pub unit_ids: Vec<Uuid>,
    pub listing_id: Uuid,
    pub lease_id: Uuid,
    /// Rent periods billed for the lease (its charges and open invoices).
    pub rent_billed: usize,
}

async fn make(w: &mut Work, name: &str, body: Json) -> Result<Uuid> {
    let c = named(name)?;
    Ok(w.create(c, &body).await?.record.id)
}

async fn act(w: &mut Work, name: &str, id: Uuid, action: &str) -> Result<()> {
    w.act_named(named(name)?, action, id, &Map::new()).await?;
    Ok(())
}

/// Makes the portfolio in a tenant's sandbox, in one transaction, then bills its rent.
pub async fn portfolio(ops: &Operations, tenant: Uuid) -> Result<Portfolio> {
    let mut w = ops.begin(&Actor::system(tenant, false)).await?;
    let today = w.now().date_naive();
    let month_start = today.with_day(1).unwrap_or(today);
    let year_end = month_start.checked_add_months(chrono::Months::new(12)).unwrap_or(month_start) - Duration::days(1);
    let property = make(
        &mut w,
        "properties",
        json!({
            "name": "Maple Court", "kind": "residential",
            "address": { "line1": "1 Maple St", "city": "Portland", "region": "OR", "postal_code": "97201", "country": "US" },
        }),
    )
    .await?;
    let mut units = vec![];
    for (number, bedrooms, rent) in [("1A", 2, "1450.00"), ("1B", 1, "1150.00"), ("2A", 2, "1500.00")] {
        let body = json!({ "property_id": property, "number": number, "bedrooms": bedrooms, "bathrooms": 1, "market_rent": rent, "currency": "USD" });
        units.push(make(&mut w, "units", body).await?);
    }
    let listing = make(
        &mut w,
        "listings",
        json!({
            "unit_id": units[2], "title": "Bright two-bedroom at Maple Court", "rent": "1500.00", "currency": "USD",
            "available_on": (today + Duration::days(14)).to_string(),
        }),
    )
    .await?;
    act(&mut w, "listings", listing, "publish").await?;
    let lease = make(
        &mut w,
        "leases",
        json!({
            "unit_id": units[0], "start_date": month_start.to_string(), "end_date": year_end.to_string(),
            "rent": "1450.00", "deposit": "1450.00", "currency": "USD", "rent_due_day": 1,
        }),
    )
    .await?;
    let signature =
        make(&mut w, "signatures", json!({ "lease_id": lease, "signer_name": "Riley Resident", "signer_email": "riley@example.com" }))
            .await?;
    act(&mut w, "leases", lease, "send").await?;
    act(&mut w, "signatures", signature, "sign").await?;
    act(&mut w, "leases", lease, "activate").await?;
    let now = w.now();
    w.commit().await?;
    let rent_billed = leases::bill_rent(ops, now, Reach::Sandbox(tenant)).await?;
    Ok(Portfolio { property_id: property, unit_ids: units, listing_id: listing, lease_id: lease, rent_billed })
}
