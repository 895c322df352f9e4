//! One GetReplay page being filled: the steps read so far, the position
//! they reached, and where the next page starts. Filling it decodes,
//! replays and encodes positions (for a huge board, the costly part of a
//! replay), so a page with positions is filled on the heavy-read pool
//! ([`super::heavy`]), never on the runtime's worker threads.

use prost::Message;

use super::{PAGE_BYTES, REPLAY_PIECE_BUDGET, RegistryError, ReplayPositions, actor, log};
use crate::game::GameState;
use crate::proto::{self as pb, convert};
use crate::store::StoredEvent;
use crate::store::chain::Chain;

/// A GetReplay page being filled (see [`super::Registry::replay`]).
pub(super) struct ReplayPage {
    game_id: String,
    /// The game's last sequence when the page was asked for.
    last: u64,
    /// At most this many steps.
    limit: usize,
    /// Only the events of this round.
    round: Option<u32>,
    positions: ReplayPositions,
    /// Whether any step carries a position (then every event is applied).
    with_positions: bool,
    /// The state after the last event read, while positions are wanted.
    state: Option<GameState>,
    reply: pb::GetReplayResponse,
    steps: usize,
    pieces: usize,
    bytes: usize,
    /// Where the next page starts, once this one is full.
    next: Option<u64>,
    /// The integrity chain value of the event before the next to take:
    /// each event taken must link onto it (see [`crate::store::chain`]).
    chain: Chain,
}

impl ReplayPage {
    /// An empty page of the game `game_id` (its log ending at `last`, its
    /// view `game`), starting after `state` when positions are wanted, and
    /// after the event whose stored chain value is `chain`.
    pub(super) fn new(
        game_id: &str,
        game: pb::Game,
        limit: usize,
        round: Option<u32>,
        positions: &ReplayPositions,
        state: Option<GameState>,
        chain: Chain,
    ) -> Self {
        let last = game.last_sequence;
        let mut reply = pb::GetReplayResponse::default();
        reply.game = Some(game);
        ReplayPage {
            game_id: game_id.to_owned(),
            last,
            limit,
            round,
            with_positions: positions.any(),
            positions: positions.clone(),
            state,
            reply,
            steps: 0,
            pieces: 0,
            bytes: 0,
            next: None,
            chain,
        }
    }

    /// Whether the page is full (the next one starts at [`Self::finish`]'s
    /// sequence).
    pub(super) fn is_full(&self) -> bool {
        self.next.is_some()
    }

    /// The reply and where the next page starts, if anywhere.
    pub(super) fn finish(self) -> (pb::GetReplayResponse, Option<u64>) {
        (self.reply, self.next)
    }

    /// Adds the steps of `stored` (the next events of the log, in order)
    /// until the page is full: at most `limit` steps, positions holding
    /// [`REPLAY_PIECE_BUDGET`] pieces, [`PAGE_BYTES`] encoded bytes (and
    /// always at least one step). Each event is checked (and decoded and
    /// applied while positions are wanted), then sent as stored.
    ///
    /// # Errors
    /// [`RegistryError::CorruptLog`] for an event that breaks the integrity
    /// chain, does not decode or does not replay.
    pub(super) fn take(&mut self, stored: &[StoredEvent]) -> Result<(), RegistryError> {
        let game_id = self.game_id.as_str();
        let corrupt = |e: crate::game::ReplayError| actor::corrupt(game_id, &e);
        if let Some(first) = stored.first() {
            self.chain =
                log::check_chain(game_id, &self.chain, stored, first.sequence).map_err(corrupt)?;
        }
        for s in stored {
            let sequence = s.sequence;
            let event_round = if self.with_positions {
                let (wire, event) = actor::decode(game_id, s)?;
                let at = convert::timestamp_ms(wire.recorded_at.as_ref());
                match self.state.as_mut() {
                    Some(state) => state.apply_stored(&event, at).map_err(corrupt)?,
                    None => {
                        self.state = Some(GameState::replay([(event, at)]).map_err(corrupt)?);
                    }
                }
                wire.round
            } else {
                log::stored_round(s).map_err(corrupt)?
            };
            if self.round.is_some_and(|r| r != event_round) {
                continue;
            }
            if self.steps >= self.limit || (self.pieces >= REPLAY_PIECE_BUDGET && self.steps > 0) {
                self.next = Some(sequence);
                return Ok(());
            }
            let shown = self
                .state
                .as_ref()
                .filter(|_| self.positions.wants(sequence, self.last));
            // Encoded once: its length decides whether it fits the page.
            let position = shown.map(|state| convert::position_to_proto(state).encode_to_vec());
            let size = pb::GetReplayResponse::encoded_step_len(
                s.payload.len(),
                position.as_ref().map(Vec::len),
            );
            if self.bytes + size > PAGE_BYTES && self.steps > 0 {
                self.next = Some(sequence);
                return Ok(());
            }
            if let Some(state) = shown {
                self.pieces += state.moves().len();
            }
            self.bytes += size;
            self.steps += 1;
            self.reply
                .push_encoded_step(&s.payload, position.as_deref());
        }
        Ok(())
    }
}
