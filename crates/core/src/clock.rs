//! The platform clock. Tests run with a manual clock that moves only when told to,
//! so rate-limit windows, expiries and run progress are exact.
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

pub struct Clock {
    /// `None`: wall clock. `Some`: manual time in epoch seconds.
    manual: Option<AtomicI64>,
}

impl Clock {
    pub fn system() -> Self {
        Clock { manual: None }
    }

    /// A manual clock starting at the current wall-clock second.
    pub fn manual() -> Self {
        Clock { manual: Some(AtomicI64::new(wall_secs())) }
    }

    pub fn is_manual(&self) -> bool {
        self.manual.is_some()
    }

    pub fn now(&self) -> i64 {
        match &self.manual {
            Some(t) => t.load(Ordering::Relaxed),
            None => wall_secs(),
        }
    }

    /// Moves a manual clock forward (never backwards). `false` for the wall clock.
    pub fn advance(&self, secs: i64) -> bool {
        match &self.manual {
            Some(t) => {
                t.fetch_add(secs.max(0), Ordering::Relaxed);
                true
            }
            None => false,
        }
    }

    /// Sets a manual clock. `false` for the wall clock.
    pub fn set(&self, secs: i64) -> bool {
        match &self.manual {
            Some(t) => {
                t.store(secs, Ordering::Relaxed);
                true
            }
            None => false,
        }
    }
}

fn wall_secs() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs() as i64).unwrap_or(0)
}
