//! Typed field values, and their conversion from and to JSON.

use chrono::{DateTime, Datelike, NaiveDate, NaiveTime, SecondsFormat, Timelike, Utc};
use serde_json::{Map, Number, Value as Json};
use uuid::Uuid;

use super::registry::{Field, JsonShape, Ty};
use crate::error::{Error, Result};

/// One field's value in its typed form, as stored.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Null,
    Str(String),
    Int(i64),
    Num(f64),
    /// Integer minor units of the record's currency.
    Money(i64),
    Bool(bool),
    Date(NaiveDate),
    DateTime(DateTime<Utc>),
    Uuid(Uuid),
    Json(Json),
}

impl Val {
    pub fn is_null(&self) -> bool {
        matches!(self, Val::Null)
    }
    pub fn as_uuid(&self) -> Option<Uuid> {
        match self {
            Val::Uuid(u) => Some(*u),
            _ => None,
        }
    }
    pub fn as_date(&self) -> Option<NaiveDate> {
        match self {
            Val::Date(d) => Some(*d),
            _ => None,
        }
    }
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Val::Int(i) => Some(*i),
            _ => None,
        }
    }
    pub fn as_datetime(&self) -> Option<DateTime<Utc>> {
        match self {
            Val::DateTime(t) => Some(*t),
            _ => None,
        }
    }
}

/// RFC 3339 UTC with microseconds: fixed width, so its text order is its time order.
pub fn format_datetime(t: &DateTime<Utc>) -> String {
    match datetime_text(t) {
        Some(b) => b.iter().map(|&c| c as char).collect(),
        None => t.to_rfc3339_opts(SecondsFormat::Micros, true),
    }
}

/// [`format_datetime`]'s text on the stack, for years 0 to 9999 (every time Gable keeps):
/// a page renders two or more per record, and formatting through `chrono` was a tenth of
/// rendering one. `None` for a time outside them (or a leap second), which `chrono` writes.
fn datetime_text(t: &DateTime<Utc>) -> Option<[u8; 27]> {
    let micros = t.nanosecond() / 1_000;
    if !(0..=9999).contains(&t.year()) || micros >= 1_000_000 {
        return None;
    }
    let mut b = *b"0000-00-00T00:00:00.000000Z";
    digits(&mut b[0..4], t.year() as u32);
    digits(&mut b[5..7], t.month());
    digits(&mut b[8..10], t.day());
    digits(&mut b[11..13], t.hour());
    digits(&mut b[14..16], t.minute());
    digits(&mut b[17..19], t.second());
    digits(&mut b[20..26], micros);
    Some(b)
}

/// `YYYY-MM-DD` on the stack, for years 0 to 9999.
fn date_text(d: &NaiveDate) -> Option<[u8; 10]> {
    if !(0..=9999).contains(&d.year()) {
        return None;
    }
    let mut b = *b"0000-00-00";
    digits(&mut b[0..4], d.year() as u32);
    digits(&mut b[5..7], d.month());
    digits(&mut b[8..10], d.day());
    Some(b)
}

/// Writes `v` into `out` in decimal, zero-padded to its width.
fn digits(out: &mut [u8], mut v: u32) {
    for b in out.iter_mut().rev() {
        *b = b'0' + (v % 10) as u8;
        v /= 10;
    }
}

/// A time in its JSON form ([`format_datetime`]'s text), serialised without a `String`.
pub struct TimeView<'a>(pub &'a DateTime<Utc>);

impl serde::Serialize for TimeView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match datetime_text(self.0) {
            Some(b) => ascii(s, &b),
            None => s.serialize_str(&format_datetime(self.0)),
        }
    }
}

/// Serialises ASCII text made on the stack.
fn ascii<S: serde::Serializer>(s: S, text: &[u8]) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(std::str::from_utf8(text).map_err(serde::ser::Error::custom)?)
}

/// The number of decimals a currency's amounts have (ISO 4217 minor unit).
pub fn currency_exponent(code: &str) -> Option<u32> {
    // Built once: looking a code up in iso_currency scans its table every time.
    static EXPONENTS: std::sync::LazyLock<std::collections::HashMap<String, u32>> = std::sync::LazyLock::new(|| {
        <iso_currency::Currency as iso_currency::IntoEnumIterator>::iter()
            .map(|c| (c.code().to_string(), c.exponent().map(u32::from).unwrap_or(0)))
            .collect()
    });
    EXPONENTS.get(code).copied()
}

/// Every ISO 4217 code Gable knows (its amounts accept them), in order, with its number of
/// decimals: what the API description lists.
pub fn currencies() -> Vec<(&'static str, u32)> {
    let mut all: Vec<(&'static str, u32)> = <iso_currency::Currency as iso_currency::IntoEnumIterator>::iter()
        .map(|c| (c.code(), c.exponent().map(u32::from).unwrap_or(0)))
        .collect();
    all.sort_unstable();
    all
}

/// The largest amount Gable accepts, in major units: well inside an i64 of minor units
/// and inside the range where a JSON number's shortest form is exact.
const MAX_MAJOR: i64 = 1_000_000_000_000;

/// Parses a money amount given in major units into minor units, refusing more decimals
/// than the currency has. `raw` is a JSON number or a decimal string.
pub fn parse_money(param: &str, raw: &Json, currency: &str) -> Result<i64> {
    let exp = currency_exponent(currency)
        .ok_or_else(|| Error::validation("currency", format!("`{currency}` is not an ISO 4217 currency code")))?;
    let text = amount_text(raw).ok_or(NotAmount::NotDecimal);
    text.and_then(|t| parse_decimal_minor(&t, exp)).map_err(|why| Error::validation(param, why.to_string()))
}

/// The decimal text of an amount as a body gives it (a JSON number, or a string), or
/// `None` for anything else. A number's shortest decimal text: exact for what a client wrote.
fn amount_text(raw: &Json) -> Option<String> {
    match raw {
        Json::Number(n) => Some(n.to_string()),
        Json::String(s) => Some(s.trim().to_string()),
        _ => None,
    }
}

/// Why a decimal text is not an amount: a refusal names the field, then says this.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
enum NotAmount {
    #[error("must be a decimal amount, e.g. 1250.00")]
    NotDecimal,
    #[error("must not be negative")]
    Negative,
    #[error("must be less than {MAX_MAJOR}")]
    TooLarge,
    /// A valid amount in itself, but not in a currency with this many decimals.
    #[error("has more decimals than the currency's {0}")]
    MoreDecimals(u32),
}

/// Whether `raw` is an amount as a body gives one (a decimal in major units, not
/// negative, less than `MAX_MAJOR`), whatever its decimals: how many it may have is the
/// record's currency's to say.
fn is_amount(raw: &Json) -> bool {
    amount_text(raw).is_some_and(|text| matches!(parse_decimal_minor(&text, 0), Ok(_) | Err(NotAmount::MoreDecimals(_))))
}

fn parse_decimal_minor(text: &str, exp: u32) -> std::result::Result<i64, NotAmount> {
    if let Some((mantissa, power)) = text.split_once(['e', 'E']) {
        return parse_decimal_minor(&shift_point(mantissa, power, exp)?, exp);
    }
    let (neg, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if neg {
        return Err(NotAmount::Negative);
    }
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    if int.is_empty() || !int.bytes().all(|b| b.is_ascii_digit()) || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return Err(NotAmount::NotDecimal);
    }
    let frac_trimmed = frac.trim_end_matches('0');
    if frac_trimmed.len() > exp as usize {
        return Err(NotAmount::MoreDecimals(exp));
    }
    let int_part: i64 = int.parse().map_err(|_| NotAmount::TooLarge)?;
    if int_part >= MAX_MAJOR {
        return Err(NotAmount::TooLarge);
    }
    let scale = 10_i64.pow(exp);
    let mut frac_minor: i64 = 0;
    if !frac_trimmed.is_empty() {
        let padded = format!("{:0<width$}", frac_trimmed, width = exp as usize);
        frac_minor = padded.parse().map_err(|_| NotAmount::NotDecimal)?;
    }
    Ok(int_part * scale + frac_minor)
}

/// A number in exponent form (`1.25e3`) as plain decimal text (`1250`), by moving the
/// decimal point: exact, where a float would round.
fn shift_point(mantissa: &str, power: &str, exp: u32) -> std::result::Result<String, NotAmount> {
    let power: i32 = power.strip_prefix('+').unwrap_or(power).parse().map_err(|_| NotAmount::NotDecimal)?;
    if power > 40 {
        return Err(NotAmount::TooLarge);
    }
    // A tiny number (`5e-324`): zero, or more decimals than any currency has.
    if power < -40 {
        return match mantissa.trim_start_matches('-').bytes().all(|b| b == b'0' || b == b'.') {
            true => Ok("0".into()),
            false => Err(NotAmount::MoreDecimals(exp)),
        };
    }
    let (sign, digits) = mantissa.strip_prefix('-').map_or(("", mantissa), |m| ("-", m));
    let (int, frac) = digits.split_once('.').unwrap_or((digits, ""));
    let all = format!("{int}{frac}");
    let point = int.len() as i32 + power;
    let text = if point <= 0 {
        format!("0.{}{all}", "0".repeat(point.unsigned_abs() as usize))
    } else if point as usize >= all.len() {
        format!("{all}{}", "0".repeat(point as usize - all.len()))
    } else {
        format!("{}.{}", &all[..point as usize], &all[point as usize..])
    };
    Ok(format!("{sign}{text}"))
}

/// Minor units back to a JSON number in major units, in its shortest exact decimal
/// form, by integer arithmetic: `125050` USD is `1250.5`, whatever its size (sums in
/// reports can exceed what an f64 holds exactly).
pub fn money_json(minor: i64, currency: Option<&str>) -> Json {
    let exp = currency.and_then(currency_exponent).unwrap_or(2);
    let text = money_text(minor, exp);
    // The text is a valid JSON number by construction; serde_json keeps it as written.
    serde_json::from_str::<Number>(&text).map(Json::Number).unwrap_or(Json::Null)
}

/// `minor` in major units as decimal text with all of the currency's decimals
/// (`"1450.00"`): what people read (the embeddable flows show amounts as written here).
pub fn money_fixed(minor: i64, currency: Option<&str>) -> String {
    let exp = currency.and_then(currency_exponent).unwrap_or(2);
    let scale = 10_i128.pow(exp);
    let abs = (minor as i128).abs();
    let sign = if minor < 0 { "-" } else { "" };
    match exp {
        0 => format!("{sign}{abs}"),
        _ => format!("{sign}{}.{:0width$}", abs / scale, abs % scale, width = exp as usize),
    }
}

/// `minor` in major units as decimal text, trailing zeros of the fraction dropped.
fn money_text(minor: i64, exp: u32) -> String {
    let scale = 10_i128.pow(exp);
    let abs = (minor as i128).abs();
    let (int, frac) = (abs / scale, abs % scale);
    let sign = if minor < 0 { "-" } else { "" };
    if frac == 0 {
        return format!("{sign}{int}");
    }
    let digits = format!("{frac:0width$}", width = exp as usize);
    format!("{sign}{int}.{}", digits.trim_end_matches('0'))
}

/// Converts a stored value to its JSON form. Money needs the record's currency.
pub fn to_json(v: &Val, currency: Option<&str>) -> Json {
    serde_json::to_value(JsonView(v, currency)).unwrap_or(Json::Null)
}

/// A value in its JSON form, serialised without building a JSON tree (lists render
/// records through it). Money needs the record's currency.
pub struct JsonView<'a>(pub &'a Val, pub Option<&'a str>);

impl serde::Serialize for JsonView<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self.0 {
            Val::Null => s.serialize_none(),
            Val::Str(v) => s.serialize_str(v),
            Val::Int(i) => s.serialize_i64(*i),
            // Non-finite numbers are never stored; JSON has no form for them.
            Val::Num(f) if !f.is_finite() => s.serialize_none(),
            Val::Num(f) => s.serialize_f64(*f),
            Val::Money(m) => {
                // A whole amount is an integer in major units: no decimal text to make.
                let scale = 10_i64.pow(self.1.and_then(currency_exponent).unwrap_or(2));
                match m % scale {
                    0 => s.serialize_i64(m / scale),
                    _ => money_json(*m, self.1).serialize(s),
                }
            }
            Val::Bool(b) => s.serialize_bool(*b),
            Val::Date(d) => match date_text(d) {
                Some(b) => ascii(s, &b),
                // NaiveDate displays as YYYY-MM-DD.
                None => s.collect_str(d),
            },
            Val::DateTime(t) => TimeView(t).serialize(s),
            Val::Uuid(u) => u.serialize(s),
            Val::Json(j) => j.serialize(s),
        }
    }
}

/// `YYYY-MM-DD` only (ISO 8601 calendar date; the fast path, no strftime pattern).
pub fn parse_date(s: &str) -> Option<NaiveDate> {
    if s.len() != 10 {
        return None;
    }
    let b = s.as_bytes();
    if b[4] == b'-' && b[7] == b'-' {
        if let (Some(y), Some(m), Some(d)) = (number(&b[0..4]), number(&b[5..7]), number(&b[8..10])) {
            return NaiveDate::from_ymd_opt(y as i32, m, d);
        }
    }
    s.parse().ok()
}

pub fn parse_datetime(s: &str) -> Option<DateTime<Utc>> {
    stored_datetime(s).or_else(|| DateTime::parse_from_rfc3339(s).ok().map(|t| t.with_timezone(&Utc)))
}

/// A time in the form Gable writes ([`format_datetime`]), read without `chrono`'s
/// general parser: every stored time is read this way. Anything else is `None`.
fn stored_datetime(s: &str) -> Option<DateTime<Utc>> {
    let b = s.as_bytes();
    let form = [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':'), (19, b'.'), (26, b'Z')];
    if b.len() != 27 || form.iter().any(|&(i, c)| b[i] != c) {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(number(&b[0..4])? as i32, number(&b[5..7])?, number(&b[8..10])?)?;
    let time = NaiveTime::from_hms_micro_opt(number(&b[11..13])?, number(&b[14..16])?, number(&b[17..19])?, number(&b[20..26])?)?;
    Some(date.and_time(time).and_utc())
}

/// ASCII digits as a number; `None` for anything else.
fn number(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |n, &c| c.is_ascii_digit().then(|| n * 10 + u32::from(c - b'0')))
}

/// Whether text holds only the characters a URI may (RFC 3986: unreserved, reserved and
/// `%`), so a stored URL is what clients and validators read as one (`format: uri`).
pub fn is_uri_text(s: &str) -> bool {
    s.bytes().all(|b| b.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=%".contains(&b))
}

/// Parses a field's JSON value into its typed form. Money is handled by the caller,
/// which knows the currency; here a money value is only checked for shape.
pub fn from_json(field: &Field, raw: &Json) -> Result<Val> {
    let p = field.name;
    if raw.is_null() {
        return Ok(Val::Null);
    }
    let want = |what: &str| Error::validation(p, format!("must be {what}"));
    Ok(match field.ty {
        Ty::Str { max } if field.unique => Val::Str(unique_string(p, raw, max)?),
        Ty::Str { max } => Val::Str(string(p, raw, max)?),
        Ty::Text => Val::Str(string(p, raw, 10_000)?),
        Ty::Email => {
            let s = string(p, raw, 320)?;
            let ok = s.split_once('@').is_some_and(|(local, domain)| {
                !local.is_empty() && domain.contains('.') && !domain.starts_with('.') && !domain.ends_with('.')
            }) && !s.chars().any(char::is_whitespace);
            if !ok {
                return Err(want("an email address"));
            }
            Val::Str(s)
        }
        Ty::Url => {
            let s = string(p, raw, 2048)?;
            if !is_uri_text(&s) {
                return Err(want("a URL in URI characters (percent-encode others; punycode for international names)"));
            }
            match url::Url::parse(&s) {
                Ok(u) if matches!(u.scheme(), "http" | "https") && u.host().is_some() => Val::Str(s),
                _ => return Err(want("an absolute http or https URL")),
            }
        }
        Ty::Origin => {
            let s = string(p, raw, 2048)?;
            if !is_uri_text(&s) {
                return Err(want("an origin in URI characters (punycode for international names)"));
            }
            match url::Url::parse(&s) {
                Ok(u)
                    if matches!(u.scheme(), "http" | "https")
                        && u.host().is_some()
                        && u.path() == "/"
                        && u.query().is_none()
                        && !s.trim_end_matches('/').contains(['?', '#'])
                        && s.trim_end_matches('/').matches('/').count() == 2 =>
                {
                    Val::Str(u.origin().ascii_serialization())
                }
                _ => return Err(want("an origin such as https://www.example.com (scheme, host, optional port)")),
            }
        }
        Ty::Enum(values) => {
            let s = raw.as_str().ok_or_else(|| want(&format!("one of {}", values.join(", "))))?;
            if !values.contains(&s) {
                return Err(want(&format!("one of {}", values.join(", "))));
            }
            Val::Str(s.to_string())
        }
        Ty::Int { min, max } => {
            // JSON has one number type: `2.0` is the integer 2 (as JSON Schema counts it).
            let whole = raw.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15).map(|f| f as i64);
            let i = raw.as_i64().or(whole).ok_or_else(|| want("an integer"))?;
            if i < min || i > max {
                return Err(want(&format!("between {min} and {max}")));
            }
            Val::Int(i)
        }
        Ty::Num { min, max } => {
            let f = raw.as_f64().ok_or_else(|| want("a number"))?;
            if !(min..=max).contains(&f) {
                return Err(want(&format!("between {min} and {max}")));
            }
            Val::Num(f)
        }
        Ty::Money => {
            if !(raw.is_number() || raw.is_string()) {
                return Err(want("a decimal amount, e.g. 1250.00"));
            }
            Val::Json(raw.clone())
        }
        Ty::Currency => {
            let s = raw.as_str().ok_or_else(|| want("an ISO 4217 code such as USD"))?;
            if s.len() != 3 || !s.bytes().all(|b| b.is_ascii_uppercase()) || currency_exponent(s).is_none() {
                return Err(want("an ISO 4217 code such as USD"));
            }
            Val::Str(s.to_string())
        }
        Ty::Bool => Val::Bool(raw.as_bool().ok_or_else(|| want("true or false"))?),
        Ty::Date => {
            let s = raw.as_str().ok_or_else(|| want("a date (YYYY-MM-DD)"))?;
            Val::Date(parse_date(s).ok_or_else(|| want("a date (YYYY-MM-DD)"))?)
        }
        Ty::DateTime => {
            let s = raw.as_str().ok_or_else(|| want("an RFC 3339 date-time"))?;
            Val::DateTime(parse_datetime(s).ok_or_else(|| want("an RFC 3339 date-time"))?)
        }
        Ty::Ref(_) | Ty::Uuid => {
            let s = raw.as_str().ok_or_else(|| want("an id (uuid)"))?;
            Val::Uuid(Uuid::parse_str(s).map_err(|_| want("an id (uuid)"))?)
        }
        Ty::StrList { max_items } => {
            let items = raw.as_array().ok_or_else(|| want("an array of strings"))?;
            if items.len() > max_items {
                return Err(want(&format!("at most {max_items} items")));
            }
            for it in items {
                let s = it.as_str().ok_or_else(|| want("an array of strings"))?;
                if s.is_empty() || s.len() > 100 {
                    return Err(want("an array of non-empty strings of at most 100 characters"));
                }
            }
            Val::Json(raw.clone())
        }
        Ty::RefList(_) => {
            let items = raw.as_array().ok_or_else(|| want("an array of ids"))?;
            if items.len() > 100 {
                return Err(want("at most 100 ids"));
            }
            let mut ids = Vec::with_capacity(items.len());
            for it in items {
                let id = it.as_str().and_then(|s| Uuid::parse_str(s).ok()).ok_or_else(|| want("an array of ids"))?;
                ids.push(Json::String(id.to_string()));
            }
            Val::Json(Json::Array(ids))
        }
        Ty::Json(shape) => Val::Json(shape_check(p, shape, raw)?),
        Ty::Metadata => Val::Json(metadata(raw)?),
    })
}

fn string(p: &str, raw: &Json, max: usize) -> Result<String> {
    let s = raw.as_str().ok_or_else(|| Error::validation(p, "must be a string"))?;
    if s.chars().count() > max {
        return Err(Error::validation(p, format!("must be at most {max} characters")));
    }
    if s.contains('\0') {
        return Err(Error::validation(p, "must not contain NUL characters"));
    }
    Ok(s.to_string())
}

/// A value that identifies a record (`Field::unique`): one that looks empty, or differs
/// from another only by padding or an invisible character, would be a trap.
fn unique_string(p: &str, raw: &Json, max: usize) -> Result<String> {
    let s = string(p, raw, max)?;
    if s.is_empty() {
        return Err(Error::validation(p, "must not be empty (leave it out, or null, for none)"));
    }
    if s.trim() != s {
        return Err(Error::validation(p, "must not begin or end with spaces"));
    }
    if s.chars().any(char::is_control) {
        return Err(Error::validation(p, "must not contain control characters"));
    }
    Ok(s)
}

pub fn metadata(raw: &Json) -> Result<Json> {
    let map = raw.as_object().ok_or_else(|| Error::validation("metadata", "must be an object of strings"))?;
    if map.len() > 50 {
        return Err(Error::validation("metadata", "must have at most 50 keys"));
    }
    for (k, v) in map {
        if k.is_empty() || k.chars().count() > 40 {
            return Err(Error::validation("metadata", "keys must be 1 to 40 characters"));
        }
        match v.as_str() {
            Some(s) if s.chars().count() <= 500 => {}
            _ => return Err(Error::validation(format!("metadata.{k}"), "must be a string of at most 500 characters")),
        }
    }
    Ok(raw.clone())
}

/// Checks a structured value against its shape: known keys only, required keys present.
fn shape_check(p: &str, shape: JsonShape, raw: &Json) -> Result<Json> {
    use JsonShape::*;
    let spec: (&[&str], &[&str]) = match shape {
        Address => (&["line1", "city", "country"], &["line1", "line2", "city", "region", "postal_code", "country"]),
        People => (&["name"], &["name", "email", "phone"]),
        LedgerLines => (&["account", "debit", "credit"], &["account", "debit", "credit"]),
        OrderLines => (&["description", "quantity", "unit_amount"], &["description", "quantity", "unit_amount"]),
        InspectionItems => (&["name"], &["name", "condition", "notes"]),
        References => (&["name"], &["name", "relationship", "email", "phone"]),
        // Its keys and their values are `domain::reports::Parameters::parse`'s to check.
        Object | ReportParameters => {
            if !raw.is_object() {
                return Err(Error::validation(p, "must be an object"));
            }
            if serde_json::to_vec(raw).map(|v| v.len()).unwrap_or(usize::MAX) > 64 * 1024 {
                return Err(Error::validation(p, "must be at most 64 KiB of JSON"));
            }
            return Ok(raw.clone());
        }
    };
    let check_obj = |path: &str, obj: &Map<String, Json>| -> Result<()> {
        for k in obj.keys() {
            if !spec.1.contains(&k.as_str()) {
                return Err(Error::validation(format!("{path}.{k}"), format!("unknown key; allowed: {}", spec.1.join(", "))));
            }
        }
        for k in spec.0 {
            if !obj.contains_key(*k) {
                return Err(Error::validation(format!("{path}.{k}"), "is required"));
            }
        }
        for (k, v) in obj {
            let ok = match (shape, k.as_str()) {
                (LedgerLines, "debit" | "credit") => v.is_number() || v.is_string(),
                // Kept as given; an amount the description allows, as any other.
                (OrderLines, "unit_amount") => is_amount(v),
                (OrderLines, "quantity") => v.as_f64().is_some_and(|q| q > 0.0),
                _ => v.as_str().is_some_and(|s| s.chars().count() <= 500),
            };
            if !ok {
                return Err(Error::validation(format!("{path}.{k}"), "has the wrong type"));
            }
        }
        Ok(())
    };
    match shape {
        Address => {
            let obj = raw.as_object().ok_or_else(|| Error::validation(p, "must be an object"))?;
            check_obj(p, obj)?;
            if let Some(c) = obj.get("country").and_then(Json::as_str) {
                if c.len() != 2 || !c.bytes().all(|b| b.is_ascii_uppercase()) {
                    return Err(Error::validation(format!("{p}.country"), "must be an ISO 3166-1 alpha-2 code such as US"));
                }
            }
        }
        _ => {
            let items = raw.as_array().ok_or_else(|| Error::validation(p, "must be an array"))?;
            if items.len() > 200 {
                return Err(Error::validation(p, "must have at most 200 items"));
            }
            if items.is_empty() && matches!(shape, LedgerLines | OrderLines | People) {
                return Err(Error::validation(p, "must not be empty"));
            }
            for (i, it) in items.iter().enumerate() {
                let path = format!("{p}[{i}]");
                let obj = it.as_object().ok_or_else(|| Error::validation(&path, "must be an object"))?;
                check_obj(&path, obj)?;
            }
        }
    }
    Ok(raw.clone())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_fast_forms_of_times_and_dates_are_chronos() {
        use chrono::TimeZone;
        let times = [
            Utc.with_ymd_and_hms(2026, 11, 29, 9, 5, 7).unwrap(),
            Utc.with_ymd_and_hms(1, 1, 1, 0, 0, 0).unwrap() + chrono::Duration::microseconds(1),
            Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap() + chrono::Duration::nanoseconds(999_999_999),
            Utc.timestamp_opt(1_780_000_000, 123_456_789).unwrap(),
        ];
        for t in times {
            let chrono_text = t.to_rfc3339_opts(SecondsFormat::Micros, true);
            assert_eq!(format_datetime(&t), chrono_text);
            assert_eq!(serde_json::to_string(&JsonView(&Val::DateTime(t), None)).unwrap(), format!("\"{chrono_text}\""));
            let back = parse_datetime(&chrono_text).unwrap();
            assert_eq!(Some(back), DateTime::parse_from_rfc3339(&chrono_text).ok().map(|t| t.with_timezone(&Utc)));
            assert_eq!(stored_datetime(&chrono_text), Some(back), "{chrono_text} is read by the fast path");
            let d = t.date_naive();
            assert_eq!(serde_json::to_string(&JsonView(&Val::Date(d), None)).unwrap(), format!("\"{d}\""));
            assert_eq!(parse_date(&d.to_string()), Some(d));
        }
        // Beyond the fast forms, chrono still answers (and refuses) as it did.
        let far = Utc.with_ymd_and_hms(12026, 1, 1, 0, 0, 0).unwrap();
        assert_eq!(format_datetime(&far), far.to_rfc3339_opts(SecondsFormat::Micros, true));
        assert_eq!(parse_datetime("2026-11-29T10:00:00+02:00"), Some(Utc.with_ymd_and_hms(2026, 11, 29, 8, 0, 0).unwrap()));
        assert_eq!(parse_datetime("2026-02-30T10:00:00.000000Z"), None);
        assert_eq!(parse_datetime("2026-11-29T1a:00:00.000000Z"), None);
        assert_eq!(parse_date("2026-02-30"), None);
        assert_eq!(parse_date("2026-1a-01"), None);
    }

    #[test]
    fn whole_and_fractional_amounts_render_as_before() {
        for (minor, currency) in [(206_700, "USD"), (125_050, "USD"), (-500, "USD"), (0, "USD"), (1_234, "JPY"), (1_500, "KWD"), (7, "KWD")]
        {
            let view = serde_json::to_string(&JsonView(&Val::Money(minor), Some(currency))).unwrap();
            assert_eq!(view, money_json(minor, Some(currency)).to_string(), "{minor} {currency}");
        }
    }

    use super::*;
    use serde_json::json;

    /// An order line's unit amount is an amount: not empty, not negative, under the cap.
    #[test]
    fn order_lines_take_amounts_only() {
        let line = |amount: Json| json!([{ "description": "Paint", "quantity": 2, "unit_amount": amount }]);
        for good in [json!(12), json!("12.50"), json!(0.123456), json!("1e3"), json!(999_999_999_999_i64)] {
            assert!(shape_check("lines", JsonShape::OrderLines, &line(good.clone())).is_ok(), "{good}");
        }
        for bad in [json!(""), json!(-1), json!("-0.5"), json!(1_000_000_000_000_i64), json!("abc"), json!(null)] {
            let e = shape_check("lines", JsonShape::OrderLines, &line(bad.clone()));
            assert!(e.is_err(), "{bad} was taken");
        }
    }

    /// URLs hold URI characters only, so what is stored reads as a URI everywhere.
    #[test]
    fn urls_are_uri_text() {
        let url = crate::domain::collections::collection("webhooks").unwrap().field("url").unwrap();
        assert!(from_json(url, &serde_json::json!("https://example.com/h?a=1&b=%20")).is_ok());
        for bad in ["https://例え.jp/", "https://example.com/a b", "https://Ïx.com", "https://e.com/\"q\""] {
            assert!(from_json(url, &serde_json::json!(bad)).is_err(), "{bad}");
        }
    }

    /// A tiny amount in exponent form has more decimals than any currency.
    #[test]
    fn tiny_amounts_have_too_many_decimals() {
        let e = parse_money("rent", &serde_json::json!(5e-324), "USD").unwrap_err();
        assert!(e.to_string().contains("more decimals"), "{e}");
        assert_eq!(parse_money("rent", &serde_json::json!("0e-50"), "USD").unwrap(), 0);
    }

    /// A whole number written with a fraction of zero is an integer, as JSON Schema says.
    #[test]
    fn an_integer_may_be_written_as_a_whole_float() {
        let day = crate::domain::collections::collection("leases").unwrap().field("rent_due_day").unwrap();
        assert!(matches!(from_json(day, &serde_json::json!(2.0)), Ok(Val::Int(2))));
        assert!(from_json(day, &serde_json::json!(2.5)).is_err());
        assert!(from_json(day, &serde_json::json!(29.0)).is_err(), "still within its range");
    }

    #[test]
    fn money_fixed_keeps_every_decimal() {
        assert_eq!(money_fixed(145000, Some("USD")), "1450.00");
        assert_eq!(money_fixed(-5, Some("USD")), "-0.05");
        assert_eq!(money_fixed(1500, Some("JPY")), "1500");
        assert_eq!(money_fixed(1234, Some("BHD")), "1.234");
    }

    #[test]
    fn money_is_exact_and_refuses_extra_decimals() {
        assert_eq!(parse_decimal_minor("1250.5", 2), Ok(125050));
        assert_eq!(parse_decimal_minor("1250", 2), Ok(125000));
        assert_eq!(parse_decimal_minor("0.10", 2), Ok(10));
        assert_eq!(parse_decimal_minor("1.005", 2), Err(NotAmount::MoreDecimals(2)));
        assert_eq!(parse_decimal_minor("1000", 0), Ok(1000));
        assert_eq!(parse_decimal_minor("1000.5", 0), Err(NotAmount::MoreDecimals(0)));
        assert_eq!(parse_decimal_minor("1.005", 3), Ok(1005));
        assert_eq!(parse_decimal_minor("-1", 2), Err(NotAmount::Negative));
        assert_eq!(parse_decimal_minor("abc", 2), Err(NotAmount::NotDecimal));
        assert_eq!(parse_decimal_minor("1e13", 2), Err(NotAmount::TooLarge));
        assert_eq!(parse_decimal_minor("1.25e3", 2), Ok(125000));
        assert_eq!(parse_decimal_minor("125E-2", 2), Ok(125));
        assert!(parse_decimal_minor("1.255e0", 2).is_err());
        // More decimals than a float holds are seen, not rounded away.
        let raw: Json = serde_json::from_str("10.000000000000000001").unwrap();
        assert!(parse_money("amount", &raw, "USD").is_err());
        assert!(parse_decimal_minor("1.0000000000000000001e1", 2).is_err());
    }

    #[test]
    fn money_round_trips_to_json() {
        assert_eq!(money_json(125050, Some("USD")), serde_json::json!(1250.5));
        assert_eq!(money_json(125000, Some("USD")), serde_json::json!(1250));
        assert_eq!(money_json(1005, Some("KWD")), serde_json::json!(1.005));
        assert_eq!(money_json(1000, Some("JPY")), serde_json::json!(1000));
        // Exact at any size, and never through a float: an f64 would print 92233720368547760.
        assert_eq!(money_json(i64::MAX, Some("USD")).to_string(), "92233720368547758.07");
        assert_eq!(money_json(-5, Some("USD")).to_string(), "-0.05");
        assert_eq!(money_json(-1_000_001, Some("KWD")).to_string(), "-1000.001");
        assert_eq!(money_json(99_999_999_999_999, Some("USD")).to_string(), "999999999999.99");
    }
}
