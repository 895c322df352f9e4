//! A position: the board plus the counters the rules keep beside it.

use super::{Board, Coord, Seat};

/// The board and its bookkeeping: how many cells are filled (for O(1) draw
/// detection) and how many discs each column holds (for O(1) gravity).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Position {
    board: Board,
    filled: u64,
    /// Pieces per column; a column's lowest empty row is `rows - 1 - height`.
    heights: Vec<u32>,
}

impl Position {
    /// The empty rows x cols position.
    pub fn empty(rows: u32, cols: u32) -> Self {
        Position {
            board: Board::new(rows, cols),
            filled: 0,
            heights: vec![0; cols as usize],
        }
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
