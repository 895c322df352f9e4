//! Keeping a referenced clock corrected toward the database's (the nodes of
//! a shared store judge each other's deadlines).

use std::time::Duration;

use super::{Clock, ClockSample, Inner, Registry, RegistryError};

impl Registry {
    /// Corrects a referenced clock (see [`Clock::correct`]) toward the
    /// store's: five readings of the database's clock, the quickest one
    /// kept. Returns the offset and error set, in milliseconds; `None` when
    /// the clock is not referenced or the store has no clock of its own.
    ///
    /// # Errors
    /// Store failures (the clock keeps its last correction).
    pub async fn correct_clock(&self) -> Result<Option<(i64, i64)>, RegistryError> {
        let clock = &self.inner.settings.clock;
        if !matches!(clock, Clock::Referenced(_)) {
            return Ok(None);
        }
        let mut samples = Vec::with_capacity(CLOCK_SAMPLES);
        for _ in 0..CLOCK_SAMPLES {
            let sent_ms = clock.local_ms();
            let Some(reference_ms) = self.inner.store.clock_ms().await? else {
                return Ok(None);
            };
            let received_ms = clock.local_ms();
            samples.push(ClockSample {
                sent_ms,
                reference_ms,
                received_ms,
            });
        }
        Ok(clock.correct(&samples))
    }
}

/// Readings of the database's clock per correction.
const CLOCK_SAMPLES: usize = 5;

/// How often a referenced clock is corrected again: a quartz clock drifts
/// by at most about 0.1 ms a second, so by a millisecond or so between two
/// corrections.
const CLOCK_CORRECTION_INTERVAL: Duration = Duration::from_secs(10);

/// Corrects the registry's referenced clock every
/// [`CLOCK_CORRECTION_INTERVAL`] until the registry is dropped or shut
/// down.
pub(super) async fn keep_clock_corrected(inner: std::sync::Weak<Inner>) {
    loop {
        let Some(shutdown) = inner.upgrade().map(|i| i.shutdown.clone()) else {
            return;
        };
        // The server corrects it once before it serves (see
        // `Registry::correct_clock`); this keeps it corrected.
        tokio::select! {
            () = tokio::time::sleep(CLOCK_CORRECTION_INTERVAL) => {}
            () = shutdown.cancelled() => return,
        }
        let Some(inner) = inner.upgrade() else { return };
        let registry = Registry { inner };
        match registry.correct_clock().await {
            Ok(Some((offset_ms, error_ms))) => {
                tracing::debug!(offset_ms, error_ms, "clock corrected toward the database's");
            }
            Ok(None) => return,
            Err(error) => {
                tracing::warn!(error = %error, "the database's clock could not be read; the last correction stands");
            }
        }
    }
}
