//! What every handler reads from its address the same way: the query's pairs and a
//! record's id in the path.

use uuid::Uuid;

use crate::error::{Error, Result};

/// A query string's pairs, decoded, in order (none without a query).
pub(super) fn pairs(raw: Option<String>) -> Vec<(String, String)> {
    raw.map(|q| url::form_urlencoded::parse(q.as_bytes()).into_owned().collect()).unwrap_or_default()
}

/// A record's id from its path: `400 invalid_parameter` naming `id` if it is no UUID.
pub(super) fn record_id(raw: &str) -> Result<Uuid> {
    Uuid::parse_str(raw).map_err(|_| Error::parameter("id", "must be a uuid"))
}
