//! List requests: limit, cursor, sort, filters and sparse fieldsets, parsed from the
//! query string into a typed plan (`docs/api.md`, "Lists"). No HTTP and no SQL here.

use serde_json::Value as Json;
use sha2::{Digest, Sha256};

use super::answer::{nul_free, Answer};
use super::record::{CREATED_AT, ID, UPDATED_AT};
use super::registry::{Collection, Field, Ty};
use super::value::{parse_date, parse_datetime, parse_money, Val};
use crate::error::{Error, Result};

pub const DEFAULT_LIMIT: u32 = 25;
pub const MAX_LIMIT: u32 = 100;
/// Keys a `sort` may list.
pub const MAX_SORT_KEYS: usize = 4;
/// The longest text a `contains` filter searches for.
pub const MAX_CONTAINS: usize = 100;

/// Whether `contains` searches a field: free text, not codes (an enum, a currency).
pub fn is_text(f: &Field) -> bool {
    matches!(f.ty, Ty::Str { .. } | Ty::Text | Ty::Email | Ty::Url)
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Eq,
    Ne,
    Gt,
    Gte,
    Lt,
    Lte,
    In,
    Nin,
    Exists,
    /// Holds the text, ignoring case (text fields): what a quick search asks.
    Contains,
}

impl Op {
    pub const ALL: &'static [&'static str] = &["eq", "ne", "gt", "gte", "lt", "lte", "in", "nin", "exists", "contains"];

    fn parse(s: &str) -> Option<Op> {
        Some(match s {
            "eq" => Op::Eq,
            "ne" => Op::Ne,
            "gt" => Op::Gt,
            "gte" => Op::Gte,
            "lt" => Op::Lt,
            "lte" => Op::Lte,
            "in" => Op::In,
            "nin" => Op::Nin,
            "exists" => Op::Exists,
            "contains" => Op::Contains,
            _ => return None,
        })
    }
    fn name(self) -> &'static str {
        Op::ALL[self as usize]
    }
}

#[derive(Debug, Clone)]
pub struct Filter {
    pub field: &'static Field,
    pub op: Op,
    /// One value, or several for `in`/`nin`; for `exists`, a single `Bool`.
    pub values: Vec<Val>,
    raw: String,
}

impl Filter {
    /// `field` is one of `values`: a condition Gable adds itself (never from the query).
    pub fn one_of(field: &'static Field, values: &[&str]) -> Filter {
        Filter { field, op: Op::In, values: values.iter().map(|v| Val::Str(v.to_string())).collect(), raw: values.join(",") }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct SortKey {
    pub field: &'static Field,
    pub desc: bool,
}

#[derive(Debug, Clone)]
pub struct ListQuery {
    pub limit: u32,
    pub sort: Vec<SortKey>,
    pub filters: Vec<Filter>,
    /// The answer's fieldsets and expansions: they shape the answer, not the list (a
    /// cursor is not bound to them).
    pub answer: Answer,
    pub cursor: Option<String>,
}

/// Finds a field by name, the system fields included.
pub fn lookup(c: &Collection, name: &str) -> Option<&'static Field> {
    match name {
        "id" => Some(&ID),
        "created_at" => Some(&CREATED_AT),
        "updated_at" => Some(&UPDATED_AT),
        _ => c.field(name),
    }
}

impl ListQuery {
    /// Parses a list request's query pairs. Every unknown or malformed parameter is a
    /// 400 naming it.
    pub fn parse(c: &'static Collection, pairs: &[(String, String)]) -> Result<ListQuery> {
        let (answer, pairs) = Answer::take(c, pairs)?;
        let mut q = ListQuery { limit: DEFAULT_LIMIT, sort: vec![], filters: vec![], answer, cursor: None };
        let mut seen = std::collections::HashSet::new();
        let mut currency_eq: Option<String> = None;
        let mut money_filters = vec![];
        let pairs = join_repeated_lists(&pairs);
        for (key, value) in &pairs {
            nul_free(key, value)?;
            if !seen.insert(key.as_str()) {
                return Err(Error::parameter(key, "is given more than once"));
            }
            match key.as_str() {
                "limit" => q.limit = parse_limit(value)?,
                "cursor" => {
                    if value.is_empty() {
                        return Err(Error::InvalidCursor);
                    }
                    q.cursor = Some(value.clone())
                }
                "sort" => q.sort = parse_sort(c, value)?,
                k if k.starts_with("filter[") => {
                    let inner = bracket(k, "filter")
                        .ok_or_else(|| Error::parameter(k, "is not a parameter; use filter[<field>] or filter[<field>][<op>]"))?;
                    let (name, op) = match inner.as_slice() {
                        [name] => (*name, Op::Eq),
                        [name, op] => (
                            *name,
                            Op::parse(op).ok_or_else(|| {
                                Error::parameter(k, format!("`{op}` is not an operator; use one of {}", Op::ALL.join(", ")))
                            })?,
                        ),
                        _ => return Err(Error::parameter(k, "use filter[<field>] or filter[<field>][<op>]")),
                    };
                    let field = lookup(c, name).ok_or_else(|| Error::parameter(k, format!("`{name}` is not a field of {}", c.name)))?;
                    if !field.filterable {
                        return Err(Error::parameter(k, format!("`{name}` cannot be filtered on")));
                    }
                    if field.name == "currency" && op == Op::Eq {
                        currency_eq = Some(value.clone());
                    }
                    if field.ty == Ty::Money {
                        money_filters.push((k.to_string(), field, op, value.clone()));
                        continue;
                    }
                    let values = parse_filter_values(k, field, op, value, None)?;
                    q.filters.push(Filter { field, op, values, raw: value.clone() });
                }
                other => return Err(Error::parameter(other, "is not a parameter of this list")),
            }
        }
        // Amounts are stored in minor units, so an amount filter needs the currency.
        for (k, field, op, value) in money_filters {
            let Some(cur) = &currency_eq else {
                return Err(Error::parameter(&k, "filtering on an amount needs filter[currency] too"));
            };
            let values = parse_filter_values(&k, field, op, &value, Some(cur))?;
            q.filters.push(Filter { field, op, values, raw: value });
        }
        if q.sort.is_empty() {
            q.sort = vec![SortKey { field: &CREATED_AT, desc: true }];
        }
        // `id` breaks ties, in the direction of the last key so one index serves the scan.
        if !q.sort.iter().any(|k| k.field.name == "id") {
            let desc = q.sort.last().is_some_and(|k| k.desc);
            q.sort.push(SortKey { field: &ID, desc });
        }
        Ok(q)
    }

    /// A digest of what the cursor is bound to: the collection, sort and filters.
    pub fn binding(&self, c: &Collection) -> String {
        let mut h = Sha256::new();
        h.update(c.name.as_bytes());
        for k in &self.sort {
            h.update([0, k.desc as u8]);
            h.update(k.field.name.as_bytes());
        }
        let mut filters: Vec<String> = self.filters.iter().map(|f| format!("{}\u{1}{}\u{1}{}", f.field.name, f.op.name(), f.raw)).collect();
        filters.sort();
        for f in filters {
            h.update([2]);
            h.update(f.as_bytes());
        }
        hex::encode(&h.finalize()[..16])
    }
}

fn parse_limit(v: &str) -> Result<u32> {
    let n: i64 = v.trim().parse().map_err(|_| Error::parameter("limit", format!("must be an integer from 1 to {MAX_LIMIT}")))?;
    if !(1..=MAX_LIMIT as i64).contains(&n) {
        return Err(Error::parameter("limit", format!("must be from 1 to {MAX_LIMIT}, got {n}")));
    }
    Ok(n as u32)
}

/// `sort`: up to 4 comma-separated keys. A key on a field already given adds nothing to the
/// order (its ties were broken already), and nothing after `id` can either, so those are
/// dropped rather than refused: any list of sortable keys is a valid sort.
fn parse_sort(c: &Collection, v: &str) -> Result<Vec<SortKey>> {
    let parts: Vec<&str> = v.split(',').map(str::trim).collect();
    if parts.len() > MAX_SORT_KEYS {
        return Err(Error::parameter("sort", format!("at most {MAX_SORT_KEYS} keys")));
    }
    let mut keys: Vec<SortKey> = vec![];
    for part in parts {
        let (desc, name) = match part.strip_prefix('-') {
            Some(n) => (true, n),
            None => (false, part),
        };
        if name.is_empty() {
            return Err(Error::parameter("sort", "has an empty key"));
        }
        let field = lookup(c, name).ok_or_else(|| Error::parameter("sort", format!("`{name}` is not a field of {}", c.name)))?;
        if !field.sortable {
            return Err(Error::parameter("sort", format!("`{name}` cannot be sorted on")));
        }
        if keys.iter().any(|k| k.field.name == "id" || k.field.name == name) {
            continue;
        }
        keys.push(SortKey { field, desc });
    }
    Ok(keys)
}

/// A list-valued parameter (`sort`, `filter[f][in]`, `filter[f][nin]`; `fields[…]` and
/// `expand[]` are `domain::answer`'s) may be repeated,
/// as form-style clients send arrays (`filter[status][in]=a&filter[status][in]=b`, which is how
/// the API description's `explode: true` arrays serialise): the values are joined as if sent
/// comma-separated. Any other repeated parameter stays a `400`.
fn join_repeated_lists(pairs: &[(String, String)]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::with_capacity(pairs.len());
    for (k, v) in pairs {
        let list_valued = k == "sort" || k.ends_with("][in]") || k.ends_with("][nin]");
        if let Some((_, joined)) = out.iter_mut().find(|(seen, _)| list_valued && seen == k) {
            joined.push(',');
            joined.push_str(v);
        } else {
            out.push((k.clone(), v.clone()));
        }
    }
    out
}

/// `filter[a][b]` → `["a", "b"]`.
fn bracket<'a>(key: &'a str, prefix: &str) -> Option<Vec<&'a str>> {
    let mut rest = key.strip_prefix(prefix)?;
    let mut parts = vec![];
    while !rest.is_empty() {
        let inner = rest.strip_prefix('[')?;
        let end = inner.find(']')?;
        let part = &inner[..end];
        if part.is_empty() {
            return None;
        }
        parts.push(part);
        rest = &inner[end + 1..];
    }
    (!parts.is_empty()).then_some(parts)
}

fn parse_filter_values(k: &str, field: &'static Field, op: Op, raw: &str, currency: Option<&str>) -> Result<Vec<Val>> {
    if op == Op::Exists {
        return match raw {
            "true" => Ok(vec![Val::Bool(true)]),
            "false" => Ok(vec![Val::Bool(false)]),
            _ => Err(Error::parameter(k, "must be true or false")),
        };
    }
    if matches!(op, Op::In | Op::Nin) && raw.is_empty() {
        return Err(Error::parameter(k, "names no values: give one or more, separated by commas"));
    }
    let parts: Vec<&str> = if matches!(op, Op::In | Op::Nin) { raw.split(',').collect() } else { vec![raw] };
    if parts.len() > 100 {
        return Err(Error::parameter(k, "at most 100 values"));
    }
    if op == Op::Contains {
        if !is_text(field) {
            return Err(Error::parameter(k, format!("`{}` is not text: `contains` searches text fields only", field.name)));
        }
        if raw.is_empty() || raw.chars().count() > MAX_CONTAINS {
            return Err(Error::parameter(k, format!("must be 1 to {MAX_CONTAINS} characters")));
        }
        return Ok(vec![Val::Str(raw.to_string())]);
    }
    let ordered = matches!(op, Op::Gt | Op::Gte | Op::Lt | Op::Lte);
    if ordered && matches!(field.ty, Ty::Enum(_) | Ty::Bool | Ty::Ref(_) | Ty::Uuid | Ty::Email | Ty::Currency) && field.name != "id" {
        return Err(Error::parameter(k, format!("`{}` cannot be compared with {}", field.name, op.name())));
    }
    // A single value is within the field's range, as the description's filter schema
    // says; a value of an `in`/`nin` list is described by its text only, and one no record
    // can hold simply matches nothing (or, in `nin`, excludes nothing).
    let bounded = !matches!(op, Op::In | Op::Nin);
    parts.into_iter().map(|p| parse_one(k, field, p, currency, bounded)).collect()
}

fn parse_one(k: &str, field: &'static Field, s: &str, currency: Option<&str>, bounded: bool) -> Result<Val> {
    let bad = |what: &str| Error::parameter(k, format!("`{s}` is not {what}"));
    Ok(match field.ty {
        // A single value within the field's own rules (its length, an email's or a URL's
        // form), as the description's filter schema says: a value no record can hold is a
        // mistake. A list's values are described by their text only, as for numbers.
        Ty::Str { .. } | Ty::Text | Ty::Email | Ty::Url | Ty::Origin => {
            if bounded {
                if let Err(Error::Validation { message, .. } | Error::InvalidParameter { message, .. }) =
                    crate::domain::value::from_json(field, &Json::String(s.to_string()))
                {
                    let why = message.strip_prefix(&format!("{}: ", field.name)).unwrap_or(&message).to_string();
                    return Err(Error::parameter(k, format!("`{s}` cannot be a value of `{}`: {why}", field.name)));
                }
            }
            Val::Str(s.to_string())
        }
        // As an amount's `currency` takes them: a code no record can hold is a mistake.
        Ty::Currency => {
            if crate::domain::value::currency_exponent(s).is_none() {
                return Err(bad("an ISO 4217 code such as USD"));
            }
            Val::Str(s.to_string())
        }
        Ty::Enum(values) => {
            if !values.contains(&s) {
                return Err(Error::parameter(k, format!("`{s}` is not one of {}", values.join(", "))));
            }
            Val::Str(s.to_string())
        }
        // Within the field's own range (`bounded`), as the description's filter schemas
        // say: a value no record can hold is a mistake, as for `currency`.
        Ty::Int { min, max } => {
            let i: i64 = s.parse().map_err(|_| bad("an integer"))?;
            if bounded && (i < min || i > max) {
                return Err(bad(&format!("between {min} and {max}")));
            }
            Val::Int(i)
        }
        Ty::Num { min, max } => {
            let f: f64 = s.parse().map_err(|_| bad("a number"))?;
            if !f.is_finite() {
                return Err(bad("a number"));
            }
            if bounded && !(min..=max).contains(&f) {
                return Err(bad(&format!("between {min} and {max}")));
            }
            Val::Num(f)
        }
        Ty::Money => {
            let cur = currency.unwrap_or("USD");
            Val::Money(parse_money(k, &Json::String(s.into()), cur).map_err(|_| bad("an amount in that currency"))?)
        }
        Ty::Bool => match s {
            "true" => Val::Bool(true),
            "false" => Val::Bool(false),
            _ => return Err(bad("true or false")),
        },
        Ty::Date => Val::Date(parse_date(s).ok_or_else(|| bad("a date (YYYY-MM-DD)"))?),
        Ty::DateTime => Val::DateTime(parse_datetime(s).ok_or_else(|| bad("an RFC 3339 date-time"))?),
        Ty::Ref(_) | Ty::Uuid => Val::Uuid(uuid::Uuid::parse_str(s).map_err(|_| bad("an id (uuid)"))?),
        Ty::StrList { .. } | Ty::RefList(_) | Ty::Json(_) | Ty::Metadata => {
            return Err(Error::parameter(k, "this field cannot be filtered on"))
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::collections::collection;

    fn q(pairs: &[(&str, &str)]) -> Result<ListQuery> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        ListQuery::parse(collection("leases").unwrap(), &pairs)
    }

    #[test]
    fn parses_sort_filters_and_fields() {
        let l = q(&[
            ("sort", "-start_date,created_at"),
            ("filter[status]", "active"),
            ("filter[end_date][lt]", "2027-01-01"),
            ("fields[leases]", "id,status"),
        ])
        .unwrap();
        assert_eq!(l.sort.len(), 3);
        assert_eq!(l.sort[2].field.name, "id");
        assert!(!l.sort[2].desc);
        assert_eq!(l.filters.len(), 2);
        assert_eq!(l.answer.fields.of(collection("leases").unwrap()).unwrap(), ["id", "status"]);
    }

    #[test]
    fn number_filters_stay_within_the_field_s_range() {
        let units = |pairs: &[(&str, &str)]| {
            let pairs: Vec<(String, String)> = pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
            ListQuery::parse(collection("units").unwrap(), &pairs)
        };
        assert!(units(&[("filter[bedrooms][lt]", "50")]).is_ok());
        assert!(units(&[("filter[bathrooms][gte]", "1.5")]).is_ok());
        // A list's values are described as text: one out of range matches nothing.
        assert!(units(&[("filter[bedrooms][nin]", "-3295120803,2")]).is_ok());
        for (k, v) in [("filter[bedrooms][lt]", "164"), ("filter[bedrooms]", "-1"), ("filter[bathrooms][lt]", "-1.7976931348623155e+308")] {
            match units(&[(k, v)]) {
                Err(Error::InvalidParameter { param, message }) => {
                    assert_eq!(param, k);
                    assert!(message.contains("between"), "{message}");
                }
                other => panic!("{k}={v}: expected a parameter error, got {other:?}"),
            }
        }
    }

    #[test]
    fn refuses_what_is_unknown() {
        let name = |r: Result<ListQuery>| match r {
            Err(Error::InvalidParameter { param, .. }) => param,
            other => panic!("expected a parameter error, got {other:?}"),
        };
        assert_eq!(name(q(&[("limit", "0")])), "limit");
        assert_eq!(name(q(&[("limit", "101")])), "limit");
        assert_eq!(name(q(&[("limit", "-5")])), "limit");
        assert_eq!(name(q(&[("sort", "nope")])), "sort");
        assert_eq!(name(q(&[("sort", "deposit")])), "sort");
        assert_eq!(name(q(&[("filter[nope]", "1")])), "filter[nope]");
        assert_eq!(name(q(&[("filter[status][like]", "a")])), "filter[status][like]");
        assert_eq!(name(q(&[("filter[status]", "flying")])), "filter[status]");
        assert_eq!(name(q(&[("fields[webhooks]", "id")])), "fields[webhooks]");
        assert_eq!(name(q(&[("expand[]", "tenant")])), "expand[]");
        assert_eq!(name(q(&[("rent", "1")])), "rent");
        assert_eq!(name(q(&[("filter[rent][gte]", "100")])), "filter[rent][gte]");
    }

    #[test]
    fn list_valued_parameters_may_repeat_others_may_not() {
        let l = q(&[
            ("fields[leases]", "id"),
            ("filter[status][in]", "active"),
            ("fields[leases]", "status,rent"),
            ("filter[status][in]", "draft"),
            ("sort", "-start_date"),
            ("sort", "created_at"),
        ])
        .unwrap();
        assert_eq!(
            l.sort.iter().map(|k| (k.field.name, k.desc)).collect::<Vec<_>>(),
            vec![("start_date", true), ("created_at", false), ("id", false)]
        );
        assert_eq!(l.answer.fields.of(collection("leases").unwrap()).unwrap(), ["id", "status", "rent"]);
        assert_eq!(l.filters.len(), 1);
        assert_eq!(l.filters[0].raw, "active,draft");
        let same = q(&[("filter[status][in]", "active,draft")]).unwrap();
        assert_eq!(format!("{:?}", same.filters[0].values), format!("{:?}", l.filters[0].values));
        for repeated in ["filter[status]", "filter[status][ne]", "limit", "cursor"] {
            let value = match repeated {
                "limit" => "5",
                _ => "active",
            };
            match q(&[(repeated, value), (repeated, value)]) {
                Err(Error::InvalidParameter { param, .. }) => assert_eq!(param, repeated),
                other => panic!("{repeated} twice: expected a parameter error, got {other:?}"),
            }
        }
    }

    /// Any list of up to four sortable keys sorts: a field given again, or anything after
    /// `id`, adds nothing to the order and is dropped.
    #[test]
    fn a_sort_key_that_adds_nothing_is_dropped() {
        let keys = |v: &str| q(&[("sort", v)]).map(|l| l.sort.iter().map(|k| (k.field.name, k.desc)).collect::<Vec<_>>());
        assert_eq!(keys("start_date,-start_date").unwrap(), vec![("start_date", false), ("id", false)]);
        assert_eq!(keys("id,start_date").unwrap(), vec![("id", false)]);
        assert_eq!(keys("-start_date,start_date,-id,created_at").unwrap(), vec![("start_date", true), ("id", true)]);
        assert!(keys("created_at,created_at,created_at,created_at,created_at").is_err(), "at most four keys, repeats included");
        assert!(keys("start_date,").is_err(), "an empty key");
        assert!(keys("id,rent").is_err(), "a key that cannot sort is refused wherever it is");
    }

    /// No query value may hold U+0000 (PostgreSQL's text cannot): a 400 naming it.
    #[test]
    fn nul_in_a_value_is_refused() {
        for (k, v) in [("filter[status]", "a\0b"), ("filter[unit_id][in]", "\0"), ("sort", "start_date\0")] {
            match q(&[(k, v)]) {
                Err(Error::InvalidParameter { param, .. }) => assert_eq!(param, k),
                other => panic!("{k}={v:?}: {other:?}"),
            }
        }
    }

    /// An empty `in` or `nin` list and a currency no amount takes are 400s naming the key,
    /// as the description's `minLength` and `CurrencyList` say; a known code filters.
    #[test]
    fn empty_lists_and_unknown_currencies_are_refused() {
        for (k, v) in [
            ("filter[currency][in]", ""),
            ("filter[status][nin]", ""),
            ("filter[currency]", "XYZ"),
            ("filter[currency]", "usd"),
            ("filter[currency][in]", "USD,"),
            ("filter[currency][nin]", "EUR,ZZZ"),
        ] {
            match q(&[(k, v)]) {
                Err(Error::InvalidParameter { param, .. }) => assert_eq!(param, k, "{k}={v:?}"),
                other => panic!("{k}={v:?}: {other:?}"),
            }
        }
        let l = q(&[("filter[currency][in]", "USD,JPY,KWD")]).unwrap();
        assert_eq!(l.filters[0].values.len(), 3);
    }

    #[test]
    fn binding_depends_on_sort_and_filters() {
        let c = collection("leases").unwrap();
        let a = q(&[("filter[status]", "active")]).unwrap().binding(c);
        let b = q(&[("filter[status]", "draft")]).unwrap().binding(c);
        let d = q(&[("filter[status]", "active"), ("sort", "start_date")]).unwrap().binding(c);
        assert_ne!(a, b);
        assert_ne!(a, d);
    }
}
