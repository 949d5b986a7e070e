//! Webhook rules, plain Rust (`docs/api.md`, "Webhooks"): which events a subscription takes, the
//! signing secret and signature, the retry schedule and when a failing subscription is
//! disabled. The delivery worker (`jobs::deliveries`) and the operations on webhooks
//! (`ops::behaviour::webhooks`) apply them.

use chrono::{DateTime, Duration, Utc};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use super::events::event_type;
use super::record::Record;
use super::registry::Collection;
use crate::error::{Error, Result};

/// The prefix of every signing secret; the HMAC key is the whole string, prefix included.
pub const SECRET_PREFIX: &str = "whsec_";
/// After a rotation the old secret keeps signing beside the new one this long.
pub const ROTATION_OVERLAP: Duration = Duration::hours(24);
/// A subscription whose deliveries have failed for this long, without one success, is disabled.
pub const DISABLE_AFTER: Duration = Duration::days(5);
/// The wait before each retry: after the first attempt fails, 5 s; then 5 min, 30 min,
/// 2 h, 5 h, 10 h, 10 h (each ±20 %). After the eighth attempt the delivery has failed.
pub const RETRY_SCHEDULE: [i64; 7] = [5, 5 * 60, 30 * 60, 2 * 3600, 5 * 3600, 10 * 3600, 10 * 3600];
/// Receivers should refuse signatures older than this (the SDKs and `verify` do).
pub const TOLERANCE_SECS: i64 = 300;

/// The collection a delivery attempt's body carries a record of, when the credential
/// holding `grants` may not read it: the body is then not shown, and neither is the
/// receiver's answer, which may echo the body (a receiver made for debugging often does).
/// `None` when the reader may see both (test events carry no record).
pub fn unreadable_carried(grants: &[String], delivery: &Record) -> Option<&'static Collection> {
    let t = event_type(delivery.get("event_type").as_str()?)?;
    let c = super::collections::collection(t.collection)?;
    (!super::scopes::allows(grants, c.name, super::scopes::Access::Read)).then_some(c)
}

/// Takes out of a delivery attempt what its reader may not see (`unreadable_carried`):
/// the receiver's answer. True when something was taken out.
pub fn conceal_from(grants: &[String], delivery: &mut Record) -> bool {
    if unreadable_carried(grants, delivery).is_none() {
        return false;
    }
    delivery.values.insert(RESPONSE_EXCERPT, super::value::Val::Null);
    true
}

/// The field of a delivery attempt that holds the start of the receiver's answer.
pub const RESPONSE_EXCERPT: &str = "response_excerpt";

/// What seals a subscription's secret to its row (the AEAD's associated data): a
/// sealed secret copied into another subscription does not open.
pub fn secret_context(tenant: uuid::Uuid, livemode: bool, webhook: uuid::Uuid) -> String {
    format!("webhook-secret:{tenant}:{livemode}:{webhook}")
}

/// A new signing secret: `whsec_` and 32 random bytes (256 bits) in URL-safe base64.
pub fn generate_secret() -> String {
    use base64::Engine as _;
    let mut bytes = [0u8; 32];
    rand::rngs::OsRng.fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Checks a subscription's event names: the contracts (`events::EVENT_TYPES`), or `*` alone.
pub fn check_events(names: &[String]) -> Result<()> {
    if names.is_empty() {
        return Err(Error::validation("events", "name at least one event type, or \"*\" for all"));
    }
    if names.iter().any(|n| n == "*") && names.len() > 1 {
        return Err(Error::validation("events", "\"*\" already takes every event type; give it alone"));
    }
    if let Some(unknown) = names.iter().find(|n| *n != "*" && event_type(n).is_none()) {
        return Err(Error::validation("events", format!("`{unknown}` is not an event type; see GET /v1/openapi.json (webhooks)")));
    }
    Ok(())
}

/// Whether a subscription to `names` takes an event of type `kind`.
pub fn takes(names: &[String], kind: &str) -> bool {
    names.iter().any(|n| n == "*" || n == kind)
}

/// The wait before attempt `next` (2 for the first retry …), or `None` when attempt
/// `next` would be one too many. `jitter` is in [-1, 1] and spreads the wait by ±20 %.
pub fn retry_delay(next: u32, jitter: f64) -> Option<Duration> {
    let base = *RETRY_SCHEDULE.get(next.checked_sub(2)? as usize)?;
    let spread = (base as f64 * 0.2 * jitter.clamp(-1.0, 1.0)) as i64;
    Some(Duration::seconds(base) + Duration::milliseconds(spread * 1000))
}

/// The most attempts one delivery gets.
pub const MAX_ATTEMPTS: u32 = RETRY_SCHEDULE.len() as u32 + 1;

/// Lowercase hex HMAC-SHA256 of `"<timestamp>.<body>"` under the secret string.
pub fn sign(secret: &str, timestamp: i64, body: &[u8]) -> String {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    hex::encode(mac.finalize().into_bytes())
}

/// The `Gable-Signature` header: one `v1=` value per secret, space-separated (two during
/// a rotation).
pub fn signature_header(secrets: &[&str], timestamp: i64, body: &[u8]) -> String {
    secrets.iter().map(|s| format!("v1={}", sign(s, timestamp, body))).collect::<Vec<_>>().join(" ")
}

/// Why a delivery does not verify.
#[derive(Debug, PartialEq, Eq)]
pub enum Unverified {
    MissingHeader(&'static str),
    BadTimestamp,
    /// Older (or further in the future) than the tolerance.
    Stale,
    NoMatchingSignature,
}

/// What a receiver does with a delivery: the timestamp is within `tolerance` of `now`,
/// and one of the `v1=` values is the signature under `secret` (compared in constant time).
pub fn verify(body: &[u8], timestamp: Option<&str>, signature: Option<&str>, secret: &str, now: DateTime<Utc>) -> Result<(), Unverified> {
    let ts = timestamp.ok_or(Unverified::MissingHeader("Gable-Timestamp"))?;
    let sig = signature.ok_or(Unverified::MissingHeader("Gable-Signature"))?;
    let ts: i64 = ts.trim().parse().map_err(|_| Unverified::BadTimestamp)?;
    if (now.timestamp() - ts).abs() > TOLERANCE_SECS {
        return Err(Unverified::Stale);
    }
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(secret.as_bytes()).expect("HMAC takes keys of any length");
    mac.update(ts.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    let expected = mac.finalize().into_bytes();
    let matched = sig
        .split_whitespace()
        .filter_map(|v| v.strip_prefix("v1="))
        .filter_map(|h| hex::decode(h).ok())
        .any(|given| subtle::ConstantTimeEq::ct_eq(given.as_slice(), expected.as_slice()).into());
    if matched {
        Ok(())
    } else {
        Err(Unverified::NoMatchingSignature)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_are_contracts_or_everything() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(check_events(&s(&["*"])).is_ok());
        assert!(check_events(&s(&["lease.signed", "payment.failed"])).is_ok());
        assert!(check_events(&s(&[])).is_err());
        assert!(check_events(&s(&["*", "lease.signed"])).is_err());
        let e = check_events(&s(&["lease.signed", "lease.exploded"])).unwrap_err();
        assert!(e.to_string().contains("lease.exploded"));
        assert!(takes(&s(&["*"]), "rent.due") && takes(&s(&["rent.due"]), "rent.due") && !takes(&s(&["rent.due"]), "lease.sent"));
    }

    #[test]
    fn retries_follow_the_schedule_with_jitter() {
        assert_eq!(retry_delay(2, 0.0), Some(Duration::seconds(5)));
        assert_eq!(retry_delay(3, 0.0), Some(Duration::minutes(5)));
        assert_eq!(retry_delay(8, 0.0), Some(Duration::hours(10)));
        assert_eq!(retry_delay(9, 0.0), None);
        assert_eq!(retry_delay(1, 0.0), None);
        assert_eq!(retry_delay(4, 1.0), Some(Duration::minutes(36)));
        assert_eq!(retry_delay(4, -1.0), Some(Duration::minutes(24)));
        assert_eq!(MAX_ATTEMPTS, 8);
    }

    #[test]
    fn signatures_verify_with_either_secret_and_refuse_tampering() {
        let (a, b) = (generate_secret(), generate_secret());
        assert!(a.starts_with("whsec_") && a.len() >= 6 + 43);
        let now = Utc::now();
        let ts = now.timestamp();
        let body = br#"{"id":"evt"}"#;
        let header = signature_header(&[&a, &b], ts, body);
        assert_eq!(header.matches("v1=").count(), 2);
        let t = ts.to_string();
        assert_eq!(verify(body, Some(&t), Some(&header), &a, now), Ok(()));
        assert_eq!(verify(body, Some(&t), Some(&header), &b, now), Ok(()));
        assert_eq!(verify(br#"{"id":"evu"}"#, Some(&t), Some(&header), &a, now), Err(Unverified::NoMatchingSignature));
        assert_eq!(verify(body, Some(&t), Some(&header), &generate_secret(), now), Err(Unverified::NoMatchingSignature));
        let old = (ts - 301).to_string();
        let stale = signature_header(&[&a], ts - 301, body);
        assert_eq!(verify(body, Some(&old), Some(&stale), &a, now), Err(Unverified::Stale));
        assert_eq!(verify(body, None, Some(&header), &a, now), Err(Unverified::MissingHeader("Gable-Timestamp")));
        // The known answer, computed independently (Python hmac): HMAC-SHA256("whsec_test", "1700000000.{}").
        assert_eq!(sign("whsec_test", 1_700_000_000, b"{}"), "35495024f4ef3f94e5a93e22221544c4b75e9a42300cd965ab81cb85cd994e91");
    }
}
