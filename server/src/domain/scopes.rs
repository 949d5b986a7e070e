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

/// Collections whose records belong to no property and show the whole tenant's business
/// (the request log: every call of every integration): a property-limited credential
/// cannot hold their scopes, rather than holding them and seeing nothing.
pub const TENANT_WIDE_ONLY: &[&str] = &["request-logs"];

/// Refuses (naming `param`) a scope of a [`TENANT_WIDE_ONLY`] collection for a credential
/// limited to some properties.
pub fn validate_for_properties(param: &str, scopes: &[String]) -> Result<()> {
    for s in scopes {
        if let Some((c, _)) = s.rsplit_once(':') {
            if TENANT_WIDE_ONLY.contains(&c) {
                return Err(Error::validation(
                    param,
                    format!("`{s}` covers the whole account; a key limited to some properties cannot hold it"),
                ));
            }
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

/// The scopes that allow exactly what both `a` and `b` allow: `*` when both hold it,
/// `*:read` when both cover it, and one scope per collection for the rest (`{c}:write`,
/// or `{c}:read` where only reading is shared). The wildcards are kept only when both
/// cover them, since `*` also means "may grant anything". An OAuth grant acts with what
/// it holds *and* what its user's current role covers.
pub fn intersect(a: &[String], b: &[String]) -> Vec<String> {
    if covers(a, "*") && covers(b, "*") {
        return vec!["*".to_string()];
    }
    let both = |c: &str, access: Access| allows(a, c, access) && allows(b, c, access);
    let read_all = covers(a, "*:read") && covers(b, "*:read");
    let mut out = if read_all { vec!["*:read".to_string()] } else { vec![] };
    for c in COLLECTIONS {
        if both(c.name, Access::Write) {
            out.push(c.write_scope());
        } else if !read_all && both(c.name, Access::Read) {
            out.push(c.read_scope());
        }
    }
    out
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

    #[test]
    fn intersections_allow_only_what_both_allow() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(intersect(&s(&["*"]), &s(&["*"])), s(&["*"]));
        assert_eq!(intersect(&s(&["*"]), &s(&["*:read"])), s(&["*:read"]));
        assert_eq!(intersect(&s(&["*"]), &s(&["*:read", "users:write"])), s(&["*:read", "users:write"]));
        assert_eq!(intersect(&s(&["users:write", "leases:read"]), &s(&["*:read"])), s(&["users:read", "leases:read"]));
        assert_eq!(intersect(&s(&["users:write"]), &s(&["leases:write"])), Vec::<String>::new());
        assert_eq!(intersect(&s(&["leases:write"]), &s(&["leases:read", "units:write"])), s(&["leases:read"]));
        assert_eq!(intersect(&s(&["users:write"]), &[]), Vec::<String>::new());
        // Whatever the inputs, the result allows an access exactly when both do.
        let every_write: Vec<String> = COLLECTIONS.iter().map(|c| c.write_scope()).collect();
        assert!(!intersect(&every_write, &s(&["*"])).contains(&"*".to_string()), "`*` only from `*`");
        for (a, b) in [
            (s(&["*:read", "payments:write"]), s(&["payments:read", "*"])),
            (s(&["*"]), s(&["roles:write"])),
            (every_write, s(&["*:read"])),
        ] {
            let i = intersect(&a, &b);
            for c in COLLECTIONS {
                for access in [Access::Read, Access::Write] {
                    assert_eq!(
                        allows(&i, c.name, access),
                        allows(&a, c.name, access) && allows(&b, c.name, access),
                        "{} {access:?}",
                        c.name
                    );
                }
            }
        }
    }
}
