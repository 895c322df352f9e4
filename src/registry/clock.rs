//! The server's clock, read by the shell (never by the pure core) and
//! given to commands as data: wall time in production, a hand-set clock in
//! tests so that deadlines pass when a test says so, not after a sleep.

use std::sync::Arc;

use tokio::sync::watch;

use crate::game::Millis;

/// Where the server reads the time: the system clock, or a manual clock
/// that only moves when [`Clock::set`] or [`Clock::advance`] moves it.
#[derive(Debug, Clone, Default)]
pub enum Clock {
    /// The system clock (Unix epoch milliseconds).
    #[default]
    System,
    /// A clock that stands still until set (tests).
    Manual(Arc<watch::Sender<Millis>>),
}

impl Clock {
    /// A manual clock reading `start` (Unix epoch milliseconds).
    pub fn manual(start: Millis) -> Self {
        Clock::Manual(Arc::new(watch::Sender::new(start)))
    }

    /// The time now, Unix epoch milliseconds.
    pub fn now_ms(&self) -> Millis {
        match self {
            Clock::System => std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as Millis),
            Clock::Manual(time) => *time.borrow(),
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
            Clock::System => {
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
}
