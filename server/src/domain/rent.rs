//! Recurring rent: the periods an active lease bills.
//!
//! A lease bills one charge of its full `rent` per calendar month, from the month of its
//! `start_date` to the month of its `end_date` (or on, for a periodic lease without one).
//! Each month's charge is due on the lease's `rent_due_day` (1–28, so every month has
//! it); in the first month, when that day falls before the start date, the charge is due
//! on the start date. There is no proration: a lease that starts or ends mid-month bills
//! that month in full (what most residential leases say; a partial first month is a
//! hand-made charge or a credit). A period whose due date falls after the end date is not
//! billed. Periods are named `YYYY-MM`: the occurrence key that makes each billed once.

use chrono::{Datelike, Months, NaiveDate};

/// One month of rent: its name and due date.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Period {
    pub name: String,
    pub due: NaiveDate,
}

/// The periods due on or before `until` and after `after` (the due date of the last
/// period billed, if any), in order.
pub fn periods(start: NaiveDate, end: Option<NaiveDate>, rent_day: u32, after: Option<NaiveDate>, until: NaiveDate) -> Vec<Period> {
    let rent_day = rent_day.clamp(1, 28);
    let mut out = Vec::new();
    let Some(first_month) = start.with_day(1) else { return out };
    for k in 0.. {
        let Some(month) = first_month.checked_add_months(Months::new(k)) else { break };
        let Some(mut due) = month.with_day(rent_day) else { break };
        if k == 0 && due < start {
            due = start;
        }
        if due > until || end.is_some_and(|e| due > e) {
            break;
        }
        if after.is_some_and(|a| due <= a) {
            continue;
        }
        out.push(Period { name: format!("{:04}-{:02}", month.year(), month.month()), due });
    }
    out
}

/// The due date of the first period after `after` (of any period, without one), if the
/// lease has one.
pub fn next_due(start: NaiveDate, end: Option<NaiveDate>, rent_day: u32, after: Option<NaiveDate>) -> Option<NaiveDate> {
    let from = after.unwrap_or(start);
    // The next period is due within two months of the last one (or of the start).
    periods(start, end, rent_day, after, from + chrono::Duration::days(62)).first().map(|p| p.due)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> NaiveDate {
        s.parse().unwrap()
    }

    fn names(p: &[Period]) -> Vec<(String, String)> {
        p.iter().map(|p| (p.name.clone(), p.due.to_string())).collect()
    }

    #[test]
    fn the_next_period_after_the_last_billed() {
        assert_eq!(next_due(d("2027-01-15"), None, 5, None), Some(d("2027-01-15")));
        assert_eq!(next_due(d("2027-01-15"), None, 5, Some(d("2027-01-15"))), Some(d("2027-02-05")));
        assert_eq!(next_due(d("2027-01-28"), None, 1, Some(d("2027-01-28"))), Some(d("2027-02-01")));
        assert_eq!(next_due(d("2027-01-01"), Some(d("2027-12-31")), 5, Some(d("2027-12-05"))), None);
    }

    #[test]
    fn a_year_of_monthly_rent_on_the_rent_day() {
        let p = periods(d("2027-01-01"), Some(d("2027-12-31")), 1, None, d("2030-01-01"));
        assert_eq!(p.len(), 12);
        assert_eq!(names(&p[..2]), vec![("2027-01".into(), "2027-01-01".into()), ("2027-02".into(), "2027-02-01".into())]);
        assert_eq!(names(&p[11..]), vec![("2027-12".into(), "2027-12-01".into())]);
    }

    #[test]
    fn the_first_month_is_due_on_the_start_date_when_the_rent_day_has_passed() {
        let p = periods(d("2027-01-15"), Some(d("2027-03-20")), 5, None, d("2030-01-01"));
        assert_eq!(
            names(&p),
            vec![("2027-01".into(), "2027-01-15".into()), ("2027-02".into(), "2027-02-05".into()), ("2027-03".into(), "2027-03-05".into())]
        );
        // A rent day after the start date in the first month stays the rent day.
        let p = periods(d("2027-01-03"), None, 10, None, d("2027-02-01"));
        assert_eq!(names(&p), vec![("2027-01".into(), "2027-01-10".into())]);
    }

    #[test]
    fn billing_resumes_after_the_last_period_and_stops_at_the_horizon_or_the_end() {
        let p = periods(d("2027-01-01"), Some(d("2027-06-30")), 1, Some(d("2027-02-01")), d("2027-04-10"));
        assert_eq!(names(&p), vec![("2027-03".into(), "2027-03-01".into()), ("2027-04".into(), "2027-04-01".into())]);
        // A period due after the end date is not billed.
        let p = periods(d("2027-01-10"), Some(d("2027-03-05")), 20, None, d("2030-01-01"));
        assert_eq!(names(&p), vec![("2027-01".into(), "2027-01-20".into()), ("2027-02".into(), "2027-02-20".into())]);
        // A periodic lease bills on, up to the horizon.
        assert_eq!(periods(d("2027-01-01"), None, 1, None, d("2029-12-31")).len(), 36);
        assert!(periods(d("2027-01-01"), None, 1, None, d("2026-12-31")).is_empty());
    }
}
