//! The position the solver works on: [`C4Bitboard`], two 64-bit masks after
//! John Tromp and Pascal Pons, built from a Pons move string or from the
//! crate's [`Position`]; [`BitboardError`] says why one cannot be. Also the
//! board's constants and the shifts that find fours and threats, and the
//! depth-limited search's evaluation of a position.

use super::solver::WIN_UNIT;
use crate::rules::{Coord, Position, Seat};

/// Columns of the standard board.
pub(super) const WIDTH: u32 = 7;
/// Rows of the standard board.
const HEIGHT: u32 = 6;
/// Bits per column in a bitboard: the rows and one spare bit on top, so
/// that shifts never carry a line from one column into the next.
const STRIDE: u32 = HEIGHT + 1;
/// Cells of the board.
pub(super) const CELLS: i32 = (WIDTH * HEIGHT) as i32;
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
pub(super) const ORDER: [u32; WIDTH as usize] = [3, 2, 4, 1, 5, 0, 6];

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
    pub(super) moves: u32,
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
    pub(super) fn drop_cell(&self, column: u32) -> u64 {
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
    pub(super) fn after(&self, cell: u64) -> C4Bitboard {
        let mut next = *self;
        next.play(cell);
        next
    }

    /// Whether the side to move can complete a four with its next disc.
    pub(super) fn can_win_next(&self) -> bool {
        winning_cells(self.current, self.mask) & self.possible() != 0
    }

    /// The cells the side to move may play without letting the opponent
    /// complete a four with its next disc (Pons part 9): the one cell
    /// blocking an opponent's playable threat if there is one, none if there
    /// are two, and never the cell under an opponent's threat. Empty when
    /// every move loses at once.
    pub(super) fn non_losing_moves(&self) -> u64 {
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
    pub(super) fn key(&self) -> u64 {
        self.current + self.mask
    }

    /// The score of winning with the next disc.
    pub(super) fn win_score(&self) -> i32 {
        (CELLS + 1 - self.moves as i32) / 2
    }

    /// The cells of `cells`, one per column, in search order: most threats
    /// created first, ties broken centre first.
    pub(super) fn ordered(&self, cells: u64) -> ([u64; WIDTH as usize], usize) {
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
    pub(super) fn evaluate(&self) -> i32 {
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
