//! The m,n,k-game family: place a piece on any empty cell; K in a row wins.
//! Tic-tac-toe is the 3,3,3-game.

use super::lines::{Overline, placement_outcome};
use super::{Board, Coord, Game, IllegalMove, InvalidRules, MAX_SEATS, Move, Played, Seat};

/// A validated m,n,k configuration: `rows` x `cols` board, `k` in a row wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MnkRules {
    rows: u32,
    cols: u32,
    k: u32,
}

impl MnkRules {
    /// Tic-tac-toe: 3 x 3, three in a row.
    pub const TIC_TAC_TOE: MnkRules = MnkRules {
        rows: 3,
        cols: 3,
        k: 3,
    };

    /// Checks a configuration. `max_cells` is the server's board size limit.
    ///
    /// # Errors
    /// [`InvalidRules`] naming `rows`, `cols` or `k` when a size is below 1,
    /// the board has more than `max_cells` cells, or `k` is larger than both
    /// sides.
    pub fn new(rows: i64, cols: i64, k: i64, max_cells: u64) -> Result<Self, InvalidRules> {
        let (rows, cols, k) = check_board(rows, cols, k, max_cells)?;
        Ok(MnkRules { rows, cols, k })
    }

    /// Number of rows.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    /// Pieces in a row needed to win.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// The cell `mv` names, if it is a placement on the board; whatever the
    /// position.
    pub(super) fn check(&self, mv: Move) -> Result<Coord, IllegalMove> {
        let at = match mv {
            Move::Place(at) => at,
            Move::PlaceMark { .. } => return Err(IllegalMove::UnexpectedMark { variant: "mnk" }),
            // Any other kind of move, including kinds added later.
            _ => {
                return Err(IllegalMove::WrongMoveKind {
                    variant: "mnk",
                    expected: "place moves",
                });
            }
        };
        at.on_board(self.rows, self.cols)
    }

    /// Plays `mv`, already checked to name the on-board cell `at`, for
    /// `seat`: its piece (the mover's, or in wild games a mark) goes on `at`
    /// of `board`. Refused when the cell is occupied; wins
    /// for `seat` on K in a row of `piece` under `overline`, draws on the
    /// last empty cell. O(K).
    ///
    /// # Errors
    /// [`IllegalMove::CellOccupied`].
    pub(super) fn place(
        &self,
        board: &Board,
        seat: Seat,
        mv: Move,
        at: Coord,
        overline: Overline,
    ) -> Result<Played, IllegalMove> {
        if board.at(at).is_some() {
            return Err(IllegalMove::CellOccupied {
                row: at.row,
                col: at.col,
            });
        }
        let outcome = placement_outcome(board, at, seat, mv.piece(seat), self.k, overline);
        Ok(Played::placed(mv, at, outcome))
    }
}

/// The m,n,k-game: any number of seats take turns placing their own piece on
/// an empty cell.
/// The name listings show: `tic-tac-toe` for 3,3,3, otherwise `mnk
/// <rows>x<cols> k=<k>`.
impl std::fmt::Display for MnkRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if *self == Self::TIC_TAC_TOE {
            f.write_str("tic-tac-toe")
        } else {
            write!(f, "mnk {}x{} k={}", self.rows, self.cols, self.k)
        }
    }
}

impl Game for MnkRules {
    type Position = Board;

    fn initial_position(&self, _seats: usize) -> Board {
        Board::new(self.rows, self.cols)
    }

    fn seat_range(&self) -> (usize, usize) {
        (2, MAX_SEATS)
    }

    fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        self.check(mv).map(drop)
    }

    fn play(&self, board: &Board, seat: Seat, mv: Move) -> Result<Played, IllegalMove> {
        let at = self.check(mv)?;
        self.place(board, seat, mv, at, Overline::Wins)
    }

    fn apply(&self, board: &mut Board, seat: Seat, played: &Played) {
        board.put(played.cell(), played.mv.piece(seat));
    }

    fn undo(&self, board: &mut Board, _seat: Seat, played: &Played) {
        board.clear(played.cell());
    }

    fn legal_moves<'a>(&'a self, board: &'a Board, _seat: Seat) -> impl Iterator<Item = Move> + 'a {
        board.empty_cells().map(Move::Place)
    }

    fn legal_move_count(&self, board: &Board, _seat: Seat) -> usize {
        board.empty_count() as usize
    }
}

/// The checks every K-in-a-row board shares: sizes at least 1, the cell
/// limit, and `1 <= k <= max(rows, cols)`.
pub(super) fn check_board(
    rows: i64,
    cols: i64,
    k: i64,
    max_cells: u64,
) -> Result<(u32, u32, u32), InvalidRules> {
    let size = |field, value: i64| {
        if value < 1 {
            return Err(InvalidRules::new(
                field,
                format!("{field}={value} must be at least 1"),
            ));
        }
        u32::try_from(value)
            .map_err(|_| InvalidRules::new(field, format!("{field}={value} is too large")))
    };
    let (r, c, kk) = (size("rows", rows)?, size("cols", cols)?, size("k", k)?);
    let cells = u64::from(r) * u64::from(c);
    if cells > max_cells {
        return Err(InvalidRules::new(
            "rows",
            format!("a {r}x{c} board has {cells} cells, over the limit of {max_cells}"),
        ));
    }
    if kk > r.max(c) {
        return Err(InvalidRules::new(
            "k",
            format!("k={kk} cannot fit on a {r}x{c} board"),
        ));
    }
    Ok((r, c, kk))
}

#[cfg(test)]
mod tests {
    use super::super::{Outcome, Position, RuleSet, Seat};
    use super::*;

    /// Puts `seat`'s piece on `at`, whatever the turn.
    fn put(rules: &RuleSet, position: &mut Position, seat: Seat, at: Coord) {
        rules.apply(position, seat, &Played::placed(Move::Place(at), at, None));
    }

    #[test]
    fn impossible_configurations_are_refused_with_the_field_named() {
        let err = MnkRules::new(5, 5, 6, 100).unwrap_err();
        assert_eq!(err.field, "k");
        assert_eq!(err.why, "k=6 cannot fit on a 5x5 board");
        assert_eq!(MnkRules::new(0, 3, 3, 100).unwrap_err().field, "rows");
        assert_eq!(MnkRules::new(3, -1, 3, 100).unwrap_err().field, "cols");
        assert_eq!(MnkRules::new(3, 3, 0, 100).unwrap_err().field, "k");
        assert!(
            MnkRules::new(1001, 1000, 5, 1_000_000)
                .unwrap_err()
                .why
                .contains("over the limit")
        );
        assert!(MnkRules::new(1000, 1000, 5, 1_000_000).is_ok());
        assert!(MnkRules::new(1, 7, 7, 100).is_ok());
    }

    #[test]
    fn a_move_onto_an_occupied_or_off_board_cell_is_illegal() {
        let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
        let mut pos = rules.initial_position(2);
        put(&rules, &mut pos, Seat(0), Coord::new(1, 1));
        assert_eq!(
            rules.play(&pos, Seat(1), Move::Place(Coord::new(1, 1))),
            Err(IllegalMove::CellOccupied { row: 1, col: 1 })
        );
        assert!(matches!(
            rules.play(&pos, Seat(1), Move::Place(Coord::new(3, 0))),
            Err(IllegalMove::CellOffBoard { .. })
        ));
        assert!(matches!(
            rules.play(&pos, Seat(1), Move::Drop { column: 0 }),
            Err(IllegalMove::WrongMoveKind { .. })
        ));
    }

    #[test]
    fn the_last_empty_cell_draws_unless_it_wins() {
        let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
        let mut pos = rules.initial_position(2);
        // X O X / X O O / O X .
        let cells = [
            (0, 0, 0),
            (0, 1, 1),
            (0, 2, 0),
            (1, 0, 0),
            (1, 1, 1),
            (1, 2, 1),
            (2, 0, 1),
            (2, 1, 0),
        ];
        for (r, c, s) in cells {
            put(&rules, &mut pos, Seat(s), Coord::new(r, c));
        }
        let last = Move::Place(Coord::new(2, 2));
        assert_eq!(
            rules.play(&pos, Seat(0), last).unwrap().outcome,
            Some(Outcome::Draw)
        );
        assert_eq!(
            rules.legal_moves(&pos, Seat(0)).collect::<Vec<_>>(),
            vec![last]
        );
        assert_eq!(rules.legal_move_count(&pos, Seat(0)), 1);
    }
}
