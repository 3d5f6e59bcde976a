//! [`Clock`]: where the journal's time comes from.
//!
//! Every record's time (a tx's `created_ms`, an event's `at_ms`, a receipt's `at_ms`)
//! and every age the library computes (a preview's age against the max preview age,
//! [`crate::Journal::abort_expired`]) come from the journal's clock. The default is the
//! system clock; an embedder's tests replace it ([`crate::OpenOptions::clock`]) to
//! backdate a preview without sleeping, as m1nd's expiry test does.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// A source of wall-clock time in milliseconds since the Unix epoch. `Send + Sync`: one
/// clock serves every thread of a [`crate::Journal`].
pub trait Clock: Send + Sync {
    /// Now, in milliseconds since the Unix epoch.
    fn now_ms(&self) -> u64;
}

/// The system clock (`SystemTime::now`).
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now_ms(&self) -> u64 {
        crate::journal::records::now_ms()
    }
}

/// A clock that moves only when told to: for tests. Cloning shares the time.
#[derive(Debug, Clone, Default)]
pub struct ManualClock {
    ms: Arc<AtomicU64>,
}

impl ManualClock {
    /// A clock showing `ms` milliseconds since the Unix epoch.
    pub fn at(ms: u64) -> ManualClock {
        ManualClock {
            ms: Arc::new(AtomicU64::new(ms)),
        }
    }

    /// Move the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        self.ms.fetch_add(
            by.as_millis().min(u64::MAX as u128) as u64,
            Ordering::SeqCst,
        );
    }

    /// Set the clock to `ms` milliseconds since the Unix epoch.
    pub fn set(&self, ms: u64) {
        self.ms.store(ms, Ordering::SeqCst);
    }
}

impl Clock for ManualClock {
    fn now_ms(&self) -> u64 {
        self.ms.load(Ordering::SeqCst)
    }
}
