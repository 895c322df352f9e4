//! Connect Four: a move names a column and the disc falls to the lowest empty
//! row (gravity); K in a row wins. Standard is 6 rows, 7 columns, K = 4.

use super::mnk::check_board;
use super::{Coord, IllegalMove, InvalidRules, Move, Position};

/// A validated Connect Four configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectFourRules {
    rows: u32,
    cols: u32,
    k: u32,
}

impl ConnectFourRules {
    /// The standard game: 6 rows, 7 columns, four in a row.
    pub const STANDARD: ConnectFourRules = ConnectFourRules {
        rows: 6,
        cols: 7,
        k: 4,
    };

    /// Checks a configuration; `None` takes the standard value (6, 7, 4).
    ///
    /// # Errors
    /// [`InvalidRules`] as for [`super::MnkRules::new`].
    pub fn new(
        rows: Option<i64>,
        cols: Option<i64>,
        k: Option<i64>,
        max_cells: u64,
    ) -> Result<Self, InvalidRules> {
        let std = Self::STANDARD;
        let (rows, cols, k) = check_board(
            rows.unwrap_or(std.rows.into()),
            cols.unwrap_or(std.cols.into()),
            k.unwrap_or(std.k.into()),
            max_cells,
        )?;
        Ok(ConnectFourRules { rows, cols, k })
    }

    /// Number of rows.
    pub fn rows(&self) -> u32 {
        self.rows
    }

    /// Number of columns.
    pub fn cols(&self) -> u32 {
        self.cols
    }

    /// Discs in a row needed to win.
    pub fn k(&self) -> u32 {
        self.k
    }

    /// Where a disc dropped into `column` lands: the lowest empty row, or
    /// `None` when the column is full.
    fn landing(&self, position: &Position, column: u32) -> Option<Coord> {
        let height = position.height(column);
        (height < self.rows).then(|| Coord::new(self.rows - 1 - height, column))
    }

    /// The column `mv` names, if it is a drop into a column of the board;
    /// whatever the position.
    pub(super) fn check(&self, mv: Move) -> Result<u32, IllegalMove> {
        let Move::Drop { column } = mv else {
            return Err(IllegalMove::WrongMoveKind {
                variant: "connect four",
                expected: "drop moves",
            });
        };
        if column >= self.cols {
            return Err(IllegalMove::ColumnOffBoard {
                column: i64::from(column),
                max: self.cols - 1,
            });
        }
        Ok(column)
    }

    pub(super) fn placement(&self, position: &Position, mv: Move) -> Result<Coord, IllegalMove> {
        let column = self.check(mv)?;
        self.landing(position, column)
            .ok_or(IllegalMove::ColumnFull { column })
    }

    pub(super) fn legal_moves<'a>(
        &self,
        position: &'a Position,
    ) -> impl Iterator<Item = Move> + 'a {
        let rows = self.rows;
        (0..self.cols)
            .filter(move |c| position.height(*c) < rows)
            .map(|column| Move::Drop { column })
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Outcome, RuleSet, Seat};
    use super::*;

    fn drop(rules: &RuleSet, pos: &mut Position, seat: u8, column: u32) -> Option<Outcome> {
        let played = rules.play(pos, Seat(seat), Move::Drop { column }).unwrap();
        rules.apply(pos, Seat(seat), played.placement);
        played.outcome
    }

    #[test]
    fn discs_fall_to_the_lowest_empty_row() {
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        let mut pos = rules.initial_position();
        let first = rules.play(&pos, Seat(0), Move::Drop { column: 3 }).unwrap();
        assert_eq!(first.placement, Coord::new(5, 3));
        rules.apply(&mut pos, Seat(0), first.placement);
        let second = rules.play(&pos, Seat(1), Move::Drop { column: 3 }).unwrap();
        assert_eq!(second.placement, Coord::new(4, 3));
    }

    #[test]
    fn a_full_column_is_refused_and_left_out_of_the_legal_moves() {
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        let mut pos = rules.initial_position();
        for i in 0..6 {
            drop(&rules, &mut pos, i % 2, 0);
        }
        assert_eq!(
            rules.play(&pos, Seat(0), Move::Drop { column: 0 }),
            Err(IllegalMove::ColumnFull { column: 0 })
        );
        assert_eq!(rules.legal_moves(&pos, Seat(0)).count(), 6);
        assert!(matches!(
            rules.play(&pos, Seat(0), Move::Drop { column: 7 }),
            Err(IllegalMove::ColumnOffBoard { column: 7, max: 6 })
        ));
    }

    #[test]
    fn four_stacked_discs_win_with_the_vertical_line() {
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        let mut pos = rules.initial_position();
        for _ in 0..3 {
            assert_eq!(drop(&rules, &mut pos, 0, 0), None);
            assert_eq!(drop(&rules, &mut pos, 1, 1), None);
        }
        let Some(Outcome::Win { seat, line }) = drop(&rules, &mut pos, 0, 0) else {
            panic!("expected a win");
        };
        assert_eq!(seat, Seat(0));
        assert_eq!(line, (2..6).map(|r| Coord::new(r, 0)).collect::<Vec<_>>());
    }

    #[test]
    fn defaults_fill_absent_fields() {
        let rules = ConnectFourRules::new(None, Some(9), None, 1_000_000).unwrap();
        assert_eq!((rules.rows(), rules.cols(), rules.k()), (6, 9, 4));
        assert_eq!(
            ConnectFourRules::new(Some(0), None, None, 100)
                .unwrap_err()
                .field,
            "rows"
        );
    }
}
