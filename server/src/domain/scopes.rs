//! Credential scopes: `{collection}:read`, `{collection}:write`, `*:read` and `*`.

use super::collections::{collection, COLLECTIONS};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// Checks that every scope names a real collection and access.
pub fn validate(scopes: &[String]) -> Result<()> {
    if scopes.is_empty() {
        return Err(Error::validation("scopes", "at least one scope is required"));
    }
    for s in scopes {
        if !is_valid(s) {
            return Err(Error::validation(
                "scopes",
                format!("`{s}` is not a scope; use `{{collection}}:read`, `{{collection}}:write`, `*:read` or `*`"),
            ));
        }
    }
    Ok(())
}

pub fn is_valid(s: &str) -> bool {
    if s == "*" || s == "*:read" {
        return true;
    }
    match s.rsplit_once(':') {
        Some((c, "read" | "write")) => collection(c).is_some(),
        _ => false,
    }
}

/// Whether a set of scopes grants `access` on `collection`.
pub fn allows(scopes: &[String], collection: &str, access: Access) -> bool {
    scopes.iter().any(|s| match s.as_str() {
        "*" => true,
        "*:read" => access == Access::Read,
        other => match other.rsplit_once(':') {
            Some((c, "write")) => c == collection,
            Some((c, "read")) => c == collection && access == Access::Read,
            _ => false,
        },
    })
}

/// Every scope name, for the API description.
pub fn all() -> Vec<String> {
    let mut v = vec!["*".to_string(), "*:read".to_string()];
    for c in COLLECTIONS {
        v.push(c.read_scope());
        v.push(c.write_scope());
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_implies_read_and_wildcards_work() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(allows(&s(&["leases:write"]), "leases", Access::Read));
        assert!(!allows(&s(&["leases:read"]), "leases", Access::Write));
        assert!(!allows(&s(&["leases:read"]), "units", Access::Read));
        assert!(allows(&s(&["*:read"]), "units", Access::Read));
        assert!(!allows(&s(&["*:read"]), "units", Access::Write));
        assert!(allows(&s(&["*"]), "units", Access::Write));
        assert!(is_valid("purchase-orders:write"));
        assert!(!is_valid("nope:read"));
        assert!(!is_valid("leases:admin"));
    }
}
