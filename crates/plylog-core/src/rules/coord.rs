//! Board coordinates.

use super::IllegalMove;

/// A cell of a board: 0-based `row` (0 = top) and `col` (0 = left). Boards
/// are stored row-major, so the flat index is `row * cols + col`.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
pub struct Coord {
    /// Row, 0-based from the top.
    pub row: u32,
    /// Column, 0-based from the left.
    pub col: u32,
}

impl Coord {
    /// The cell at (`row`, `col`).
    pub const fn new(row: u32, col: u32) -> Self {
        Coord { row, col }
    }

    /// This cell, if it is on a `rows` x `cols` board.
    ///
    /// # Errors
    /// [`IllegalMove::CellOffBoard`] otherwise.
    pub fn on_board(self, rows: u32, cols: u32) -> Result<Coord, IllegalMove> {
        if self.row < rows && self.col < cols {
            return Ok(self);
        }
        Err(IllegalMove::CellOffBoard {
            row: self.row.into(),
            col: self.col.into(),
            rows,
            cols,
        })
    }
}

impl std::fmt::Display for Coord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "({}, {})", self.row, self.col)
    }
}
