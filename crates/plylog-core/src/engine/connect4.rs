//! The Connect Four engine and its exact solver, for the standard 7 wide x 6
//! high board.
//!
//! # Map
//! - [`Solver`]: the exact solver, Pascal Pons' method: negamax with
//!   alpha-beta on a bitboard, null-window searches that narrow the score
//!   window, centre-first and threat-counting move order, pruning of moves
//!   that lose at once, and a 32 MiB transposition table of upper and lower
//!   bounds. [`Solver::solve`] gives a position's exact score,
//!   [`Solver::analyze`] the score of each column.
//! - `C4Bitboard`: the position it solves (two 64-bit masks), built from a
//!   Pons move string (`"4453"`, or `str::parse`) or from the crate's
//!   [`Position`] and the seat to move; `BitboardError` says why one cannot
//!   be built. Both are reachable through the solver's signatures.
//! - [`ConnectFourEngine`]: the [`Engine`]: perfect play at
//!   [`MAX_STRENGTH`], a depth-limited search below it.
//!
//! # Scores
//! Pons' convention, from the side to move: 0 for a draw; a win scores 22
//! minus the number of discs the winner has placed when its four is complete
//! (a win with the 4th disc scores 18, with the 21st and last, 1); a loss
//! scores the opponent's win, negated. After `n` discs, winning with the
//! next disc scores `(43 - n) / 2`.
//!
//! # Sources
//! - Pascal Pons, "Solving Connect 4: how to build a perfect AI", parts 1 to
//!   12 (2017-2019), <http://blog.gamesolver.org/solving-connect-four/>: the
//!   bitboard and key, the null-window narrowing of part 8, the non-losing
//!   moves of part 9, the move order of part 10, the table of parts 7, 11
//!   (partial keys by the Chinese remainder theorem) and 12 (lower bounds
//!   too), the score convention and the test sets. Written from the
//!   tutorial's descriptions; no code is taken from his (AGPL) repository.
//! - John Tromp, "John's Connect Four Playground",
//!   <https://tromp.github.io/c4/c4.html>, and his Fhourstones benchmark:
//!   the bitboard with one spare bit on top of each column, four in a row
//!   found with shifts and ands, a position keyed in 49 bits.
//! - Victor Allis, "A Knowledge-based Approach of Connect-Four" (M.Sc.
//!   thesis, Vrije Universiteit Amsterdam, 1988): threats, and the parity
//!   of the rows they sit on (the first player wants odd rows, the second
//!   even rows), which the depth-limited search's evaluation weighs.

mod book;

pub use book::{BookEntry, OpeningBook, generate as generate_book};

use std::sync::atomic::AtomicBool;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Analysis, Budget, Choice, Engine, MAX_STRENGTH, Node, Score, random_move};
use crate::rules::{ConnectFourRules, Coord, Move, Position, RuleSet, Seat};

/// Columns of the standard board.
const WIDTH: u32 = 7;
/// Rows of the standard board.
const HEIGHT: u32 = 6;
/// Bits per column in a bitboard: the rows and one spare bit on top, so
/// that shifts never carry a line from one column into the next.
const STRIDE: u32 = HEIGHT + 1;
/// Cells of the board.
const CELLS: i32 = (WIDTH * HEIGHT) as i32;
/// The bottom cell of every column.
const BOTTOM: u64 = {
    let mut mask = 0;
    let mut col = 0;
    while col < WIDTH {
        mask |= 1 << (col * STRIDE);
        col += 1;
    }
    mask
};
/// Every cell of the board (no spare bits).
const BOARD: u64 = BOTTOM * ((1 << HEIGHT) - 1);
/// The rows counted 1, 3 and 5 from the bottom, where the first player's
/// threats count most (Allis).
const ODD_ROWS: u64 = BOTTOM * 0b01_0101;
/// The rows counted 2, 4 and 6 from the bottom, where the second player's
/// threats count most.
const EVEN_ROWS: u64 = BOTTOM * 0b10_1010;
/// Columns in the order they are searched: centre first, then outwards,
/// left before right.
const ORDER: [u32; WIDTH as usize] = [3, 2, 4, 1, 5, 0, 6];

/// The cells of column `col`.
const fn column_cells(col: u32) -> u64 {
    ((1 << HEIGHT) - 1) << (col * STRIDE)
}

/// The cells where a disc of `own`'s colour would complete a four: the
/// empty cells of the board (outside `mask`) that line up with three of
/// `own`'s discs in any direction, playable now or not (Pons' winning
/// positions, Allis' threats).
fn winning_cells(own: u64, mask: u64) -> u64 {
    let mut cells = 0;
    // Vertical, horizontal, and the two diagonals.
    for step in [1, STRIDE, STRIDE - 1, STRIDE + 1] {
        // Own discs 1 and 2 steps behind the cell, and 1 and 2 ahead.
        let behind = (own << step) & (own << (2 * step));
        let ahead = (own >> step) & (own >> (2 * step));
        cells |= behind & (own << (3 * step));
        cells |= behind & (own >> step);
        cells |= ahead & (own << step);
        cells |= ahead & (own >> (3 * step));
    }
    cells & BOARD & !mask
}

/// Whether `own` holds four in a row anywhere.
fn has_four(own: u64) -> bool {
    [1, STRIDE, STRIDE - 1, STRIDE + 1].into_iter().any(|step| {
        let pairs = own & (own >> step);
        pairs & (pairs >> (2 * step)) != 0
    })
}

/// A standard Connect Four position as a bitboard, after John Tromp and
/// Pascal Pons: bit `7 * col + row` is the cell of column `col` (0 the
/// leftmost) and row `row` counted from the BOTTOM (0 the lowest; the crate's
/// boards count from the top). Bit 6 of each column stays clear.
///
/// Always a game in progress or a full board drawn: no four anywhere, the
/// discs of each column stacked from the bottom, the first player to move
/// after an even number of discs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct C4Bitboard {
    /// The discs of the side to move.
    current: u64,
    /// Every disc.
    mask: u64,
    /// Discs played.
    moves: u32,
}

/// Why a move string or a position is not a standard Connect Four game in
/// progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BitboardError {
    /// A character of a move string is not a column digit.
    #[error("move {index}: {found:?} is not a column 1 to 7")]
    NotAColumn {
        /// The move's place in the string, from 1.
        index: usize,
        /// The character found.
        found: char,
    },
    /// A move of a move string drops into a full column.
    #[error("move {index}: column {column} is full")]
    ColumnFull {
        /// The move's place in the string, from 1.
        index: usize,
        /// The column as written, 1 the leftmost.
        column: u32,
    },
    /// A move of a move string completes a four: the game is over there,
    /// so there is nothing left to solve (Pons' strings never end with
    /// one).
    #[error("move {index} completes a four: the game is over")]
    GameOver {
        /// The move's place in the string, from 1.
        index: usize,
    },
    /// The position is not of standard 7x6 Connect Four.
    #[error("not a standard 7x6 connect four board")]
    NotStandard,
    /// A seat other than 0 and 1 holds a disc or is to move.
    #[error("{seat} has no place in two-seat connect four")]
    NoSuchSeat {
        /// The seat.
        seat: Seat,
    },
    /// A disc sits above an empty cell.
    #[error("column {column} has a disc above an empty cell")]
    Floating {
        /// The column, 0 the leftmost.
        column: u32,
    },
    /// The seat to move does not follow from the number of discs.
    #[error("{to_move} is not to move when seat 0 has {first} discs and seat 1 has {second}")]
    WrongTurn {
        /// The seat said to move.
        to_move: Seat,
        /// Seat 0's discs.
        first: u32,
        /// Seat 1's discs.
        second: u32,
    },
    /// The board already holds a four.
    #[error("the board already holds four in a row")]
    AlreadyWon,
}

impl C4Bitboard {
    /// The empty board, the first player to move.
    pub fn new() -> Self {
        C4Bitboard::default()
    }

    /// The position after the columns of `moves` are played from the empty
    /// board: Pons' notation, one digit per move, `1` the leftmost column,
    /// the first player first (`"4453"`).
    ///
    /// # Errors
    /// [`BitboardError::NotAColumn`], [`BitboardError::ColumnFull`], or
    /// [`BitboardError::GameOver`] when a move completes a four, the last
    /// included.
    pub fn from_moves(moves: &str) -> Result<Self, BitboardError> {
        let mut position = C4Bitboard::new();
        for (i, found) in moves.chars().enumerate() {
            let index = i + 1;
            let column = match found.to_digit(10) {
                Some(digit @ 1..=WIDTH) => digit - 1,
                _ => return Err(BitboardError::NotAColumn { index, found }),
            };
            if !position.can_play(column) {
                return Err(BitboardError::ColumnFull {
                    index,
                    column: column + 1,
                });
            }
            if position.is_winning_move(column) {
                return Err(BitboardError::GameOver { index });
            }
            position.play(position.drop_cell(column));
        }
        Ok(position)
    }

    /// The position of a standard Connect Four game of the crate's rules
    /// (row 0 the top row, column 0 the leftmost), `to_move` to play
    /// (`Seat(0)` moves first).
    ///
    /// # Errors
    /// [`BitboardError::NotStandard`] for another game or board size,
    /// [`BitboardError::NoSuchSeat`], [`BitboardError::Floating`],
    /// [`BitboardError::WrongTurn`], [`BitboardError::AlreadyWon`].
    pub fn from_position(position: &Position, to_move: Seat) -> Result<Self, BitboardError> {
        let board = match position {
            Position::ConnectFour(_) => position.board().ok_or(BitboardError::NotStandard)?,
            _ => return Err(BitboardError::NotStandard),
        };
        if board.rows() != HEIGHT || board.cols() != WIDTH {
            return Err(BitboardError::NotStandard);
        }
        if to_move.0 > 1 {
            return Err(BitboardError::NoSuchSeat { seat: to_move });
        }
        let mut discs = [0u64; 2];
        let mut counts = [0u32; 2];
        for col in 0..WIDTH {
            let mut gap = false;
            for height in 0..HEIGHT {
                match board.at(Coord::new(HEIGHT - 1 - height, col)) {
                    None => gap = true,
                    Some(_) if gap => return Err(BitboardError::Floating { column: col }),
                    Some(seat) if seat.0 > 1 => return Err(BitboardError::NoSuchSeat { seat }),
                    Some(seat) => {
                        discs[seat.index()] |= 1 << (col * STRIDE + height);
                        counts[seat.index()] += 1;
                    }
                }
            }
        }
        let [first, second] = counts;
        let expected = match first.checked_sub(second) {
            Some(0) => Some(Seat(0)),
            Some(1) => Some(Seat(1)),
            _ => None,
        };
        if expected != Some(to_move) {
            return Err(BitboardError::WrongTurn {
                to_move,
                first,
                second,
            });
        }
        if discs.iter().any(|own| has_four(*own)) {
            return Err(BitboardError::AlreadyWon);
        }
        Ok(C4Bitboard {
            current: discs[to_move.index()],
            mask: discs[0] | discs[1],
            moves: first + second,
        })
    }

    /// Discs played so far (0 to 42).
    pub fn moves(&self) -> u32 {
        self.moves
    }

    /// The same position seen in a mirror: column `c` becomes column
    /// `6 - c`. It has the same score, its best columns mirrored.
    pub fn mirror(&self) -> C4Bitboard {
        let flip = |bits: u64| {
            (0..WIDTH).fold(0, |mirrored, col| {
                let column = (bits >> (col * STRIDE)) & ((1 << STRIDE) - 1);
                mirrored | column << ((WIDTH - 1 - col) * STRIDE)
            })
        };
        C4Bitboard {
            current: flip(self.current),
            mask: flip(self.mask),
            moves: self.moves,
        }
    }

    /// Whether column `column` (0 the leftmost) has room for a disc.
    pub fn can_play(&self, column: u32) -> bool {
        column < WIDTH && self.mask & (1 << (column * STRIDE + HEIGHT - 1)) == 0
    }

    /// Whether a disc of the side to move in column `column` (0 the
    /// leftmost) completes a four. False for a full column.
    pub fn is_winning_move(&self, column: u32) -> bool {
        self.can_play(column)
            && winning_cells(self.current, self.mask) & self.drop_cell(column) != 0
    }

    /// The cell a disc dropped into `column` lands on (0 when it is full).
    fn drop_cell(&self, column: u32) -> u64 {
        (self.mask + (1 << (column * STRIDE))) & column_cells(column)
    }

    /// The cells a disc can be dropped on now, one per column with room.
    fn possible(&self) -> u64 {
        (self.mask + BOTTOM) & BOARD
    }

    /// Plays the side to move's disc on `cell`, one of [`Self::possible`];
    /// the other side is then to move.
    fn play(&mut self, cell: u64) {
        self.current ^= self.mask;
        self.mask |= cell;
        self.moves += 1;
    }

    /// The position after the side to move plays on `cell`.
    fn after(&self, cell: u64) -> C4Bitboard {
        let mut next = *self;
        next.play(cell);
        next
    }

    /// Whether the side to move can complete a four with its next disc.
    fn can_win_next(&self) -> bool {
        winning_cells(self.current, self.mask) & self.possible() != 0
    }

    /// The cells the side to move may play without letting the opponent
    /// complete a four with its next disc (Pons part 9): the one cell
    /// blocking an opponent's playable threat if there is one, none if there
    /// are two, and never the cell under an opponent's threat. Empty when
    /// every move loses at once.
    fn non_losing_moves(&self) -> u64 {
        let possible = self.possible();
        let threats = winning_cells(self.current ^ self.mask, self.mask);
        let forced = possible & threats;
        let candidates = match forced {
            0 => possible,
            _ if forced & (forced - 1) != 0 => return 0,
            _ => forced,
        };
        candidates & !(threats >> 1)
    }

    /// How many cells the side to move would threaten after playing on
    /// `cell`: the move order's key (Pons part 10).
    fn threats_after(&self, cell: u64) -> u32 {
        winning_cells(self.current | cell, self.mask | cell).count_ones()
    }

    /// The position's key: unique per position and below 2^49, since in each
    /// column the mask's ones plus the side to move's discs fit in 7 bits.
    fn key(&self) -> u64 {
        self.current + self.mask
    }

    /// The score of winning with the next disc.
    fn win_score(&self) -> i32 {
        (CELLS + 1 - self.moves as i32) / 2
    }

    /// The cells of `cells`, one per column, in search order: most threats
    /// created first, ties broken centre first.
    fn ordered(&self, cells: u64) -> ([u64; WIDTH as usize], usize) {
        let mut sorted = [(0u64, 0u32); WIDTH as usize];
        let mut len = 0;
        for col in ORDER {
            let cell = cells & column_cells(col);
            if cell == 0 {
                continue;
            }
            let threats = self.threats_after(cell);
            let mut i = len;
            while i > 0 && sorted[i - 1].1 < threats {
                sorted[i] = sorted[i - 1];
                i -= 1;
            }
            sorted[i] = (cell, threats);
            len += 1;
        }
        (sorted.map(|(cell, _)| cell), len)
    }

    /// The depth-limited search's estimate at its horizon, in the side to
    /// move's favour, within `-(WIN_UNIT - 1)..WIN_UNIT`: each threat (an
    /// empty cell completing a four) counts 4, 6 on the rows its owner's
    /// parity favours (Allis: odd rows for the first player, even for the
    /// second); each disc in the centre column counts 1.
    fn evaluate(&self) -> i32 {
        let theirs = self.current ^ self.mask;
        let (my_rows, their_rows) = if self.moves.is_multiple_of(2) {
            (ODD_ROWS, EVEN_ROWS)
        } else {
            (EVEN_ROWS, ODD_ROWS)
        };
        let threats = |own: u64, rows: u64| {
            let cells = winning_cells(own, self.mask);
            4 * cells.count_ones() as i32 + 2 * (cells & rows).count_ones() as i32
        };
        let centre = |own: u64| (own & column_cells(WIDTH / 2)).count_ones() as i32;
        let value = threats(self.current, my_rows) - threats(theirs, their_rows)
            + centre(self.current)
            - centre(theirs);
        value.clamp(1 - WIN_UNIT, WIN_UNIT - 1)
    }
}

impl std::str::FromStr for C4Bitboard {
    type Err = BitboardError;

    /// See [`C4Bitboard::from_moves`].
    fn from_str(moves: &str) -> Result<Self, BitboardError> {
        C4Bitboard::from_moves(moves)
    }
}

/// Entries of the transposition table: the largest prime with 5-byte
/// entries in 32 MiB.
const TABLE_ENTRIES: usize = 6_710_863;
/// Entries per chunk of the table that [`Table::clear`] clears when dirty.
const CHUNK_ENTRIES: usize = 1 << 10;
/// The offset of a stored score, so that every score is stored above 0.
const SCORE_OFFSET: i32 = 32;
/// The flag of a stored lower bound (upper bounds are stored without it).
const LOWER_FLAG: u8 = 64;

/// A bound on a position's score, as the table holds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    /// The score is at most this.
    Upper(i32),
    /// The score is at least this.
    Lower(i32),
}

/// The transposition table (Pons parts 7, 11 and 12): a fixed array of
/// [`TABLE_ENTRIES`] entries of 5 bytes, indexed by the key modulo the
/// (prime) size, each holding the low 32 bits of its key and one byte of
/// bound, 0 when empty; a new entry replaces the old. The prime size and
/// the 32 bits identify a 49-bit key exactly (Chinese remainder theorem:
/// 2^32 times the size exceeds 2^49), so a hit is never another position's.
struct Table {
    entries: Vec<[u8; 5]>,
    /// One bit per chunk of [`CHUNK_ENTRIES`] entries written since the
    /// last clear, so that clearing after a small search is cheap.
    dirty: Vec<u64>,
}

impl Table {
    fn new() -> Self {
        let chunks = TABLE_ENTRIES.div_ceil(CHUNK_ENTRIES);
        Table {
            entries: vec![[0; 5]; TABLE_ENTRIES],
            dirty: vec![0; chunks.div_ceil(64)],
        }
    }

    fn index(key: u64) -> usize {
        (key % TABLE_ENTRIES as u64) as usize
    }

    fn get(&self, key: u64) -> Option<Bound> {
        let [k0, k1, k2, k3, value] = self.entries[Self::index(key)];
        if value == 0 || u32::from_le_bytes([k0, k1, k2, k3]) != key as u32 {
            return None;
        }
        Some(if value & LOWER_FLAG != 0 {
            Bound::Lower(i32::from(value & !LOWER_FLAG) - SCORE_OFFSET)
        } else {
            Bound::Upper(i32::from(value) - SCORE_OFFSET)
        })
    }

    fn put(&mut self, key: u64, bound: Bound) {
        let (score, flag) = match bound {
            Bound::Upper(score) => (score, 0),
            Bound::Lower(score) => (score, LOWER_FLAG),
        };
        debug_assert!(score.abs() < SCORE_OFFSET, "score {score} out of range");
        let index = Self::index(key);
        let [k0, k1, k2, k3] = (key as u32).to_le_bytes();
        self.entries[index] = [k0, k1, k2, k3, (score + SCORE_OFFSET) as u8 | flag];
        let chunk = index / CHUNK_ENTRIES;
        self.dirty[chunk / 64] |= 1 << (chunk % 64);
    }

    /// Empties every entry written since the last clear.
    fn clear(&mut self) {
        for (word, bits) in self.dirty.iter_mut().enumerate() {
            while *bits != 0 {
                let chunk = word * 64 + bits.trailing_zeros() as usize;
                *bits &= *bits - 1;
                let start = chunk * CHUNK_ENTRIES;
                let end = (start + CHUNK_ENTRIES).min(TABLE_ENTRIES);
                self.entries[start..end].fill([0; 5]);
            }
        }
    }
}

/// A search ran out of nodes or was stopped before it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stopped;

/// The depth-limited search's unit for game results: a win of Pons score
/// `s` is worth `s * WIN_UNIT`, more than any estimate.
const WIN_UNIT: i32 = 1000;
/// Beyond any value of the depth-limited search.
const INFINITY: i32 = 100 * WIN_UNIT;

/// The exact solver for standard 7x6 Connect Four, after Pascal Pons'
/// "Solving Connect 4" tutorial: negamax with alpha-beta over a bitboard,
/// null-window searches that halve the window of possible scores (part 8),
/// only moves that do not lose at once (part 9), moves that create the most
/// threats first, centre first on ties (part 10), and a transposition table
/// of upper and lower bounds (parts 7, 11 and 12).
///
/// The table is allocated once per solver, 33,554,315 bytes (6,710,863
/// entries of 5 bytes: just under 32 MiB), and kept across solves, which
/// share what it holds; [`Solver::reset`] empties it.
///
/// Scores follow Pons' convention, from the side to move: 0 for a draw; a
/// win scores 22 minus the number of discs the winner has placed when its
/// four is complete (18 with its 4th disc, 1 with its 21st and last); a loss
/// scores the opponent's win, negated.
///
/// Positions are `C4Bitboard`s (bit `7 * column + row`, row 0 the bottom),
/// built with `str::parse` from Pons' move strings (`"4453"`: one digit per
/// disc, `1` the leftmost column, the first player first) or with
/// `C4Bitboard::from_position` from the crate's [`Position`] and the seat to
/// move.
///
/// # Sources
/// - Pascal Pons, "Solving Connect 4: how to build a perfect AI", parts 1 to
///   12, <http://blog.gamesolver.org/solving-connect-four/>, and his test
///   sets (`tests/fixtures/connect4-pons`). Written from the tutorial's
///   descriptions; no code is taken from his (AGPL) repository.
/// - John Tromp, <https://tromp.github.io/c4/c4.html> and the Fhourstones
///   benchmark: the bitboard, four in a row by shifts, the 49-bit key.
/// - Victor Allis, "A Knowledge-based Approach of Connect-Four" (M.Sc.
///   thesis, Vrije Universiteit Amsterdam, 1988): threats and their rows'
///   parity, which the weaker levels' evaluation weighs.
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use plylog_core::engine::{Budget, Solver};
///
/// let stop = AtomicBool::new(false);
/// let budget = Budget { nodes: u64::MAX, stop: &stop };
/// let mut solver = Solver::new();
/// // The first player holds columns 1 to 3 of the bottom row and wins
/// // with its fourth disc, in column 4.
/// let position = "112233".parse().expect("a legal sequence");
/// assert_eq!(solver.solve(&position, &budget), Some(18));
/// ```
pub struct Solver {
    table: Table,
    /// Nodes visited since the solver was made or last reset.
    nodes: u64,
    /// The node count at which the running search stops.
    limit: u64,
}

impl std::fmt::Debug for Solver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Solver")
            .field("table_entries", &self.table.entries.len())
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

impl Default for Solver {
    fn default() -> Self {
        Solver::new()
    }
}

impl Solver {
    /// The transposition table's size in bytes: 33,554,315, under 32 MiB.
    pub const TABLE_BYTES: usize = TABLE_ENTRIES * 5;

    /// A solver with an empty table. The table is zeroed memory, so the
    /// pages a search never touches cost nothing.
    pub fn new() -> Solver {
        Solver {
            table: Table::new(),
            nodes: 0,
            limit: u64::MAX,
        }
    }

    /// Empties the table and sets the node count to 0, so the next solve
    /// starts afresh (and its node count is its own). Clears only the parts
    /// of the table written since the last reset.
    pub fn reset(&mut self) {
        self.table.clear();
        self.nodes = 0;
    }

    /// Nodes visited since the solver was made or last reset, by every
    /// search.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The exact score of `position` for the side to move, in Pons'
    /// convention; `None` when `budget.stop` was set (checked at every
    /// node) or `budget.nodes` nodes were visited before the score was
    /// proven. A full board scores 0.
    pub fn solve(&mut self, position: &C4Bitboard, budget: &Budget<'_>) -> Option<i32> {
        if budget.stopped() {
            return None;
        }
        self.limit = self.nodes.saturating_add(budget.nodes);
        self.solve_exact(position, budget).ok()
    }

    /// The exact score of each column of `position` (index 0 the leftmost),
    /// as Pons' `analyze`: the score the side to move gets by playing there
    /// (the win score if it completes a four, else the child position's
    /// score negated); `None` for a full column. `None` overall when the
    /// budget ran out or the search was stopped before every score was
    /// proven; the budget covers all seven.
    pub fn analyze(
        &mut self,
        position: &C4Bitboard,
        budget: &Budget<'_>,
    ) -> Option<[Option<i32>; WIDTH as usize]> {
        if budget.stopped() {
            return None;
        }
        self.limit = self.nodes.saturating_add(budget.nodes);
        self.analyze_exact(position, budget).ok()
    }

    /// Counts a node; fails once the limit is passed or when the caller
    /// asked to stop.
    fn visit(&mut self, budget: &Budget<'_>) -> Result<(), Stopped> {
        self.nodes += 1;
        if self.nodes > self.limit || budget.stopped() {
            return Err(Stopped);
        }
        Ok(())
    }

    fn analyze_exact(
        &mut self,
        position: &C4Bitboard,
        budget: &Budget<'_>,
    ) -> Result<[Option<i32>; WIDTH as usize], Stopped> {
        let mut scores = [None; WIDTH as usize];
        for col in 0..WIDTH {
            if position.can_play(col) {
                scores[col as usize] = Some(self.column_score(position, col, budget)?);
            }
        }
        Ok(scores)
    }

    /// The exact score of playing `col` (playable) on `position`: the win
    /// score if it completes a four, else the child position's score
    /// negated.
    fn column_score(
        &mut self,
        position: &C4Bitboard,
        col: u32,
        budget: &Budget<'_>,
    ) -> Result<i32, Stopped> {
        if position.is_winning_move(col) {
            return Ok(position.win_score());
        }
        let child = position.after(position.drop_cell(col));
        Ok(-self.solve_exact(&child, budget)?)
    }

    /// The columns of `position` that score best, in [`ORDER`], and their
    /// exact score: the winning columns if there are any; else the root's
    /// score `v` by [`Solver::solve_exact`], then each column's child tested
    /// with one null window (is its score at most `-v`?), which the table
    /// filled by the root's search makes cheap. The same columns as the best
    /// of [`Solver::analyze`], for less work.
    fn best_columns(
        &mut self,
        position: &C4Bitboard,
        budget: &Budget<'_>,
    ) -> Result<(Vec<u32>, i32), Stopped> {
        let playable = ORDER.into_iter().filter(|col| position.can_play(*col));
        let wins: Vec<u32> = playable
            .clone()
            .filter(|col| position.is_winning_move(*col))
            .collect();
        if !wins.is_empty() {
            return Ok((wins, position.win_score()));
        }
        let best = self.solve_exact(position, budget)?;
        let mut columns = Vec::new();
        for col in playable {
            let child = position.after(position.drop_cell(col));
            let as_good = if child.can_win_next() {
                -child.win_score() == best
            } else {
                self.negamax(&child, -best, 1 - best, budget)? <= -best
            };
            if as_good {
                columns.push(col);
            }
        }
        Ok((columns, best))
    }

    /// Pons part 8: null-window searches that narrow `[min, max]`, the
    /// scores still possible, until it holds one; each probe is at the
    /// middle, moved towards 0 while the window is wide on that side, as
    /// positions near the start tend to score near 0.
    fn solve_exact(&mut self, position: &C4Bitboard, budget: &Budget<'_>) -> Result<i32, Stopped> {
        if position.can_win_next() {
            return Ok(position.win_score());
        }
        let moves = position.moves as i32;
        let mut min = -(CELLS - moves) / 2;
        let mut max = (CELLS + 1 - moves) / 2;
        while min < max {
            let mut probe = min + (max - min) / 2;
            if probe <= 0 && min / 2 < probe {
                probe = min / 2;
            } else if probe >= 0 && max / 2 > probe {
                probe = max / 2;
            }
            let score = self.negamax(position, probe, probe + 1, budget)?;
            if score <= probe {
                max = score;
            } else {
                min = score;
            }
        }
        Ok(min)
    }

    /// The score of `position` if it lies in `(alpha, beta)`; else a bound
    /// on the same side of the window as the score (at most `alpha`, or at
    /// least `beta`). The side to move cannot win with its next disc.
    fn negamax(
        &mut self,
        position: &C4Bitboard,
        mut alpha: i32,
        mut beta: i32,
        budget: &Budget<'_>,
    ) -> Result<i32, Stopped> {
        debug_assert!(alpha < beta);
        debug_assert!(!position.can_win_next());
        self.visit(budget)?;
        let next = position.non_losing_moves();
        let moves = position.moves as i32;
        if next == 0 {
            // Every move lets the opponent win with its next disc.
            return Ok(-(CELLS - moves) / 2);
        }
        if moves >= CELLS - 2 {
            // Neither of the last two discs can win.
            return Ok(0);
        }
        // The opponent cannot win with its next disc: the earliest loss is
        // later, so the score is at least this.
        let lowest = -(CELLS - 2 - moves) / 2;
        if alpha < lowest {
            alpha = lowest;
            if alpha >= beta {
                return Ok(alpha);
            }
        }
        // Nor can the side to move: the earliest win is with the disc after.
        let highest = (CELLS - 1 - moves) / 2;
        if beta > highest {
            beta = highest;
            if alpha >= beta {
                return Ok(beta);
            }
        }
        let key = position.key();
        match self.table.get(key) {
            Some(Bound::Lower(lower)) if alpha < lower => {
                alpha = lower;
                if alpha >= beta {
                    return Ok(alpha);
                }
            }
            Some(Bound::Upper(upper)) if beta > upper => {
                beta = upper;
                if alpha >= beta {
                    return Ok(beta);
                }
            }
            _ => {}
        }
        let (cells, len) = position.ordered(next);
        for cell in &cells[..len] {
            let score = -self.negamax(&position.after(*cell), -beta, -alpha, budget)?;
            if score >= beta {
                self.table.put(key, Bound::Lower(score));
                return Ok(score);
            }
            alpha = alpha.max(score);
        }
        self.table.put(key, Bound::Upper(alpha));
        Ok(alpha)
    }

    /// The value of each legal column of `position` searched `depth` plies
    /// deep, in [`ORDER`]. With `every_move` each column is searched with
    /// the full window and every value is exact; without, the best value
    /// and those equal to it are exact, the others upper bounds below it.
    fn root_values(
        &mut self,
        position: &C4Bitboard,
        depth: u32,
        every_move: bool,
        budget: &Budget<'_>,
    ) -> Result<Vec<(u32, i32)>, Stopped> {
        let mut values = Vec::with_capacity(WIDTH as usize);
        let mut best = 1 - INFINITY;
        for col in ORDER {
            if !position.can_play(col) {
                continue;
            }
            let value = if position.is_winning_move(col) {
                position.win_score() * WIN_UNIT
            } else {
                let child = position.after(position.drop_cell(col));
                if child.can_win_next() {
                    -child.win_score() * WIN_UNIT
                } else {
                    // A window from just below the best so far finds the
                    // moves as good as it exactly.
                    let alpha = if every_move { -INFINITY } else { best - 1 };
                    -self.search(&child, -INFINITY, -alpha, depth - 1, budget)?
                }
            };
            best = best.max(value);
            values.push((col, value));
        }
        Ok(values)
    }

    /// Negamax with alpha-beta cut `depth` plies deep, in units of
    /// [`WIN_UNIT`]: a game result reached within the horizon is its Pons
    /// score times the unit (0 for a draw), a position at the horizon is
    /// [`C4Bitboard::evaluate`]d. The side to move cannot win with its next
    /// disc. Like [`Solver::negamax`] but without the table.
    fn search(
        &mut self,
        position: &C4Bitboard,
        mut alpha: i32,
        beta: i32,
        depth: u32,
        budget: &Budget<'_>,
    ) -> Result<i32, Stopped> {
        self.visit(budget)?;
        let next = position.non_losing_moves();
        let moves = position.moves as i32;
        if next == 0 {
            return Ok(-(CELLS - moves) / 2 * WIN_UNIT);
        }
        if moves >= CELLS - 2 {
            return Ok(0);
        }
        if depth == 0 {
            return Ok(position.evaluate());
        }
        let (cells, len) = position.ordered(next);
        for cell in &cells[..len] {
            let value = -self.search(&position.after(*cell), -beta, -alpha, depth - 1, budget)?;
            if value >= beta {
                return Ok(value);
            }
            alpha = alpha.max(value);
        }
        Ok(alpha)
    }

    /// Iterative deepening to `max_depth` plies (or the end of the game)
    /// within `nodes` more nodes, from `known` (a depth searched and its
    /// values) or from depth 1, which is searched whatever the budget (at
    /// most seven nodes) so that a legal move is never missing: the deepest
    /// depth completed and the values of [`Solver::root_values`] there.
    fn deepen(
        &mut self,
        position: &C4Bitboard,
        known: Option<(u32, Vec<(u32, i32)>)>,
        max_depth: u32,
        nodes: u64,
        every_move: bool,
        budget: &Budget<'_>,
    ) -> (u32, Vec<(u32, i32)>) {
        let (mut depth, mut values) = match known {
            Some(known) => known,
            None => {
                let never = AtomicBool::new(false);
                let free = Budget {
                    nodes: u64::MAX,
                    stop: &never,
                };
                self.limit = u64::MAX;
                match self.root_values(position, 1, every_move, &free) {
                    Ok(values) => (1, values),
                    Err(Stopped) => unreachable!("a search without limit stopped"),
                }
            }
        };
        self.limit = self.nodes.saturating_add(nodes);
        let last = max_depth.min(CELLS as u32 - position.moves);
        while depth < last && !budget.stopped() {
            match self.root_values(position, depth + 1, every_move, budget) {
                Ok(deeper) => (depth, values) = (depth + 1, deeper),
                Err(Stopped) => break,
            }
        }
        (depth, values)
    }
}

/// The best of `values` (column, value): the highest value, among equals
/// the one `rng` draws (uniformly, in the order given), so play varies from
/// seed to seed but not from run to run.
fn pick(values: &[(u32, i32)], rng: &mut ChaCha8Rng) -> Option<(u32, i32)> {
    let best = values.iter().map(|(_, value)| *value).max()?;
    let tied: Vec<u32> = values
        .iter()
        .filter(|(_, value)| *value == best)
        .map(|(col, _)| *col)
        .collect();
    let col = match tied.len() {
        1 => tied[0],
        n => tied[rng.random_range(0..n)],
    };
    Some((col, best))
}

/// Plies the search looks ahead at strengths below [`MAX_STRENGTH`]: twice
/// the strength (2 at strength 1, 18 at strength 9).
fn depth_for(strength: u8) -> u32 {
    2 * u32::from(strength)
}

/// At [`MAX_STRENGTH`], how deep the first, cheap fallback search goes
/// before the exact one, and its share of the node budget (one part in
/// this many).
const FALLBACK_DEPTH: u32 = 8;
/// See [`FALLBACK_DEPTH`].
const FALLBACK_SHARE: u64 = 8;

/// Standard Connect Four (7x6, four in a row, no Pop Out), two seats.
///
/// At [`MAX_STRENGTH`] it plays perfectly when its opening book (see
/// [`OpeningBook`]) or its budget allows: a position in the book gets its
/// best columns and exact score from there at once; otherwise, with a fresh
/// [`Solver`]:
/// 1. a fallback first: iterative deepening to 8 plies within an eighth of
///    the node budget, as below;
/// 2. the exact search, until three quarters of the budget are spent: a
///    winning column if there is one, else the position's score and one
///    null-window search per column for whether it keeps that score (the
///    best columns of [`Solver::analyze`], for less work). To analyse, it
///    then scores the other columns exactly, one by one, as long as the
///    budget lasts. Exact scores are [`Score::Exact`], Pons' convention;
/// 3. if the exact search ran out of nodes, the fallback deepens on towards
///    18 plies with the rest of the budget, and its values stand for the
///    columns without an exact score, as [`Score::Heuristic`] (capped, when
///    the position's score is proven, below the best columns' score, which
///    they are proven not to reach). Likewise when the search is stopped.
///
/// Below it, strength `s` searches `2 * s` plies (2 at strength 1, 18 at
/// strength 9) by iterative deepening within the whole budget, without a
/// table, and keeps the values of the deepest depth it completed. Its
/// scores are [`Score::Heuristic`] in thousandths of a Pons score: a result
/// the search reached is the Pons score times 1,000 (0 for a draw); a
/// position at the horizon is estimated within ±999 from its threats (empty
/// cells that would complete a four), 4 each, 6 on the rows the owner's
/// parity favours (Allis: odd rows for the first player, even for the
/// second), and 1 per disc in the centre column, the opponent's counting
/// against.
///
/// [`Engine::choose`] plays a best column, drawing among equals with
/// `rng`, so play varies from seed to seed but not from run to run.
/// Depth 1 is searched whatever the budget, so a legal move always comes
/// back while there is one. On a game it does not support, `choose` plays
/// a random legal move (see [`random_move`]) with a heuristic score of 0
/// and `analyze` answers `None`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectFourEngine;

impl ConnectFourEngine {
    /// The bitboard of `node`, when the engine supports its game and the
    /// game is not over.
    fn bitboard(&self, node: &Node<'_>) -> Option<C4Bitboard> {
        if node.outcome().is_some() {
            return None;
        }
        self.supports(node.rules(), node.seats()).ok()?;
        C4Bitboard::from_position(node.position(), node.to_move()).ok()
    }

    /// Step 1 at [`MAX_STRENGTH`]: the fallback's depth and values.
    fn fallback(
        solver: &mut Solver,
        position: &C4Bitboard,
        budget: &Budget<'_>,
        every_move: bool,
    ) -> (u32, Vec<(u32, i32)>) {
        let nodes = budget.nodes / FALLBACK_SHARE;
        solver.deepen(position, None, FALLBACK_DEPTH, nodes, every_move, budget)
    }

    /// Steps 1 and 2 at [`MAX_STRENGTH`], without the book: the best
    /// columns and their exact score, if the search proves them within
    /// `budget` (what the book's generation asks of each position).
    fn prove(
        solver: &mut Solver,
        position: &C4Bitboard,
        budget: &Budget<'_>,
    ) -> Result<(Vec<u32>, i32), Stopped> {
        Self::fallback(solver, position, budget, false);
        Self::exact(solver, budget, |s| s.best_columns(position, budget))
    }

    /// Step 2 at [`MAX_STRENGTH`]: sets the exact search's node limit, and
    /// runs `exact` unless the search is already stopped.
    fn exact<T>(
        solver: &mut Solver,
        budget: &Budget<'_>,
        exact: impl FnOnce(&mut Solver) -> Result<T, Stopped>,
    ) -> Result<T, Stopped> {
        solver.limit = budget.nodes - budget.nodes / 4;
        if budget.stopped() {
            return Err(Stopped);
        }
        exact(solver)
    }

    /// Step 3 at [`MAX_STRENGTH`]: the fallback deepened with the rest of
    /// the budget.
    fn deepen_rest(
        solver: &mut Solver,
        position: &C4Bitboard,
        known: (u32, Vec<(u32, i32)>),
        budget: &Budget<'_>,
        every_move: bool,
    ) -> Vec<(u32, i32)> {
        let rest = budget.nodes.saturating_sub(solver.nodes);
        let depth = depth_for(MAX_STRENGTH - 1);
        let (_, values) = solver.deepen(position, Some(known), depth, rest, every_move, budget);
        values
    }
}

impl Engine for ConnectFourEngine {
    fn supports(&self, rules: &RuleSet, seats: usize) -> Result<(), String> {
        match rules {
            RuleSet::ConnectFour(rules) if *rules == ConnectFourRules::STANDARD && seats == 2 => {
                Ok(())
            }
            _ => {
                Err("the connect4 engine plays only standard 7x6 connect four for two seats".into())
            }
        }
    }

    fn choose(
        &self,
        node: &Node<'_>,
        strength: u8,
        budget: &Budget<'_>,
        rng: &mut ChaCha8Rng,
    ) -> Option<Choice> {
        if node.outcome().is_some() {
            return None;
        }
        let Some(position) = self.bitboard(node) else {
            let mv = random_move(node.rules(), node.position(), node.to_move(), rng)?;
            return Some(Choice {
                mv,
                score: Score::Heuristic(0),
                nodes: 0,
            });
        };
        let mut solver = Solver::new();
        let strength = strength.clamp(1, MAX_STRENGTH);
        let (column, score) = if strength < MAX_STRENGTH {
            let depth = depth_for(strength);
            let (_, values) = solver.deepen(&position, None, depth, budget.nodes, false, budget);
            let (column, value) = pick(&values, rng)?;
            (column, Score::Heuristic(value))
        } else if let Some(entry) = OpeningBook::standard().get(&position) {
            let values: Vec<(u32, i32)> = entry.columns().map(|col| (col, entry.score)).collect();
            let (column, value) = pick(&values, rng)?;
            (column, Score::Exact(value))
        } else {
            let known = Self::fallback(&mut solver, &position, budget, false);
            match Self::exact(&mut solver, budget, |s| s.best_columns(&position, budget)) {
                Ok((columns, best)) => {
                    let values: Vec<(u32, i32)> = columns.iter().map(|col| (*col, best)).collect();
                    let (column, value) = pick(&values, rng)?;
                    (column, Score::Exact(value))
                }
                Err(Stopped) => {
                    let values = Self::deepen_rest(&mut solver, &position, known, budget, false);
                    let (column, value) = pick(&values, rng)?;
                    (column, Score::Heuristic(value))
                }
            }
        };
        Some(Choice {
            mv: Move::Drop { column },
            score,
            nodes: solver.nodes(),
        })
    }

    /// Every legal column's value, as the type's docs say: at
    /// [`MAX_STRENGTH`] Pons' exact scores (those of [`Solver::analyze`]: a
    /// column that wins at once scores by the discs placed, as Pons counts)
    /// for the best columns and for as many others as the budget allows;
    /// heuristic values of a search with a full window for each column
    /// otherwise. The position's score is the best columns' exact score
    /// once proven. `None` on a game it does not support.
    fn analyze(
        &self,
        node: &Node<'_>,
        strength: u8,
        budget: &Budget<'_>,
        _: &mut ChaCha8Rng,
    ) -> Option<Analysis> {
        let position = self.bitboard(node)?;
        let mut solver = Solver::new();
        let mut exact = [None; WIDTH as usize];
        let mut best = None;
        let values = if strength.clamp(1, MAX_STRENGTH) < MAX_STRENGTH {
            let depth = depth_for(strength.max(1));
            let (_, values) = solver.deepen(&position, None, depth, budget.nodes, true, budget);
            values
        } else {
            let book = OpeningBook::standard();
            let known = Self::fallback(&mut solver, &position, budget, true);
            best = Self::exact(&mut solver, budget, |s| match book.get(&position) {
                Some(entry) => Ok((entry.columns().collect(), entry.score)),
                None => s.best_columns(&position, budget),
            })
            .ok();
            if let Some((columns, score)) = &best {
                for col in columns {
                    exact[*col as usize] = Some(*score);
                }
                for col in ORDER {
                    if position.can_play(col) && exact[col as usize].is_none() {
                        // A column whose position after is in the book.
                        let after = position.after(position.drop_cell(col));
                        if let Some(entry) =
                            book.get(&after).filter(|_| !position.is_winning_move(col))
                        {
                            exact[col as usize] = Some(-entry.score);
                            continue;
                        }
                        match solver.column_score(&position, col, budget) {
                            Ok(score) => exact[col as usize] = Some(score),
                            Err(Stopped) => break,
                        }
                    }
                }
            }
            let complete =
                (0..WIDTH).all(|col| exact[col as usize].is_some() || !position.can_play(col));
            if complete {
                known.1
            } else {
                Self::deepen_rest(&mut solver, &position, known, budget, true)
            }
        };
        // A column without an exact score scores less than the best columns.
        let cap = best
            .as_ref()
            .map_or(INFINITY, |(_, score)| (score - 1) * WIN_UNIT);
        let moves: Vec<(Move, Score)> = node
            .moves()
            .into_iter()
            .filter_map(|mv| {
                let Move::Drop { column } = mv else {
                    return None;
                };
                let score = match exact[column as usize] {
                    Some(score) => Score::Exact(score),
                    None => {
                        let (_, value) = values.iter().find(|(col, _)| *col == column)?;
                        Score::Heuristic((*value).min(cap))
                    }
                };
                Some((mv, score))
            })
            .collect();
        let score = match best {
            Some((_, score)) => Score::Exact(score),
            None => moves.iter().map(|(_, s)| *s).max_by_key(|s| s.rank())?,
        };
        Some(Analysis {
            score,
            moves,
            nodes: solver.nodes(),
        })
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;
    use crate::rules::Outcome;

    fn unlimited(stop: &AtomicBool) -> Budget<'_> {
        Budget {
            nodes: u64::MAX,
            stop,
        }
    }

    fn solve(moves: &str) -> i32 {
        let stop = AtomicBool::new(false);
        let position = C4Bitboard::from_moves(moves).expect("a legal sequence");
        Solver::new()
            .solve(&position, &unlimited(&stop))
            .expect("no limit")
    }

    /// The crate's position after `moves` (Pons' notation), and the seat
    /// to move.
    fn rules_position(moves: &str) -> (RuleSet, Position, Seat) {
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        let mut position = rules.initial_position(2);
        let mut seat = Seat(0);
        for ch in moves.chars() {
            let column = ch.to_digit(10).expect("a digit") - 1;
            let played = rules
                .play(&position, seat, Move::Drop { column })
                .expect("legal");
            assert_eq!(played.outcome, None, "{moves}: the game ended");
            rules.apply(&mut position, seat, &played);
            seat = Seat(1 - seat.0);
        }
        (rules, position, seat)
    }

    #[test]
    fn move_strings_are_checked() {
        assert_eq!(C4Bitboard::from_moves("4453").map(|p| p.moves()), Ok(4));
        assert_eq!(C4Bitboard::from_moves(""), Ok(C4Bitboard::new()));
        assert_eq!(
            C4Bitboard::from_moves("448"),
            Err(BitboardError::NotAColumn {
                index: 3,
                found: '8'
            })
        );
        assert_eq!(
            C4Bitboard::from_moves("40"),
            Err(BitboardError::NotAColumn {
                index: 2,
                found: '0'
            })
        );
        assert_eq!(
            C4Bitboard::from_moves("1111111"),
            Err(BitboardError::ColumnFull {
                index: 7,
                column: 1
            })
        );
        assert_eq!(
            C4Bitboard::from_moves("1212121"),
            Err(BitboardError::GameOver { index: 7 })
        );
        assert_eq!(
            "1212121".parse::<C4Bitboard>().unwrap_err().to_string(),
            "move 7 completes a four: the game is over"
        );
    }

    #[test]
    fn the_table_fits_in_32_mib_and_its_size_is_a_prime_above_2_to_the_17() {
        const { assert!(Solver::TABLE_BYTES <= 32 << 20) };
        const { assert!(TABLE_ENTRIES > 1 << 17) };
        let n = TABLE_ENTRIES;
        assert!(
            (2..)
                .take_while(|d| d * d <= n)
                .all(|d| !n.is_multiple_of(d))
        );
    }

    #[test]
    fn a_win_with_the_next_disc_scores_by_the_discs_placed() {
        // The first player holds columns 1 to 3 of the bottom row: its
        // fourth disc, in column 4, wins.
        assert_eq!(solve("112233"), 18);
        let position = C4Bitboard::from_moves("112233").unwrap();
        assert!(position.is_winning_move(3));
        assert!(!position.is_winning_move(4));
        // Three stacked in column 1: the fourth on top wins.
        assert_eq!(solve("121212"), 18);
        // The first player holds columns 2 to 4 with both ends open: the
        // second player blocks one end, the first wins with its fourth
        // disc at the other.
        assert_eq!(solve("22334"), -18);
        // A random game's 32 discs; the first player wins with its 17th,
        // in column 2 only.
        let late = C4Bitboard::from_moves("75137177345565475523113433766444").unwrap();
        let stop = AtomicBool::new(false);
        let scores = Solver::new()
            .analyze(&late, &unlimited(&stop))
            .expect("no limit");
        assert_eq!(scores[1], Some(5));
        assert!(
            scores
                .iter()
                .enumerate()
                .all(|(col, s)| col == 1 || *s < Some(5))
        );
    }

    #[test]
    fn the_best_column_of_analyze_scores_as_the_position() {
        let stop = AtomicBool::new(false);
        let mut solver = Solver::new();
        for moves in [
            "2252576253462244111563365343671351441",
            "7422341735647741166133573473242566",
            "52753311433677442422121",
        ] {
            let position = C4Bitboard::from_moves(moves).unwrap();
            let score = solver.solve(&position, &unlimited(&stop));
            let scores = solver.analyze(&position, &unlimited(&stop)).unwrap();
            assert_eq!(scores.iter().flatten().max().copied(), score, "{moves}");
            for col in 0..7 {
                assert_eq!(scores[col as usize].is_some(), position.can_play(col));
            }
        }
    }

    #[test]
    fn known_positions_get_their_pons_scores() {
        // The first lines of Pons' End-Easy, Middle-Easy and Begin-Easy sets.
        assert_eq!(solve("2252576253462244111563365343671351441"), -1);
        assert_eq!(solve("7422341735647741166133573473242566"), 1);
        assert_eq!(solve("5554224333234511764415115"), 4);
        assert_eq!(solve("52753311433677442422121"), 8);
        assert_eq!(solve("32164625"), 11);
    }

    #[test]
    fn a_full_board_is_a_draw() {
        // A random game that filled the board without a four.
        let drawn = "656173566152215676422337377473141445425321";
        assert_eq!(solve(drawn), 0);
        assert_eq!(solve(&drawn[..41]), 0);
        let full = C4Bitboard::from_moves(drawn).unwrap();
        assert_eq!(full.moves(), 42);
        assert!((0..7).all(|col| !full.can_play(col)));
        let stop = AtomicBool::new(false);
        assert_eq!(
            Solver::new().analyze(&full, &unlimited(&stop)),
            Some([None; 7])
        );
    }

    #[test]
    fn a_position_built_through_the_rules_is_the_same_bitboard() {
        for moves in ["", "4", "4453", "2252576253462244111563365343671351441"] {
            let (_, position, seat) = rules_position(moves);
            assert_eq!(
                C4Bitboard::from_position(&position, seat),
                C4Bitboard::from_moves(moves),
                "{moves}"
            );
            assert_eq!(
                C4Bitboard::from_position(&position, Seat(1 - seat.0)),
                Err(BitboardError::WrongTurn {
                    to_move: Seat(1 - seat.0),
                    first: (moves.len() as u32).div_ceil(2),
                    second: moves.len() as u32 / 2,
                })
            );
        }
    }

    #[test]
    fn other_games_and_sizes_are_refused() {
        let small = RuleSet::ConnectFour(ConnectFourRules::new(Some(5), None, None, 100).unwrap());
        let position = small.initial_position(2);
        assert_eq!(
            C4Bitboard::from_position(&position, Seat(0)),
            Err(BitboardError::NotStandard)
        );
        assert!(ConnectFourEngine.supports(&small, 2).is_err());
        let standard = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        assert_eq!(ConnectFourEngine.supports(&standard, 2), Ok(()));
        assert_eq!(
            ConnectFourEngine.supports(&standard, 3),
            Err("the connect4 engine plays only standard 7x6 connect four for two seats".into())
        );
    }

    #[test]
    fn a_spent_budget_or_a_stop_gives_no_score() {
        let position = C4Bitboard::from_moves("32164625").unwrap();
        let stop = AtomicBool::new(false);
        let mut solver = Solver::new();
        let tight = Budget {
            nodes: 10,
            stop: &stop,
        };
        assert_eq!(solver.solve(&position, &tight), None);
        assert_eq!(solver.analyze(&position, &tight), None);
        let stopped = AtomicBool::new(true);
        assert_eq!(solver.solve(&position, &unlimited(&stopped)), None);
        // What the interrupted searches stored is sound.
        assert_eq!(solver.solve(&position, &unlimited(&stop)), Some(11));
    }

    #[test]
    fn a_reset_solver_searches_as_a_new_one() {
        let stop = AtomicBool::new(false);
        let first = C4Bitboard::from_moves("52753311433677442422121").unwrap();
        let other = C4Bitboard::from_moves("5554224333234511764415115").unwrap();
        let mut solver = Solver::new();
        solver.solve(&first, &unlimited(&stop));
        let fresh = solver.nodes();
        solver.solve(&other, &unlimited(&stop));
        solver.reset();
        assert_eq!(solver.nodes(), 0);
        solver.solve(&first, &unlimited(&stop));
        assert_eq!(solver.nodes(), fresh);
        // Without a reset, the table answers at once.
        solver.reset();
        solver.solve(&first, &unlimited(&stop));
        let before = solver.nodes();
        solver.solve(&first, &unlimited(&stop));
        assert!(solver.nodes() - before < fresh);
    }

    fn choose(moves: &str, strength: u8, nodes: u64, seed: u64) -> Choice {
        let (rules, position, seat) = rules_position(moves);
        let node = Node::new(&rules, position, seat, vec![false; 2]);
        let stop = AtomicBool::new(false);
        let budget = Budget { nodes, stop: &stop };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        ConnectFourEngine
            .choose(&node, strength, &budget, &mut rng)
            .expect("a legal move")
    }

    #[test]
    fn every_strength_takes_a_win_in_one() {
        for strength in 1..=MAX_STRENGTH {
            let choice = choose("112233", strength, 100_000, 7);
            assert_eq!(choice.mv, Move::Drop { column: 3 }, "strength {strength}");
        }
        assert_eq!(choose("112233", 10, 1_000_000, 7).score, Score::Exact(18));
        assert_eq!(
            choose("112233", 1, 1_000_000, 7).score,
            Score::Heuristic(18 * WIN_UNIT)
        );
    }

    #[test]
    fn every_strength_blocks_a_threat() {
        // The first player holds columns 1 to 3 of the bottom row and
        // threatens column 4 (index 3).
        for strength in 1..=MAX_STRENGTH {
            let choice = choose("11223", strength, 100_000, 3);
            assert_eq!(choice.mv, Move::Drop { column: 3 }, "strength {strength}");
        }
    }

    #[test]
    fn perfect_play_picks_a_column_of_the_best_exact_score() {
        let moves = "52753311433677442422121";
        let choice = choose(moves, MAX_STRENGTH, u64::MAX, 1);
        assert_eq!(choice.score, Score::Exact(8));
        let stop = AtomicBool::new(false);
        let position = C4Bitboard::from_moves(moves).unwrap();
        let scores = Solver::new().analyze(&position, &unlimited(&stop)).unwrap();
        let Move::Drop { column } = choice.mv else {
            panic!("a drop")
        };
        assert_eq!(scores[column as usize], Some(8));
        // The same seed gives the same move.
        assert_eq!(choose(moves, MAX_STRENGTH, u64::MAX, 1), choice);
    }

    #[test]
    fn a_spent_budget_falls_back_to_a_legal_heuristic_move() {
        for nodes in [0, 100, 5_000] {
            let choice = choose("4", MAX_STRENGTH, nodes, 5);
            assert!(matches!(choice.score, Score::Heuristic(_)), "{nodes}");
            assert!(matches!(choice.mv, Move::Drop { column } if column < 7));
        }
        // A full column is never chosen.
        let choice = choose("444444", 3, 0, 5);
        assert_ne!(choice.mv, Move::Drop { column: 3 });
    }

    fn analysis(moves: &str, strength: u8, nodes: u64) -> Analysis {
        let (rules, position, seat) = rules_position(moves);
        let node = Node::new(&rules, position, seat, vec![false; 2]);
        let stop = AtomicBool::new(false);
        let budget = Budget { nodes, stop: &stop };
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        ConnectFourEngine
            .analyze(&node, strength, &budget, &mut rng)
            .expect("an analysis")
    }

    #[test]
    fn the_analysis_scores_every_column_as_pons_does() {
        // The first player wins at once in column 2 (index 1), with its
        // 17th disc: 22 - 17 = 5.
        let moves = "75137177345565475523113433766444";
        let exact = analysis(moves, MAX_STRENGTH, u64::MAX);
        let stop = AtomicBool::new(false);
        let position = C4Bitboard::from_moves(moves).unwrap();
        let scores = Solver::new().analyze(&position, &unlimited(&stop)).unwrap();
        let expected: Vec<(Move, Score)> = (0..7)
            .filter_map(|column| {
                Some((
                    Move::Drop { column },
                    Score::Exact(scores[column as usize]?),
                ))
            })
            .collect();
        assert_eq!(exact.moves, expected);
        assert_eq!(exact.score, Score::Exact(5));
        // Weaker: a heuristic value for every legal column, the immediate
        // win still the best.
        let rough = analysis(moves, 3, u64::MAX);
        assert_eq!(rough.moves.len(), expected.len());
        assert!(
            rough
                .moves
                .iter()
                .all(|(_, s)| matches!(s, Score::Heuristic(_)))
        );
        assert_eq!(rough.score, Score::Heuristic(5 * WIN_UNIT));
        assert_eq!(rough.moves[1].1, Score::Heuristic(5 * WIN_UNIT));
        // Without the budget to solve: the win is proven all the same, the
        // other columns keep heuristic values below it.
        let spent = analysis(moves, MAX_STRENGTH, 0);
        assert_eq!(spent.score, Score::Exact(5));
        for (i, (mv, score)) in spent.moves.iter().enumerate() {
            assert_eq!(*mv, expected[i].0);
            match i {
                1 => assert_eq!(*score, Score::Exact(5)),
                _ => assert!(matches!(score, Score::Heuristic(v) if *v < 5 * WIN_UNIT)),
            }
        }
    }

    #[test]
    fn a_finished_game_has_no_move() {
        let (rules, position, seat) = rules_position("112233");
        let mut node = Node::new(&rules, position, seat, vec![false; 2]);
        node.play(Move::Drop { column: 3 }).unwrap();
        assert!(matches!(node.outcome(), Some(Outcome::Win { .. })));
        let stop = AtomicBool::new(false);
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert_eq!(
            ConnectFourEngine.choose(&node, MAX_STRENGTH, &unlimited(&stop), &mut rng),
            None
        );
        assert_eq!(
            C4Bitboard::from_position(node.position(), node.to_move()),
            Err(BitboardError::AlreadyWon)
        );
    }
}
