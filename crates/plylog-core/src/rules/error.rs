//! The rules' two error types: a configuration that cannot be played and a
//! move that may not be played.

/// A rule configuration that cannot be played, naming the offending field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {why}")]
pub struct InvalidRules {
    /// The configuration field at fault, e.g. `"k"` or `"rows"`.
    pub field: &'static str,
    /// A short lowercase sentence, e.g. "k=6 cannot fit on a 5x5 board".
    pub why: String,
}

impl InvalidRules {
    /// A refusal of `field` (a configuration field's name) for `why`.
    pub fn new(field: &'static str, why: impl Into<String>) -> Self {
        InvalidRules {
            field,
            why: why.into(),
        }
    }
}

/// Why the rules refuse a move on a given position.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IllegalMove {
    /// The named cell is not on the board.
    #[error("cell ({row}, {col}) is off the {rows}x{cols} board")]
    CellOffBoard {
        /// Requested row.
        row: i64,
        /// Requested column.
        col: i64,
        /// Board rows.
        rows: u32,
        /// Board columns.
        cols: u32,
    },
    /// The named column is not on the board.
    #[error("column {column} is off the board (columns 0 to {max})")]
    ColumnOffBoard {
        /// Requested column.
        column: i64,
        /// The highest column index.
        max: u32,
    },
    /// The cell already holds a piece.
    #[error("cell ({row}, {col}) is occupied")]
    CellOccupied {
        /// Row of the cell.
        row: u32,
        /// Column of the cell.
        col: u32,
    },
    /// The column has no empty row.
    #[error("column {column} is full")]
    ColumnFull {
        /// The full column.
        column: u32,
    },
    /// A pop from a column that holds no disc.
    #[error("column {column} is empty")]
    ColumnEmpty {
        /// The column.
        column: u32,
    },
    /// A pop of a disc that is not the mover's.
    #[error("the bottom disc of column {column} is not yours")]
    NotYourDisc {
        /// The column.
        column: u32,
    },
    /// An Othello move must bracket at least one line of opposing discs.
    #[error("a disc on ({row}, {col}) would flip nothing")]
    NoFlip {
        /// Row of the cell.
        row: u32,
        /// Column of the cell.
        col: u32,
    },
    /// The mark is not one the rule set's moves may place.
    #[error("mark {mark} is not one of this game's marks (0 or 1)")]
    NoSuchMark {
        /// The mark asked for (a seat index).
        mark: u8,
    },
    /// A mark was named in a game whose moves place the mover's own piece.
    #[error("a mark is only allowed in wild games, not in {variant} games")]
    UnexpectedMark {
        /// The rule set's name.
        variant: &'static str,
    },
    /// A swap when the swap rule does not allow one: only seat 1, only as
    /// its first move, only while seat 0's first stone is the only one.
    #[error("a swap is only allowed as seat 1's first move")]
    SwapNotAllowed,
    /// The move's kind does not belong to this rule set.
    #[error("{variant} games take {expected}")]
    WrongMoveKind {
        /// The rule set's name, e.g. "connect four".
        variant: &'static str,
        /// The kind of move it takes, e.g. "drop moves".
        expected: &'static str,
    },
    /// A chess move that is not read (neither UCI nor SAN), not legal
    /// (with why), ambiguous (with the candidates), or played after the
    /// game ended by rule.
    #[error(transparent)]
    Chess(#[from] super::chess::ChessMoveError),
}
