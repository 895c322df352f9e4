//! Pure board-game rules: cells, legality, where a move lands and whether a
//! placement ends the game.
//!
//! This layer knows nothing of turns, time, players' identities, storage or
//! the network: it is given a position, the seat whose piece is played and a
//! move, and answers with a placement and an optional outcome, or an
//! [`IllegalMove`].
//!
//! Map of the module:
//! - [`Coord`]: a 0-based (row, col) cell, (0,0) top-left, row-major.
//! - [`Board`]: a flat rows x cols grid whose off-board reads return `None`.
//! - [`lines`]: K-in-a-row detection through the square just played.
//! - [`MnkRules`], [`ConnectFourRules`], [`GomokuRules`], [`WildRules`],
//!   [`OthelloRules`], [`SnakesLaddersRules`]: one file per game family.
//! - [`RuleSet`]: the data-carrying enum that delegates to each family, beside
//!   the fieldless [`Variant`].
//! - [`Position`]: the board plus the per-family bookkeeping (filled-cell
//!   counter, column heights, each seat's square in a race).

mod board;
mod connect_four;
mod coord;
mod error;
mod gomoku;
pub mod lines;
mod mnk;
mod othello;
mod position;
mod snakes;
mod wild;

pub use board::Board;
pub use connect_four::{ConnectFourRules, PopBothLines};
pub use coord::Coord;
pub use error::{IllegalMove, InvalidRules};
pub use gomoku::GomokuRules;
pub use lines::Overline;
pub use mnk::MnkRules;
pub use othello::OthelloRules;
pub use position::Position;
pub use snakes::{Forfeit, Overshoot, Roll, SnakesLaddersOptions, SnakesLaddersRules};
pub use wild::WildRules;

/// The hard upper bound on seats any rule set supports: a board cell stores
/// its owner in one byte, with 0 meaning empty.
pub const MAX_SEATS: usize = 255;

/// A seat at the table: a 0-based index into the game's seat list. Seat 0
/// moves first in the games of this family.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Seat(pub u8);

impl Seat {
    /// The 0-based index of the seat.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }
}

impl std::fmt::Display for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "seat {}", self.0)
    }
}

/// A move as a player requests it, before the rules have checked it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Move {
    /// Put a piece on this cell (m,n,k-games).
    Place(Coord),
    /// Put `mark` (a seat's symbol, whoever plays it) on this cell (wild
    /// games).
    PlaceMark {
        /// The cell.
        at: Coord,
        /// Whose symbol is placed: seat 0's or seat 1's.
        mark: Seat,
    },
    /// Pop the mover's own disc out of the bottom of this 0-based column
    /// (Connect Four Pop Out); the discs above fall one row.
    Pop {
        /// The 0-based column, counted from the left.
        column: u32,
    },
    /// Drop a disc into this 0-based column (Connect Four); gravity decides
    /// the row.
    Drop {
        /// The 0-based column, counted from the left.
        column: u32,
    },
    /// Roll the dice and move the token (snakes and ladders); the rules
    /// draw the dice.
    Roll,
}

impl Move {
    /// The piece this move puts down when `seat` plays it: the named mark in
    /// wild games, otherwise the seat's own.
    pub fn piece(self, seat: Seat) -> Seat {
        match self {
            Move::PlaceMark { mark, .. } => mark,
            Move::Place(_) | Move::Drop { .. } | Move::Pop { .. } | Move::Roll => seat,
        }
    }
}

/// How a game ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `seat` made K in a row; `line` is the run through the last placement,
    /// in order along its axis (at least K cells). Othello (won on discs)
    /// and snakes and ladders (won on reaching the last square) have no line.
    Win {
        /// The winner.
        seat: Seat,
        /// The winning run of cells.
        line: Vec<Coord>,
    },
    /// The board is full and nobody made K in a row.
    Draw,
}

/// What a legal move does: the cell where the piece lands and, when the move
/// ends the game, the outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Played {
    /// The cell the piece lands on; for a roll, (0, the square the token
    /// rests on).
    pub placement: Coord,
    /// Whose piece lands there (the mover's, or in wild games the mark).
    pub piece: Seat,
    /// Discs that change to `piece` (Othello), in no particular order.
    pub flips: Vec<Coord>,
    /// Seats that have no move after this one and must pass, in turn order
    /// (Othello).
    pub passes: Vec<Seat>,
    /// The dice and the token's path (snakes and ladders).
    pub roll: Option<Roll>,
    /// `Some` when this placement ends the game.
    pub outcome: Option<Outcome>,
}

impl Played {
    /// What playing `mv` did, as [`RuleSet::apply_move`] takes it.
    pub fn effect(&self, mv: Move) -> Effect<'_> {
        Effect {
            mv,
            piece: self.piece,
            placement: self.placement,
            flips: &self.flips,
            roll: self.roll.as_ref(),
        }
    }
}

/// A played move as recorded, borrowed: what [`RuleSet::apply_move`] needs
/// to play it again and [`RuleSet::undo_move`] to take it back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Effect<'a> {
    /// The move as requested.
    pub mv: Move,
    /// Whose piece landed (see [`Played::piece`]); for a roll, the mover.
    pub piece: Seat,
    /// Where it landed (see [`Played::placement`]).
    pub placement: Coord,
    /// The discs it turned to `piece` (Othello).
    pub flips: &'a [Coord],
    /// The roll (snakes and ladders).
    pub roll: Option<&'a Roll>,
}

/// The game families, without their configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Variant {
    /// An m,n,k-game (tic-tac-toe, gomoku-style boards).
    Mnk,
    /// Connect Four with gravity.
    ConnectFour,
    /// Gomoku, freestyle or exactly five.
    Gomoku,
    /// Wild tic-tac-toe: either mark, any player.
    Wild,
    /// Othello (Reversi).
    Othello,
    /// Snakes and ladders, with server-drawn dice.
    SnakesLadders,
}

/// A validated rule set: one variant with its configuration. Build it through
/// the families' validating constructors ([`MnkRules::new`],
/// [`ConnectFourRules::new`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuleSet {
    /// An m,n,k-game.
    Mnk(MnkRules),
    /// Connect Four.
    ConnectFour(ConnectFourRules),
    /// Gomoku.
    Gomoku(GomokuRules),
    /// Wild tic-tac-toe (m,n,k).
    Wild(WildRules),
    /// Othello.
    Othello(OthelloRules),
    /// Snakes and ladders.
    SnakesLadders(SnakesLaddersRules),
}

impl RuleSet {
    /// The family of this rule set.
    pub fn variant(&self) -> Variant {
        match self {
            RuleSet::Mnk(_) => Variant::Mnk,
            RuleSet::ConnectFour(_) => Variant::ConnectFour,
            RuleSet::Gomoku(_) => Variant::Gomoku,
            RuleSet::Wild(_) => Variant::Wild,
            RuleSet::Othello(_) => Variant::Othello,
            RuleSet::SnakesLadders(_) => Variant::SnakesLadders,
        }
    }

    /// Board height in rows (0 for snakes and ladders, a race without cells).
    pub fn rows(&self) -> u32 {
        match self {
            RuleSet::Mnk(r) => r.rows(),
            RuleSet::ConnectFour(r) => r.rows(),
            RuleSet::Gomoku(r) => r.board().rows(),
            RuleSet::Wild(r) => r.board().rows(),
            RuleSet::Othello(r) => r.side(),
            RuleSet::SnakesLadders(_) => 0,
        }
    }

    /// Board width in columns (0 for snakes and ladders).
    pub fn cols(&self) -> u32 {
        match self {
            RuleSet::Mnk(r) => r.cols(),
            RuleSet::ConnectFour(r) => r.cols(),
            RuleSet::Gomoku(r) => r.board().cols(),
            RuleSet::Wild(r) => r.board().cols(),
            RuleSet::Othello(r) => r.side(),
            RuleSet::SnakesLadders(_) => 0,
        }
    }

    /// How many seats a game of these rules seats: (fewest, most).
    pub fn seat_range(&self) -> (usize, usize) {
        match self {
            RuleSet::Wild(_) | RuleSet::Othello(_) => (2, 2),
            RuleSet::ConnectFour(r) if r.pop_out().is_some() => (2, 2),
            RuleSet::Mnk(_) | RuleSet::ConnectFour(_) | RuleSet::Gomoku(_) => (2, MAX_SEATS),
            RuleSet::SnakesLadders(_) => (1, MAX_SEATS),
        }
    }

    /// Pieces in a row needed to win (0 for Othello, won on count, and for
    /// snakes and ladders).
    pub fn k(&self) -> u32 {
        match self {
            RuleSet::Mnk(r) => r.k(),
            RuleSet::ConnectFour(r) => r.k(),
            RuleSet::Gomoku(r) => r.board().k(),
            RuleSet::Wild(r) => r.board().k(),
            RuleSet::Othello(_) | RuleSet::SnakesLadders(_) => 0,
        }
    }

    /// The starting position for `seats` seats: an empty board (Othello: the
    /// four centre discs), or every token off the board in a race.
    pub fn initial_position(&self, seats: usize) -> Position {
        match self {
            RuleSet::Othello(r) => r.initial_position(),
            RuleSet::SnakesLadders(_) => Position::race(seats),
            _ => Position::empty(self.rows(), self.cols()),
        }
    }

    /// Checks what can be checked of `mv` without a position: that its kind
    /// fits this rule set and that it names a cell or column on the board.
    ///
    /// # Errors
    /// [`IllegalMove::WrongMoveKind`], [`IllegalMove::CellOffBoard`],
    /// [`IllegalMove::ColumnOffBoard`].
    pub fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        match self {
            RuleSet::Mnk(r) => r.check(mv).map(drop),
            RuleSet::ConnectFour(r) => r.check(mv).map(drop),
            RuleSet::Gomoku(r) => r.check(mv).map(drop),
            RuleSet::Wild(r) => r.check(mv).map(drop),
            RuleSet::Othello(r) => r.check(mv).map(drop),
            RuleSet::SnakesLadders(r) => r.check(mv),
        }
    }

    /// Checks `mv` for `seat` on `position` and says where it lands and
    /// whether it ends the game. The position is not changed.
    ///
    /// # Errors
    /// [`IllegalMove`] when the move is off the board, of the wrong kind for
    /// this rule set, onto an occupied cell or into a full column.
    pub fn play(&self, position: &Position, seat: Seat, mv: Move) -> Result<Played, IllegalMove> {
        let placement = match self {
            RuleSet::Mnk(r) => r.placement(position, mv)?,
            RuleSet::ConnectFour(r) => match mv {
                Move::Pop { column } => {
                    r.check(mv)?;
                    return r.play_pop(position, seat, column);
                }
                _ => r.placement(position, mv)?,
            },
            RuleSet::Gomoku(r) => r.placement(position, mv)?,
            RuleSet::Wild(r) => r.placement(position, mv)?.0,
            RuleSet::Othello(r) => return r.play(position, seat, mv),
            RuleSet::SnakesLadders(r) => {
                r.check(mv)?;
                return Ok(r.roll(position, seat));
            }
        };
        let piece = mv.piece(seat);
        let outcome = self
            .outcome_of(position, piece, placement)
            .map(|outcome| match outcome {
                // A line of either mark wins for the seat that completed it.
                Outcome::Win { line, .. } => Outcome::Win { seat, line },
                Outcome::Draw => Outcome::Draw,
            });
        Ok(Played {
            placement,
            piece,
            flips: Vec::new(),
            passes: Vec::new(),
            roll: None,
            outcome,
        })
    }

    /// Whether placing `seat`'s piece on the empty `placement` ends the game
    /// (a win is reported for `seat`, the piece's owner):
    /// a win when it completes K in a row through `placement` (exactly K
    /// where overlines do not win; O(K) work along four axes), else a draw
    /// when it fills the last empty cell.
    fn outcome_of(&self, position: &Position, seat: Seat, placement: Coord) -> Option<Outcome> {
        let overline = match self {
            RuleSet::Gomoku(r) => r.overline(),
            RuleSet::Mnk(_)
            | RuleSet::ConnectFour(_)
            | RuleSet::Wild(_)
            | RuleSet::Othello(_)
            | RuleSet::SnakesLadders(_) => Overline::Wins,
        };
        if let Some(line) =
            lines::winning_run(position.board(), placement, seat, self.k(), overline)
        {
            return Some(Outcome::Win { seat, line });
        }
        if position.filled() + 1 < position.board().cells() {
            return None;
        }
        // A full board draws, except in Pop Out while the other player can
        // still pop.
        if let RuleSet::ConnectFour(r) = self
            && r.pop_out().is_some()
        {
            let mut after = position.clone();
            after.put(placement, seat);
            if r.can_pop(&after, Seat(1 - seat.0)) {
                return None;
            }
        }
        Some(Outcome::Draw)
    }

    /// Puts `piece` (see [`Played::piece`]) on `placement`, trusting that
    /// [`RuleSet::play`] accepted it (used by evolve and replay).
    ///
    /// # Panics
    /// When `placement` is off the board.
    pub fn apply(&self, position: &mut Position, piece: Seat, placement: Coord) {
        position.put(placement, piece);
    }

    /// Applies a move [`RuleSet::play`] accepted, from the facts it
    /// recorded: the piece lands on the placement (or, for a pop, leaves it
    /// and the column falls), the flips turn to the piece, or the roll moves
    /// the mover's token.
    ///
    /// # Panics
    /// When a cell is off the board, or a roll move carries no roll or names
    /// no seat of the race.
    pub fn apply_move(&self, position: &mut Position, effect: Effect<'_>) {
        let Effect { mv, piece, .. } = effect;
        match mv {
            Move::Pop { column } => position.pop(column),
            Move::Place(_) | Move::PlaceMark { .. } | Move::Drop { .. } => {
                self.apply(position, piece, effect.placement)
            }
            Move::Roll => {
                let roll = effect.roll.expect("a roll move records its roll");
                let sixes = if roll.extra_turn {
                    roll.sixes_before + 1
                } else {
                    0
                };
                position.advance(piece, roll.to, sixes);
            }
        }
        self.flip(position, effect.flips, piece);
    }

    /// Takes back the last move applied with [`RuleSet::apply_move`].
    ///
    /// # Panics
    /// As for [`RuleSet::apply_move`].
    pub fn undo_move(&self, position: &mut Position, effect: Effect<'_>) {
        let Effect { mv, piece, .. } = effect;
        self.unflip(position, effect.flips, piece);
        match mv {
            Move::Pop { column } => position.unpop(column, piece),
            Move::Place(_) | Move::PlaceMark { .. } | Move::Drop { .. } => {
                self.unapply(position, effect.placement)
            }
            Move::Roll => {
                let roll = effect.roll.expect("a roll move records its roll");
                position.retreat(piece, roll.from, roll.sixes_before);
            }
        }
    }

    /// Whether a piece, once placed, stays where it is and whose it is, so
    /// the moves on the board list the pieces: false where pops move discs
    /// (Pop Out) or flips change them (Othello).
    pub fn pieces_stay_put(&self) -> bool {
        match self {
            RuleSet::ConnectFour(r) => r.pop_out().is_none(),
            RuleSet::Othello(_) => false,
            RuleSet::Mnk(_) | RuleSet::Gomoku(_) | RuleSet::Wild(_) | RuleSet::SnakesLadders(_) => {
                true
            }
        }
    }

    /// Whether a position that occurs for the third time is a draw (Pop
    /// Out, where pops can repeat positions forever).
    pub fn draws_on_repetition(&self) -> bool {
        matches!(self, RuleSet::ConnectFour(r) if r.pop_out().is_some())
    }

    /// Turns the discs on `cells` to `piece` (the flips of a [`Played`]).
    ///
    /// # Panics
    /// When a cell is off the board.
    pub fn flip(&self, position: &mut Position, cells: &[Coord], piece: Seat) {
        cells.iter().for_each(|at| position.recolor(*at, piece));
    }

    /// Turns back the discs `piece`'s move flipped (Othello: to the other
    /// seat), the inverse of [`RuleSet::flip`].
    ///
    /// # Panics
    /// When a cell is off the board.
    pub fn unflip(&self, position: &mut Position, cells: &[Coord], piece: Seat) {
        // Only Othello flips, and it seats two: a flipped disc was the other's.
        if let RuleSet::Othello(_) = self {
            self.flip(position, cells, Seat(1 - piece.0));
        }
    }

    /// Removes the piece on `placement`, the inverse of [`RuleSet::apply`]
    /// for the last piece placed.
    ///
    /// # Panics
    /// When `placement` is off the board.
    pub fn unapply(&self, position: &mut Position, placement: Coord) {
        position.clear(placement);
    }

    /// Every legal move of `seat` on `position`, in a fixed order: row-major
    /// for placements, left to right for drops; the one roll in a race. Empty on a full board (and in
    /// Othello when `seat` must pass). Whether the game is already over is
    /// the caller's concern.
    pub fn legal_moves<'a>(
        &'a self,
        position: &'a Position,
        seat: Seat,
    ) -> Box<dyn Iterator<Item = Move> + 'a> {
        match self {
            RuleSet::Mnk(r) => Box::new(r.legal_moves(position)),
            RuleSet::ConnectFour(r) => Box::new(r.legal_moves(position, seat)),
            RuleSet::Gomoku(r) => Box::new(r.board().legal_moves(position)),
            RuleSet::Wild(r) => Box::new(r.legal_moves(position)),
            RuleSet::Othello(_) => Box::new(OthelloRules::legal_moves(position, seat)),
            RuleSet::SnakesLadders(_) => Box::new(std::iter::once(Move::Roll)),
        }
    }

    /// How many legal moves [`RuleSet::legal_moves`] yields, without listing
    /// them where the family can count faster.
    pub fn legal_move_count(&self, position: &Position, seat: Seat) -> usize {
        match self {
            RuleSet::Mnk(_) | RuleSet::Gomoku(_) => {
                (position.board().cells() - position.filled()) as usize
            }
            RuleSet::Wild(_) => {
                WildRules::MARKS.len() * (position.board().cells() - position.filled()) as usize
            }
            RuleSet::ConnectFour(r) => r.legal_moves(position, seat).count(),
            RuleSet::Othello(_) => OthelloRules::legal_moves(position, seat).count(),
            RuleSet::SnakesLadders(_) => 1,
        }
    }
}
