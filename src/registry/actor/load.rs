//! Loading a game: from its latest usable snapshot or its whole log, with the
//! checks that find a log corrupt.

use super::super::{Registry, RegistryError};
use super::super::{log, snapshot};
use super::{Actor, Loaded};
use crate::game::{Event, GameState, ReplayError};
use crate::proto as pb;
use crate::store::chain;
use crate::store::{LoadFrom, StoredEvent};

/// Decodes a stored event into its wire and domain forms (see
/// [`log::decode`]); a corrupt one is an internal error naming the game.
pub(in crate::registry) fn decode(
    game_id: &str,
    stored: &StoredEvent,
) -> Result<(pb::GameEvent, Event), RegistryError> {
    log::decode(game_id, stored).map_err(|e| corrupt(game_id, &e))
}

/// A stored log that fails its checks, as the error a caller gets.
pub(in crate::registry) fn corrupt(game_id: &str, error: &ReplayError) -> RegistryError {
    RegistryError::CorruptLog {
        game_id: game_id.to_owned(),
        source: error.clone(),
    }
}

/// Rebuilds a game from stored events `1..` (see [`log::rebuild`]); a log
/// that fails its checks is [`RegistryError::CorruptLog`].
fn rebuild(game_id: &str, stored: &[StoredEvent]) -> Result<(GameState, i64), RegistryError> {
    log::rebuild(game_id, stored).map_err(|e| corrupt(game_id, &e))
}

impl Actor {
    /// Loads the game from its latest usable snapshot and the events after
    /// it (checked against the snapshot's chain value), or replays its
    /// whole log (its chain checked from the start) when it has none or it
    /// is unusable. The events a snapshot covers are not read here: the
    /// first append checks them (see [`Actor::prefix_checked`]).
    ///
    /// # Errors
    /// [`RegistryError::CorruptLog`] for a log that fails its checks; store
    /// failures.
    pub(super) async fn load(registry: &Registry, game_id: &str) -> Result<Loaded, RegistryError> {
        let mut log = registry.load_log(game_id, LoadFrom::Snapshot).await?;
        let resumed = log.snapshot.as_ref().and_then(|s| {
            snapshot::usable(game_id, s, &log.events).map(|resumed| (resumed, s.sequence))
        });
        let ((state, created_at_ms), snapshot_at) = match resumed {
            Some(resumed) => resumed,
            None => {
                if log.snapshot.is_some() {
                    // Its events start at the snapshot: read them all.
                    log = registry.load_log(game_id, LoadFrom::Start).await?;
                }
                (rebuild(game_id, &log.events)?, 0)
            }
        };
        // Checked above, from the snapshot's chain value or from the start.
        let stored_chain = |event: Option<&StoredEvent>| {
            event.and_then(StoredEvent::chain_value).ok_or_else(|| {
                let sequence = event.map_or(0, |e| e.sequence);
                RegistryError::corrupt_log(game_id, sequence, "no chain value".into())
            })
        };
        let chain = stored_chain(log.events.last())?;
        let unchecked_prefix = match snapshot_at {
            0 | 1 => None,
            at => Some((at, stored_chain(log.events.first())?)),
        };
        let requests = log
            .requests
            .into_iter()
            .map(|r| (r.request_id.clone(), r))
            .collect();
        let last_recorded_at_ms = match log.events.last() {
            Some(last) => log::recorded_at(&decode(game_id, last)?.0),
            None => created_at_ms,
        };
        Ok(Loaded {
            state,
            created_at_ms,
            requests,
            seat_token_hashes: log.seat_token_hashes,
            snapshot_at,
            wake: log.wake,
            last_recorded_at_ms,
            chain,
            unchecked_prefix,
        })
    }

    /// Checks, before the first append after a load from a snapshot, that
    /// the events the snapshot covers are intact: read from the store, they
    /// must link from the start of the chain to the snapshot's chain value
    /// (the hashing runs on a blocking thread). A load from a snapshot
    /// skips reading them (issue 15: that is what makes a long game's load
    /// fast), and the state it serves meanwhile is the snapshot's, which
    /// its checksum and chain value vouch for; but no move is added to a
    /// log whose earlier events changed (issue 35). Found corrupt, the game
    /// refuses every message from then on.
    ///
    /// # Errors
    /// [`RegistryError::CorruptLog`]; store failures (checked again at the
    /// next append).
    pub(super) async fn prefix_checked(&mut self) -> Result<(), RegistryError> {
        if let Some(why) = &self.found_corrupt {
            return Err(corrupt(&self.game_id, why));
        }
        let Some((sequence, vouched)) = self.unchecked_prefix else {
            return Ok(());
        };
        let store = &self.registry.inner.store;
        let events = store.read(&self.game_id, 1, sequence, u32::MAX).await?;
        let game_id = self.game_id.clone();
        let checked = tokio::task::spawn_blocking(move || {
            let chain = log::check_chain(&game_id, &chain::GENESIS, &events, 1)
                .map_err(|e| corrupt(&game_id, &e))?;
            if events.len() as u64 != sequence || chain != vouched {
                return Err(RegistryError::corrupt_log(
                    &game_id,
                    sequence,
                    "the events up to the snapshot at it do not give the snapshot's chain value"
                        .into(),
                ));
            }
            Ok(())
        })
        .await
        .map_err(|e| RegistryError::Internal(format!("the prefix check stopped: {e}")))?;
        match checked {
            Ok(()) => {
                self.unchecked_prefix = None;
                Ok(())
            }
            Err(RegistryError::CorruptLog { game_id, source }) => {
                tracing::error!(%game_id, error = %source, "corrupt log under a snapshot");
                self.found_corrupt = Some(source.clone());
                Err(RegistryError::CorruptLog { game_id, source })
            }
            Err(other) => Err(other),
        }
    }
}
