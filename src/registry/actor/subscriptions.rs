//! Subscriptions and presence: a stream subscribes to the live events, and a
//! seat away past its grace period is reported.

use std::sync::Arc;

use super::super::residency::PresenceGuard;
use super::super::{Credential, RegistryError, RequestMeta};
use super::{Actor, Subscription};
use crate::game::Command;
use crate::rules::Seat;

/// How soon an absent seat's grace is checked again while another node
/// serves it a stream, in milliseconds (at most the grace itself).
const PRESENCE_RECHECK_MS: i64 = 2_000;

impl Actor {
    /// A subscription to the live events; a followed one that presents a
    /// seat's token keeps that seat present while it lasts.
    pub(super) fn subscribe(
        &self,
        credential: &Credential,
        follow: bool,
    ) -> Result<Subscription, RegistryError> {
        let max = self.registry.settings().max_streams_per_game;
        let capacity = self.registry.settings().broadcast_capacity;
        let seat = self.seat_tokens.holder(credential)?;
        let live = self.shared.live(capacity);
        if live.receiver_count() >= max {
            return Err(RegistryError::LimitReached {
                limit: "max_streams_per_game",
                max,
            });
        }
        let clock = self.registry.settings().clock.clone();
        let sink = self.registry.inner.presence.clone();
        let presence = seat.filter(|_| follow).map(|seat| {
            let sink = sink.map(|sink| (self.game_id.clone(), sink));
            PresenceGuard::new(Arc::clone(&self.shared), seat, clock, sink)
        });
        Ok((live.subscribe(), self.state.sequence(), presence))
    }

    /// When the seat to move, away from the game, has been so for the
    /// grace period of its turn: the seat and that time. `None` without an
    /// absence policy, when the game is over, the seat is present, or its
    /// absence this turn was already reported.
    pub(super) fn grace_ends(&self) -> Option<(Seat, i64)> {
        let policy = self.state.config().absence()?;
        let seat = self.state.to_move()?;
        let since = self.absent_since()?;
        let key = (self.state.round(), seat, self.state.clocks().turn_started);
        if self.reported_absence == Some(key) {
            return None;
        }
        let due = since.saturating_add(policy.grace_ms as i64);
        match self.absence_check {
            Some((checked, again)) if checked == key => Some((seat, due.max(again))),
            _ => Some((seat, due)),
        }
    }

    /// Since when the seat to move, in a game with an absence policy, has
    /// held no followed stream on this node (not before its turn started);
    /// `None` without an absence policy, when the game is over or the seat
    /// is present.
    pub(super) fn absent_since(&self) -> Option<i64> {
        self.state.config().absence()?;
        let seat = self.state.to_move()?;
        let presence = self.shared.presence_of(seat);
        if presence.streams > 0 {
            return None;
        }
        let turn = self.state.clocks().turn_started;
        Some(presence.absent_since.unwrap_or(self.absent_from).max(turn))
    }

    /// The seat to move stayed away past the grace period: appends what the
    /// absence policy does, once per turn.
    /// Returns whether it is settled (appended, or nothing to append).
    pub(super) async fn report_absence(&mut self, seat: Seat) -> bool {
        let key = (self.state.round(), seat, self.state.clocks().turn_started);
        // The actor's own command: no id, no turn token, no caller.
        let request = RequestMeta::default();
        let result = match self.absent_everywhere(seat, key).await {
            Ok(true) => self.execute(Command::GraceExpired { seat }, &request).await,
            // Present on another node, or not for long enough yet: the
            // timer looks again later.
            Ok(false) => return true,
            Err(error) => Err(error),
        };
        match result {
            Ok(_) => {
                self.reported_absence = Some(key);
                true
            }
            Err(error) => {
                tracing::warn!(error = %error, "absence not appended; retrying");
                false
            }
        }
    }

    /// Whether `seat` has been away from every node for the grace period of
    /// turn `key`. On a store only this node writes, this node's count is
    /// all there is (the timer fired: yes). On a shared store it asks the
    /// store for the other nodes' counts (its own row may lag behind its
    /// count by a queued write); when another node serves the seat, or
    /// served it too recently, it notes when to look again.
    async fn absent_everywhere(
        &mut self,
        seat: Seat,
        key: (u32, Seat, i64),
    ) -> Result<bool, RegistryError> {
        let Some(grace) = self.state.config().absence().map(|p| p.grace_ms as i64) else {
            return Ok(false);
        };
        let store = Arc::clone(&self.registry.inner.store);
        let Some(everywhere) = store.presence(&self.game_id, seat.0).await? else {
            return Ok(true);
        };
        let settings = self.registry.settings();
        let now = settings.clock.now_ms();
        if everywhere.present {
            let again = PRESENCE_RECHECK_MS.min(grace);
            self.absence_check = Some((key, now.saturating_add(again)));
            return Ok(false);
        }
        let here = self.shared.presence_of(seat).absent_since;
        let since = here
            .unwrap_or(self.absent_from)
            .max(everywhere.absent_since_ms.unwrap_or(i64::MIN))
            .max(key.2);
        let due = since.saturating_add(grace);
        if now < due {
            self.absence_check = Some((key, due));
            return Ok(false);
        }
        Ok(true)
    }
}
