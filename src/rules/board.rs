//! A flat rectangular board.

use super::{Coord, Seat};

/// A rows x cols grid stored flat in row-major order, each cell empty or
/// holding one seat's piece. Reads through [`Board::get`] take signed
/// coordinates and return `None` off the board, so line scans need no bounds
/// arithmetic of their own.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Board {
    rows: u32,
    cols: u32,
    /// 0 = empty, otherwise seat index + 1.
    cells: Vec<u8>,
}

impl Board {
    /// An empty board. The caller has checked that `rows * cols` is within
    /// its cell limit.
    pub fn new(rows: u32, cols: u32) -> Self {
        let cells = vec![0; rows as usize * cols as usize];
        Board { rows, cols, cells }
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

    pub(super) fn set(&mut self, at: Coord, seat: Option<Seat>) {
        assert!(
            at.row < self.rows && at.col < self.cols,
            "{at} off the board"
        );
        self.cells[at.row as usize * self.cols as usize + at.col as usize] =
            seat.map_or(0, |s| s.0 + 1);
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
