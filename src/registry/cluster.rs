//! Cluster work: following a shared store's change feed (telling the games in
//! memory to catch up) and keeping a referenced clock corrected.

use std::time::Duration;

use tokio::sync::mpsc;

use super::actor::Msg;
use super::{Clock, ClockSample, Handle, Inner, Registry, RegistryError};

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

    /// Asks the game's actor, if it is in memory, to catch up to `upto`
    /// (every actor when `game_id` is `None`). A full mailbox skips it: the
    /// next command or periodic catch-up reads the store anyway.
    fn catch_up(&self, game_id: Option<&str>, upto: Option<u64>) {
        let actors = self.inner.actors.lock().expect("registry lock");
        let tick = self.inner.budget.tick();
        let nudge = |handle: &Handle| {
            let _ = handle.queue(Msg::CatchUp { upto }, tick, &self.inner.metrics);
        };
        match game_id {
            Some(game_id) => actors.get(game_id).into_iter().for_each(nudge),
            None => actors.values().for_each(nudge),
        }
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

/// Follows a shared store's change feed until the registry is dropped or
/// shut down: a change wakes its game and a possible loss wakes them all.
/// Every `catch_up_interval` one query reads the last sequence of every game
/// in memory, and wakes those that are behind.
pub(super) async fn follow_changes(
    inner: std::sync::Weak<Inner>,
    mut changes: mpsc::Receiver<crate::store::Change>,
) {
    let Some(interval) = inner.upgrade().map(|i| i.settings.catch_up_interval) else {
        return;
    };
    let mut tick = tokio::time::interval(interval);
    loop {
        let change = tokio::select! {
            change = changes.recv() => match change {
                Some(change) => Some(change),
                None => return,
            },
            _ = tick.tick() => None,
        };
        let Some(inner) = inner.upgrade() else { return };
        if inner.shutdown.is_cancelled() {
            return;
        }
        let registry = Registry { inner };
        match change {
            Some(crate::store::Change::Appended { game_id, sequence }) => {
                registry.catch_up(Some(&game_id), Some(sequence));
            }
            Some(crate::store::Change::Missed) => registry.catch_up(None, None),
            None => {
                let live: Vec<String> = registry
                    .inner
                    .actors
                    .lock()
                    .expect("registry lock")
                    .keys()
                    .cloned()
                    .collect();
                for ids in live.chunks(10_000) {
                    match registry.inner.store.last_sequences(ids).await {
                        Ok(lasts) => lasts.iter().for_each(|(game_id, sequence)| {
                            registry.catch_up(Some(game_id), Some(*sequence));
                        }),
                        Err(error) => {
                            tracing::warn!(error = %error, "periodic catch-up query failed");
                            registry.catch_up(None, None);
                        }
                    }
                }
            }
        }
    }
}
