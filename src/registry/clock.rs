//! The server's clock, read by the shell (never by the pure core) and
//! given to commands as data: wall time in production, a hand-set clock in
//! tests so that deadlines pass when a test says so, not after a sleep.
//!
//! Several nodes on one database judge each other's deadlines (one node
//! records when a turn starts, another may time it out), so on a shared
//! store the clock is *referenced*: the node's wall clock corrected by an
//! offset to the database's clock, measured as NTP measures one (the
//! reference's reading against the midpoint of the local readings around
//! the query, keeping the sample with the shortest round trip; the error
//! is at most half that round trip). See [`Clock::correct`].

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use tokio::sync::watch;

use crate::game::Millis;

/// Where the server reads the time: the system clock, the system clock
/// corrected toward a reference, or a manual clock that only moves when
/// [`Clock::set`] or [`Clock::advance`] moves it.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// The system clock (Unix epoch milliseconds).
    #[default]
    System,
    /// The system clock corrected toward a reference clock (the database's,
    /// on a shared store) by the offset [`Clock::correct`] last set.
    Referenced(Arc<Reference>),
    /// A clock that stands still until set (tests).
    Manual(Arc<watch::Sender<Millis>>),
}

/// The correction of a [`Clock::Referenced`]: milliseconds to add to the
/// local reading, and how far off that may still be.
#[derive(Debug, Default)]
pub struct Reference {
    /// How far the node's own clock is off the system clock, in
    /// milliseconds (0 but in tests, which play a node whose wall clock is
    /// wrong).
    skew_ms: i64,
    /// Milliseconds added to the local reading.
    offset_ms: AtomicI64,
    /// Half the round trip of the sample the offset came from, plus the
    /// reading's resolution: the most the corrected clock may be off the
    /// reference (`i64::MAX` until the first correction).
    error_ms: AtomicI64,
}

/// One sample of a reference clock: the local clock's readings right
/// before and right after asking, and the reference's answer, all in Unix
/// epoch milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClockSample {
    /// The local reading before the query.
    pub sent_ms: Millis,
    /// The reference's reading.
    pub reference_ms: Millis,
    /// The local reading after the answer.
    pub received_ms: Millis,
}

impl Clock {
    /// The system clock, to be corrected toward a reference (see
    /// [`Clock::correct`]); uncorrected until then.
    pub fn referenced() -> Self {
        Clock::skewed(0)
    }

    /// A referenced clock whose local reading is the system clock off by
    /// `skew_ms` milliseconds (positive: ahead): a node whose own clock is
    /// wrong, as tests play one.
    pub fn skewed(skew_ms: i64) -> Self {
        Clock::Referenced(Arc::new(Reference {
            skew_ms,
            offset_ms: AtomicI64::new(0),
            error_ms: AtomicI64::new(i64::MAX),
        }))
    }

    /// The local reading, before any correction: the system clock (off by
    /// a referenced clock's skew), or a manual clock's time.
    pub fn local_ms(&self) -> Millis {
        match self {
            Clock::System => system_ms(),
            Clock::Referenced(reference) => system_ms().saturating_add(reference.skew_ms),
            Clock::Manual(time) => *time.borrow(),
        }
    }

    /// Corrects a referenced clock from `samples` of the reference: the
    /// offset of the sample with the shortest round trip (the reference's
    /// reading less the midpoint of the local ones), whose error is at most
    /// half that round trip plus a millisecond of resolution. Returns the
    /// offset and error set, in milliseconds; `None` (and no change) for
    /// another kind of clock or no sample.
    pub fn correct(&self, samples: &[ClockSample]) -> Option<(i64, i64)> {
        let Clock::Referenced(reference) = self else {
            return None;
        };
        let best = samples
            .iter()
            .filter(|s| s.received_ms >= s.sent_ms)
            .min_by_key(|s| s.received_ms - s.sent_ms)?;
        let round_trip = best.received_ms - best.sent_ms;
        let midpoint = best.sent_ms + round_trip / 2;
        let offset = best.reference_ms.saturating_sub(midpoint);
        let error = round_trip / 2 + 1;
        reference.offset_ms.store(offset, Ordering::Release);
        reference.error_ms.store(error, Ordering::Release);
        Some((offset, error))
    }

    /// How far a referenced clock may be off its reference, in
    /// milliseconds, as of its last correction; `None` for another kind of
    /// clock or before the first correction.
    pub fn error_ms(&self) -> Option<i64> {
        match self {
            Clock::Referenced(reference) => {
                Some(reference.error_ms.load(Ordering::Acquire)).filter(|e| *e != i64::MAX)
            }
            _ => None,
        }
    }

    /// A manual clock reading `start` (Unix epoch milliseconds).
    pub fn manual(start: Millis) -> Self {
        Clock::Manual(Arc::new(watch::Sender::new(start)))
    }

    /// The time now, Unix epoch milliseconds: the local reading, corrected
    /// for a referenced clock.
    pub fn now_ms(&self) -> Millis {
        match self {
            Clock::Referenced(reference) => self
                .local_ms()
                .saturating_add(reference.offset_ms.load(Ordering::Acquire)),
            _ => self.local_ms(),
        }
    }

    /// Moves a manual clock to `to` (never backwards); no effect on the
    /// system clock.
    pub fn set(&self, to: Millis) {
        if let Clock::Manual(time) = self {
            time.send_if_modified(|now| {
                let later = to > *now;
                if later {
                    *now = to;
                }
                later
            });
        }
    }

    /// Moves a manual clock forward by `by` milliseconds.
    pub fn advance(&self, by: Millis) {
        self.set(self.now_ms().saturating_add(by));
    }

    /// Moves a manual clock forward by `by` milliseconds without waking
    /// the timers waiting on it, as a timer that fires late on a busy node:
    /// they wake at the next [`Clock::set`] or [`Clock::advance`].
    pub fn advance_without_waking(&self, by: Millis) {
        if let Clock::Manual(time) = self {
            time.send_if_modified(|now| {
                *now = now.saturating_add(by.max(0));
                false
            });
        }
    }

    /// Returns once the clock reads `deadline` or later.
    pub async fn sleep_until(&self, deadline: Millis) {
        match self {
            Clock::System | Clock::Referenced(_) => {
                let wait = deadline.saturating_sub(self.now_ms()).max(0) as u64;
                tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
            }
            Clock::Manual(time) => {
                let mut watch = time.subscribe();
                // The sender lives as long as this clock does.
                let _ = watch.wait_for(|now| *now >= deadline).await;
            }
        }
    }
}

/// The system clock, Unix epoch milliseconds (0 before the epoch).
fn system_ms() -> Millis {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as Millis)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_manual_clock_wakes_its_sleepers_when_set_past_their_deadline() {
        let clock = Clock::manual(1_000);
        let sleeper = tokio::spawn({
            let clock = clock.clone();
            async move { clock.sleep_until(1_500).await }
        });
        clock.advance(499);
        tokio::task::yield_now().await;
        assert!(!sleeper.is_finished());
        clock.set(900);
        assert_eq!(clock.now_ms(), 1_499, "a manual clock never goes back");
        clock.advance(1);
        tokio::time::timeout(std::time::Duration::from_secs(10), sleeper)
            .await
            .expect("the sleeper wakes")
            .unwrap();
    }

    #[test]
    fn a_referenced_clock_takes_the_offset_of_its_quickest_sample() {
        let clock = Clock::skewed(5_000);
        assert_eq!(clock.error_ms(), None, "not corrected yet");
        let local = clock.local_ms();
        // The reference reads 5 s behind the local clock; the slow sample
        // (a 40 ms round trip) says less than the quick one (2 ms).
        let samples = [
            ClockSample {
                sent_ms: local,
                reference_ms: local - 5_000 + 30,
                received_ms: local + 40,
            },
            ClockSample {
                sent_ms: local + 100,
                reference_ms: local + 100 - 5_000 + 1,
                received_ms: local + 102,
            },
        ];
        assert_eq!(clock.correct(&samples), Some((-5_000, 2)));
        assert_eq!(clock.error_ms(), Some(2));
        let now = clock.now_ms();
        let system = system_ms();
        assert!((now - system).abs() <= 50, "{now} against {system}");
        assert_eq!(Clock::System.correct(&samples), None);
        assert_eq!(clock.correct(&[]), None);
    }
}
