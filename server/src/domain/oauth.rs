//! OAuth 2.1 for third-party apps (`docs/oauth.md`): the rules of the
//! authorization server that need no HTTP and no SQL — PKCE (RFC 7636, S256 only),
//! redirect URIs (exact match; https, or http on loopback), scope requests and what a
//! user's role lets them grant, and the lifetimes and prefixes of what it issues.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use chrono::Duration;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

use super::scopes;

/// How long an authorization code may be exchanged (OAuth 2.1 recommends at most 10 minutes).
pub const CODE_LIFETIME: Duration = Duration::minutes(10);
/// How long an access token works.
pub const ACCESS_LIFETIME: Duration = Duration::hours(1);
/// How long an unused refresh token lives (each use rotates it).
pub const REFRESH_LIFETIME: Duration = Duration::days(90);

/// Prefixes of what the authorization server issues: public ids and secrets alike say
/// what they are, so a leaked one is recognised (and secret scanners can match them).
pub const CLIENT_ID_PREFIX: &str = "gci_";
pub const CLIENT_SECRET_PREFIX: &str = "gcs_";
pub const CODE_PREFIX: &str = "gac_";
pub const ACCESS_PREFIX: &str = "gat_";
pub const REFRESH_PREFIX: &str = "grt_";

/// The most redirect URIs a client registers.
pub const MAX_REDIRECT_URIS: usize = 10;

/// Why a PKCE challenge in an authorization request is refused (an `invalid_request`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PkceRefusal {
    Missing,
    /// `plain` or anything else but `S256`.
    Method(String),
    Malformed,
}

impl PkceRefusal {
    pub fn describe(&self) -> String {
        match self {
            PkceRefusal::Missing => "code_challenge is required (PKCE with S256)".into(),
            PkceRefusal::Method(m) if m.is_empty() => "code_challenge_method is required and must be S256".into(),
            PkceRefusal::Method(m) => format!("code_challenge_method `{m}` is not supported; use S256"),
            PkceRefusal::Malformed => "code_challenge must be the base64url SHA-256 of the verifier (43 characters)".into(),
        }
    }
}

/// Checks an authorization request's challenge: S256, and shaped as a SHA-256 in base64url.
pub fn check_challenge(challenge: Option<&str>, method: Option<&str>) -> Result<(), PkceRefusal> {
    let challenge = challenge.filter(|c| !c.is_empty()).ok_or(PkceRefusal::Missing)?;
    match method {
        Some("S256") => {}
        other => return Err(PkceRefusal::Method(other.unwrap_or_default().to_string())),
    }
    let decoded = URL_SAFE_NO_PAD.decode(challenge).map_err(|_| PkceRefusal::Malformed)?;
    if challenge.len() != 43 || decoded.len() != 32 {
        return Err(PkceRefusal::Malformed);
    }
    Ok(())
}

/// Whether `verifier` (RFC 7636 §4.1: 43–128 unreserved characters) hashes to `challenge`,
/// compared in constant time.
pub fn verify_pkce(verifier: &str, challenge: &str) -> bool {
    let shaped = (43..=128).contains(&verifier.len())
        && verifier.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'));
    let computed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
    shaped & bool::from(computed.as_bytes().ct_eq(challenge.as_bytes()))
}

/// Whether a redirect URI may be registered: absolute, no fragment, and `https` — or
/// `http` on a loopback host (native apps, RFC 8252 §7.3). Returns why not.
pub fn check_redirect_uri(uri: &str) -> Result<(), String> {
    let u = url::Url::parse(uri).map_err(|_| format!("`{uri}` is not an absolute URL"))?;
    if u.fragment().is_some() {
        return Err("a redirect URI has no fragment".into());
    }
    if !u.username().is_empty() || u.password().is_some() {
        return Err("a redirect URI carries no credentials".into());
    }
    match u.scheme() {
        "https" if u.host().is_some() => Ok(()),
        "http" if is_loopback(&u) => Ok(()),
        "http" => Err("http redirect URIs are allowed on loopback hosts only (127.0.0.1, [::1], localhost); use https".into()),
        s => Err(format!("the scheme `{s}` is not allowed; use https (or http on a loopback host)")),
    }
}

fn is_loopback(u: &url::Url) -> bool {
    match u.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}

/// Whether `given` is one of the client's registered redirect URIs, character for character.
pub fn redirect_matches(registered: &[String], given: &str) -> bool {
    registered.iter().any(|r| r == given)
}

/// The scopes of an authorization request (`scope`: space-separated), each a scope Gable
/// has, without repeats; empty is refused (an app says what it wants).
pub fn parse_scope(scope: &str) -> Result<Vec<String>, String> {
    let mut out: Vec<String> = vec![];
    for s in scope.split(' ').filter(|s| !s.is_empty()) {
        if !scopes::is_valid(s) {
            return Err(format!("`{s}` is not a scope of Gable"));
        }
        if !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    }
    if out.is_empty() {
        return Err("scope is required: name what the app asks for, e.g. `properties:read leases:read`".into());
    }
    Ok(out)
}

/// Splits requested scopes into what a user holding `held` (their role's scopes) may
/// grant and what they may not: nobody grants more than they hold.
pub fn grantable(requested: &[String], held: &[String]) -> (Vec<String>, Vec<String>) {
    requested.iter().cloned().partition(|s| scopes::covers(held, s))
}

/// A scope in words, for the consent page: what it really allows, including where a
/// scope reaches other records (events carry them; webhooks send them) and where it
/// needs others to do anything (`docs/api.md`, "What a scope reaches").
pub fn describe_scope(scope: &str) -> String {
    match scope {
        "*" => "Everything: read and change all of your data, your team's roles and your webhooks".into(),
        "*:read" => "Read all of your data, including events and the webhook delivery register".into(),
        "events:read" => "Read events about the records it may also read".into(),
        "webhooks:read" => "Read your webhook subscriptions (never their signing secrets)".into(),
        "webhooks:write" => {
            "Create and change webhook subscriptions, for the events of records it may also read (they are sent in full)".into()
        }
        "webhook-deliveries:read" => {
            "Read the webhook delivery register (attempts, and receivers' answers to events of records it may also read; not what was sent)"
                .into()
        }
        "reports:read" => "Read reports, of the kinds whose records it may also read".into(),
        "reports:write" => "Read and request reports, of the kinds whose records it may also read".into(),
        "flow-tokens:write" => "Create tokens for embeddable flows, for the flows its other permissions allow".into(),
        "users:write" => "Read, create and change users, giving no one more than it holds itself".into(),
        "roles:write" => "Read, create and change roles, with no more than it holds itself".into(),
        _ => match scope.split_once(':') {
            Some((c, "read")) => format!("Read {}", c.replace('-', " ")),
            Some((c, "write")) => format!("Read, create and change {}", c.replace('-', " ")),
            _ => scope.to_string(),
        },
    }
}

/// `uri` with the query parameters added (kept in order; its own query stays in front).
pub fn redirect_with(uri: &str, params: &[(&str, &str)]) -> Option<String> {
    let mut u = url::Url::parse(uri).ok()?;
    {
        let mut q = u.query_pairs_mut();
        for (k, v) in params {
            q.append_pair(k, v);
        }
    }
    Some(u.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 7636 Appendix B.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    #[test]
    fn pkce_is_s256_only() {
        assert_eq!(check_challenge(Some(CHALLENGE), Some("S256")), Ok(()));
        assert_eq!(check_challenge(None, Some("S256")), Err(PkceRefusal::Missing));
        assert_eq!(check_challenge(Some(CHALLENGE), Some("plain")), Err(PkceRefusal::Method("plain".into())));
        assert_eq!(check_challenge(Some(CHALLENGE), None), Err(PkceRefusal::Method(String::new())));
        assert_eq!(check_challenge(Some("short"), Some("S256")), Err(PkceRefusal::Malformed));
        assert_eq!(check_challenge(Some(&format!("{CHALLENGE}=")), Some("S256")), Err(PkceRefusal::Malformed));
    }

    #[test]
    fn the_verifier_must_hash_to_the_challenge() {
        assert!(verify_pkce(VERIFIER, CHALLENGE));
        assert!(!verify_pkce(&VERIFIER.replace('d', "e"), CHALLENGE));
        assert!(!verify_pkce(VERIFIER, &CHALLENGE.replace('E', "F")));
        // `plain` would compare the verifier itself: never accepted.
        assert!(!verify_pkce(CHALLENGE, CHALLENGE));
        let short = "abc";
        assert!(!verify_pkce(short, &URL_SAFE_NO_PAD.encode(Sha256::digest(short))), "43 to 128 characters");
        let odd = format!("{VERIFIER}!");
        assert!(!verify_pkce(&odd, &URL_SAFE_NO_PAD.encode(Sha256::digest(&odd))), "unreserved characters only");
    }

    #[test]
    fn redirect_uris_are_https_or_loopback_http() {
        for ok in [
            "https://app.example.com/callback",
            "https://app.example.com/cb?x=1",
            "http://127.0.0.1:8765/cb",
            "http://[::1]/cb",
            "http://localhost:3000/cb",
        ] {
            assert_eq!(check_redirect_uri(ok), Ok(()), "{ok}");
        }
        for bad in [
            "http://app.example.com/cb",
            "https://app.example.com/cb#frag",
            "javascript:alert(1)",
            "/relative",
            "https://u:p@app.example.com/cb",
            "ftp://x/cb",
        ] {
            assert!(check_redirect_uri(bad).is_err(), "{bad}");
        }
        let registered = vec!["https://app.example.com/cb".to_string()];
        assert!(redirect_matches(&registered, "https://app.example.com/cb"));
        for near in
            ["https://app.example.com/cb/", "https://app.example.com/cb?x=1", "https://APP.example.com/cb", "https://app.example.com/c"]
        {
            assert!(!redirect_matches(&registered, near), "{near}");
        }
    }

    #[test]
    fn scopes_are_parsed_and_capped_by_what_the_user_holds() {
        assert_eq!(parse_scope("properties:read  leases:read properties:read").unwrap(), vec!["properties:read", "leases:read"]);
        assert!(parse_scope("").is_err());
        assert!(parse_scope("properties:read root").is_err());
        let requested = parse_scope("properties:read payments:write").unwrap();
        let (ok, refused) = grantable(&requested, &["*:read".to_string()]);
        assert_eq!((ok, refused), (vec!["properties:read".to_string()], vec!["payments:write".to_string()]));
        let (ok, refused) = grantable(&requested, &["*".to_string()]);
        assert_eq!((ok.len(), refused.len()), (2, 0));
    }

    #[test]
    fn scopes_read_as_words() {
        assert_eq!(describe_scope("purchase-orders:write"), "Read, create and change purchase orders");
        assert_eq!(describe_scope("leases:read"), "Read leases");
        assert!(describe_scope("*:read").starts_with("Read all of your data"));
        assert!(describe_scope("webhooks:write").contains("records it may also read"));
        assert!(describe_scope("events:read").contains("records it may also read"));
    }

    #[test]
    fn redirects_keep_the_clients_query() {
        assert_eq!(
            redirect_with("https://app.example.com/cb?x=1", &[("code", "gac_1"), ("state", "a b")]).unwrap(),
            "https://app.example.com/cb?x=1&code=gac_1&state=a+b"
        );
    }
}
