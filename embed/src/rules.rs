//! The flows' small rules: what a field accepts (checked on blur and on Continue, before
//! the server checks again), when a write needs a new `Idempotency-Key`, and the words
//! shown for the API's codes. Plain Rust, tested on the host.

use crate::dates::Date;
use crate::money;

/// What a field accepts. The messages say what to do, not what went wrong.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Rule {
    /// Anything, or nothing.
    Optional,
    /// A longer text (a description), or nothing.
    LongText,
    /// Some text.
    Required,
    /// An email address; `required` or else empty is fine.
    Email { required: bool },
    /// A phone number (digits with the usual punctuation), or nothing.
    Phone,
    /// A whole number in a range.
    Count { min: i64, max: i64 },
    /// An amount with at most `decimals` decimals.
    Amount { decimals: u32 },
    /// A date (`YYYY-MM-DD`); `required` or else empty is fine.
    Date { required: bool },
    /// A checkbox that must be checked (its value is non-empty when it is).
    Consent,
}

impl Rule {
    pub fn required(self) -> bool {
        matches!(
            self,
            Rule::Required
                | Rule::Email { required: true }
                | Rule::Count { .. }
                | Rule::Amount { .. }
                | Rule::Date { required: true }
                | Rule::Consent
        )
    }
}

/// The longest text a field takes (the API's own limit for such strings).
pub const MAX_TEXT: usize = 200;
/// The longest description the flows send.
pub const MAX_LONG_TEXT: usize = 5000;

/// Whether `value` is acceptable for `rule`; the message otherwise.
pub fn check(rule: Rule, value: &str) -> Result<(), String> {
    let v = value.trim();
    if v.is_empty() {
        return match rule {
            Rule::Consent => Err("Check this box to continue.".into()),
            r if r.required() => Err("This field is required.".into()),
            _ => Ok(()),
        };
    }
    let max = if rule == Rule::LongText { MAX_LONG_TEXT } else { MAX_TEXT };
    if v.chars().count() > max {
        return Err(format!("Use at most {max} characters."));
    }
    match rule {
        Rule::Optional | Rule::LongText | Rule::Required | Rule::Consent => Ok(()),
        Rule::Email { .. } => {
            let ok = v.split_once('@').is_some_and(|(user, host)| {
                !user.is_empty() && host.contains('.') && !host.starts_with('.') && !host.ends_with('.') && !host.contains('@')
            }) && !v.chars().any(char::is_whitespace);
            if ok {
                Ok(())
            } else {
                Err("Enter an email address like name@example.com.".into())
            }
        }
        Rule::Phone => {
            let digits = v.chars().filter(char::is_ascii_digit).count();
            let ok = (5..=20).contains(&digits) && v.chars().all(|c| c.is_ascii_digit() || " +-().".contains(c));
            if ok {
                Ok(())
            } else {
                Err("Enter a phone number, like +1 555 010 0100.".into())
            }
        }
        Rule::Count { min, max } => match v.parse::<i64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(()),
            _ => Err(format!("Enter a whole number from {min} to {max}.")),
        },
        Rule::Amount { decimals } => money::parse_input(v, decimals).map(|_| ()),
        Rule::Date { .. } => match Date::parse(v) {
            Some(_) if v.len() == 10 => Ok(()),
            _ => Err("Enter a date, like 2026-12-01.".into()),
        },
    }
}

/// How a write ended, for the key of the next attempt.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Outcome {
    /// The server answered (`2xx` or `4xx`): the key is spent, since Gable stores the
    /// answer and would replay it for that key. A new attempt needs a new key.
    Answered,
    /// No answer (network error), a server error (`5xx`, not stored), or the first
    /// request still running (`409 idempotency_key_in_use`): the same request may be
    /// sent again with the same key, and must be, so that it is made at most once.
    Retry,
}

/// The `Idempotency-Key` of a form's writes: one per attempt. An attempt is a request
/// body: retrying the same body after a network error reuses the key; a changed body (a
/// corrected field) or any answer from the server makes the next key new.
#[derive(Clone, Default, Debug)]
pub struct Keys {
    last: Option<(String, String)>,
}

impl Keys {
    pub fn key_for(&mut self, body: &str, fresh: impl FnOnce() -> String) -> String {
        match &self.last {
            Some((b, k)) if b == body => k.clone(),
            _ => {
                let k = fresh();
                self.last = Some((body.to_string(), k.clone()));
                k
            }
        }
    }

    pub fn settle(&mut self, outcome: Outcome) {
        if outcome == Outcome::Answered {
            self.last = None;
        }
    }
}

/// 16 random bytes as a version 4 UUID (`xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx`).
pub fn uuid_v4(mut b: [u8; 16]) -> String {
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let mut s = String::with_capacity(36);
    for (i, byte) in b.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            s.push('-');
        }
        s.push_str(&format!("{byte:02x}"));
    }
    s
}

/// An API code as words: `in_progress` → "In progress", `self_employed` → "Self employed".
pub fn humanize(code: &str) -> String {
    let mut s = code.replace('_', " ");
    if let Some(first) = s.get_mut(0..1) {
        first.make_ascii_uppercase();
    }
    s
}

/// What the page says when the flow cannot be shown, by the API's error code.
pub fn cannot_show(code: &str, message: &str) -> String {
    match code {
        "origin_mismatch" => "This form can be shown only on the website it was made for.".into(),
        // The website revoked the token: a reload gets the page's fresh one.
        "unauthenticated" if message.contains("revoked") => "This form has been closed. Reload the page to start again.".into(),
        "token_expired" => "This form has expired. Reload the page to start again.".into(),
        "unauthenticated" => "This form's link is not valid. Reload the page to start again.".into(),
        "network_error" => "The form could not reach Gable. Check your connection and reload the page.".into(),
        _ if message.is_empty() => "Something went wrong. Reload the page to try again.".into(),
        _ => message.to_string(),
    }
}

/// Whether the flow may be shown in its page: its token's origin is the page's parent
/// origin (which the page's `frame-ancestors` holds any framing page to). Both must be
/// known: an empty one matches nothing.
pub fn origin_matches(token_origin: &str, parent_origin: &str) -> bool {
    !token_origin.is_empty() && token_origin == parent_origin
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flow_shows_only_under_its_tokens_origin() {
        assert!(origin_matches("https://www.example.com", "https://www.example.com"));
        assert!(!origin_matches("https://www.example.com", "https://evil.example"));
        assert!(!origin_matches("https://www.example.com", "https://www.example.com:444"));
        assert!(!origin_matches("https://www.example.com", ""));
        assert!(!origin_matches("", ""));
    }

    #[test]
    fn fields() {
        assert!(check(Rule::Required, "  ").is_err());
        assert!(check(Rule::Optional, "").is_ok());
        assert!(check(Rule::Required, &"x".repeat(201)).is_err());
        assert!(check(Rule::LongText, &"x".repeat(201)).is_ok());
        assert!(check(Rule::LongText, &"x".repeat(5001)).is_err());
        assert!(check(Rule::Email { required: true }, "ada@example.com").is_ok());
        assert!(check(Rule::Email { required: true }, "").is_err());
        assert!(check(Rule::Email { required: false }, "").is_ok());
        for bad in ["ada", "ada@", "@example.com", "ada@example", "ada@.com", "a da@example.com", "a@b@c.com"] {
            assert!(check(Rule::Email { required: false }, bad).is_err(), "{bad}");
        }
        assert!(check(Rule::Phone, "+1 (555) 010-0100").is_ok());
        assert!(check(Rule::Phone, "call me").is_err());
        assert!(check(Rule::Phone, "").is_ok());
        assert!(check(Rule::Count { min: 1, max: 20 }, "2").is_ok());
        assert!(check(Rule::Count { min: 1, max: 20 }, "0").is_err());
        assert!(check(Rule::Count { min: 0, max: 20 }, "1.5").is_err());
        assert!(check(Rule::Count { min: 0, max: 20 }, "").is_err());
        assert!(check(Rule::Amount { decimals: 2 }, "2,500.00").is_ok());
        assert!(check(Rule::Amount { decimals: 2 }, "2.505").is_err());
        assert!(check(Rule::Date { required: false }, "").is_ok());
        assert!(check(Rule::Date { required: true }, "").is_err());
        assert!(check(Rule::Date { required: false }, "2026-02-30").is_err());
        assert!(check(Rule::Date { required: false }, "2026-12-01T00:00:00Z").is_err());
        assert!(check(Rule::Date { required: false }, "2026-12-01").is_ok());
        assert_eq!(check(Rule::Consent, ""), Err("Check this box to continue.".into()));
        assert!(check(Rule::Consent, "yes").is_ok());
    }

    #[test]
    fn one_key_per_attempt() {
        let mut n = 0;
        let mut fresh = || {
            n += 1;
            format!("key-{n}")
        };
        let mut keys = Keys::default();
        let a = keys.key_for("{\"a\":1}", &mut fresh);
        // A retry of the same body after a network error: the same key.
        keys.settle(Outcome::Retry);
        assert_eq!(keys.key_for("{\"a\":1}", &mut fresh), a);
        // A refusal (4xx) is stored by the server: the corrected request needs a new key,
        // and so does the same request sent again.
        keys.settle(Outcome::Answered);
        let b = keys.key_for("{\"a\":1}", &mut fresh);
        assert_ne!(a, b);
        // A changed body is a new attempt even without an answer.
        keys.settle(Outcome::Retry);
        let c = keys.key_for("{\"a\":2}", &mut fresh);
        assert_ne!(b, c);
    }

    #[test]
    fn uuids_and_words() {
        let u = uuid_v4([0xff; 16]);
        assert_eq!(u, "ffffffff-ffff-4fff-bfff-ffffffffffff");
        assert_eq!(uuid_v4([0; 16]), "00000000-0000-4000-8000-000000000000");
        assert_eq!(humanize("in_progress"), "In progress");
        assert_eq!(humanize(""), "");
        assert!(cannot_show("token_expired", "x").contains("expired"));
        assert!(cannot_show("origin_mismatch", "x").contains("website it was made for"));
        assert!(cannot_show("unauthenticated", "the flow token has been revoked; ask the page for a new one").contains("closed"));
        assert!(cannot_show("unauthenticated", "the flow token is not valid").contains("not valid"));
        assert_eq!(cannot_show("origin_forbidden", "the flow API answers …"), "the flow API answers …");
    }
}
