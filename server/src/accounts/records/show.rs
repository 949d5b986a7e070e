//! Values as people read them: amounts with their currency and thousands separators,
//! dates and times in words, statuses as badges, references as links named by the record
//! they reach (when it was read along: `expand`), structured values pretty-printed. And
//! the other way: a record's values as a form starts with them.

use chrono::{DateTime, NaiveDate, Utc};
use gable_app::service::Shown;
use serde_json::Value as Json;
use uuid::Uuid;

use super::describe::{name_field, singular};
use crate::domain::collections::collection;
use crate::domain::expand::Related;
use crate::domain::record::Record;
use crate::domain::registry::{Collection, Field, JsonShape, Ty};
use crate::domain::value::{money_fixed, Val};

/// Where a record's page is.
pub fn href(c: &str, id: Uuid) -> String {
    format!("/console/{c}/{id}")
}

/// The end of an id: what tells records made in the same millisecond apart (an id's
/// start is its time).
pub fn short_id(id: Uuid) -> String {
    let s = id.simple().to_string();
    s[s.len() - 8..].to_string()
}

/// A record's name for people: its name field, or its kind and the end of its id.
pub fn title(c: &Collection, r: &Record) -> String {
    name_field(c)
        .and_then(|f| r.get(f.name).as_str())
        .filter(|s| !s.trim().is_empty())
        .map(String::from)
        .unwrap_or_else(|| format!("{} {}", super::describe::capitalised(&singular(c)), short_id(r.id)))
}

/// `123456789` minor units of USD → `1,234,567.89 USD`.
pub fn money(minor: i64, currency: Option<&str>) -> String {
    let fixed = money_fixed(minor, currency);
    let (sign, digits) = fixed.strip_prefix('-').map_or(("", fixed.as_str()), |d| ("-", d));
    let (int, frac) = digits.split_once('.').map_or((digits, None), |(i, f)| (i, Some(f)));
    let mut grouped = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    let amount = match frac {
        Some(f) => format!("{sign}{grouped}.{f}"),
        None => format!("{sign}{grouped}"),
    };
    match currency {
        Some(cur) => format!("{amount} {cur}"),
        None => amount,
    }
}

/// `2026-03-01` → `1 Mar 2026`.
pub fn date(d: &NaiveDate) -> String {
    d.format("%-d %b %Y").to_string()
}

/// A time, in UTC as Gable keeps it: `1 Mar 2026, 14:05 UTC`.
pub fn datetime(t: &DateTime<Utc>) -> String {
    t.format("%-d %b %Y, %H:%M UTC").to_string()
}

/// An address on one line: `12 Oak St, Springfield, US`.
fn address(j: &Json) -> Option<String> {
    let o = j.as_object()?;
    let parts: Vec<&str> = ["line1", "line2", "city", "region", "postal_code", "country"]
        .iter()
        .filter_map(|k| o.get(*k).and_then(Json::as_str))
        .filter(|s| !s.is_empty())
        .collect();
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// People on one line each: `Ada Lovelace <ada@example.com>`.
fn people(j: &Json) -> Option<String> {
    let items = j.as_array()?;
    let lines: Vec<String> = items
        .iter()
        .filter_map(|p| {
            let name = p.get("name")?.as_str()?;
            Some(match p.get("email").and_then(Json::as_str) {
                Some(email) => format!("{name} <{email}>"),
                None => name.to_string(),
            })
        })
        .collect();
    (!lines.is_empty()).then(|| lines.join("\n"))
}

/// A reference as a link, named by the referenced record when it was read along.
fn reference(target: &str, id: Uuid, found: Option<&Record>) -> (String, String) {
    let text = match (found, collection(target)) {
        (Some(r), Some(tc)) => title(tc, r),
        _ => format!("{} {}", collection(target).map(singular).unwrap_or_default(), short_id(id)),
    };
    (text, href(target, id))
}

/// `field` of `r` for people; `related` holds the records its references expanded to.
pub fn shown(f: &Field, r: &Record, related: &Related) -> Shown {
    let v = r.get(f.name);
    if v.is_null() {
        return Shown::Empty;
    }
    match (f.ty, v) {
        (Ty::Money, Val::Money(m)) => Shown::Money(money(*m, r.currency())),
        (Ty::Date, Val::Date(d)) => Shown::Text(date(d)),
        (Ty::DateTime, Val::DateTime(t)) => Shown::Text(datetime(t)),
        (Ty::Enum(_), Val::Str(s)) => Shown::Badge(s.clone()),
        (Ty::Bool, Val::Bool(b)) => Shown::Text(if *b { "Yes" } else { "No" }.into()),
        (Ty::Ref(target), Val::Uuid(id)) => {
            let found = related.of(f.name).and_then(|p| p.records.get(id));
            let (text, href) = reference(target, *id, found);
            Shown::Link { text, href }
        }
        (Ty::RefList(target), Val::Json(Json::Array(items))) => Shown::Links(
            items
                .iter()
                .filter_map(|i| i.as_str().and_then(|s| Uuid::parse_str(s).ok()))
                .map(|id| reference(target, id, related.of(f.name).and_then(|p| p.records.get(&id))))
                .collect(),
        ),
        (Ty::StrList { .. }, Val::Json(Json::Array(items))) => {
            Shown::Text(items.iter().filter_map(Json::as_str).collect::<Vec<_>>().join(", "))
        }
        (Ty::Json(JsonShape::Address), Val::Json(j)) => address(j).map_or(Shown::Empty, Shown::Text),
        (Ty::Json(JsonShape::People), Val::Json(j)) => people(j).map_or_else(|| code(j), Shown::Text),
        (_, Val::Json(j)) => code(j),
        (_, Val::Str(s)) => Shown::Text(s.clone()),
        (_, Val::Int(i)) => Shown::Text(i.to_string()),
        (_, Val::Num(n)) => Shown::Text(n.to_string()),
        // An event's call: its page in the request log.
        (Ty::Uuid, Val::Uuid(u)) if f.name == "request_id" => {
            Shown::Link { text: u.to_string(), href: format!("/console/request-logs/{u}") }
        }
        (_, Val::Uuid(u)) => Shown::Text(u.to_string()),
        (_, other) => Shown::Text(crate::domain::value::to_json(other, r.currency()).to_string()),
    }
}

fn code(j: &Json) -> Shown {
    Shown::Code(serde_json::to_string_pretty(j).unwrap_or_default())
}

/// A system field (`id`, `created_at`, `updated_at`) for people.
pub fn system(name: &str, r: &Record) -> Shown {
    match name {
        "id" => Shown::Text(r.id.to_string()),
        "created_at" => Shown::Text(datetime(&r.created_at)),
        "updated_at" => Shown::Text(datetime(&r.updated_at)),
        _ => Shown::Empty,
    }
}

/// A column of a list: a system field or one of the collection's.
pub fn column(c: &Collection, name: &str, r: &Record, related: &Related) -> Shown {
    match c.field(name) {
        Some(f) => shown(f, r, related),
        None => system(name, r),
    }
}

/// `field` of `r` as a form's inputs start with it: one input, or an address's parts
/// (`address.city`).
pub fn form_texts(f: &Field, r: &Record) -> Vec<(String, String)> {
    match (f.ty, r.get(f.name)) {
        (Ty::Json(JsonShape::Address), v) => gable_app::service::ADDRESS_PARTS
            .iter()
            .map(|(part, _)| {
                let text = match v {
                    Val::Json(j) => j.get(*part).and_then(Json::as_str).unwrap_or_default().to_string(),
                    _ => String::new(),
                };
                (format!("{}.{part}", f.name), text)
            })
            .collect(),
        _ => vec![(f.name.to_string(), form_text(f, r))],
    }
}

/// `field` of `r` as a form's input starts with it: what a person would type.
pub fn form_text(f: &Field, r: &Record) -> String {
    match r.get(f.name) {
        Val::Null => String::new(),
        Val::Str(s) => s.clone(),
        Val::Int(i) => i.to_string(),
        Val::Num(n) => n.to_string(),
        Val::Bool(b) => b.to_string(),
        Val::Money(m) => money_fixed(*m, r.currency()),
        Val::Date(d) => d.format("%Y-%m-%d").to_string(),
        // What `<input type="datetime-local">` takes; the form says it is UTC.
        Val::DateTime(t) => t.format("%Y-%m-%dT%H:%M").to_string(),
        Val::Uuid(u) => u.to_string(),
        Val::Json(Json::Array(items)) if matches!(f.ty, Ty::StrList { .. } | Ty::RefList(_)) => {
            items.iter().filter_map(Json::as_str).collect::<Vec<_>>().join("\n")
        }
        Val::Json(j) => serde_json::to_string_pretty(j).unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn amounts_read_as_people_write_them() {
        assert_eq!(money(123_456_789, Some("USD")), "1,234,567.89 USD");
        assert_eq!(money(-5000, Some("USD")), "-50.00 USD");
        assert_eq!(money(1250, Some("JPY")), "1,250 JPY");
        assert_eq!(money(99, Some("EUR")), "0.99 EUR");
        assert_eq!(money(100_000, None), "1,000.00");
    }

    #[test]
    fn dates_read_in_words() {
        assert_eq!(date(&NaiveDate::from_ymd_opt(2026, 3, 1).unwrap()), "1 Mar 2026");
        let t = DateTime::parse_from_rfc3339("2026-03-01T14:05:09Z").unwrap().with_timezone(&Utc);
        assert_eq!(datetime(&t), "1 Mar 2026, 14:05 UTC");
    }
}
