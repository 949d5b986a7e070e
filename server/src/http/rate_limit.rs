//! Rate limits per credential on the `/v1` API (`docs/api.md`, "Rate limits"): GCRA limiters (`governor`)
//! keyed by the credential's id, one per environment, in memory, per process.
//!
//! [`limit`] runs right after the credential is resolved (`http::api::per_credential`), so only
//! authenticated requests count and every authenticated response, success or error,
//! carries the IETF draft's fields (draft-ietf-httpapi-ratelimit-headers, structured-field
//! form):
//!
//! - `RateLimit-Policy: "default";q=<quota>;w=1`: `quota` requests per one-second window;
//! - `RateLimit: "default";r=<remaining>;t=<seconds>`: requests left right now, and the
//!   whole seconds (rounded up) until the full quota is available again.
//!
//! Over the limit the request never reaches its handler: `429 rate_limited` with
//! `Retry-After`, the whole seconds (rounded up, at least 1) after which a request of this
//! credential is allowed again. Requests refused before the credential is known (`401`,
//! `400 unsupported_version`) neither count nor carry the fields.
//!
//! The burst is one second's quota: `q` requests at once, then one every `1/q` s. So the
//! window the fields advertise is exactly the limiter's: `q` requests in any one second.
//!
//! Each process counts on its own: N processes behind a balancer allow up to N times the
//! rate. A shared counter would cost a round trip to a shared store on every request.

use std::future::Future;
use std::num::NonZeroU32;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use axum::extract::Request;
use axum::http::{HeaderMap, HeaderName, HeaderValue};
use axum::response::{IntoResponse, Response};
use governor::clock::Clock;
use governor::middleware::{StateInformationMiddleware, StateSnapshot};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use uuid::Uuid;

use crate::error::Error;

pub const RATELIMIT_POLICY: HeaderName = HeaderName::from_static("ratelimit-policy");
pub const RATELIMIT: HeaderName = HeaderName::from_static("ratelimit");

/// Past this many credentials, forget the ones whose limit has fully recovered (they
/// start again with a full quota, which is what they would have anyway); looked at every
/// `PRUNE_EVERY` requests, so a process with more busy keys than that does not scan the
/// map on every request.
const MAX_KEYS: usize = 10_000;
const PRUNE_EVERY: u64 = 4096;

/// The limits of both environments; an environment without a limiter is unlimited.
pub struct RateLimits {
    live: Option<Limiter>,
    test: Option<Limiter>,
}

impl RateLimits {
    /// Requests per second for live and test credentials; 0 is unlimited.
    pub fn new(live_per_second: u32, test_per_second: u32) -> Arc<RateLimits> {
        Arc::new(RateLimits { live: Limiter::new(live_per_second), test: Limiter::new(test_per_second) })
    }

    fn of(&self, livemode: bool) -> Option<&Limiter> {
        if livemode {
            self.live.as_ref()
        } else {
            self.test.as_ref()
        }
    }
}

/// One environment's limiter: `quota` requests per second per credential, bursts of `quota`.
struct Limiter {
    quota: NonZeroU32,
    /// `RateLimit-Policy`, the same on every response.
    policy: HeaderValue,
    /// `StateInformationMiddleware`: a success returns the remaining burst capacity.
    keyed: DefaultKeyedRateLimiter<Uuid, StateInformationMiddleware>,
    checks: AtomicU64,
}

/// What one check decided: the `RateLimit` field, and for a refusal the seconds to wait.
struct Decision {
    remaining: u32,
    reset_secs: u64,
    retry_after_secs: Option<u64>,
}

impl Limiter {
    fn new(per_second: u32) -> Option<Limiter> {
        let quota = NonZeroU32::new(per_second)?;
        let policy = HeaderValue::try_from(format!("\"default\";q={quota};w=1")).expect("digits and quotes make a valid header value");
        let keyed = RateLimiter::keyed(Quota::per_second(quota)).with_middleware::<StateInformationMiddleware>();
        Some(Limiter { quota, policy, keyed, checks: AtomicU64::new(0) })
    }

    /// Counts one request of `credential`.
    fn check(&self, credential: Uuid) -> Decision {
        if self.checks.fetch_add(1, Ordering::Relaxed).is_multiple_of(PRUNE_EVERY) && self.keyed.len() > MAX_KEYS {
            self.keyed.retain_recent();
        }
        match self.keyed.check_key(&credential) {
            Ok(snapshot) => self.allowed(&snapshot),
            Err(not_until) => {
                let wait = not_until.wait_time_from(self.keyed.clock().now());
                // The full quota is back one burst's worth of emission intervals after the
                // first request is allowed again (GCRA: tat = allowed-again + tau).
                let quota = not_until.quota();
                let tau = quota.replenish_interval() * (quota.burst_size().get() - 1);
                Decision { remaining: 0, reset_secs: ceil_secs(wait + tau), retry_after_secs: Some(ceil_secs(wait).max(1)) }
            }
        }
    }

    /// After an allowed request: `r` is governor's remaining burst capacity; the snapshot
    /// does not expose its theoretical arrival time, so `t` is derived from `r`. With `b`
    /// the burst and `T` the emission interval, the bucket is full again after
    /// `(b − r − 1)·T < wait ≤ (b − r)·T`, and since `b·T` is one second here, rounding
    /// `(b − r)·T` up gives exactly the whole seconds (1 whenever anything is used).
    fn allowed(&self, snapshot: &StateSnapshot) -> Decision {
        let remaining = snapshot.remaining_burst_capacity();
        let used = self.quota.get().saturating_sub(remaining);
        let interval = snapshot.quota().replenish_interval();
        Decision { remaining, reset_secs: ceil_secs(interval * used), retry_after_secs: None }
    }
}

fn ceil_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// Counts the request against `credential`'s limit on the listener of `livemode`: over
/// the limit, `429` without running the rest (`run`); either way the response carries the
/// rate-limit fields.
pub async fn limit<F: Future<Output = Response>>(
    limits: &RateLimits,
    livemode: bool,
    credential: Uuid,
    req: Request,
    run: impl FnOnce(Request) -> F,
) -> Response {
    let Some(limiter) = limits.of(livemode) else { return run(req).await };
    let decision = limiter.check(credential);
    let mut resp = match decision.retry_after_secs {
        Some(retry_after_secs) => {
            metrics::counter!(crate::observe::metrics::RATE_LIMITED, "listener" => crate::observe::metrics::listener(livemode))
                .increment(1);
            Error::RateLimited { retry_after_secs }.into_response()
        }
        None => run(req).await,
    };
    set_fields(resp.headers_mut(), limiter, &decision);
    resp
}

fn set_fields(headers: &mut HeaderMap, limiter: &Limiter, d: &Decision) {
    headers.insert(RATELIMIT_POLICY, limiter.policy.clone());
    // Always valid (digits and quotes); `if let` only because the constructor is fallible.
    if let Ok(v) = HeaderValue::try_from(format!("\"default\";r={};t={}", d.remaining, d.reset_secs)) {
        headers.insert(RATELIMIT, v);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_burst_of_the_quota_then_a_refusal_with_the_wait() {
        let limiter = Limiter::new(3).expect("a limit");
        assert_eq!(limiter.policy, "\"default\";q=3;w=1");
        let (a, b) = (Uuid::new_v4(), Uuid::new_v4());
        let decisions: Vec<Decision> = (0..4).map(|_| limiter.check(a)).collect();
        let remaining: Vec<u32> = decisions.iter().map(|d| d.remaining).collect();
        // Run quickly, no interval (333 ms) passes between the four checks.
        assert_eq!(remaining, [2, 1, 0, 0]);
        assert!(decisions[..3].iter().all(|d| d.retry_after_secs.is_none() && d.reset_secs == 1));
        assert_eq!(decisions[3].retry_after_secs, Some(1));
        assert_eq!(decisions[3].reset_secs, 1);
        // Another credential has its own quota.
        assert_eq!(limiter.check(b).remaining, 2);
    }

    #[test]
    fn zero_is_unlimited() {
        let limits = RateLimits::new(0, 5);
        assert!(limits.of(true).is_none());
        assert!(limits.of(false).is_some());
    }

    #[test]
    fn seconds_round_up() {
        assert_eq!(ceil_secs(Duration::from_millis(1)), 1);
        assert_eq!(ceil_secs(Duration::from_secs(2)), 2);
        assert_eq!(ceil_secs(Duration::from_millis(2001)), 3);
        assert_eq!(ceil_secs(Duration::ZERO), 0);
    }
}
