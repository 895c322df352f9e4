//! Catch-up from the store: after an append whose outcome is unknown (the
//! connection failed at commit) or that lost to another writer (the
//! sequence check, the second guard under slot ownership), the events the
//! store has past this actor's are read and applied.

use std::sync::Arc;

use super::super::RegistryError;
use super::super::log;
use super::Actor;
use super::load::{corrupt, decode};
use super::seat_tokens::SeatTokens;

/// Events read from the store per query while catching up.
const CATCH_UP_PAGE: u32 = 512;

impl Actor {
    /// Reads the events the store has after this actor's sequence,
    /// with the requests that produced them, and applies both in one step:
    /// a page is decoded and checked whole, its request records are taken
    /// in, then its events are applied and broadcast to this node's
    /// subscribers. A read that fails changes nothing, so the actor never
    /// holds an event whose request record it has not also read (which would
    /// let a retry of that request be decided a second time).
    pub(super) async fn catch_up(&mut self) -> Result<(), RegistryError> {
        let store = Arc::clone(&self.registry.inner.store);
        let start = self.state.sequence();
        loop {
            let after = self.state.sequence();
            let tail = store
                .read_since(&self.game_id, after, CATCH_UP_PAGE)
                .await?;
            if tail.events.is_empty() {
                break;
            }
            let chain = log::check_chain(&self.game_id, &self.chain, &tail.events, after + 1)
                .map_err(|e| corrupt(&self.game_id, &e))?;
            let mut page = Vec::with_capacity(tail.events.len());
            for stored in tail.events {
                let (wire, event) = decode(&self.game_id, &stored)?;
                page.push((wire, event, stored.payload));
            }
            for record in tail.requests {
                self.remember(record);
            }
            self.seat_tokens = SeatTokens::new(tail.seat_token_hashes);
            // The node that appended wrote the wake that follows.
            self.stored_wake = tail.wake;
            for (wire, event, payload) in page {
                let at = log::recorded_at(&wire);
                self.state
                    .apply_stored(&event, at)
                    .map_err(|e| corrupt(&self.game_id, &e))?;
                self.last_recorded_at_ms = self.last_recorded_at_ms.max(at);
                self.shared.broadcast(&wire, payload.into());
            }
            self.chain = chain;
        }
        if self.state.sequence() > start {
            self.registry
                .metrics()
                .store_caught_up(self.state.sequence() - start);
            tracing::debug!(from = start, to = self.state.sequence(), "caught up");
        }
        Ok(())
    }
}
