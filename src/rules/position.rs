//! A position: the board plus the counters the rules keep beside it.

use super::{Board, Coord, Seat};

/// The board and its bookkeeping: how many cells are filled (for O(1) draw
/// detection) and how many discs each column holds (for O(1) gravity). Race
/// games (snakes and ladders) have no board cells; they keep each seat's
/// square, the rolls made and the current run of sixes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    board: Board,
    filled: u64,
    /// Pieces per column; a column's lowest empty row is `rows - 1 - height`.
    heights: Vec<u32>,
    /// Each seat's square in a race game (0: off the board); empty otherwise.
    tokens: Vec<u32>,
    /// Rolls on the board (made minus undone).
    rolls: u64,
    /// Sixes in a row the seat to move has rolled in this turn.
    sixes: u32,
}

impl Position {
    /// The heap memory this position holds, in bytes: one byte per board
    /// cell, four per column height and per race token.
    pub fn heap_bytes(&self) -> usize {
        self.board.cells() as usize + 4 * (self.heights.len() + self.tokens.len())
    }

    /// The empty rows x cols position.
    pub fn empty(rows: u32, cols: u32) -> Self {
        Position {
            board: Board::new(rows, cols),
            filled: 0,
            heights: vec![0; cols as usize],
            tokens: Vec::new(),
            rolls: 0,
            sixes: 0,
        }
    }

    /// The start of a race game: no board cells, every one of `seats`
    /// tokens on square 0.
    pub fn race(seats: usize) -> Self {
        Position {
            tokens: vec![0; seats],
            ..Position::empty(0, 0)
        }
    }

    /// Each seat's square in a race game, by seat index (0: off the board);
    /// empty for board games.
    pub fn tokens(&self) -> &[u32] {
        &self.tokens
    }

    /// `seat`'s square in a race game (0 when it has none).
    pub fn token(&self, seat: Seat) -> u32 {
        self.tokens.get(seat.index()).copied().unwrap_or(0)
    }

    /// Rolls on the board: made minus undone.
    pub fn rolls(&self) -> u64 {
        self.rolls
    }

    /// Sixes in a row the seat to move has rolled in its current turn.
    pub fn sixes(&self) -> u32 {
        self.sixes
    }

    /// Moves `seat`'s token to `to` after a roll; `sixes` is the new run of
    /// sixes of the seat to move next.
    pub(super) fn advance(&mut self, seat: Seat, to: u32, sixes: u32) {
        self.tokens[seat.index()] = to;
        self.rolls += 1;
        self.sixes = sixes;
    }

    /// Takes back the last roll: the inverse of [`Position::advance`].
    pub(super) fn retreat(&mut self, seat: Seat, from: u32, sixes: u32) {
        self.tokens[seat.index()] = from;
        self.rolls -= 1;
        self.sixes = sixes;
    }

    /// The board.
    pub fn board(&self) -> &Board {
        &self.board
    }

    /// How many cells hold a piece.
    pub fn filled(&self) -> u64 {
        self.filled
    }

    /// How many pieces column `col` holds (0 when `col` is off the board).
    pub fn height(&self, col: u32) -> u32 {
        self.heights.get(col as usize).copied().unwrap_or(0)
    }

    pub(super) fn put(&mut self, at: Coord, seat: Seat) {
        debug_assert!(self.board.at(at).is_none(), "{at} already occupied");
        self.board.set(at, Some(seat));
        self.filled += 1;
        self.heights[at.col as usize] += 1;
    }

    /// Changes the owner of an occupied cell (an Othello flip).
    pub(super) fn recolor(&mut self, at: Coord, seat: Seat) {
        debug_assert!(self.board.at(at).is_some(), "{at} is empty");
        self.board.set(at, Some(seat));
    }

    /// Removes the bottom disc of column `col` (a gravity column: its discs
    /// fill it from the bottom) and lets the discs above fall one row.
    pub(super) fn pop(&mut self, col: u32) {
        let rows = self.board.rows();
        let height = self.height(col);
        for row in (rows - height + 1..rows).rev() {
            let above = self.board.at(Coord::new(row - 1, col));
            self.board.set(Coord::new(row, col), above);
        }
        self.board.set(Coord::new(rows - height, col), None);
        self.filled -= 1;
        self.heights[col as usize] -= 1;
    }

    /// Puts `seat`'s disc back under column `col`, lifting the discs above
    /// one row: the inverse of [`Position::pop`].
    pub(super) fn unpop(&mut self, col: u32, seat: Seat) {
        let rows = self.board.rows();
        let height = self.height(col);
        for row in rows - height - 1..rows - 1 {
            let below = self.board.at(Coord::new(row + 1, col));
            self.board.set(Coord::new(row, col), below);
        }
        self.board.set(Coord::new(rows - 1, col), Some(seat));
        self.filled += 1;
        self.heights[col as usize] += 1;
    }

    /// A 64-bit digest of the pieces (SipHash with fixed keys, so equal on
    /// every run), for telling repeated positions apart.
    pub fn digest(&self) -> u64 {
        use std::hash::{Hash, Hasher};
        let mut hasher = std::hash::DefaultHasher::new();
        self.board.hash(&mut hasher);
        hasher.finish()
    }

    pub(super) fn clear(&mut self, at: Coord) {
        debug_assert!(self.board.at(at).is_some(), "{at} already empty");
        self.board.set(at, None);
        self.filled -= 1;
        self.heights[at.col as usize] -= 1;
    }
}
