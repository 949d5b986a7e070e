//! Calendar dates without a library: the booking calendar's month grids, stays and the
//! long forms the flows show ("Tuesday, December 1, 2026"). Plain Rust, tested on the host.

use std::fmt;

const MONTHS: [&str; 12] =
    ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"];
/// Weekday names, Sunday first (the calendar's weeks start on Sunday).
pub const WEEKDAYS: [&str; 7] = ["Sunday", "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday"];

/// A day of the proleptic Gregorian calendar, as days since 1970-01-01.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Debug)]
pub struct Date(i32);

fn is_leap(y: i32) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

pub fn days_in_month(year: i32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

impl Date {
    pub fn from_ymd(y: i32, m: u32, d: u32) -> Option<Date> {
        if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) || !(1..=9999).contains(&y) {
            return None;
        }
        // Howard Hinnant's days_from_civil.
        let y = if m <= 2 { y - 1 } else { y };
        let era = y.div_euclid(400);
        let yoe = y - era * 400;
        let mp = (m + 9) % 12;
        let doy = (153 * mp + 2) / 5 + d - 1;
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy as i32;
        Some(Date(era * 146097 + doe - 719468))
    }

    /// `YYYY-MM-DD`, exactly (what `<input type=date>` and the API use). A longer text
    /// (a timestamp) is read by its first ten characters.
    pub fn parse(s: &str) -> Option<Date> {
        let s = s.trim();
        let b = s.as_bytes();
        if b.len() < 10 || b[4] != b'-' || b[7] != b'-' || (b.len() > 10 && b[10] != b'T') {
            return None;
        }
        let num =
            |r: std::ops::Range<usize>| s.get(r).filter(|p| p.bytes().all(|c| c.is_ascii_digit())).and_then(|p| p.parse::<u32>().ok());
        Date::from_ymd(num(0..4)? as i32, num(5..7)?, num(8..10)?)
    }

    pub fn ymd(self) -> (i32, u32, u32) {
        // Howard Hinnant's civil_from_days.
        let z = self.0 + 719468;
        let era = z.div_euclid(146097);
        let doe = z - era * 146097;
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
        (y, m, d)
    }

    /// 0 = Sunday … 6 = Saturday.
    pub fn weekday(self) -> usize {
        // 1970-01-01 was a Thursday.
        (self.0 + 4).rem_euclid(7) as usize
    }

    pub fn add_days(self, n: i32) -> Date {
        Date(self.0 + n)
    }

    /// Days from `self` to `later` (negative when `later` is earlier).
    pub fn days_until(self, later: Date) -> i32 {
        later.0 - self.0
    }

    pub fn month(self) -> Month {
        let (year, month, _) = self.ymd();
        Month { year, month }
    }

    /// "December 1, 2026".
    pub fn long(self) -> String {
        let (y, m, d) = self.ymd();
        format!("{} {d}, {y}", MONTHS[m as usize - 1])
    }

    /// "Tuesday, December 1, 2026".
    pub fn full(self) -> String {
        format!("{}, {}", WEEKDAYS[self.weekday()], self.long())
    }
}

/// `YYYY-MM-DD`.
impl fmt::Display for Date {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (y, m, d) = self.ymd();
        write!(f, "{y:04}-{m:02}-{d:02}")
    }
}

/// A date of the API (`2026-12-01` or a timestamp) in its long form; other text as it is.
pub fn long(s: &str) -> String {
    Date::parse(s).map(Date::long).unwrap_or_else(|| s.to_string())
}

/// A month of a year: one page of the calendar.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub struct Month {
    pub year: i32,
    pub month: u32,
}

impl Month {
    pub fn first(self) -> Date {
        Date::from_ymd(self.year, self.month, 1).unwrap_or(Date(0))
    }

    pub fn last(self) -> Date {
        self.first().add_days(days_in_month(self.year, self.month) as i32 - 1)
    }

    pub fn next(self) -> Month {
        if self.month == 12 {
            Month { year: self.year + 1, month: 1 }
        } else {
            Month { year: self.year, month: self.month + 1 }
        }
    }

    pub fn prev(self) -> Month {
        if self.month == 1 {
            Month { year: self.year - 1, month: 12 }
        } else {
            Month { year: self.year, month: self.month - 1 }
        }
    }

    /// "December 2026".
    pub fn name(self) -> String {
        format!("{} {}", MONTHS[self.month as usize - 1], self.year)
    }

    /// The month's weeks, Sunday first; `None` pads the days of other months.
    pub fn weeks(self) -> Vec<[Option<Date>; 7]> {
        let first = self.first();
        let last = self.last();
        let mut weeks = vec![];
        let mut day = first.add_days(-(first.weekday() as i32));
        while day <= last {
            let mut week = [None; 7];
            for slot in week.iter_mut() {
                if day >= first && day <= last {
                    *slot = Some(day);
                }
                day = day.add_days(1);
            }
            weeks.push(week);
        }
        weeks
    }
}

/// Nights `[start, end)` that a booking holds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct Nights {
    pub start: Date,
    pub end: Date,
}

impl Nights {
    pub fn contains(&self, night: Date) -> bool {
        self.start <= night && night < self.end
    }
}

/// Whether the night of `day` is held by a booking.
pub fn is_blocked(day: Date, taken: &[Nights]) -> bool {
    taken.iter().any(|n| n.contains(day))
}

/// The first held range a stay `[check_in, check_out)` would share a night with.
pub fn conflict(check_in: Date, check_out: Date, taken: &[Nights]) -> Option<Nights> {
    taken.iter().filter(|n| n.start < check_out && check_in < n.end).min_by_key(|n| n.start).copied()
}

/// The day after `check_in` on which the next held range starts: its night is taken, but
/// a stay from `check_in` may end that morning.
pub fn next_block_start(check_in: Date, taken: &[Nights]) -> Option<Date> {
    taken.iter().map(|n| n.start).filter(|s| *s > check_in).min()
}

/// What a day of the booking calendar offers.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Day {
    /// Before today: not bookable.
    Past,
    /// Its night is held by a booking.
    Taken,
    /// Its night is held, but a stay from the chosen check-in may end that morning.
    DepartureOnly,
    /// Free.
    Open,
}

impl Day {
    pub fn enabled(self) -> bool {
        matches!(self, Day::Open | Day::DepartureOnly)
    }
}

/// The state of `day`, with a check-in chosen (and no check-out yet) or not.
pub fn day_state(day: Date, today: Date, taken: &[Nights], check_in: Option<Date>, check_out: Option<Date>) -> Day {
    if day < today {
        Day::Past
    } else if is_blocked(day, taken) {
        match (check_in, check_out) {
            (Some(i), None) if next_block_start(i, taken) == Some(day) && !is_blocked(i, taken) => Day::DepartureOnly,
            _ => Day::Taken,
        }
    } else {
        Day::Open
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        Date::parse(s).unwrap()
    }

    #[test]
    fn round_trips_and_weekdays() {
        assert_eq!(d("1970-01-01"), Date(0));
        assert_eq!(d("2026-12-01").to_string(), "2026-12-01");
        assert_eq!(d("2000-02-29").to_string(), "2000-02-29");
        assert_eq!(d("2026-12-01").full(), "Tuesday, December 1, 2026");
        assert_eq!(d("2026-11-25").full(), "Wednesday, November 25, 2026");
        assert_eq!(d("2024-02-29").add_days(1).to_string(), "2024-03-01");
        assert_eq!(d("2026-12-31").add_days(1).to_string(), "2027-01-01");
        assert_eq!(d("2026-11-25").days_until(d("2026-12-01")), 6);
        for n in -800..800 {
            let x = Date(20000 + n);
            assert_eq!(Date::parse(&x.to_string()), Some(x));
        }
    }

    #[test]
    fn parse_refuses_what_is_not_a_date() {
        assert_eq!(Date::parse("2026-02-29"), None);
        assert_eq!(Date::parse("2026-13-01"), None);
        assert_eq!(Date::parse("2026-1-01"), None);
        assert_eq!(Date::parse(""), None);
        assert_eq!(Date::parse("2026-12-01x"), None);
        assert_eq!(Date::parse("2026-12-01T10:00:00Z"), Some(d("2026-12-01")));
        assert_eq!(long("2026-12-01T10:00:00.123456Z"), "December 1, 2026");
        assert_eq!(long("soon"), "soon");
    }

    #[test]
    fn month_grid_starts_on_sunday() {
        let m = d("2026-12-15").month();
        assert_eq!(m.name(), "December 2026");
        let w = m.weeks();
        assert_eq!(w.len(), 5);
        assert_eq!(w[0][0], None);
        assert_eq!(w[0][2], Some(d("2026-12-01")));
        assert_eq!(w[4][4], Some(d("2026-12-31")));
        assert_eq!(w[4][5], None);
        assert_eq!(m.next().name(), "January 2027");
        assert_eq!(m.next().prev(), m);
        assert_eq!(Month { year: 2027, month: 1 }.prev().name(), "December 2026");
        // February 2026 starts on a Sunday and fills exactly four weeks.
        assert_eq!(Month { year: 2026, month: 2 }.weeks().len(), 4);
    }

    #[test]
    fn stays_and_held_nights() {
        let taken = [Nights { start: d("2026-12-01"), end: d("2026-12-04") }, Nights { start: d("2026-12-10"), end: d("2026-12-12") }];
        assert!(is_blocked(d("2026-12-01"), &taken));
        assert!(is_blocked(d("2026-12-03"), &taken));
        assert!(!is_blocked(d("2026-12-04"), &taken));
        assert_eq!(conflict(d("2026-11-28"), d("2026-12-01"), &taken), None);
        assert_eq!(conflict(d("2026-11-28"), d("2026-12-02"), &taken), Some(taken[0]));
        assert_eq!(conflict(d("2026-12-04"), d("2026-12-10"), &taken), None);
        assert_eq!(conflict(d("2026-12-04"), d("2026-12-20"), &taken), Some(taken[1]));
        assert_eq!(next_block_start(d("2026-11-28"), &taken), Some(d("2026-12-01")));
        assert_eq!(next_block_start(d("2026-12-05"), &taken), Some(d("2026-12-10")));
        assert_eq!(next_block_start(d("2026-12-12"), &taken), None);
        let today = d("2026-11-25");
        assert_eq!(day_state(d("2026-11-24"), today, &taken, None, None), Day::Past);
        assert_eq!(day_state(d("2026-11-25"), today, &taken, None, None), Day::Open);
        assert_eq!(day_state(d("2026-12-01"), today, &taken, None, None), Day::Taken);
        assert_eq!(day_state(d("2026-12-01"), today, &taken, Some(d("2026-11-28")), None), Day::DepartureOnly);
        assert_eq!(day_state(d("2026-12-02"), today, &taken, Some(d("2026-11-28")), None), Day::Taken);
        assert_eq!(day_state(d("2026-12-01"), today, &taken, Some(d("2026-11-28")), Some(d("2026-11-30"))), Day::Taken);
        assert!(Day::DepartureOnly.enabled() && !Day::Taken.enabled() && !Day::Past.enabled());
    }
}
