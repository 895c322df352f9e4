//! Views: the game as a reply shows it, past states rebuilt from the store, and
//! pages of legal moves.

use super::super::{LegalMovesPage, RegistryError};
use super::Actor;
use crate::game::GameState;
use crate::proto::convert::View;
use crate::proto::{self as pb, convert};
use crate::rules::Seat;

impl Actor {
    pub(super) fn game_view(&self, view: View) -> pb::Game {
        let mut game = convert::game_in_view(
            &self.game_id,
            &self.state,
            self.created_at_ms,
            self.state.sequence(),
            view,
        );
        if self.state.config().absence().is_some()
            && let Some(position) = game.position.as_mut()
        {
            position.seats_present = (0..self.state.config().seats().len() as u8)
                .filter(|s| self.shared.presence_of(Seat(*s)).streams > 0)
                .map(u32::from)
                .collect();
        }
        game
    }

    pub(super) async fn view(
        &self,
        at: Option<u64>,
        view: View,
    ) -> Result<pb::Game, RegistryError> {
        let last = self.state.sequence();
        match at {
            None | Some(0) => Ok(self.game_view(view)),
            Some(at) if at == last => Ok(self.game_view(view)),
            Some(at) if at > last => Err(RegistryError::SequenceOutOfRange { at, last }),
            Some(at) => {
                let (state, created_at_ms) = self.past(at).await?;
                Ok(convert::game_in_view(
                    &self.game_id,
                    &state,
                    created_at_ms,
                    last,
                    view,
                ))
            }
        }
    }

    /// The state, the latest or rebuilt from the store right after `at`.
    pub(super) async fn state_at(&self, at: Option<u64>) -> Result<GameState, RegistryError> {
        let last = self.state.sequence();
        match at {
            None | Some(0) => Ok(self.state.clone()),
            Some(at) if at == last => Ok(self.state.clone()),
            Some(at) if at > last => Err(RegistryError::SequenceOutOfRange { at, last }),
            Some(at) => Ok(self.past(at).await?.0),
        }
    }

    /// The state right after event `at`, rebuilt from the store (from a
    /// snapshot when one serves), with the game's creation time.
    async fn past(&self, at: u64) -> Result<(GameState, i64), RegistryError> {
        self.registry.state_after(&self.game_id, at).await
    }

    pub(super) fn legal_moves(&self, offset: usize, limit: usize) -> LegalMovesPage {
        let rules = self.state.config().rules();
        let (total, moves) = match self.state.to_move() {
            None => (0, Vec::new()),
            Some(seat) => (
                rules.legal_move_count(self.state.position(), seat),
                rules
                    .legal_moves(self.state.position(), seat)
                    .skip(offset)
                    .take(limit)
                    .map(|mv| convert::move_on_position_to_proto(self.state.position(), mv))
                    .collect(),
            ),
        };
        let next_offset =
            (offset + moves.len() < total && !moves.is_empty()).then_some(offset + moves.len());
        LegalMovesPage {
            reply: pb::ListLegalMovesResponse {
                seat_to_move: self.state.to_move().map(|s| s.0.into()),
                moves,
                sequence: self.state.sequence(),
                total: total as u32,
                next_page_token: String::new(),
            },
            next_offset,
        }
    }
}
