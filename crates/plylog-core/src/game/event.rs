//! The domain events of a game's log.

use super::GameConfig;
use crate::engine::Chooser;
use crate::rules::{Coord, EndReason, Outcome, Played, Seat};

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
        /// The engine that chose the move, when a bot seat played it.
        chosen_by: Option<Chooser>,
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
    /// The last move undone was played again ([`super::Command::Redo`]):
    /// what it did, as the rules decided it again on the same position.
    MoveRedone {
        /// The seat that moved.
        seat: Seat,
        /// 1-based ply number of the move among the moves on the board.
        ply: u32,
        /// The move and everything it did (its `passes` are empty).
        played: Played,
    },
    /// The seat to move ran out of time. What the game's
    /// [`super::ExpiryPolicy`] does about it follows in the same append: a
    /// [`Event::GameEnded`], a [`Event::SeatOut`] or a [`Event::MovePlayed`]
    /// chosen at random.
    TimeExpired {
        /// The seat whose time ran out.
        seat: Seat,
    },
    /// `seat` left play (resigned, or forfeited on time, with more than two
    /// seats in play): turns skip it from now on, and play goes on.
    SeatOut {
        /// The seat out of play.
        seat: Seat,
        /// Why: [`EndReason::Resignation`] or [`EndReason::Timeout`].
        reason: EndReason,
    },
    /// The game ended without a move deciding it (a move that ends a game
    /// carries its outcome in [`Played::outcome`]).
    GameEnded {
        /// The result; `None` for no result (an aborted game).
        outcome: Option<Outcome>,
        /// Why the game ended.
        reason: EndReason,
    },
    /// `seat` offered a draw; it stands until every other seat in play
    /// accepts it (a draw), one declines it, or `seat` moves again after
    /// another seat has moved (an offer made with a move survives that move).
    DrawOffered {
        /// The seat offering.
        seat: Seat,
    },
    /// `seat` accepted the pending draw offer.
    DrawAccepted {
        /// The seat accepting.
        seat: Seat,
    },
    /// `seat` declined the pending draw offer, which lapses.
    DrawDeclined {
        /// The seat declining.
        seat: Seat,
    },
    /// `seat` asked for the last move on the board to be taken back (the
    /// consent undo policy); it stands until every other seat in play
    /// accepts it (a [`Event::MoveUndone`] follows), one declines it, or a
    /// move is played.
    TakebackRequested {
        /// The seat asking.
        seat: Seat,
    },
    /// `seat` accepted the pending takeback request.
    TakebackAccepted {
        /// The seat accepting.
        seat: Seat,
    },
    /// `seat` declined the pending takeback request, which lapses.
    TakebackDeclined {
        /// The seat declining.
        seat: Seat,
    },
    /// `seat` asked for a rematch while the round was in play: the next
    /// round starts as soon as this one ends (a [`Event::RoundStarted`]
    /// right after the event that ends it).
    RematchRequested {
        /// The seat asking.
        seat: Seat,
        /// Whether the next round's first mover is the seat after this
        /// round's.
        rotate: bool,
    },
    /// A new round of the same game with the same seats began: an empty
    /// board, fresh clocks, nobody out, `first` to move. The moves of
    /// earlier rounds stay in the log; nothing of them can be undone.
    RoundStarted {
        /// The round, counted from 0 (the first round is 0; this is at
        /// least 1).
        round: u32,
        /// The seat that moves first in it.
        first: Seat,
    },
    /// `seat`, to move, held no followed stream for the game's grace
    /// period: what the absence policy does follows in the same append.
    SeatAbsent {
        /// The absent seat.
        seat: Seat,
    },
}
