//! Report computations, in plain Rust over records: rent roll, occupancy, delinquency
//! and the ledger's trial balance. `crate::jobs::reports` loads the records and stores
//! the result; everything here is a pure function of its inputs.

use std::collections::{BTreeMap, HashMap, HashSet};

use chrono::NaiveDate;
use serde_json::{json, Value as Json};
use uuid::Uuid;

use super::list::{lookup, Filter, ListQuery};
use super::record::Record;
use super::registry::Collection;
use super::scopes::{self, Access};
use super::value::{money_json, Val};
use crate::error::{Error, Result};

/// What a report run is asked for.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Parameters {
    /// Only this property (absent: every property).
    pub property_id: Option<Uuid>,
    /// The day the report is as of (absent: the day it runs).
    pub as_of: Option<NaiveDate>,
}

impl Parameters {
    /// Parses `parameters` of a report: an object with only the keys above.
    pub fn parse(raw: &Val) -> Result<Parameters> {
        let obj = match raw {
            Val::Null => return Ok(Parameters::default()),
            Val::Json(Json::Object(o)) => o,
            _ => return Err(Error::validation("parameters", "must be an object")),
        };
        let mut p = Parameters::default();
        for (k, v) in obj {
            match (k.as_str(), v) {
                (_, Json::Null) => {}
                ("property_id", Json::String(s)) => {
                    p.property_id = Some(Uuid::parse_str(s).map_err(|_| Error::validation("parameters.property_id", "must be a uuid"))?);
                }
                ("as_of", Json::String(s)) => {
                    p.as_of = Some(
                        super::value::parse_date(s)
                            .ok_or_else(|| Error::validation("parameters.as_of", "must be a date, e.g. 2026-11-30"))?,
                    );
                }
                ("property_id", _) => return Err(Error::validation("parameters.property_id", "must be a uuid")),
                ("as_of", _) => return Err(Error::validation("parameters.as_of", "must be a date, e.g. 2026-11-30")),
                (other, _) => {
                    return Err(Error::validation(format!("parameters.{other}"), "is not a report parameter; allowed: property_id, as_of"))
                }
            }
        }
        Ok(p)
    }
}

/// The collections a report of `kind` aggregates. A report shows their records' amounts,
/// states and balances, so making or reading one needs read access to every one of them:
/// `reports:write` alone must not read leases through a rent roll.
pub fn aggregates(kind: &str) -> &'static [&'static str] {
    match kind {
        "rent_roll" => &["units", "leases", "charges", "invoices", "payments"],
        "occupancy" => &["units", "tenancies", "bookings"],
        "delinquency" => &["invoices"],
        "ledger" => &["accounting-entries"],
        _ => &[],
    }
}

/// Refuses, naming the first missing scope, unless `grants` may read everything a report
/// of `kind` aggregates.
pub fn require_reads(grants: &[String], kind: &str) -> Result<()> {
    match aggregates(kind).iter().find(|name| !scopes::allows(grants, name, Access::Read)) {
        None => Ok(()),
        Some(name) => {
            let scope = format!("{name}:read");
            Err(Error::InsufficientScope {
                message: format!("a {kind} report shows {name} records, which this credential cannot read; it needs `{scope}`"),
                scope,

                param: None,
            })
        }
    }
}

/// Narrows a list of `reports` (the collection, `c`) to the kinds `grants` may read in
/// full; false when that is none.
pub fn narrow_list(c: &Collection, q: &mut ListQuery, grants: &[String]) -> bool {
    let kinds: Vec<&str> = KINDS.iter().copied().filter(|k| require_reads(grants, k).is_ok()).collect();
    if kinds.len() == KINDS.len() {
        return true;
    }
    let Some(field) = lookup(c, "kind") else { return false };
    q.filters.push(Filter::one_of(field, &kinds));
    !kinds.is_empty()
}

/// Every kind of report (the registry's `reports.kind`).
pub const KINDS: [&str; 4] = ["rent_roll", "occupancy", "delinquency", "ledger"];

fn date(r: &Record, f: &str) -> Option<NaiveDate> {
    r.get(f).as_date()
}
fn uuid(r: &Record, f: &str) -> Option<Uuid> {
    r.get(f).as_uuid()
}
fn text(r: &Record, f: &str) -> Json {
    r.get(f).as_str().map_or(Json::Null, |s| Json::String(s.to_string()))
}
fn day(d: Option<NaiveDate>) -> Json {
    d.map_or(Json::Null, |d| Json::String(d.to_string()))
}
fn rate(part: usize, whole: usize) -> Json {
    if whole == 0 {
        return json!(0);
    }
    json!(((part as f64 / whole as f64) * 10_000.0).round() / 10_000.0)
}

/// Was the tenancy in the unit on the day?
fn occupying(t: &Record, on: NaiveDate) -> bool {
    matches!(t.status(), "current" | "moved_out")
        && date(t, "move_in_date").is_none_or(|d| d <= on)
        && date(t, "move_out_date").is_none_or(|d| d > on)
}

/// Was the booking's guest in the unit on the night of the day?
fn staying(b: &Record, on: NaiveDate) -> bool {
    matches!(b.status(), "checked_in" | "checked_out")
        && date(b, "check_in").is_some_and(|d| d <= on)
        && date(b, "check_out").is_some_and(|d| d > on)
}

/// Units occupied on the day, by a tenancy or a short stay.
fn occupied_units(on: NaiveDate, tenancies: &[Record], bookings: &[Record]) -> HashSet<Uuid> {
    let t = tenancies.iter().filter(|t| occupying(t, on)).filter_map(|t| uuid(t, "unit_id"));
    let b = bookings.iter().filter(|b| staying(b, on)).filter_map(|b| uuid(b, "unit_id"));
    t.chain(b).collect()
}

/// Occupancy per property and in total on the day.
pub fn occupancy(on: NaiveDate, units: &[Record], tenancies: &[Record], bookings: &[Record]) -> Json {
    let occupied = occupied_units(on, tenancies, bookings);
    let mut per: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for u in units {
        let e = per.entry(uuid(u, "property_id").map(|p| p.to_string()).unwrap_or_default()).or_default();
        e.0 += 1;
        e.1 += usize::from(occupied.contains(&u.id));
    }
    let row =
        |units: usize, occ: usize| json!({"units": units, "occupied": occ, "vacant": units - occ, "occupancy_rate": rate(occ, units)});
    let properties: Vec<Json> = per
        .iter()
        .map(|(p, (n, o))| {
            let mut r = row(*n, *o);
            r["property_id"] = json!(p);
            r
        })
        .collect();
    let (n, o) = per.values().fold((0, 0), |(a, b), (n, o)| (a + n, b + o));
    json!({"as_of": on.to_string(), "properties": properties, "total": row(n, o)})
}

/// Every unit with the lease in force on the day, its rent and its balance (charges
/// posted up to the day, less payments that succeeded against the lease's invoices).
pub fn rent_roll(on: NaiveDate, units: &[Record], leases: &[Record], charges: &[Record], invoices: &[Record], payments: &[Record]) -> Json {
    // Active on the day: started by then, and not yet ended or terminated by then.
    let in_force = |l: &&Record| {
        let ended = match l.get("ended_at") {
            Val::DateTime(t) => Some(t.date_naive()),
            _ => date(l, "end_date"),
        };
        matches!(l.status(), "active" | "ended" | "terminated")
            && date(l, "start_date").is_some_and(|d| d <= on)
            && (l.status() == "active" || ended.is_some_and(|d| d > on))
    };
    let by = |r: &Record, f: &str| matches!(r.get(f), Val::DateTime(t) if t.date_naive() <= on);
    let lease_of: HashMap<Uuid, &Record> = leases.iter().filter(in_force).filter_map(|l| Some((uuid(l, "unit_id")?, l))).collect();
    let invoice_lease: HashMap<Uuid, Uuid> = invoices.iter().filter_map(|i| Some((i.id, uuid(i, "lease_id")?))).collect();
    let mut balance: HashMap<Uuid, i64> = HashMap::new();
    for c in charges.iter().filter(|c| c.status() == "posted" && date(c, "due_date").is_some_and(|d| d <= on)) {
        if let Some(l) = uuid(c, "lease_id") {
            *balance.entry(l).or_default() += c.money("amount");
        }
    }
    // Payments that had succeeded by the day and were not reversed by then.
    for p in payments.iter().filter(|p| by(p, "succeeded_at") && !by(p, "reversed_at")) {
        if let Some(l) = uuid(p, "invoice_id").and_then(|i| invoice_lease.get(&i)) {
            *balance.entry(*l).or_default() -= p.money("amount");
        }
    }
    let mut totals: BTreeMap<String, (usize, i64, i64)> = BTreeMap::new();
    let mut rows = Vec::with_capacity(units.len());
    for u in units {
        let lease = lease_of.get(&u.id);
        let currency = lease.and_then(|l| l.currency()).map(str::to_string);
        let cur = currency.as_deref();
        let mut row = json!({
            "unit_id": u.id, "unit_number": text(u, "number"), "property_id": uuid(u, "property_id"),
            "status": if lease.is_some() { "occupied" } else { "vacant" },
            "lease_id": lease.map(|l| l.id), "lease_start": day(lease.and_then(|l| date(l, "start_date"))),
            "lease_end": day(lease.and_then(|l| date(l, "end_date"))), "currency": cur,
            "rent": Json::Null, "deposit": Json::Null, "balance": Json::Null,
        });
        if let Some(l) = lease {
            let bal = balance.get(&l.id).copied().unwrap_or(0);
            row["rent"] = money_json(l.money("rent"), cur);
            row["deposit"] = if l.get("deposit").is_null() { Json::Null } else { money_json(l.money("deposit"), cur) };
            row["balance"] = money_json(bal, cur);
            let t = totals.entry(cur.unwrap_or_default().to_string()).or_default();
            t.0 += 1;
            t.1 += l.money("rent");
            t.2 += bal;
        }
        rows.push(row);
    }
    let leased: usize = totals.values().map(|t| t.0).sum();
    let totals: Vec<Json> = totals
        .iter()
        .map(|(c, t)| json!({"currency": c, "leased_units": t.0, "rent": money_json(t.1, Some(c)), "balance": money_json(t.2, Some(c))}))
        .collect();
    json!({"as_of": on.to_string(), "units": units.len(), "leased_units": leased, "vacant_units": units.len() - leased, "rows": rows, "totals": totals})
}

const BUCKETS: [(&str, i64, i64); 4] = [("1_30", 1, 30), ("31_60", 31, 60), ("61_90", 61, 90), ("over_90", 91, i64::MAX)];

/// Open invoices past due on the day, with what is outstanding, by age.
pub fn delinquency(on: NaiveDate, invoices: &[Record]) -> Json {
    let mut rows = vec![];
    let mut totals: BTreeMap<String, [i64; 5]> = BTreeMap::new();
    for i in invoices.iter().filter(|i| i.status() == "open") {
        let Some(due) = date(i, "due_date").filter(|d| *d < on) else { continue };
        let outstanding = i.money("amount_due") - i.money("amount_paid");
        if outstanding <= 0 {
            continue;
        }
        let days = (on - due).num_days();
        let b = BUCKETS.iter().position(|(_, lo, hi)| (*lo..=*hi).contains(&days)).unwrap_or(3);
        let cur = i.currency().unwrap_or_default().to_string();
        let t = totals.entry(cur.clone()).or_default();
        t[0] += outstanding;
        t[b + 1] += outstanding;
        rows.push((
            days,
            json!({
                "invoice_id": i.id, "lease_id": uuid(i, "lease_id"), "booking_id": uuid(i, "booking_id"),
                "property_id": uuid(i, "property_id"), "due_date": due.to_string(), "days_overdue": days, "bucket": BUCKETS[b].0,
                "currency": cur, "amount_due": money_json(i.money("amount_due"), Some(&cur)),
                "amount_paid": money_json(i.money("amount_paid"), Some(&cur)), "outstanding": money_json(outstanding, Some(&cur)),
            }),
        ));
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.0));
    let totals: Vec<Json> = totals
        .iter()
        .map(|(c, t)| {
            let by: serde_json::Map<String, Json> =
                BUCKETS.iter().enumerate().map(|(k, (n, _, _))| ((*n).to_string(), money_json(t[k + 1], Some(c)))).collect();
            json!({"currency": c, "outstanding": money_json(t[0], Some(c)), "by_bucket": by})
        })
        .collect();
    json!({"as_of": on.to_string(), "invoices": rows.len(), "rows": rows.into_iter().map(|r| r.1).collect::<Vec<_>>(), "totals": totals})
}

/// One account's sums in one currency, from the ledger lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountSum {
    pub currency: String,
    pub account: String,
    pub debit: i64,
    pub credit: i64,
}

/// The trial balance: every account's debits, credits and balance, per currency, and
/// whether debits equal credits (they always must).
pub fn trial_balance(on: NaiveDate, sums: &[AccountSum]) -> Json {
    let mut by_currency: BTreeMap<&str, Vec<&AccountSum>> = BTreeMap::new();
    for s in sums {
        by_currency.entry(&s.currency).or_default().push(s);
    }
    let currencies: Vec<Json> = by_currency
        .iter()
        .map(|(cur, rows)| {
            let mut rows = rows.clone();
            rows.sort_by(|a, b| a.account.cmp(&b.account));
            let (d, c) = rows.iter().fold((0i64, 0i64), |(d, c), r| (d + r.debit, c + r.credit));
            let m = |v: i64| money_json(v, Some(cur));
            let accounts: Vec<Json> = rows
                .iter()
                .map(|r| json!({"account": r.account, "debit": m(r.debit), "credit": m(r.credit), "balance": m(r.debit - r.credit)}))
                .collect();
            json!({"currency": cur, "accounts": accounts, "debit": m(d), "credit": m(c), "balanced": d == c})
        })
        .collect();
    let balanced = currencies.iter().all(|c| c["balanced"] == json!(true));
    json!({"as_of": on.to_string(), "currencies": currencies, "balanced": balanced})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_are_checked() {
        assert_eq!(Parameters::parse(&Val::Null).unwrap(), Parameters::default());
        let p = Parameters::parse(&Val::Json(json!({"as_of": "2026-12-01"}))).unwrap();
        assert_eq!(p.as_of, NaiveDate::from_ymd_opt(2026, 12, 1));
        assert!(Parameters::parse(&Val::Json(json!({"period": "x"}))).is_err());
        assert!(Parameters::parse(&Val::Json(json!({"as_of": "soon"}))).is_err());
    }

    #[test]
    fn every_kind_needs_the_reads_of_what_it_aggregates() {
        use crate::domain::registry::Ty;
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        // KINDS is the registry's list, and no kind reads nothing: a kind added without
        // its reads would be readable by `reports:write` alone.
        let reports = crate::domain::collections::collection("reports").unwrap();
        let Some(Ty::Enum(registered)) = reports.field("kind").map(|f| f.ty) else { panic!("reports.kind is an enum") };
        assert_eq!(registered, &KINDS[..]);
        for kind in KINDS {
            assert!(!aggregates(kind).is_empty(), "{kind}");
            for name in aggregates(kind) {
                assert!(crate::domain::collections::collection(name).is_some(), "{kind}: {name}");
            }
            assert!(require_reads(&s(&["reports:write"]), kind).is_err(), "{kind}");
            assert!(require_reads(&s(&["reports:read", "*:read"]), kind).is_ok(), "{kind}");
        }
        let Err(Error::InsufficientScope { scope, .. }) = require_reads(&s(&["reports:write", "units:read", "leases:read"]), "rent_roll")
        else {
            panic!("refused")
        };
        assert_eq!(scope, "charges:read", "the first missing read is named");
        assert!(require_reads(&s(&["invoices:write"]), "delinquency").is_ok(), "a write scope reads");

        let mut q = ListQuery::parse(reports, &[]).unwrap();
        assert!(narrow_list(reports, &mut q, &s(&["*:read"])) && q.filters.is_empty(), "every kind");
        assert!(!narrow_list(reports, &mut q, &s(&["reports:read"])), "no kind");
        let mut q = ListQuery::parse(reports, &[]).unwrap();
        assert!(narrow_list(reports, &mut q, &s(&["reports:read", "invoices:read"])) && q.filters.len() == 1, "delinquency only");
    }

    #[test]
    fn trial_balance_sums_per_currency() {
        let s = |a: &str, d, c| AccountSum { currency: "USD".into(), account: a.into(), debit: d, credit: c };
        let tb = trial_balance(
            NaiveDate::from_ymd_opt(2026, 1, 1).unwrap(),
            &[s("cash", 500, 0), s("accounts_receivable", 1000, 500), s("rent_income", 0, 1000)],
        );
        assert_eq!(tb["balanced"], json!(true));
        assert_eq!(tb["currencies"][0]["debit"], json!(15));
        assert_eq!(tb["currencies"][0]["accounts"][0]["account"], json!("accounts_receivable"));
        assert_eq!(tb["currencies"][0]["accounts"][0]["balance"], json!(5));
    }
}
