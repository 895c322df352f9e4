//! A position set up from scratch: a new game's state after a list of
//! moves, each played by the seat to move. SuggestMove and AnalyzePosition
//! analyse such a position when no stored game is named.

use super::{Command, GameConfig, GameError, GameState, decide, evolve};
use crate::rules::Move;

/// Why [`setup`] refused a move: which one, and why [`decide`] refused it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("setup move {index} is refused")]
pub struct SetupError {
    /// The refused move's index in the moves given (0 is the first).
    pub index: usize,
    /// Why: the rules refuse the move on the position before it, or the
    /// game was already over ([`GameError::GameOver`]).
    #[source]
    pub error: GameError,
}

/// The state of a new game created with `config` after `moves`, each
/// played in turn by the seat to move, as [`decide`] and [`evolve`] play
/// them. Nothing is stored and no clock is read: the game is created, and
/// every move played, at time 0.
///
/// # Errors
/// [`SetupError`] for the first move [`decide`] refuses, or the first move
/// after the game ended.
///
/// # Examples
/// ```
/// use plylog_core::game::{GameConfig, GameError, SeatInfo, SeatLimits, setup};
/// use plylog_core::rules::{Coord, MnkRules, Move, RuleSet};
///
/// let seat = |id: &str| SeatInfo {
///     player_id: id.into(),
///     display_name: String::new(),
///     symbol: id.into(),
///     bot: None,
/// };
/// let config = GameConfig::new(
///     RuleSet::Mnk(MnkRules::TIC_TAC_TOE),
///     vec![seat("X"), seat("O")],
///     SeatLimits::default(),
/// )
/// .unwrap();
/// let centre = Move::Place(Coord::new(1, 1));
/// assert_eq!(setup(config.clone(), [centre]).unwrap().moves().len(), 1);
/// let refused = setup(config, [centre, centre]).unwrap_err();
/// assert_eq!(refused.index, 1);
/// assert!(matches!(refused.error, GameError::Illegal(_)));
/// ```
pub fn setup(
    config: GameConfig,
    moves: impl IntoIterator<Item = Move>,
) -> Result<GameState, SetupError> {
    let mut state = GameState::new(config, 0);
    for (index, mv) in moves.into_iter().enumerate() {
        let refused = |error| SetupError { index, error };
        let seat = state
            .to_move()
            .ok_or_else(|| refused(GameError::GameOver))?;
        let events = decide(
            &state,
            &Command::Play {
                seat: Some(seat),
                mv,
            },
            0,
        )
        .map_err(refused)?;
        for event in &events {
            evolve(&mut state, event, 0);
        }
    }
    Ok(state)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::{GameStatus, SeatInfo, SeatLimits};
    use crate::rules::{Coord, IllegalMove, MnkRules, RuleSet};

    fn tic_tac_toe() -> GameConfig {
        let seat = |id: &str| SeatInfo {
            player_id: id.into(),
            display_name: String::new(),
            symbol: id.into(),
            bot: None,
        };
        GameConfig::new(
            RuleSet::Mnk(MnkRules::TIC_TAC_TOE),
            vec![seat("X"), seat("O")],
            SeatLimits::default(),
        )
        .unwrap()
    }

    fn place(row: u32, col: u32) -> Move {
        Move::Place(Coord::new(row, col))
    }

    #[test]
    fn the_seats_take_turns_from_the_first() {
        let state = setup(tic_tac_toe(), [place(0, 0), place(1, 1), place(0, 1)]).unwrap();
        let seats: Vec<u8> = state.moves().iter().map(|m| m.seat.0).collect();
        assert_eq!(seats, [0, 1, 0]);
        assert_eq!(state.status(), GameStatus::InProgress);
    }

    #[test]
    fn a_refused_move_is_named_by_its_index_with_the_rules_reason() {
        let refused = setup(tic_tac_toe(), [place(0, 0), place(0, 0)]).unwrap_err();
        assert_eq!(refused.index, 1);
        assert_eq!(
            refused.error,
            GameError::Illegal(IllegalMove::CellOccupied { row: 0, col: 0 })
        );
    }

    #[test]
    fn a_move_after_the_game_ended_is_game_over() {
        let won = [
            place(0, 0),
            place(1, 0),
            place(0, 1),
            place(1, 1),
            place(0, 2),
        ];
        assert_eq!(setup(tic_tac_toe(), won).unwrap().status(), GameStatus::Won);
        let after = won.into_iter().chain([place(2, 2)]);
        let refused = setup(tic_tac_toe(), after).unwrap_err();
        assert_eq!((refused.index, refused.error), (5, GameError::GameOver));
    }
}
