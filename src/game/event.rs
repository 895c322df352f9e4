//! The domain events of a game's log.

use super::GameConfig;
use crate::rules::{Coord, Move, Outcome, Roll, Seat};

/// One fact of a game's log, past tense. Each carries everything replay
/// needs (the landing cell, the outcome), so evolve never re-derives them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// The game was created with this configuration (always sequence 1).
    GameCreated(GameConfig),
    /// `seat` played `mv`; the piece landed on `placement` (for a roll: row
    /// 0, column = the square the token rests on).
    MovePlayed {
        /// The seat that moved.
        seat: Seat,
        /// The move as requested.
        mv: Move,
        /// Where the piece landed.
        placement: Coord,
        /// 1-based ply number of this move among the moves on the board.
        ply: u32,
        /// Set when this move ended the game.
        outcome: Option<Outcome>,
        /// Discs the move turned to the mover's colour (Othello).
        flips: Vec<Coord>,
        /// The dice drawn and the token's path (snakes and ladders).
        roll: Option<Roll>,
    },
    /// `seat` had no legal move and passed (Othello).
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
        /// The cell that was cleared (for a roll: the undone move's
        /// placement).
        placement: Coord,
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
