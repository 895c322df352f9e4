//! Why a command is refused ([`GameError`]) and why a stored log cannot be
//! replayed ([`ReplayError`]).

use super::Millis;
use crate::rules::IllegalMove;

/// Why [`decide`](super::decide) refuses a command. Nothing is appended
/// for a refusal.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    /// The rules refuse the move on this position.
    #[error(transparent)]
    Illegal(#[from] IllegalMove),
    /// The seat number is not at this table.
    #[error("seat {seat} is not at this table (seats 0 to {max})")]
    NoSuchSeat {
        /// The seat asked for.
        seat: u32,
        /// The highest seat index.
        max: u32,
    },
    /// Another seat is to move.
    #[error("seat {seat} is not to move; seat {to_move} is")]
    NotYourTurn {
        /// The seat that tried to move.
        seat: u8,
        /// The seat whose turn it is.
        to_move: u8,
    },
    /// The game has ended.
    #[error("the game is over")]
    GameOver,
    /// A draw claim when the rules allow none on the position (chess: the
    /// position has not stood three times and fifty moves of each side
    /// have not passed without a capture or a pawn move).
    #[error(
        "no draw can be claimed here: the position has not stood three times, and fifty moves of each side have not passed without a capture or a pawn move"
    )]
    NoDrawClaim,
    /// No move is on the board.
    #[error("there is no move to undo")]
    NothingToUndo,
    /// The game was created with undo disabled.
    #[error("undo is disabled in this game")]
    UndoDisabled,
    /// Under the last-mover policy, only the seat that played the last move
    /// may undo it, and must say so.
    #[error("only the seat that played the last move (seat {last_mover}) may undo it{}", match .requested_by { Some(s) => format!(", not seat {s}"), None => "; state the seat".into() })]
    NotLastMover {
        /// The seat that played the last move.
        last_mover: u8,
        /// The seat that asked, when stated.
        requested_by: Option<u8>,
    },
    /// But under the any-seat policy, only the seat whose undone move it is
    /// may redo it, and must say so.
    #[error("only the seat that played the undone move (seat {mover}) may redo it{}", match .requested_by { Some(s) => format!(", not seat {s}"), None => "; state the seat".into() })]
    NotRedoer {
        /// The seat that played the move to redo.
        mover: u8,
        /// The seat that asked, when stated.
        requested_by: Option<u8>,
    },
    /// A command that needs its seat named came without one.
    #[error("state the seat acting")]
    SeatRequired,
    /// No move was undone since the last move played.
    #[error("there is no undone move to redo")]
    NothingToRedo,
    /// The game takes back moves by consent only: ask with a takeback
    /// request.
    #[error("takebacks in this game need the other seats' consent: request a takeback")]
    ConsentRequired,
    /// Takeback requests need the consent undo policy.
    #[error("this game's undo policy is not consent: use undo")]
    TakebackNotAllowed,
    /// There is no pending offer (or request) of another seat to answer.
    #[error("there is no pending {what} of another seat to answer")]
    NoPendingOffer {
        /// "draw offer" or "takeback request".
        what: &'static str,
    },
    /// The seat already made the pending offer (or request), or agreed to it.
    #[error("seat {seat} already agreed to the pending {what}")]
    AlreadyAgreed {
        /// The seat.
        seat: u8,
        /// "draw offer" or "takeback request".
        what: &'static str,
    },
    /// A rematch was already asked for in this round.
    #[error("a rematch is already pending: the next round starts when this one ends")]
    RematchPending,
    /// Every seat has moved: the game can no longer be aborted (resign or
    /// offer a draw instead).
    #[error("every seat has moved: too late to abort")]
    AbortTooLate,
    /// The seat resigned or forfeited and is out of play.
    #[error("seat {seat} is out of play")]
    SeatOut {
        /// The seat.
        seat: u8,
    },
    /// The seat is played by an engine: nobody else moves or acts for it.
    #[error("seat {seat} is a bot: the server plays it")]
    SeatIsBot {
        /// The seat.
        seat: u8,
    },
    /// The turn's deadline passed before the command came: the timeout is
    /// appended instead.
    #[error("seat {seat}'s time ran out at {deadline_ms} ms after the epoch")]
    TimeExpired {
        /// The seat whose time ran out.
        seat: u8,
        /// The deadline, Unix epoch milliseconds.
        deadline_ms: Millis,
    },
}

/// A stored log that cannot be replayed: the store's corruption, reported
/// rather than applied.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("event {sequence}: {why}")]
pub struct ReplayError {
    /// The sequence of the offending event.
    pub sequence: u64,
    /// What is wrong with it.
    pub why: String,
}
