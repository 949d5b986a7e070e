//! Result rows on either database, and decoding their columns into Rust values.

use sqlx::postgres::PgRow;
use sqlx::Row as _;
use uuid::Uuid;

use crate::error::{Error, Result};

/// A result row on either database.
pub enum Row {
    Postgres(PgRow),
    /// A row of SQLite (read through rusqlite), owned: names and values.
    Owned(std::sync::Arc<[String]>, Vec<rusqlite::types::Value>),
}

/// A column of a result row: by name, or by position (what a caller that chose the
/// columns' order uses, saving a search of the names for every value).
pub trait Col: sqlx::ColumnIndex<PgRow> + Copy + std::fmt::Display {
    fn position(self, names: &[String]) -> Option<usize>;
}

impl Col for &str {
    fn position(self, names: &[String]) -> Option<usize> {
        names.iter().position(|n| n == self)
    }
}

impl Col for usize {
    fn position(self, names: &[String]) -> Option<usize> {
        (self < names.len()).then_some(self)
    }
}

impl Row {
    /// An owned row's value.
    fn owned<'a>(names: &[String], vals: &'a [rusqlite::types::Value], col: impl Col) -> Result<&'a rusqlite::types::Value> {
        col.position(names).map(|i| &vals[i]).ok_or_else(|| Error::internal(anyhow::anyhow!("no column {col}")))
    }

    fn owned_mismatch(col: impl Col) -> Error {
        Error::internal(anyhow::anyhow!("column {col} has an unexpected type"))
    }

    /// Text stored by SQLite, borrowed: for types it has no column type for (uuids,
    /// dates, JSON), parsed from it without a copy.
    fn owned_text<'a>(names: &[String], vals: &'a [rusqlite::types::Value], col: impl Col) -> Result<Option<&'a str>> {
        use rusqlite::types::Value as V;
        match Self::owned(names, vals, col)? {
            V::Null => Ok(None),
            V::Text(s) => Ok(Some(s)),
            _ => Err(Self::owned_mismatch(col)),
        }
    }

    pub fn opt_string(&self, col: impl Col) -> Result<Option<String>> {
        Ok(match self {
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(n, v) => Self::owned_text(n, v, col)?.map(str::to_owned),
        })
    }
    pub fn opt_i64(&self, col: impl Col) -> Result<Option<i64>> {
        use rusqlite::types::Value as V;
        Ok(match self {
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(n, v) => match Self::owned(n, v, col)? {
                V::Null => None,
                V::Integer(i) => Some(*i),
                _ => return Err(Self::owned_mismatch(col)),
            },
        })
    }
    pub fn opt_f64(&self, col: impl Col) -> Result<Option<f64>> {
        use rusqlite::types::Value as V;
        Ok(match self {
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(n, v) => match Self::owned(n, v, col)? {
                V::Null => None,
                V::Real(f) => Some(*f),
                V::Integer(i) => Some(*i as f64),
                _ => return Err(Self::owned_mismatch(col)),
            },
        })
    }
    pub fn opt_bool(&self, col: impl Col) -> Result<Option<bool>> {
        Ok(match self {
            Row::Postgres(r) => r.try_get(col)?,
            Row::Owned(..) => self.opt_i64(col)?.map(|i| i != 0),
        })
    }
    pub fn opt_uuid(&self, col: impl Col) -> Result<Option<Uuid>> {
        Ok(match self {
            Row::Owned(n, v) => match Self::owned_text(n, v, col)? {
                Some(s) => Some(Uuid::parse_str(s).map_err(Error::internal)?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_date(&self, col: impl Col) -> Result<Option<chrono::NaiveDate>> {
        Ok(match self {
            Row::Owned(n, v) => match Self::owned_text(n, v, col)? {
                Some(s) => Some(crate::domain::value::parse_date(s).ok_or_else(|| Error::internal(anyhow::anyhow!("bad date in {col}")))?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_datetime(&self, col: impl Col) -> Result<Option<chrono::DateTime<chrono::Utc>>> {
        Ok(match self {
            Row::Owned(n, v) => match Self::owned_text(n, v, col)? {
                Some(s) => {
                    Some(crate::domain::value::parse_datetime(s).ok_or_else(|| Error::internal(anyhow::anyhow!("bad time in {col}")))?)
                }
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }
    pub fn opt_json(&self, col: impl Col) -> Result<Option<serde_json::Value>> {
        Ok(match self {
            Row::Owned(n, v) => match Self::owned_text(n, v, col)? {
                Some(s) => Some(serde_json::from_str(s).map_err(Error::internal)?),
                None => None,
            },
            Row::Postgres(r) => r.try_get(col)?,
        })
    }

    /// A JSON list of strings (scopes, permissions); empty when NULL.
    pub fn strings(&self, col: impl Col) -> Result<Vec<String>> {
        match self.opt_json(col)? {
            Some(v) if !v.is_null() => serde_json::from_value(v).map_err(Error::internal),
            _ => Ok(vec![]),
        }
    }
}
