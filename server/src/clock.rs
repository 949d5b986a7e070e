//! The time Gable acts at. Production reads the system clock; tests hold a shifted
//! clock and move it, so scheduled events and due dates are tested without waiting.
//! A shifted clock still runs (it is the system clock plus an offset), so records
//! written one after another keep distinct, ordered times.

use std::sync::{Arc, RwLock};

use chrono::{DateTime, Duration, NaiveDate, Utc};

#[derive(Clone, Default)]
pub struct Clock(Option<Arc<RwLock<Duration>>>);

impl Clock {
    /// The system clock.
    pub fn system() -> Clock {
        Clock(None)
    }

    /// A clock that reads `at` now and runs on from there until it is set or advanced.
    pub fn manual(at: DateTime<Utc>) -> Clock {
        Clock(Some(Arc::new(RwLock::new(at - Utc::now()))))
    }

    pub fn now(&self) -> DateTime<Utc> {
        match &self.0 {
            None => Utc::now(),
            Some(offset) => Utc::now() + *offset.read().unwrap_or_else(|e| e.into_inner()),
        }
    }

    /// Today's date in UTC: due dates and lease ends are calendar dates in UTC.
    pub fn today(&self) -> NaiveDate {
        self.now().date_naive()
    }

    /// Sets a manual clock to read `at` now (the system clock ignores it).
    pub fn set(&self, at: DateTime<Utc>) {
        if let Some(offset) = &self.0 {
            *offset.write().unwrap_or_else(|e| e.into_inner()) = at - Utc::now();
        }
    }

    /// Moves a manual clock forward (or back, with a negative duration).
    pub fn advance(&self, by: Duration) {
        if let Some(offset) = &self.0 {
            *offset.write().unwrap_or_else(|e| e.into_inner()) += by;
        }
    }
}
