//! Flow tokens for the embeddable flows: random, short-lived, kept only as a hash.

use chrono::{DateTime, Duration, Utc};
use rand::{distributions::Alphanumeric, rngs::OsRng, Rng};

use super::validate::Changes;
use super::value::Val;

/// The longest a flow token lives (DESIGN.md §8).
pub const LIFETIME_MINUTES: i64 = 30;

pub struct Issued {
    pub token: String,
    pub hash: String,
}

/// Sets the token's expiry on the changes and returns the secret and its hash.
pub fn issue(changes: &mut Changes, now: DateTime<Utc>) -> Issued {
    let body: String = OsRng.sample_iter(&Alphanumeric).take(43).map(char::from).collect();
    let token = format!("gft_{body}");
    changes.values.insert("expires_at", Val::DateTime(now + Duration::minutes(LIFETIME_MINUTES)));
    Issued { hash: crate::store::keys::hash_secret(&token), token }
}
