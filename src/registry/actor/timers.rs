//! Timers: the game's wake as the store's timer queue keeps it, and a turn's
//! timeout.

use std::sync::Arc;

use super::super::RequestMeta;
use super::super::wakes;
use super::Actor;
use crate::game::Command;
use crate::store::Wake;

/// How long the timer queue leaves a game whose bot is thinking on this
/// node before it claims it again, in milliseconds (see [`Actor::wake`]).
pub(super) const BOT_LEASE_MS: i64 = 5_000;

impl Actor {
    /// When the game is next due, as the timer queue keeps it (see
    /// [`super::super::wakes`]): its turn's deadline, the absent seat to move's
    /// grace period, a bot to move.
    ///
    /// A bot to move is due at once, as the append that made it so writes:
    /// should this node stop before its bot moves, the queue brings the
    /// game back. Once the queue has claimed the game while its bot thinks
    /// here, the game is leased for [`BOT_LEASE_MS`] instead (due when the
    /// lease runs out, and claimed again then), so that the queue does not
    /// claim it over and over while it thinks, and a node that stops
    /// mid-thought delays the bot by that much at most.
    pub(super) fn wake(&self) -> Wake {
        let grace = self.grace_ends().map(|(_, at)| at);
        let leased = self
            .bot_lease
            .filter(|(sequence, _)| *sequence == self.state.sequence())
            .map(|(_, until)| until);
        wakes::of(&self.state, grace, self.absent_since(), leased)
    }

    /// Writes the game's wake when it is not what the store holds (a seat
    /// came or went, a claim postponed it, a load found it stale). A write
    /// that fails is tried again after the next message or timer.
    pub(super) async fn store_wake(&mut self) {
        let wake = self.wake();
        if wake == self.stored_wake {
            return;
        }
        let store = Arc::clone(&self.registry.inner.store);
        match store
            .set_wake(&self.game_id, self.state.sequence(), wake)
            .await
        {
            Ok(()) => self.stored_wake = wake,
            Err(error) => {
                tracing::warn!(game_id = %self.game_id, error = %error, "the game's wake was not stored; trying again later");
            }
        }
    }

    /// Does what is due now, for the timer queue: a turn whose time ran out
    /// times out, an absent seat past its grace period is reported (a bot
    /// to move starts thinking in the serving loop). What cannot be
    /// appended now is tried again by the game's own timers.
    pub(super) async fn wake_due(&mut self) {
        let now = self.registry.settings().clock.now_ms();
        if self
            .state
            .deadline()
            .is_some_and(|deadline| now >= deadline)
        {
            self.time_out().await;
        }
        if let Some((seat, at)) = self.grace_ends()
            && now >= at
        {
            self.report_absence(seat).await;
        }
    }

    /// The turn's deadline has passed (the timer fired, or a command came
    /// too late): appends the timeout's events, once. Only the holder of the
    /// game's slot runs it, and the store's sequence check would refuse a
    /// second timeout at the same position anyway. Returns whether the
    /// timeout is settled (appended, or not due).
    pub(super) async fn time_out(&mut self) -> bool {
        // The actor's own command: no id, no turn token, no caller.
        let request = RequestMeta::default();
        let result = Box::pin(self.execute(Command::Timeout, &request)).await;
        // An attempt is a timeout this node decided and tried to append; a
        // wake that found it already recorded (its timer and the timer
        // queue may both look) is none.
        if !matches!(&result, Ok(reply) if reply.events.is_empty()) {
            self.registry.metrics().timeout_attempted();
        }
        match result {
            Ok(reply) => {
                if !reply.events.is_empty() {
                    tracing::debug!(sequence = self.state.sequence(), "turn timed out");
                }
                true
            }
            Err(error) => {
                tracing::warn!(error = %error, "timeout not appended; retrying");
                false
            }
        }
    }
}
