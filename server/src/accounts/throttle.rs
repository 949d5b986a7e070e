//! Sign-in and sign-up throttling: GCRA rate limiters (`governor`) keyed by email and
//! by client address, in memory, per process.
//!
//! Every attempt counts, right or wrong, and it is counted BEFORE the password is
//! checked: a burst of parallel guesses cannot slip through while argon2 runs, and an
//! unknown email is throttled exactly like a known one (no oracle). A success does not
//! reset the counters (governor has no per-key reset, and resetting the client's
//! counter would let an attacker with an account of their own interleave successes).
//!
//! Sign-up is limited per client address only, also before anything is checked: it is
//! the one place that says whether an email has an account, and each one costs a
//! tenant, its records and an argon2 hash.
//!
//! An IPv6 client is keyed by its /64: one subscriber usually holds a whole /64, so
//! per-address buckets would give them billions.

use std::num::NonZeroU32;
use std::time::Duration;

use governor::clock::Clock;
use governor::middleware::NoOpMiddleware;
use governor::nanos::Nanos;
use governor::state::keyed::DashMapStateStore;
use governor::{Quota, RateLimiter};

use crate::clock::Clock as GableClock;

/// Per email: a burst of 5 attempts, then one more every 3 minutes (5 per 15 minutes).
pub const EMAIL_BURST: u32 = 5;
pub const EMAIL_PERIOD: Duration = Duration::from_secs(15 * 60);
/// Per client address: a burst of 20, then one more every 45 seconds (20 per 15 minutes).
pub const CLIENT_BURST: u32 = 20;
pub const CLIENT_PERIOD: Duration = Duration::from_secs(15 * 60);
/// Sign-up per client address: a burst of 10, then one more every 6 minutes (10 an hour).
pub const SIGN_UP_BURST: u32 = 10;
pub const SIGN_UP_PERIOD: Duration = Duration::from_secs(60 * 60);
/// Past this many keys, forget the ones whose limit has fully recovered.
const MAX_KEYS: usize = 10_000;

/// The service's clock as a governor clock, so tests move throttling time as they move
/// session time. Nanoseconds since the Unix epoch.
#[derive(Clone)]
pub struct ServiceClock(pub GableClock);

impl Clock for ServiceClock {
    type Instant = Nanos;
    fn now(&self) -> Nanos {
        let t = self.0.now();
        Nanos::from(t.timestamp_nanos_opt().unwrap_or(0).max(0) as u64)
    }
}

type Limiter = RateLimiter<String, DashMapStateStore<String>, ServiceClock, NoOpMiddleware<Nanos>>;

pub struct Throttle {
    by_email: Limiter,
    by_client: Limiter,
    sign_ups: Limiter,
    clock: ServiceClock,
}

fn bounded(key: &str, max_chars: usize) -> String {
    key.chars().take(max_chars).collect()
}

/// The bucket of a client address: IPv6 by its /64, anything else as given (bounded).
fn client_key(client: &str) -> String {
    match client.parse::<std::net::IpAddr>().map(|ip| ip.to_canonical()) {
        Ok(std::net::IpAddr::V6(v6)) => {
            let prefix = u128::from(v6) & !((1u128 << 64) - 1);
            format!("{}/64", std::net::Ipv6Addr::from(prefix))
        }
        Ok(ip) => ip.to_string(),
        Err(_) if client.is_empty() => "unknown".into(),
        Err(_) => bounded(client, 100),
    }
}

fn quota(burst: u32, period: Duration) -> Quota {
    let burst = NonZeroU32::new(burst).expect("bursts are positive");
    Quota::with_period(period / burst.get()).expect("periods are positive").allow_burst(burst)
}

impl Throttle {
    pub fn new(now: GableClock) -> Self {
        let clock = ServiceClock(now);
        Throttle {
            by_email: RateLimiter::dashmap_with_clock(quota(EMAIL_BURST, EMAIL_PERIOD), clock.clone()),
            by_client: RateLimiter::dashmap_with_clock(quota(CLIENT_BURST, CLIENT_PERIOD), clock.clone()),
            sign_ups: RateLimiter::dashmap_with_clock(quota(SIGN_UP_BURST, SIGN_UP_PERIOD), clock.clone()),
            clock,
        }
    }

    /// Counts one attempt; `Err(seconds)` when the client or the email is over its
    /// limit, with the seconds until the next attempt is allowed.
    pub fn attempt(&self, email: &str, client: &str) -> Result<(), u64> {
        self.forget_recovered();
        // Keys are bounded, so a flood of huge made-up emails cannot grow the memory much.
        self.check(&self.by_client, client_key(client))?;
        self.check(&self.by_email, bounded(email, 320))
    }

    /// Counts one sign-up attempt from `client`; `Err(seconds)` when it is over its limit.
    pub fn sign_up(&self, client: &str) -> Result<(), u64> {
        self.forget_recovered();
        self.check(&self.sign_ups, client_key(client))
    }

    fn forget_recovered(&self) {
        for limiter in [&self.by_email, &self.by_client, &self.sign_ups] {
            if limiter.len() > MAX_KEYS {
                limiter.retain_recent();
            }
        }
    }

    fn check(&self, limiter: &Limiter, key: String) -> Result<(), u64> {
        limiter.check_key(&key).map(|_| ()).map_err(|not_until| {
            let wait = not_until.wait_time_from(self.clock.now());
            wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::client_key;

    #[test]
    fn clients_are_keyed_by_address_and_ipv6_by_its_64() {
        assert_eq!(client_key("203.0.113.9"), "203.0.113.9");
        assert_eq!(client_key("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
        assert_eq!(client_key("2001:db8:1:2:ffff:ffff:ffff:ffff"), client_key("2001:db8:1:2::7"));
        assert_ne!(client_key("2001:db8:1:3::1"), client_key("2001:db8:1:2::1"));
        assert_eq!(client_key("::ffff:203.0.113.9"), "203.0.113.9");
        assert_eq!(client_key(""), "unknown");
        assert_eq!(client_key(&"x".repeat(500)).len(), 100);
    }
}
