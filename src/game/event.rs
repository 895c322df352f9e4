//! The domain events of a game's log.

use super::GameConfig;
use crate::rules::{Coord, Played, Seat};

/// One fact of a game's log, past tense. Each carries everything replay
/// needs (the landing cell, the outcome), so evolve never re-derives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The game was created with this configuration (always sequence 1).
    GameCreated(GameConfig),
    /// `seat` played a move, and `played` is what it did (its `passes` are
    /// empty: each pass is a [`Event::TurnPassed`] of its own).
    MovePlayed {
        /// The seat that moved.
        seat: Seat,
        /// 1-based ply number of this move among the moves on the board.
        ply: u32,
        /// The move and everything it did, as the rules recorded it.
        played: Played,
    },
    /// `seat` had no legal move and passed (games where a seat can be left
    /// without one, as [`Played::passes`] reports).
    TurnPassed {
        /// The seat that passed.
        seat: Seat,
    },
    /// The last move on the board (played by `seat`, recorded at
    /// `undone_sequence`) was taken back.
    MoveUndone {
        /// The seat whose move was taken back; it is to move again.
        seat: Seat,
        /// The sequence of the MovePlayed event taken back.
        undone_sequence: u64,
        /// The undone move's placement (see [`Played::placement`]); `None`
        /// in games without cells.
        placement: Option<Coord>,
        /// The seat that asked for the undo, when stated.
        requested_by: Option<Seat>,
    },
    /// An operator replaced `seat`'s credential. Nothing of the game
    /// changes; the log records it so that every node reloads the seat's
    /// token hash and the history shows who could act when.
    SeatTokenReissued {
        /// The seat whose token was replaced.
        seat: Seat,
    },
}
