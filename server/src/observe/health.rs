//! How the background loops are doing, for readiness (`GET /readyz`): each supervised
//! loop reports its rounds (a round that failed, one that succeeded) and its panics here;
//! a loop whose last few rounds all failed, or which keeps panicking, is "failing".

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Serialize;

/// Rounds in a row that must fail (a panic counts as one) before a loop is reported failing.
pub const FAILING_AFTER: u32 = 3;

/// The background loops' state, shared by the loops (which report) and the health
/// endpoints (which read). Cloning shares it.
#[derive(Clone, Default)]
pub struct Health {
    loops: Arc<Mutex<BTreeMap<&'static str, Loop>>>,
}

#[derive(Debug, Clone, Default)]
struct Loop {
    failures_in_a_row: u32,
    panics: u64,
    last_success: Option<Instant>,
    last_error: Option<String>,
}

/// What readiness shows of one loop.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct LoopReport {
    pub name: &'static str,
    pub failing: bool,
    pub failures_in_a_row: u32,
    pub panics: u64,
    /// Seconds since its last successful round (`None`: none yet).
    pub last_success_secs_ago: Option<u64>,
    /// The last failure's message (an error or a panic; no secrets are in either).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_error: Option<String>,
}

impl Health {
    /// A loop starts being watched (so that readiness lists it before its first round).
    pub fn watch(&self, name: &'static str) {
        self.with(name, |_| {});
    }

    /// A round of `name` finished without error.
    pub fn succeeded(&self, name: &'static str) {
        self.with(name, |l| {
            l.failures_in_a_row = 0;
            l.last_success = Some(Instant::now());
        });
    }

    /// A round of `name` failed with `error`.
    pub fn failed(&self, name: &'static str, error: &str) {
        self.with(name, |l| {
            l.failures_in_a_row = l.failures_in_a_row.saturating_add(1);
            l.last_error = Some(error.to_string());
        });
    }

    /// `name` panicked with `message` (its supervisor restarts it).
    pub fn panicked(&self, name: &'static str, message: &str) {
        self.with(name, |l| {
            l.panics += 1;
            l.failures_in_a_row = l.failures_in_a_row.saturating_add(1);
            l.last_error = Some(format!("panicked: {message}"));
        });
        metrics::counter!(super::metrics::BACKGROUND_PANICS, "job" => name).increment(1);
    }

    /// Seconds since `name`'s last successful round.
    pub fn since_success(&self, name: &str) -> Option<Duration> {
        let loops = self.loops.lock().ok()?;
        loops.get(name)?.last_success.map(|t| t.elapsed())
    }

    /// Every watched loop, by name.
    pub fn report(&self) -> Vec<LoopReport> {
        let Ok(loops) = self.loops.lock() else { return Vec::new() };
        loops
            .iter()
            .map(|(name, l)| LoopReport {
                name,
                failing: l.failures_in_a_row >= FAILING_AFTER,
                failures_in_a_row: l.failures_in_a_row,
                panics: l.panics,
                last_success_secs_ago: l.last_success.map(|t| t.elapsed().as_secs()),
                last_error: l.last_error.clone(),
            })
            .collect()
    }

    fn with(&self, name: &'static str, f: impl FnOnce(&mut Loop)) {
        // A poisoned lock only means a reader panicked mid-read; the data is still whole.
        let mut loops = self.loops.lock().unwrap_or_else(|p| p.into_inner());
        f(loops.entry(name).or_default());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_loop_is_failing_after_rounds_in_a_row_fail_and_recovers_on_success() {
        let h = Health::default();
        h.watch("scheduler");
        assert!(!h.report()[0].failing, "watched, not yet failing");
        h.failed("scheduler", "database unavailable");
        h.panicked("scheduler", "boom");
        assert!(!h.report()[0].failing, "two failures are not yet a pattern");
        h.failed("scheduler", "database unavailable");
        let r = &h.report()[0];
        assert!(r.failing);
        assert_eq!((r.failures_in_a_row, r.panics), (3, 1));
        assert_eq!(r.last_error.as_deref(), Some("database unavailable"));
        h.succeeded("scheduler");
        let r = &h.report()[0];
        assert!(!r.failing);
        assert_eq!(r.last_success_secs_ago, Some(0));
        assert_eq!(r.panics, 1, "panics are counted for ever");
    }
}
