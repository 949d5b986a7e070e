//! Values bound to statements, and how each database receives them. The store writes
//! every value in its typed form (a `Uuid`, a `DateTime<Utc>`, a `NaiveDate`, JSON),
//! which is what PostgreSQL's columns take; SQLite has no such column types, so its
//! forms are made here, once, as its statements run: uuids, times, dates and JSON as
//! text. The text forms sort as the values do, which keyset paging and range
//! conditions rely on. Reading back is the mirror, in [`super::Row`].

use sea_query::Value;
use sea_query_rusqlite::{RusqliteValue, RusqliteValues};

use crate::domain::registry::Ty;
use crate::domain::value::{format_datetime, Val};

/// A field value as a bound SQL value, typed for its column even when NULL (PostgreSQL
/// binds a NULL with its type).
pub fn bind(ty: Ty, v: &Val) -> Value {
    match v {
        Val::Null => match ty {
            Ty::Int { .. } | Ty::Money => Value::BigInt(None),
            Ty::Num { .. } => Value::Double(None),
            Ty::Bool => Value::Bool(None),
            Ty::Date => Value::ChronoDate(None),
            Ty::DateTime => Value::ChronoDateTimeUtc(None),
            Ty::Ref(_) | Ty::Uuid => Value::Uuid(None),
            Ty::StrList { .. } | Ty::RefList(_) | Ty::Json(_) | Ty::Metadata => Value::Json(None),
            _ => Value::String(None),
        },
        Val::Str(s) => s.clone().into(),
        Val::Int(i) | Val::Money(i) => (*i).into(),
        Val::Num(f) => (*f).into(),
        Val::Bool(b) => (*b).into(),
        Val::Date(d) => (*d).into(),
        Val::DateTime(t) => (*t).into(),
        Val::Uuid(u) => (*u).into(),
        Val::Json(j) => j.clone().into(),
    }
}

/// A statement's values as SQLite stores them.
pub(super) fn for_sqlite(values: sea_query::Values) -> RusqliteValues {
    RusqliteValues(values.into_iter().map(|v| RusqliteValue(sqlite(v))).collect())
}

fn sqlite(v: Value) -> Value {
    match v {
        Value::Uuid(u) => Value::String(u.map(|u| Box::new(u.to_string()))),
        Value::ChronoDateTimeUtc(t) => Value::String(t.map(|t| Box::new(format_datetime(&t)))),
        Value::ChronoDate(d) => Value::String(d.map(|d| Box::new(d.format("%Y-%m-%d").to_string()))),
        Value::Json(j) => Value::String(j.map(|j| Box::new(j.to_string()))),
        v => v,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::{NaiveDate, TimeZone, Utc};
    use uuid::Uuid;

    #[test]
    fn sqlite_gets_the_text_forms_it_stores() {
        let id = Uuid::from_u128(7);
        let at = Utc.with_ymd_and_hms(2026, 11, 27, 9, 30, 0).unwrap();
        let day = NaiveDate::from_ymd_opt(2026, 2, 3).unwrap();
        assert_eq!(sqlite(id.into()), Value::from(id.to_string()));
        assert_eq!(sqlite(at.into()), Value::from("2026-11-27T09:30:00.000000Z"));
        assert_eq!(sqlite(day.into()), Value::from("2026-02-03"));
        assert_eq!(sqlite(serde_json::json!({"a": 1}).into()), Value::from(r#"{"a":1}"#));
        assert_eq!(sqlite(Value::Uuid(None)), Value::String(None));
        assert_eq!(sqlite(Value::BigInt(Some(3))), Value::BigInt(Some(3)));
    }

    #[test]
    fn a_null_keeps_its_columns_type() {
        assert_eq!(bind(Ty::Uuid, &Val::Null), Value::Uuid(None));
        assert_eq!(bind(Ty::Money, &Val::Null), Value::BigInt(None));
        assert_eq!(bind(Ty::Date, &Val::Null), Value::ChronoDate(None));
    }
}
