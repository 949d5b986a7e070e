//! The request log's rules, in plain Rust: what of a call and its answer is kept, and the
//! secrets taken out of it before anything is written.
//!
//! Redaction works on the text as it was sent, never on a re-serialised copy, so a body
//! reads as the client wrote it (key order, spacing) and a body cut at [`BODY_LIMIT`],
//! no longer valid JSON, is redacted as well as a whole one. Two rules, everywhere (path,
//! query, headers, bodies):
//! - **by form**: Gable's own secrets carry a prefix that says what they are (API keys
//!   `gbl_live_`/`gbl_test_`, webhook secrets `whsec_`, flow tokens `gft_`, OAuth access
//!   and refresh tokens, codes and client secrets `gat_`/`grt_`/`gac_`/`gcs_`); the
//!   prefix is kept and the rest replaced, wherever such a token appears;
//! - **by name**: the value of a JSON member, query parameter or header whose name says it
//!   is a secret (`password`, `secret`, `token`, `authorization`, `cookie`, anything
//!   ending in `_secret`, `_token` or `password`, …) is replaced whatever it looks like.

use std::borrow::Cow;
use std::sync::LazyLock;

use regex::Regex;

/// How much of each body is kept: 64 KiB, cut at a character boundary.
pub const BODY_LIMIT: usize = 64 * 1024;
/// How long records are kept unless the settings say otherwise.
pub const DEFAULT_RETENTION_DAYS: u32 = 7;
/// What replaces a secret.
pub const REDACTED: &str = "[redacted]";

/// The prefixes of Gable's secrets.
pub const SECRET_PREFIXES: &[&str] = &["gbl_live_", "gbl_test_", "whsec_", "gft_", "gat_", "grt_", "gac_", "gcs_"];

/// A token of one of Gable's kinds: its prefix, then what makes it secret.
static BY_FORM: LazyLock<Regex> = LazyLock::new(|| {
    let prefixes: Vec<String> = SECRET_PREFIXES.iter().map(|p| regex::escape(p)).collect();
    Regex::new(&format!(r"({})[A-Za-z0-9_\-]+", prefixes.join("|"))).expect("a valid pattern")
});

/// A JSON member whose name says it holds a secret, and its value (a string, or any
/// scalar up to the next delimiter); also matches a cut body's last, unfinished string.
static BY_NAME_JSON: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#""([A-Za-z0-9_\-]{1,64})"(\s*:\s*)("(?:[^"\\]|\\.)*(?:"|\\?$)|[^,}\]\s{\["]+)"#).expect("a valid pattern")
});

/// Whether a member, parameter or header of this name holds a secret.
pub fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_lowercase().replace('-', "_");
    const EXACT: &[&str] = &[
        "password",
        "secret",
        "token",
        "authorization",
        "proxy_authorization",
        "cookie",
        "set_cookie",
        "api_key",
        "apikey",
        "x_api_key",
        "code",
        "code_verifier",
        "private_key",
        "master_key",
    ];
    EXACT.contains(&n.as_str()) || n.ends_with("_secret") || n.ends_with("_token") || n.ends_with("password") || n.ends_with("_key_secret")
}

/// Whether a JSON member of this name holds a secret. `code` is left alone here: the error
/// body's `error.code` is how an error is known (OAuth codes are caught by their form).
fn is_secret_member(name: &str) -> bool {
    is_secret_name(name) && !name.eq_ignore_ascii_case("code")
}

/// `text` with every token of Gable's kinds cut to its prefix and [`REDACTED`].
pub fn scrub(text: &str) -> Cow<'_, str> {
    // One pass to tell first: most text holds no token at all.
    if !BY_FORM.is_match(text) {
        return Cow::Borrowed(text);
    }
    BY_FORM.replace_all(text, |c: &regex::Captures| format!("{}{REDACTED}", &c[1]))
}

/// Words one of which every secret name holds (`is_secret_name`): a body without any of
/// them, most bodies, is not searched member by member.
static NAME_WORDS: LazyLock<regex::bytes::Regex> = LazyLock::new(|| {
    regex::bytes::Regex::new(r"(?i)password|secret|token|authorization|cookie|api_?key|code|private_key|master_key")
        .expect("a valid pattern")
});

/// A body (JSON, or any text) redacted by both rules; a body with nothing to redact (most
/// of them) is given back as it came, not copied.
pub fn redact_body(text: String) -> String {
    let named = match NAME_WORDS.is_match(text.as_bytes()) {
        false => None,
        true => match BY_NAME_JSON.replace_all(&text, |c: &regex::Captures| {
            if is_secret_member(&c[1]) {
                format!("\"{}\"{}\"{REDACTED}\"", &c[1], &c[2])
            } else {
                c[0].to_string()
            }
        }) {
            Cow::Owned(replaced) => Some(replaced),
            Cow::Borrowed(_) => None,
        },
    };
    let text = named.unwrap_or(text);
    let scrubbed = match scrub(&text) {
        Cow::Owned(scrubbed) => Some(scrubbed),
        Cow::Borrowed(_) => None,
    };
    scrubbed.unwrap_or(text)
}

/// A query string (without its `?`) redacted: a secret-named parameter's value, and any
/// value that holds one of Gable's tokens (also percent-encoded), become [`REDACTED`];
/// everything else stays as sent.
pub fn redact_query(query: &str) -> String {
    query
        .split('&')
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            let decoded_name = decode(name);
            let secret = is_secret_name(&decoded_name) || holds_token(&decode(value)) || holds_token(&decoded_name);
            match (secret, pair.contains('=')) {
                (false, _) => pair.to_string(),
                (true, true) if !holds_token(&decoded_name) => format!("{name}={REDACTED}"),
                (true, _) => REDACTED.to_string(),
            }
        })
        .collect::<Vec<_>>()
        .join("&")
}

/// A path with any segment that holds one of Gable's tokens (also percent-encoded)
/// replaced.
pub fn redact_path(path: &str) -> String {
    if !path.contains('_') && !path.contains('%') {
        return path.to_string();
    }
    path.split('/').map(|seg| if holds_token(&decode(seg)) { REDACTED } else { seg }).collect::<Vec<_>>().join("/")
}

/// A header's value as kept: [`REDACTED`] for a secret-named header, else scrubbed.
pub fn redact_header(name: &str, value: &str) -> String {
    if is_secret_name(name) {
        REDACTED.to_string()
    } else {
        scrub(value).into_owned()
    }
}

fn holds_token(text: &str) -> bool {
    SECRET_PREFIXES.iter().any(|p| text.contains(p)) && BY_FORM.is_match(text)
}

fn decode(s: &str) -> Cow<'_, str> {
    if !s.contains('%') && !s.contains('+') {
        return Cow::Borrowed(s);
    }
    Cow::Owned(url::form_urlencoded::parse(format!("x={s}").as_bytes()).next().map(|(_, v)| v.into_owned()).unwrap_or_default())
}

/// The first [`BODY_LIMIT`] bytes of a body as text (cut at a character boundary; bytes
/// that are not UTF-8 shown as U+FFFD and NUL, which PostgreSQL cannot store, too), and
/// whether it was cut. `total` is the body's whole length, of which `kept` is the start.
pub fn body_text(kept: &[u8], total: usize) -> (String, bool) {
    let mut end = kept.len().min(BODY_LIMIT);
    let cut = total > end;
    // Cut at a character boundary: step back over continuation bytes.
    if cut {
        while end > 0 && end < kept.len() && (kept[end] & 0xC0) == 0x80 {
            end -= 1;
        }
    }
    let text = String::from_utf8_lossy(&kept[..end]);
    let text = if text.contains('\0') { Cow::Owned(text.replace('\0', "\u{FFFD}")) } else { text };
    (text.into_owned(), cut)
}

/// `4xx` for 404.
pub fn status_class(status: u16) -> &'static str {
    match status / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        _ => "5xx",
    }
}

/// The `error.code` of an error body, if the body is one.
pub fn error_code(status: u16, body: &[u8]) -> Option<String> {
    if status < 400 {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Body {
        error: Inner,
    }
    #[derive(serde::Deserialize)]
    struct Inner {
        code: String,
    }
    serde_json::from_slice::<Body>(body).ok().map(|b| b.error.code).filter(|c| c.len() <= 64)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "gbl_test_3xAmPlEkEy0123456789abcdefghijABCDEFGHIJk";

    #[test]
    fn tokens_are_cut_to_their_prefix_wherever_they_are() {
        let text = format!("{{\"note\":\"use {KEY} here\",\"secret\":\"whsec_abc-DEF_123\"}}");
        let out = redact_body(text.clone());
        assert!(!out.contains("3xAmPlEkEy") && !out.contains("abc-DEF"), "{out}");
        assert!(out.contains("gbl_test_[redacted]"), "{out}");
        assert_eq!(scrub("nothing here"), "nothing here");
    }

    #[test]
    fn secret_members_are_replaced_whatever_they_hold() {
        let out = redact_body(r#"{"email":"a@b.c","password" : "hunter2","nested":{"client_secret":"xyz","refresh_token":null}}"#.into());
        assert_eq!(
            out,
            r#"{"email":"a@b.c","password" : "[redacted]","nested":{"client_secret":"[redacted]","refresh_token":"[redacted]"}}"#
        );
        // The error body's code stays: it is how an error is known.
        let err = r#"{"error":{"code":"validation_failed","message":"x"}}"#;
        assert_eq!(redact_body(err.into()), err);
        // An escaped quote inside a secret does not end it early.
        assert_eq!(redact_body(r#"{"password":"a\"b","x":1}"#.into()), r#"{"password":"[redacted]","x":1}"#);
    }

    #[test]
    fn a_cut_body_is_redacted_too() {
        let text = "{\"name\":\"x\",\"password\":\"hunter2 and more";
        assert_eq!(redact_body(text.into()), "{\"name\":\"x\",\"password\":\"[redacted]\"");
        let cut = &format!("{{\"key\":\"{KEY}")[..30];
        assert!(!redact_body(cut.into()).contains("3xAmPl"), "{}", redact_body(cut.into()));
    }

    #[test]
    fn queries_keep_their_form_but_not_their_secrets() {
        assert_eq!(redact_query("filter[status]=active&limit=5"), "filter[status]=active&limit=5");
        assert_eq!(redact_query("access_token=abc&limit=5"), "access_token=[redacted]&limit=5");
        assert_eq!(redact_query(&format!("q={KEY}")), "q=[redacted]");
        assert_eq!(redact_query("q=gbl%5Ftest%5Fabcdef0123"), "q=[redacted]");
        assert_eq!(redact_query(KEY), "[redacted]");
    }

    #[test]
    fn paths_and_headers() {
        assert_eq!(redact_path("/v1/leases/0190"), "/v1/leases/0190");
        assert_eq!(redact_path(&format!("/v1/leases/{KEY}")), "/v1/leases/[redacted]");
        assert_eq!(redact_header("Authorization", "Bearer x"), REDACTED);
        assert_eq!(redact_header("x-api-key", "anything"), REDACTED);
        assert_eq!(redact_header("user-agent", &format!("curl {KEY}")), "curl gbl_test_[redacted]");
        assert_eq!(redact_header("idempotency-key", "abc-123"), "abc-123");
    }

    #[test]
    fn bodies_are_cut_at_a_character_boundary() {
        let long = "é".repeat(BODY_LIMIT);
        let (text, cut) = body_text(long.as_bytes(), long.len());
        assert!(cut && text.len() <= BODY_LIMIT && text.chars().all(|c| c == 'é'));
        assert_eq!(body_text(b"{\"a\":1}", 7), ("{\"a\":1}".to_string(), false));
        assert_eq!(body_text(b"a\0b", 3).0, "a\u{FFFD}b");
    }

    #[test]
    fn error_codes_and_classes() {
        assert_eq!(error_code(404, br#"{"error":{"code":"not_found","message":"m"}}"#).as_deref(), Some("not_found"));
        assert_eq!(error_code(200, br#"{"error":{"code":"not_found"}}"#), None);
        assert_eq!(error_code(500, b"not json"), None);
        assert_eq!(status_class(429), "4xx");
        assert_eq!(status_class(503), "5xx");
    }
}
