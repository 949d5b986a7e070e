//! Sign-in throttling: GCRA rate limiters (`governor`) keyed by email and by client
//! address, in memory, per process.
//!
//! Every attempt counts, right or wrong, and it is counted BEFORE the password is
//! checked: a burst of parallel guesses cannot slip through while argon2 runs, and an
//! unknown email is throttled exactly like a known one (no oracle). A success does not
//! reset the counters (governor has no per-key reset, and resetting the client's
//! counter would let an attacker with an account of their own interleave successes).

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};

use super::Now;

/// Per email: a burst of 5 attempts, then one more every 3 minutes (5 per 15 minutes).
pub const EMAIL_BURST: u32 = 5;
pub const EMAIL_PERIOD: Duration = Duration::from_secs(15 * 60);
/// Per client address: a burst of 20, then one more every 45 seconds (20 per 15 minutes).
pub const CLIENT_BURST: u32 = 20;
pub const CLIENT_PERIOD: Duration = Duration::from_secs(15 * 60);
/// Past this many keys, forget the ones whose limit has fully recovered.
const MAX_KEYS: usize = 10_000;

/// The service's clock as a governor clock, so tests move throttling time as they move
/// session time. Nanoseconds since the Unix epoch.
#[derive(Clone)]
pub struct ServiceClock(pub Now);

impl Clock for ServiceClock {
    type Instant = Nanos;
    fn now(&self) -> Nanos {
        let t = (self.0)();
        Nanos::from(t.timestamp_nanos_opt().unwrap_or(0).max(0) as u64)
    }
}

type Limiter = RateLimiter<String, DashMapStateStore<String>, ServiceClock, NoOpMiddleware<Nanos>>;

pub struct Throttle {
    by_email: Limiter,
    by_client: Limiter,
    clock: ServiceClock,
}

fn bounded(key: &str, max_chars: usize) -> String {
    key.chars().take(max_chars).collect()
}

fn quota(burst: u32, period: Duration) -> Quota {
    let burst = NonZeroU32::new(burst).expect("bursts are positive");
    Quota::with_period(period / burst.get()).expect("periods are positive").allow_burst(burst)
}

impl Throttle {
    pub fn new(now: Now) -> Self {
        let clock = ServiceClock(now);
        Throttle {
            by_email: RateLimiter::dashmap_with_clock(quota(EMAIL_BURST, EMAIL_PERIOD), clock.clone()),
            by_client: RateLimiter::dashmap_with_clock(quota(CLIENT_BURST, CLIENT_PERIOD), clock.clone()),
            clock,
        }
    }

    /// Counts one attempt; `Err(seconds)` when the client or the email is over its
    /// limit, with the seconds until the next attempt is allowed.
    pub fn attempt(&self, email: &str, client: &str) -> Result<(), u64> {
        for limiter in [&self.by_email, &self.by_client] {
            if limiter.len() > MAX_KEYS {
                limiter.retain_recent();
            }
        }
        // Keys are bounded, so a flood of huge made-up emails cannot grow the memory much.
        let client = if client.is_empty() { "unknown" } else { client };
        self.check(&self.by_client, bounded(client, 100))?;
        self.check(&self.by_email, bounded(email, 320))
    }

    fn check(&self, limiter: &Limiter, key: String) -> Result<(), u64> {
        limiter.check_key(&key).map(|_| ()).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }
}
