//! What a seat asks of a game: [`Command`], and [`Action`] for what it does
//! besides moving.

use crate::rules::{Move, Seat};

/// What a seat asks of a game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    /// Play `mv` for `seat`.
    Play {
        /// The seat playing (required: `None` is refused; a server fills it
        /// in from the seat token presented).
        seat: Option<Seat>,
        /// The move requested.
        mv: Move,
    },
    /// Play `mv`, which the engine of bot seat `seat` chose on the
    /// position after event `sequence`. Decides to nothing when the game
    /// has moved on since (a move undone, a resignation): the choice is
    /// stale.
    BotPlay {
        /// The bot seat.
        seat: Seat,
        /// The engine's move.
        mv: Move,
        /// The sequence of the last event the engine saw.
        sequence: u64,
        /// Whether the engine proved the move best (see
        /// [`crate::engine::Chooser::proven`]).
        proven: bool,
    },
    /// Take back the last move on the board.
    Undo {
        /// The seat asking, when stated.
        requested_by: Option<Seat>,
    },
    /// Play again the last move undone, while no other move was played
    /// since (under the undo policy, as for [`Command::Undo`]).
    Redo {
        /// The seat asking, when stated.
        requested_by: Option<Seat>,
    },
    /// Something a seat does that is not a move: resign, abort, offer or
    /// answer a draw or a takeback.
    Act {
        /// The seat acting (required: `None` is refused).
        seat: Option<Seat>,
        /// What it does.
        action: Action,
    },
    /// Play again: a new round with the same seats once this one is over
    /// (at once when it is; otherwise when it ends).
    Rematch {
        /// The seat asking (required: `None` is refused).
        seat: Option<Seat>,
        /// Whether the next round's first mover is the seat after this
        /// round's (otherwise the same seat moves first).
        rotate: bool,
    },
    /// `seat` has held no followed stream for the game's grace period on its
    /// own turn: the shell tracks presence (it is not a fact of the log
    /// until it changes the game) and reports this. Decides to nothing when
    /// the seat is no longer to move.
    GraceExpired {
        /// The absent seat.
        seat: Seat,
    },
    /// The turn's deadline may have passed: the shell's timer fired. Decides
    /// to nothing when no deadline has passed (a move came first).
    Timeout,
    /// Replace `seat`'s credential (an operator's command; whoever may give
    /// it is checked outside the game). Allowed in any state, also after the
    /// game ended.
    ReissueSeatToken {
        /// The seat whose token is replaced.
        seat: Seat,
    },
}

/// What a seat may do besides moving ([`Command::Act`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Give up: with two seats in play the other wins; with more, the seat
    /// is out and play goes on.
    Resign,
    /// Call the game off with no result, before every seat has moved.
    Abort,
    /// Offer a draw (accepts a pending offer of another seat).
    OfferDraw,
    /// Accept the pending draw offer.
    AcceptDraw,
    /// Decline the pending draw offer.
    DeclineDraw,
    /// Ask for the last move on the board to be taken back (consent policy).
    RequestTakeback,
    /// Accept the pending takeback request.
    AcceptTakeback,
    /// Decline the pending takeback request.
    DeclineTakeback,
    /// Claim the draw the rules allow on the position as it stands
    /// (chess: threefold repetition or fifty moves, FIDE 9.2 and 9.3):
    /// the seat to move, or the seat whose move made the position (as
    /// FIDE 9.2.1.1 lets a player claim with the move that repeats).
    ClaimDraw,
}
