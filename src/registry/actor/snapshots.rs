//! Snapshots: taken every `snapshot_every` events after an append, saved in the
//! background.

use std::sync::Arc;

use tracing::Instrument;

use super::super::snapshot;
use super::Actor;
use crate::store::{Snapshot, StoreError};

impl Actor {
    /// Whether a snapshot is due once an append ending at `last` commits
    /// (see [`super::super::RegistrySettings::snapshot_every`]).
    pub(super) fn snapshot_due(&self, last: u64) -> bool {
        let every = self.registry.settings().snapshot_every;
        every > 0 && last >= self.snapshot_at.saturating_add(every)
    }

    /// Takes a snapshot of the state as it stands (right after an append,
    /// with the chain value of its last event) and saves it in the
    /// background: a snapshot is a cache, so one that fails to save is only
    /// logged.
    pub(super) fn take_snapshot(&mut self) {
        let sequence = self.state.sequence();
        let payload = snapshot::encode(&self.state, self.created_at_ms, self.chain);
        self.snapshot_at = sequence;
        let store = Arc::clone(&self.registry.inner.store);
        let snapshot = Snapshot {
            game_id: self.game_id.clone(),
            sequence,
            payload,
        };
        let bytes = snapshot.payload.len();
        let game_id = self.game_id.clone();
        tokio::spawn(
            async move {
                match store.save_snapshot(snapshot).await {
                    Ok(()) => tracing::debug!(sequence, bytes, "snapshot saved"),
                    // The server is stopping: the next load replays further.
                    Err(StoreError::Closed) => tracing::debug!(sequence, "snapshot not saved"),
                    Err(error) => {
                        tracing::warn!(%game_id, sequence, error = %error, "snapshot not saved");
                    }
                }
            }
            .in_current_span(),
        );
    }
}
