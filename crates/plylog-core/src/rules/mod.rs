//! Pure board-game rules: what a move does to a position, and whether it
//! ends the game.
//!
//! This layer knows nothing of turns, time, players' identities, storage or
//! the network: it is given a position, the seat whose turn it is and a
//! move, and answers with a [`Played`] record (where the piece lands, what
//! else changed, the outcome) or an [`IllegalMove`]. It never reads a clock
//! or entropy: the dice of a race are drawn from the seed its rules carry.
//!
//! # Map
//! - [`Game`]: the trait each game implements in its own file, with its own
//!   position type ([`GamePosition`]). Provided methods cover what most
//!   games share; a game overrides only what it does differently.
//! - One file per game: [`MnkRules`] (mnk.rs), [`GomokuRules`] (gomoku.rs),
//!   [`WildRules`] (wild.rs), [`ConnectFourRules`] with its
//!   [`ConnectFourPosition`] (connect_four.rs), [`OthelloRules`]
//!   (othello.rs), [`SnakesLaddersRules`] with its [`Race`] (snakes.rs),
//!   [`HexRules`] with its [`HexPosition`] (hex.rs).
//! - [`chess`]: chess and Chess960 ([`chess::ChessGame`]: positions, UCI
//!   and SAN, FEN, every ending and draw claim of the FIDE Laws), a
//!   [`Game`] as [`ChessRules`] with its [`ChessPosition`]; its moves are
//!   squares ([`Move::Chess`]) or text ([`Move::ChessText`]), and what a
//!   move did is its [`Played::chess`].
//! - Shared machinery the games call, naming no game: [`Board`] (a flat grid
//!   that counts its pieces), [`lines`] (K-in-a-row through the last cell
//!   and the outcome of a placement), [`Coord`].
//! - [`RuleSet`] and [`Position`]: the enums the game layer holds, one arm
//!   per game, delegating every call with one line per game.
//! - `error.rs`: [`IllegalMove`] and [`InvalidRules`]; `tests.rs`: the unit
//!   tests of this file (how each rule set is named).
//!
//! # Example: play a move through the rules
//! ```
//! use plylog_core::rules::{Coord, MnkRules, Move, Outcome, RuleSet, Seat};
//!
//! let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
//! let mut position = rules.initial_position(2);
//! // X on the top row, O in the middle row: X completes the row on move 5.
//! for (ply, col) in [0, 0, 1, 1, 2].into_iter().enumerate() {
//!     let seat = Seat((ply % 2) as u8);
//!     let mv = Move::Place(Coord::new(ply as u32 % 2, col));
//!     let played = rules.play(&position, seat, mv).expect("a legal move");
//!     rules.apply(&mut position, seat, &played);
//!     if ply == 4 {
//!         let Some(Outcome::Win { seat, line }) = played.outcome else { panic!() };
//!         assert_eq!((seat, line.len()), (Seat(0), 3));
//!     }
//! }
//! assert_eq!(rules.legal_move_count(&position, Seat(1)), 4);
//! ```
//!
//! # Adding a game: the checklist
//! A new game is one new file here plus these touch points, and nothing in
//! [`crate::game`] or the server's `src/registry`, `src/api` or `src/store`:
//! 1. `rules/<game>.rs`: its rules struct (validated constructor
//!    returning [`InvalidRules`] naming the field), its position type
//!    implementing [`GamePosition`], and `impl Game`; unit tests beside it.
//! 2. This file: the `mod` line and re-export, one arm in [`RuleSet`] and in
//!    [`Position`], one line in each of the three forms of the delegation
//!    macro (`each_game!`) and one in [`RuleSet::initial_position`]. A new
//!    kind of move (not place, place-a-mark, drop, pop, roll or swap) is a
//!    new [`Move`] arm; the other games refuse it through their wildcard
//!    arm, unchanged.
//! 3. `proto/plylog/v1/game.proto`: the rules message and its arm in the
//!    `RuleSet` oneof (and the move's arm in `Move`, if new);
//!    `game_service.proto`: new `ErrorReason` values.
//! 4. `src/proto/convert` (the server's): the rules (and move) conversion
//!    arms.
//! 5. `rules/error.rs` and the server's `src/api/status.rs`: new [`IllegalMove`]
//!    arms, if any, and their reason codes in the error table.
//! 6. Tests and fixtures: an oracle or published reference (OpenSpiel traces
//!    in `tests/fixtures/openspiel`, checked by `tests/rules`), a case in the
//!    game layer's property test, and an API test of one game.
//! 7. docs/guide/tour.md: a section with the grpcurl call that creates one
//!    (a console block, run by tests/clients/docs.rs).

mod board;
pub mod chess;
mod connect_four;
mod coord;
mod error;
mod gomoku;
mod hex;
pub mod lines;
mod mnk;
mod othello;
mod snakes;
mod wild;

pub use board::Board;
pub use chess::{ChessPlayed, ChessPosition, ChessRules};
pub use connect_four::{ConnectFourPosition, ConnectFourRules, PopBothLines};
pub use coord::Coord;
pub use error::{IllegalMove, InvalidRules};
pub use gomoku::GomokuRules;
pub use hex::{HexPosition, HexRules};
pub use lines::Overline;
pub use mnk::MnkRules;
pub use othello::OthelloRules;
pub use snakes::{Forfeit, Overshoot, Race, Roll, SnakesLaddersOptions, SnakesLaddersRules};
pub use wild::WildRules;

/// The hard upper bound on seats any rule set supports: a board cell stores
/// its owner in one byte, with 0 meaning empty.
pub const MAX_SEATS: usize = 255;

/// A seat at the table: a 0-based index into the game's seat list. Seat 0
/// moves first in the games of this family.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Seat(pub u8);

impl Seat {
    /// The 0-based index of the seat.
    pub fn index(self) -> usize {
        usize::from(self.0)
    }

    /// The seat after this one in turn order, of `seats` (wrapping to 0).
    pub fn next(self, seats: usize) -> Seat {
        Seat(((self.index() + 1) % seats) as u8)
    }
}

impl std::fmt::Display for Seat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "seat {}", self.0)
    }
}

/// A move as a player requests it, before the rules have checked it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
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
    /// Take over the opponent's first stone instead of placing one (the
    /// swap rule of Hex).
    Swap,
    /// A chess move, as its squares (what the log records, and what
    /// engines play).
    Chess(chess::ChessMove),
    /// A chess move as a player writes it, UCI or SAN, which the rules
    /// read on the position.
    ChessText(chess::MoveText),
}

impl Move {
    /// The piece this move puts down when `seat` plays it: the named mark in
    /// wild games, otherwise the seat's own.
    pub fn piece(self, seat: Seat) -> Seat {
        match self {
            Move::PlaceMark { mark, .. } => mark,
            Move::Place(_)
            | Move::Drop { .. }
            | Move::Pop { .. }
            | Move::Roll
            | Move::Swap
            | Move::Chess(_)
            | Move::ChessText(_) => seat,
        }
    }
}

/// Why a game ended. The rules give the board's reasons
/// ([`Game::end_reason`] for their outcomes; [`EndReason::Repetition`]
/// where a rule set draws on repetition; chess's endings of the FIDE
/// Laws); the game aggregate gives the rest, which no move decides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum EndReason {
    /// A seat completed K in a row.
    LineCompleted,
    /// The board filled up with no winner.
    BoardFull,
    /// A position (pieces and seat to move) occurred for the third time.
    Repetition,
    /// Neither seat could move and the discs were counted (Othello).
    DiscCount,
    /// A token reached the last square (a race).
    RaceFinished,
    /// A seat joined its two sides (Hex).
    Connection,
    /// A seat resigned.
    Resignation,
    /// A seat's time ran out.
    Timeout,
    /// The seats agreed to a draw.
    Agreement,
    /// The game was called off before every seat had moved: no result.
    Aborted,
    /// A seat stayed away past the grace period on its turn.
    Abandoned,
    /// The side to move is checkmated (chess; FIDE 5.1.1).
    Checkmate,
    /// The side to move has no legal move and is not in check (chess;
    /// FIDE 5.2.1).
    Stalemate,
    /// Neither side can checkmate (chess; FIDE 5.2.2, the simple cases).
    InsufficientMaterial,
    /// A draw claimed (or, by the game's rules, made at once) on the same
    /// position for the third time (chess; FIDE 9.2).
    ThreefoldRepetition,
    /// A draw claimed (or made at once) after fifty moves of each side
    /// without a capture or a pawn move (chess; FIDE 9.3).
    FiftyMoves,
    /// The same position for the fifth time (chess; FIDE 9.6.1).
    FivefoldRepetition,
    /// Seventy-five moves of each side without a capture or a pawn move
    /// (chess; FIDE 9.6.2).
    SeventyFiveMoves,
}

/// How a game ended.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Outcome {
    /// `seat` won. `line` is the run of K in a row through the last
    /// placement, in order along its axis (at least K cells), where the game
    /// is won on a line; empty where it is won otherwise (Othello on discs, a
    /// race on reaching the last square, Hex on a connection).
    Win {
        /// The winner.
        seat: Seat,
        /// The winning run of cells.
        line: Vec<Coord>,
    },
    /// Nobody won: the board filled without a win, equal disc counts, or a
    /// position repeated.
    Draw,
}

/// What a legal move did: the one record of a move, as the rules return it
/// from [`Game::play`], as the game's log stores it and as [`Game::apply`]
/// and [`Game::undo`] take it to play the move again or take it back. It
/// holds every fact replay needs, so the rules never re-derive them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Played {
    /// The move as requested.
    pub mv: Move,
    /// The cell whose piece the move put down (or, for a pop, took away);
    /// `None` in games without cells (a race).
    pub placement: Option<Coord>,
    /// Discs that changed to the mover's colour (Othello), in no particular
    /// order.
    pub flips: Vec<Coord>,
    /// The dice and the token's path (snakes and ladders). Boxed: every
    /// move of every game keeps a `Played` on its undo stack, and a roll
    /// inline would make each 88 bytes larger.
    pub roll: Option<Box<Roll>>,
    /// Seats that have no move after this one and must pass, in turn order
    /// (Othello). The game layer records each as its own event, so a
    /// recorded move holds none.
    pub passes: Vec<Seat>,
    /// `Some` when this move ends the game.
    pub outcome: Option<Outcome>,
    /// What a chess move did besides its squares (UCI, SAN, capture, how
    /// it ended the game). Boxed, as [`Played::roll`] is.
    pub chess: Option<Box<ChessPlayed>>,
}

impl Played {
    /// The cell of a move that has one (see [`Played::placement`]).
    ///
    /// # Panics
    /// When it has none (a roll): the caller's game has cells.
    pub fn cell(&self) -> Coord {
        self.placement.expect("a move on a board records its cell")
    }

    /// A move that put a piece on `placement` and changed nothing else.
    pub fn placed(mv: Move, placement: Coord, outcome: Option<Outcome>) -> Self {
        Played {
            mv,
            placement: Some(placement),
            flips: Vec::new(),
            roll: None,
            passes: Vec::new(),
            outcome,
            chess: None,
        }
    }
}

/// A game's position: what the game layer and the wire read of it without
/// knowing the game.
pub trait GamePosition: std::fmt::Debug + Clone + PartialEq + Eq + Send + Sync {
    /// The board, `None` in games without cells (a race).
    fn board(&self) -> Option<&Board>;

    /// Each seat's square in a race, by seat index (0: off the board); empty
    /// in board games.
    fn squares(&self) -> &[u32] {
        &[]
    }

    /// A 64-bit digest of the pieces (SipHash with fixed keys, so equal on
    /// every run), for telling repeated positions apart. The default hashes
    /// the board and the squares.
    fn digest(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        self.board().hash(&mut hasher);
        self.squares().hash(&mut hasher);
        hasher.finish()
    }

    /// The heap memory the position holds, in bytes.
    fn heap_bytes(&self) -> usize;

    /// The position as text, one string per line: by default the board's
    /// rows, each cell its owner's symbol from `symbols` (by seat index) or
    /// `empty`; a race lists each seat's square.
    fn render(&self, symbols: &[&str], empty: &str) -> Vec<String> {
        match self.board() {
            Some(board) => board.render(symbols, empty),
            None => self
                .squares()
                .iter()
                .zip(symbols)
                .map(|(square, symbol)| format!("{symbol} {square}"))
                .collect(),
        }
    }
}

/// The rules of one game, implemented in the game's own file: a validated
/// configuration (board size, K, options) that answers every question the
/// game layer asks about a position of its own type. Pure: no clock, no
/// entropy, no I/O.
pub trait Game {
    /// This game's position.
    type Position: GamePosition;

    /// The starting position for `seats` seats.
    fn initial_position(&self, seats: usize) -> Self::Position;

    /// How many seats a game of these rules seats: (fewest, most). Default:
    /// exactly two.
    fn seat_range(&self) -> (usize, usize) {
        (2, 2)
    }

    /// Checks what can be checked of `mv` without a position: that its kind
    /// fits this game and that it names a cell or column on the board.
    ///
    /// # Errors
    /// [`IllegalMove::WrongMoveKind`], [`IllegalMove::UnexpectedMark`],
    /// [`IllegalMove::CellOffBoard`], [`IllegalMove::ColumnOffBoard`],
    /// [`IllegalMove::NoSuchMark`].
    fn check_move(&self, mv: Move) -> Result<(), IllegalMove>;

    /// Checks `mv` for `seat` on `position` and says what it does. The
    /// position is not changed. Work is O(K) per placement in the K-in-a-row
    /// games, whatever the board size.
    ///
    /// # Errors
    /// [`IllegalMove`] when the move is of the wrong kind, off the board, or
    /// not allowed on this position (occupied cell, full column, ...).
    fn play(&self, position: &Self::Position, seat: Seat, mv: Move) -> Result<Played, IllegalMove>;

    /// Applies a move [`Game::play`] accepted (or a recorded one), from the
    /// facts it recorded.
    ///
    /// # Panics
    /// When the record does not fit the position (a cell off the board).
    fn apply(&self, position: &mut Self::Position, seat: Seat, played: &Played);

    /// Takes back the last move applied with [`Game::apply`].
    ///
    /// # Panics
    /// As for [`Game::apply`].
    fn undo(&self, position: &mut Self::Position, seat: Seat, played: &Played);

    /// Whether a recorded move (read from a stored log) fits `position`, so
    /// that [`Game::apply`] can take it: the default checks that its piece
    /// lands on an empty cell of the board, that its flips hold discs and
    /// that it carries no dice. The move itself was checked with
    /// [`Game::check_move`] and the turn by the caller.
    ///
    /// # Errors
    /// What does not fit, in words.
    fn check_played(
        &self,
        position: &Self::Position,
        seat: Seat,
        played: &Played,
    ) -> Result<(), String> {
        let _ = seat;
        check_landing(position.board(), played, None)
    }

    /// Every legal move of `seat` on `position`, in a fixed order (row-major
    /// for cells, left to right for columns), lazily: paging through them
    /// skips without building the list. Empty when `seat` must pass or the
    /// board is full; whether the game is over is the caller's concern.
    fn legal_moves<'a>(
        &'a self,
        position: &'a Self::Position,
        seat: Seat,
    ) -> impl Iterator<Item = Move> + 'a;

    /// How many legal moves [`Game::legal_moves`] yields; override where the
    /// game counts faster than listing.
    fn legal_move_count(&self, position: &Self::Position, seat: Seat) -> usize {
        self.legal_moves(position, seat).count()
    }

    /// The seat to move after `seat` played `played`, of `seats`: by default
    /// the next in turn order.
    fn next_to_move(&self, seats: usize, seat: Seat, played: &Played) -> Seat {
        let _ = played;
        seat.next(seats)
    }

    /// Whether a position (pieces and seat to move) that occurs for the
    /// third time is a draw. Default: no.
    fn draws_on_repetition(&self) -> bool {
        false
    }

    /// Whether a piece, once placed, stays where it is and whose it is, so
    /// the moves on the board list the pieces. Default: yes.
    fn pieces_stay_put(&self) -> bool {
        true
    }

    /// The draw a seat may claim on `position` now, as the reason the
    /// game would end with (chess's threefold repetition and fifty moves,
    /// FIDE 9.2 and 9.3). Default: none.
    fn claimable_draw(&self, position: &Self::Position) -> Option<EndReason> {
        let _ = position;
        None
    }

    /// Why `played`, a move of these rules with an outcome, ended the
    /// game. Default: a win completed a line, a draw filled the board.
    fn end_reason(&self, played: &Played) -> EndReason {
        match played.outcome {
            Some(Outcome::Win { .. }) => EndReason::LineCompleted,
            _ => EndReason::BoardFull,
        }
    }
}

/// The default [`Game::check_played`]: the record names a cell of `board`
/// that holds `expected` (`None`: empty), its flips hold discs, and it
/// carries no dice.
///
/// # Errors
/// What does not fit, in words.
pub fn check_landing(
    board: Option<&Board>,
    played: &Played,
    expected: Option<Seat>,
) -> Result<(), String> {
    if played.roll.is_some() {
        return Err("dice on a move that is not a roll".into());
    }
    let (Some(board), Some(at)) = (board, played.placement) else {
        return Err("a move without its placement".into());
    };
    match board.get(at.row.into(), at.col.into()) {
        Some(found) if found == expected => {}
        Some(_) => return Err(format!("placement {at} does not fit the move")),
        None => return Err(format!("placement {at} is off the board")),
    }
    match played
        .flips
        .iter()
        .find(|at| !matches!(board.get(at.row.into(), at.col.into()), Some(Some(_))))
    {
        Some(at) => Err(format!("flip of {at}, which holds no disc")),
        None => Ok(()),
    }
}

/// A validated rule set: one game with its configuration, as a game is
/// created with it. Every method delegates to the game's [`Game`] impl.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    /// Hex.
    Hex(HexRules),
    /// Chess.
    Chess(ChessRules),
}

/// A position of any game, as the game layer holds it beside its
/// [`RuleSet`] (always of the same game).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Position {
    /// An m,n,k-game's board.
    Mnk(Board),
    /// A Connect Four board with its column heights.
    ConnectFour(ConnectFourPosition),
    /// A gomoku board.
    Gomoku(Board),
    /// A wild tic-tac-toe board.
    Wild(Board),
    /// An Othello board.
    Othello(Board),
    /// Where each seat's token is in a race.
    SnakesLadders(Race),
    /// A Hex board with its connected groups.
    Hex(HexPosition),
    /// A chess game with the way back through its moves.
    Chess(ChessPosition),
}

/// `$body` with `$r` bound to the game's rules and, when a position is
/// given, `$p` to its position of the same game: one line per game. A rule
/// set and a position of different games is a bug of the caller's.
macro_rules! each_game {
    ($rules:expr, |$r:ident| $body:expr) => {
        match $rules {
            RuleSet::Mnk($r) => $body,
            RuleSet::ConnectFour($r) => $body,
            RuleSet::Gomoku($r) => $body,
            RuleSet::Wild($r) => $body,
            RuleSet::Othello($r) => $body,
            RuleSet::SnakesLadders($r) => $body,
            RuleSet::Hex($r) => $body,
            RuleSet::Chess($r) => $body,
        }
    };
    ($rules:expr, $position:expr, |$r:ident, $p:ident| $body:expr) => {
        match ($rules, $position) {
            (RuleSet::Mnk($r), Position::Mnk($p)) => $body,
            (RuleSet::ConnectFour($r), Position::ConnectFour($p)) => $body,
            (RuleSet::Gomoku($r), Position::Gomoku($p)) => $body,
            (RuleSet::Wild($r), Position::Wild($p)) => $body,
            (RuleSet::Othello($r), Position::Othello($p)) => $body,
            (RuleSet::SnakesLadders($r), Position::SnakesLadders($p)) => $body,
            (RuleSet::Hex($r), Position::Hex($p)) => $body,
            (RuleSet::Chess($r), Position::Chess($p)) => $body,
            (rules, position) => {
                panic!("{rules:?} cannot read a position of another game: {position:?}")
            }
        }
    };
    (position $position:expr, |$p:ident| $body:expr) => {
        match $position {
            Position::Mnk($p)
            | Position::Gomoku($p)
            | Position::Wild($p)
            | Position::Othello($p) => $body,
            Position::ConnectFour($p) => $body,
            Position::SnakesLadders($p) => $body,
            Position::Hex($p) => $body,
            Position::Chess($p) => $body,
        }
    };
}

impl RuleSet {
    /// How many seats a game of these rules seats: (fewest, most).
    pub fn seat_range(&self) -> (usize, usize) {
        each_game!(self, |r| r.seat_range())
    }

    /// The starting position for `seats` seats.
    pub fn initial_position(&self, seats: usize) -> Position {
        match self {
            RuleSet::Mnk(r) => Position::Mnk(r.initial_position(seats)),
            RuleSet::ConnectFour(r) => Position::ConnectFour(r.initial_position(seats)),
            RuleSet::Gomoku(r) => Position::Gomoku(r.initial_position(seats)),
            RuleSet::Wild(r) => Position::Wild(r.initial_position(seats)),
            RuleSet::Othello(r) => Position::Othello(r.initial_position(seats)),
            RuleSet::SnakesLadders(r) => Position::SnakesLadders(r.initial_position(seats)),
            RuleSet::Hex(r) => Position::Hex(r.initial_position(seats)),
            RuleSet::Chess(r) => Position::Chess(r.initial_position(seats)),
        }
    }

    /// See [`Game::check_move`].
    ///
    /// # Errors
    /// As there.
    pub fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        each_game!(self, |r| r.check_move(mv))
    }

    /// See [`Game::play`].
    ///
    /// # Errors
    /// As there.
    ///
    /// # Panics
    /// When `position` is of another game.
    pub fn play(&self, position: &Position, seat: Seat, mv: Move) -> Result<Played, IllegalMove> {
        each_game!(self, position, |r, p| r.play(p, seat, mv))
    }

    /// See [`Game::apply`].
    ///
    /// # Panics
    /// As there, and when `position` is of another game.
    pub fn apply(&self, position: &mut Position, seat: Seat, played: &Played) {
        each_game!(self, position, |r, p| r.apply(p, seat, played))
    }

    /// See [`Game::undo`].
    ///
    /// # Panics
    /// As for [`RuleSet::apply`].
    pub fn undo(&self, position: &mut Position, seat: Seat, played: &Played) {
        each_game!(self, position, |r, p| r.undo(p, seat, played))
    }

    /// See [`Game::check_played`].
    ///
    /// # Errors
    /// As there.
    pub fn check_played(
        &self,
        position: &Position,
        seat: Seat,
        played: &Played,
    ) -> Result<(), String> {
        each_game!(self, position, |r, p| r.check_played(p, seat, played))
    }

    /// See [`Game::legal_moves`].
    pub fn legal_moves<'a>(
        &'a self,
        position: &'a Position,
        seat: Seat,
    ) -> Box<dyn Iterator<Item = Move> + 'a> {
        each_game!(self, position, |r, p| Box::new(r.legal_moves(p, seat)))
    }

    /// See [`Game::legal_move_count`].
    pub fn legal_move_count(&self, position: &Position, seat: Seat) -> usize {
        each_game!(self, position, |r, p| r.legal_move_count(p, seat))
    }

    /// See [`Game::next_to_move`].
    pub fn next_to_move(&self, seats: usize, seat: Seat, played: &Played) -> Seat {
        each_game!(self, |r| r.next_to_move(seats, seat, played))
    }

    /// See [`Game::draws_on_repetition`].
    pub fn draws_on_repetition(&self) -> bool {
        each_game!(self, |r| r.draws_on_repetition())
    }

    /// See [`Game::pieces_stay_put`].
    pub fn pieces_stay_put(&self) -> bool {
        each_game!(self, |r| r.pieces_stay_put())
    }

    /// See [`Game::claimable_draw`].
    ///
    /// # Panics
    /// When `position` is of another game.
    pub fn claimable_draw(&self, position: &Position) -> Option<EndReason> {
        each_game!(self, position, |r, p| r.claimable_draw(p))
    }

    /// See [`Game::end_reason`].
    pub fn end_reason(&self, played: &Played) -> EndReason {
        each_game!(self, |r| r.end_reason(played))
    }
}

/// The game's name with its configuration, as listings show it (e.g.
/// `tic-tac-toe`, `connect-four`, `gomoku 15x15`): the game's own
/// `Display`.
impl std::fmt::Display for RuleSet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        each_game!(self, |r| r.fmt(f))
    }
}

impl Position {
    /// See [`GamePosition::board`].
    pub fn board(&self) -> Option<&Board> {
        each_game!(position self, |p| p.board())
    }

    /// See [`GamePosition::squares`].
    pub fn squares(&self) -> &[u32] {
        each_game!(position self, |p| p.squares())
    }

    /// See [`GamePosition::digest`].
    pub fn digest(&self) -> u64 {
        each_game!(position self, |p| p.digest())
    }

    /// See [`GamePosition::heap_bytes`].
    pub fn heap_bytes(&self) -> usize {
        each_game!(position self, |p| p.heap_bytes())
    }

    /// See [`GamePosition::render`].
    pub fn render(&self, symbols: &[&str], empty: &str) -> Vec<String> {
        each_game!(position self, |p| p.render(symbols, empty))
    }
}

impl GamePosition for Board {
    fn board(&self) -> Option<&Board> {
        Some(self)
    }

    fn heap_bytes(&self) -> usize {
        Board::heap_bytes(self)
    }
}

#[cfg(test)]
mod tests;
