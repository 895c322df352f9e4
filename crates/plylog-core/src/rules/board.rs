//! A flat rectangular board.

use super::{Coord, Seat};

/// A rows x cols grid stored flat in row-major order, each cell empty or
/// holding one seat's piece. Reads through [`Board::get`] take signed
/// coordinates and return `None` off the board, so line scans need no bounds
/// arithmetic of their own. It counts its pieces, so a full board is
/// known in O(1).
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Board {
    rows: u32,
    cols: u32,
    /// 0 = empty, otherwise seat index + 1.
    #[serde(with = "serde_bytes")]
    cells: Vec<u8>,
    /// How many cells hold a piece.
    filled: u64,
}

impl Board {
    /// An empty board. The caller has checked that `rows * cols` is within
    /// its cell limit.
    pub fn new(rows: u32, cols: u32) -> Self {
        let cells = vec![0; rows as usize * cols as usize];
        Board {
            rows,
            cols,
            cells,
            filled: 0,
        }
    }

    /// How many cells hold a piece.
    pub fn filled(&self) -> u64 {
        self.filled
    }

    /// How many cells are empty.
    pub fn empty_count(&self) -> u64 {
        self.cells() - self.filled
    }

    /// Whether every cell holds a piece.
    pub fn is_full(&self) -> bool {
        self.filled == self.cells()
    }

    /// The heap memory the board holds, in bytes: one per cell.
    pub fn heap_bytes(&self) -> usize {
        self.cells.len()
    }

    /// Puts `seat`'s piece on the empty cell `at`.
    ///
    /// # Panics
    /// When `at` is off the board.
    pub fn put(&mut self, at: Coord, seat: Seat) {
        debug_assert!(self.at(at).is_none(), "{at} already occupied");
        self.set(at, Some(seat));
        self.filled += 1;
    }

    /// Empties the occupied cell `at`, the inverse of [`Board::put`].
    ///
    /// # Panics
    /// When `at` is off the board.
    pub fn clear(&mut self, at: Coord) {
        debug_assert!(self.at(at).is_some(), "{at} already empty");
        self.set(at, None);
        self.filled -= 1;
    }

    /// Changes the owner of the occupied cell `at` (a flip).
    ///
    /// # Panics
    /// When `at` is off the board.
    pub fn recolor(&mut self, at: Coord, seat: Seat) {
        debug_assert!(self.at(at).is_some(), "{at} is empty");
        self.set(at, Some(seat));
    }

    /// The board drawn as text, one string per row (row 0 first), each cell
    /// the owner's symbol from `symbols` (by seat index) or `empty`.
    pub fn render(&self, symbols: &[&str], empty: &str) -> Vec<String> {
        (0..self.rows)
            .map(|row| {
                (0..self.cols)
                    .map(|col| {
                        self.at(Coord::new(row, col))
                            .map_or(empty, |s| symbols[s.index()])
                    })
                    .collect()
            })
            .collect()
    }

    /// Number of rows.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    /// Number of cells, rows x cols.
    pub fn cells(&self) -> u64 {
        u64::from(self.rows) * u64::from(self.cols)
    }

    /// Whether (`row`, `col`) is on the board.
    pub fn contains(&self, row: i64, col: i64) -> bool {
        (0..i64::from(self.rows)).contains(&row) && (0..i64::from(self.cols)).contains(&col)
    }

    /// The cell at signed (`row`, `col`): `None` off the board, `Some(None)`
    /// when empty, `Some(Some(seat))` when occupied.
    pub fn get(&self, row: i64, col: i64) -> Option<Option<Seat>> {
        if !self.contains(row, col) {
            return None;
        }
        let code = self.cells[row as usize * self.cols as usize + col as usize];
        Some(code.checked_sub(1).map(Seat))
    }

    /// The owner of an on-board cell, `None` when empty.
    ///
    /// # Panics
    /// When `at` is off the board.
    pub fn at(&self, at: Coord) -> Option<Seat> {
        self.get(i64::from(at.row), i64::from(at.col))
            .expect("coordinate on the board")
    }

    fn set(&mut self, at: Coord, seat: Option<Seat>) {
        assert!(
            at.row < self.rows && at.col < self.cols,
            "{at} off the board"
        );
        self.cells[at.row as usize * self.cols as usize + at.col as usize] =
            seat.map_or(0, |s| s.0 + 1);
    }

    /// Checks what a board read back from storage must hold for
    /// `seats` seats: one cell per square, each empty or a seat's, and the
    /// piece count right. A board that passes cannot panic a reader.
    ///
    /// # Errors
    /// What does not hold, in words.
    pub fn check(&self, seats: usize) -> Result<(), String> {
        if self.cells.len() as u64 != self.cells() {
            return Err(format!(
                "a {}x{} board holds {} cells",
                self.rows,
                self.cols,
                self.cells.len()
            ));
        }
        if let Some(code) = self.cells.iter().find(|c| usize::from(**c) > seats) {
            return Err(format!("a cell holds seat {} of {seats}", code - 1));
        }
        let filled = self.cells.iter().filter(|c| **c != 0).count() as u64;
        if filled != self.filled {
            return Err(format!("{filled} pieces counted as {}", self.filled));
        }
        Ok(())
    }

    /// The occupied cells in row-major order.
    pub fn pieces(&self) -> impl Iterator<Item = (Coord, Seat)> + '_ {
        let cols = self.cols as usize;
        self.cells
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != 0)
            .map(move |(i, c)| {
                (
                    Coord::new((i / cols) as u32, (i % cols) as u32),
                    Seat(c - 1),
                )
            })
    }

    /// The empty cells in row-major order.
    pub fn empty_cells(&self) -> impl Iterator<Item = Coord> + '_ {
        let cols = self.cols as usize;
        self.cells
            .iter()
            .enumerate()
            .filter(|(_, c)| **c == 0)
            .map(move |(i, _)| Coord::new((i / cols) as u32, (i % cols) as u32))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_board_reads_return_none() {
        let board = Board::new(2, 3);
        assert_eq!(board.get(-1, 0), None);
        assert_eq!(board.get(0, 3), None);
        assert_eq!(board.get(2, 0), None);
        assert_eq!(board.get(1, 2), Some(None));
    }

    #[test]
    fn a_set_cell_reads_back_its_seat_and_lists_as_a_piece() {
        let mut board = Board::new(3, 3);
        board.set(Coord::new(1, 2), Some(Seat(1)));
        assert_eq!(board.get(1, 2), Some(Some(Seat(1))));
        assert_eq!(
            board.pieces().collect::<Vec<_>>(),
            vec![(Coord::new(1, 2), Seat(1))]
        );
        assert_eq!(board.empty_cells().count(), 8);
    }
}
