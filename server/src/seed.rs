//! `gable seed`: a realistic generated portfolio for demos and benchmarks.
//!
//! For `size` units: one property per 40 units, two buildings per property, a lease on
//! 90 % of units (most active, some ended or draft), a tenancy per active lease, one
//! rent charge per lease, a listing per vacant unit, a work order per 10 units, a
//! dozen vendors and a few owners.

use std::collections::HashMap;

use chrono::{Duration, NaiveDate, Utc};
use indicatif::{ProgressBar, ProgressStyle};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::json;
use uuid::Uuid;

use crate::domain::collections::collection;
use crate::domain::value::Val;
use crate::store::records::NewRow;
use crate::store::Store;

const STREETS: &[&str] = &["Maple", "Harbor", "Linden", "Cedar", "Willow", "Station", "Mill", "Orchard", "Bridge", "Park"];
const CITIES: &[(&str, &str, &str)] =
    &[("Portland", "OR", "US"), ("Austin", "TX", "US"), ("Denver", "CO", "US"), ("Raleigh", "NC", "US"), ("Boise", "ID", "US")];
const FIRST: &[&str] = &["Ana", "Ben", "Chloe", "Dev", "Elif", "Farid", "Grace", "Hugo", "Iris", "Jon", "Kemi", "Luca"];
const LAST: &[&str] = &["Okafor", "Nguyen", "Silva", "Berg", "Kowalski", "Haddad", "Moreau", "Tanaka", "Reyes", "Walsh"];
const TRADES: &[&str] = &["plumbing", "electrical", "hvac", "painting", "cleaning", "landscaping"];

#[derive(Debug, Default, serde::Serialize)]
pub struct Counts {
    pub owners: usize,
    pub vendors: usize,
    pub properties: usize,
    pub buildings: usize,
    pub units: usize,
    pub listings: usize,
    pub leases: usize,
    pub tenancies: usize,
    pub charges: usize,
    pub workorders: usize,
}

/// Rows go to the database in batches of this many units' worth of records.
const BATCH_UNITS: u64 = 2_000;

pub async fn seed(store: &Store, tenant: Uuid, livemode: bool, size: u64, random_seed: u64, progress: bool) -> anyhow::Result<Counts> {
    let mut rng = StdRng::seed_from_u64(random_seed);
    let mut counts = Counts::default();
    let bar = if progress && size >= 1_000 {
        let b = ProgressBar::new(size);
        b.set_style(
            ProgressStyle::with_template("{spinner} seeding [{bar:40}] {pos}/{len} units ({per_sec}, eta {eta})")?.progress_chars("=> "),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let now = Utc::now();
    let row = |values: HashMap<&'static str, Val>, age_days: i64| NewRow {
        id: Uuid::now_v7(),
        created_at: now - Duration::days(age_days),
        values,
    };
    let s = |v: &str| Val::Str(v.to_string());
    let person = |rng: &mut StdRng| format!("{} {}", FIRST[rng.gen_range(0..FIRST.len())], LAST[rng.gen_range(0..LAST.len())]);

    let owners: Vec<NewRow> =
        (0..(size / 200 + 1)).map(|_| row(HashMap::from([("name", Val::Str(person(&mut rng))), ("kind", s("person"))]), 900)).collect();
    let vendors: Vec<NewRow> = (0..12)
        .map(|i| {
            let trade = TRADES[i % TRADES.len()];
            row(
                HashMap::from([
                    ("name", Val::Str(format!("{} {} Co.", LAST[i % LAST.len()], trade))),
                    ("trade", s(trade)),
                    ("status", s("active")),
                ]),
                800,
            )
        })
        .collect();
    insert(store, tenant, livemode, "owners", &owners).await?;
    insert(store, tenant, livemode, "vendors", &vendors).await?;
    counts.owners = owners.len();
    counts.vendors = vendors.len();

    let today = now.date_naive();
    let mut done = 0u64;
    while done < size {
        let n = BATCH_UNITS.min(size - done);
        let mut b = Batch::default();
        let mut current_property: Option<(Uuid, [Uuid; 2])> = None;
        for i in 0..n {
            let global = done + i;
            if global.is_multiple_of(40) || current_property.is_none() {
                let (city, region, country) = CITIES[rng.gen_range(0..CITIES.len())];
                let pid = Uuid::now_v7();
                let address = json!({"line1": format!("{} {} St", rng.gen_range(1..2000), STREETS[rng.gen_range(0..STREETS.len())]), "city": city, "region": region, "postal_code": format!("{:05}", rng.gen_range(10000..99999)), "country": country});
                let owner = owners[rng.gen_range(0..owners.len())].id;
                b.properties.push(NewRow {
                    id: pid,
                    created_at: now - Duration::days(700),
                    values: HashMap::from([
                        ("name", Val::Str(format!("{} {} Apartments", STREETS[rng.gen_range(0..STREETS.len())], city))),
                        ("kind", s(["residential", "residential", "student", "mixed"][rng.gen_range(0..4)])),
                        ("address", Val::Json(address)),
                        ("owner_id", Val::Uuid(owner)),
                        ("timezone", s("UTC")),
                        ("status", s("active")),
                    ]),
                });
                let bids = [Uuid::now_v7(), Uuid::now_v7()];
                for (k, bid) in bids.iter().enumerate() {
                    b.buildings.push(NewRow {
                        id: *bid,
                        created_at: now - Duration::days(700),
                        values: HashMap::from([
                            ("property_id", Val::Uuid(pid)),
                            ("name", Val::Str(format!("Building {}", ["A", "B"][k]))),
                            ("floors", Val::Int(rng.gen_range(2..12))),
                        ]),
                    });
                }
                current_property = Some((pid, bids));
            }
            let (pid, bids) = current_property.expect("set above");
            let uid = Uuid::now_v7();
            let bedrooms = rng.gen_range(0..4);
            let rent_minor: i64 = (900 + bedrooms * 450 + rng.gen_range(0..400)) * 100;
            b.units.push(NewRow {
                id: uid,
                created_at: now - Duration::days(690),
                values: HashMap::from([
                    ("property_id", Val::Uuid(pid)),
                    ("building_id", Val::Uuid(bids[(global % 2) as usize])),
                    ("number", Val::Str(format!("{}{:02}", global % 40 / 10 + 1, global % 10 + 1))),
                    ("bedrooms", Val::Int(bedrooms)),
                    ("bathrooms", Val::Num(if bedrooms > 1 { 2.0 } else { 1.0 })),
                    ("area", Val::Num(35.0 + 25.0 * bedrooms as f64)),
                    ("area_unit", s("sqm")),
                    ("market_rent", Val::Money(rent_minor)),
                    ("currency", s("USD")),
                ]),
            });
            if rng.gen_bool(0.9) {
                let lid = Uuid::now_v7();
                let start = today - Duration::days(rng.gen_range(0..700));
                let end = start + Duration::days(365);
                let status = if rng.gen_bool(0.05) {
                    "draft"
                } else if end < today {
                    "ended"
                } else {
                    "active"
                };
                let age = (today - start).num_days().max(0);
                b.leases.push(NewRow {
                    id: lid,
                    created_at: now - Duration::days(age + 14) + Duration::seconds(rng.gen_range(0..86_400)),
                    values: HashMap::from([
                        ("unit_id", Val::Uuid(uid)),
                        ("property_id", Val::Uuid(pid)),
                        ("start_date", Val::Date(start)),
                        ("end_date", Val::Date(end)),
                        ("rent", Val::Money(rent_minor)),
                        ("deposit", Val::Money(rent_minor)),
                        ("currency", s("USD")),
                        ("rent_due_day", Val::Int(1)),
                        ("status", s(status)),
                    ]),
                });
                if status == "active" {
                    b.tenancies.push(NewRow {
                        id: Uuid::now_v7(),
                        created_at: now - Duration::days(age),
                        values: HashMap::from([
                            ("lease_id", Val::Uuid(lid)),
                            ("unit_id", Val::Uuid(uid)),
                            ("property_id", Val::Uuid(pid)),
                            ("occupants", Val::Json(json!([{ "name": person(&mut rng) }]))),
                            ("move_in_date", Val::Date(start)),
                            ("status", s("current")),
                        ]),
                    });
                    let due = first_of_month(today);
                    b.charges.push(NewRow {
                        id: Uuid::now_v7(),
                        created_at: now - Duration::days(3),
                        values: HashMap::from([
                            ("lease_id", Val::Uuid(lid)),
                            ("property_id", Val::Uuid(pid)),
                            ("kind", s("rent")),
                            ("amount", Val::Money(rent_minor)),
                            ("currency", s("USD")),
                            ("due_date", Val::Date(due)),
                            ("description", Val::Str(format!("Rent {}", due.format("%B %Y")))),
                        ]),
                    });
                }
            } else {
                b.listings.push(NewRow {
                    id: Uuid::now_v7(),
                    created_at: now - Duration::days(10),
                    values: HashMap::from([
                        ("unit_id", Val::Uuid(uid)),
                        ("property_id", Val::Uuid(pid)),
                        ("title", Val::Str(format!("{bedrooms}-bedroom apartment"))),
                        ("rent", Val::Money(rent_minor)),
                        ("currency", s("USD")),
                        ("available_on", Val::Date(today + Duration::days(14))),
                        ("status", s("published")),
                    ]),
                });
            }
            if global.is_multiple_of(10) {
                b.workorders.push(NewRow {
                    id: Uuid::now_v7(),
                    created_at: now - Duration::days(rng.gen_range(0..60)),
                    values: HashMap::from([
                        ("property_id", Val::Uuid(pid)),
                        ("unit_id", Val::Uuid(uid)),
                        ("title", s(["Leaking tap", "No hot water", "Broken window latch", "Heating not working"][rng.gen_range(0..4)])),
                        ("category", s("plumbing")),
                        ("priority", s(["low", "normal", "high"][rng.gen_range(0..3)])),
                        ("vendor_id", Val::Uuid(vendors[rng.gen_range(0..vendors.len())].id)),
                        ("status", s("open")),
                    ]),
                });
            }
        }
        b.write(store, tenant, livemode, &mut counts).await?;
        done += n;
        bar.set_position(done);
    }
    bar.finish_and_clear();
    Ok(counts)
}

fn first_of_month(d: NaiveDate) -> NaiveDate {
    NaiveDate::from_ymd_opt(d.year_ce().1 as i32, d.month0() + 1, 1).unwrap_or(d)
}
use chrono::Datelike;

#[derive(Default)]
struct Batch {
    properties: Vec<NewRow>,
    buildings: Vec<NewRow>,
    units: Vec<NewRow>,
    listings: Vec<NewRow>,
    leases: Vec<NewRow>,
    tenancies: Vec<NewRow>,
    charges: Vec<NewRow>,
    workorders: Vec<NewRow>,
}

impl Batch {
    /// Parents before children, so foreign keys hold at every statement.
    async fn write(self, store: &Store, tenant: Uuid, livemode: bool, counts: &mut Counts) -> anyhow::Result<()> {
        for (name, rows, count) in [
            ("properties", &self.properties, &mut counts.properties),
            ("buildings", &self.buildings, &mut counts.buildings),
            ("units", &self.units, &mut counts.units),
            ("listings", &self.listings, &mut counts.listings),
            ("leases", &self.leases, &mut counts.leases),
            ("tenancies", &self.tenancies, &mut counts.tenancies),
            ("charges", &self.charges, &mut counts.charges),
            ("workorders", &self.workorders, &mut counts.workorders),
        ] {
            insert(store, tenant, livemode, name, rows).await?;
            *count += rows.len();
        }
        Ok(())
    }
}

async fn insert(store: &Store, tenant: Uuid, livemode: bool, name: &str, rows: &[NewRow]) -> anyhow::Result<()> {
    if rows.is_empty() {
        return Ok(());
    }
    let c = collection(name).ok_or_else(|| anyhow::anyhow!("no collection {name}"))?;
    store.insert_many(tenant, livemode, c, rows).await?;
    Ok(())
}
