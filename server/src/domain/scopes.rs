//! Credential scopes: `{collection}:read`, `{collection}:write`, `*:read` and `*`.

use super::collections::{collection, COLLECTIONS};
use crate::error::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// Checks that every scope names a real collection and access; `param` names the field.
pub fn validate(param: &str, scopes: &[String]) -> Result<()> {
    if scopes.is_empty() {
        return Err(Error::validation(param, "at least one scope is required"));
    }
    for s in scopes {
        if !is_valid(s) {
            return Err(Error::validation(
                param,
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

/// Whether the scopes `held` include everything the scope `wanted` grants: `*` only by
/// `*`, `*:read` by `*:read` or `*`, a collection's scope by any scope allowing that access.
pub fn covers(held: &[String], wanted: &str) -> bool {
    let has = |s: &str| held.iter().any(|h| h == s);
    match wanted {
        "*" => has("*"),
        "*:read" => has("*") || has("*:read"),
        other => match other.rsplit_once(':') {
            Some((c, "read")) => allows(held, c, Access::Read),
            Some((c, "write")) => allows(held, c, Access::Write),
            // Not a scope: only the holder of everything can hand it on (validation refuses it anyway).
            _ => has("*"),
        },
    }
}

/// The first of `wanted` that `held` does not cover, if any.
pub fn missing(held: &[String], wanted: &[String]) -> Option<String> {
    wanted.iter().find(|w| !covers(held, w)).cloned()
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

    #[test]
    fn only_what_is_held_is_covered() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(covers(&s(&["*"]), "*"));
        assert!(!covers(&s(&["*:read", "roles:write", "users:write"]), "*"));
        assert!(covers(&s(&["*:read"]), "leases:read"));
        assert!(!covers(&s(&["*:read"]), "leases:write"));
        assert!(!covers(&s(&["leases:read"]), "*:read"));
        assert!(covers(&s(&["leases:write"]), "leases:read"));
        assert_eq!(missing(&s(&["roles:write"]), &s(&["roles:read", "*"])), Some("*".to_string()));
        assert_eq!(missing(&s(&["*"]), &s(&["*", "*:read", "units:write"])), None);
    }
}
