//! Presence across nodes on a shared store: each node writes its own count
//! of a seat's token-bearing streams to the store when it changes, and
//! refreshes the counts above 0 every third of [`PRESENCE_TTL`], so a node
//! that died stops counting once its rows are stale. The node holding a
//! game reads the other nodes' counts when a seat's grace period may have
//! run out; its own count it holds exactly in memory, while its row in the
//! store may lag behind by a write still queued.

use std::collections::HashMap;
use std::sync::Arc;

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::Clock;
use super::residency::SeatPresence;
use crate::rules::Seat;
use crate::store::{EventStore, PRESENCE_TTL, PresenceRecord};

/// A change of one seat's count on this node.
pub(super) struct PresenceChange {
    pub(super) game_id: String,
    pub(super) seat: Seat,
    pub(super) now: SeatPresence,
}

/// Where the stream side reports presence changes, in order.
#[derive(Clone)]
pub(crate) struct PresenceSink(mpsc::UnboundedSender<PresenceChange>);

impl PresenceSink {
    pub(super) fn send(&self, change: PresenceChange) {
        // The writer stops only at shutdown; a change after it is moot.
        let _ = self.0.send(change);
    }
}

/// Starts this node's presence writer on `store` (which names the node).
pub(super) fn spawn_writer(
    store: Arc<dyn EventStore>,
    clock: Clock,
    shutdown: CancellationToken,
) -> PresenceSink {
    let (tx, mut rx) = mpsc::unbounded_channel::<PresenceChange>();
    tokio::spawn(async move {
        // The latest count of every seat present on this node.
        let mut present: HashMap<(String, Seat), SeatPresence> = HashMap::new();
        let mut refresh = tokio::time::interval(PRESENCE_TTL / 3);
        let write = |game_id: String, seat: Seat, now: SeatPresence| {
            let store = Arc::clone(&store);
            let record = PresenceRecord {
                game_id,
                seat: seat.0,
                streams: now.streams,
                absent_since_ms: now.absent_since,
                now_ms: clock.now_ms(),
            };
            async move {
                if let Err(error) = store.record_presence(record).await {
                    tracing::warn!(error = %error, "presence not recorded; the next refresh retries");
                }
            }
        };
        loop {
            tokio::select! {
                () = shutdown.cancelled() => break,
                change = rx.recv() => {
                    let Some(change) = change else { break };
                    let key = (change.game_id.clone(), change.seat);
                    if change.now.streams > 0 {
                        present.insert(key, change.now);
                    } else {
                        present.remove(&key);
                    }
                    write(change.game_id, change.seat, change.now).await;
                }
                _ = refresh.tick() => {
                    for ((game_id, seat), now) in &present {
                        write(game_id.clone(), *seat, *now).await;
                    }
                }
            }
        }
    });
    PresenceSink(tx)
}
