//! Connect Four: a move names a column and the disc falls to the lowest empty
//! row (gravity); K in a row wins. Standard is 6 rows, 7 columns, K = 4.
//!
//! Pop Out (Hasbro's variant, 2009): besides dropping, a player may pop one
//! of their own discs out of the bottom row; the discs above fall one row.
//! A pop may complete lines for the opponent, or for both players at once;
//! rule sheets differ on the latter, so [`PopBothLines`] chooses (default:
//! the player who popped wins). A full board is not a draw while the player
//! to move can pop. To guarantee termination, a position (pieces and player
//! to move) that occurs for the third time is a draw; the game layer keeps
//! that count from [`super::Position::digest`].

use super::lines::{Overline, winning_run};
use super::mnk::check_board;
use super::{Coord, IllegalMove, InvalidRules, Move, Outcome, Played, Position, Seat};

/// Who wins when a pop completes lines for both players at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PopBothLines {
    /// The player who popped (the default).
    MoverWins,
    /// The other player.
    OpponentWins,
}

/// A validated Connect Four configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectFourRules {
    rows: u32,
    cols: u32,
    k: u32,
    /// `Some` when pops are allowed (Pop Out), with its both-lines rule.
    pop_out: Option<PopBothLines>,
}

impl ConnectFourRules {
    /// The standard game: 6 rows, 7 columns, four in a row.
    pub const STANDARD: ConnectFourRules = ConnectFourRules {
        rows: 6,
        cols: 7,
        k: 4,
        pop_out: None,
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
        Ok(ConnectFourRules {
            rows,
            cols,
            k,
            pop_out: None,
        })
    }

    /// The same board played as Pop Out, with `both_lines` deciding a pop
    /// that completes lines for both players.
    pub fn with_pop_out(self, both_lines: PopBothLines) -> Self {
        ConnectFourRules {
            pop_out: Some(both_lines),
            ..self
        }
    }

    /// `Some` with its both-lines rule when pops are allowed (Pop Out).
    pub fn pop_out(&self) -> Option<PopBothLines> {
        self.pop_out
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
        let column = match mv {
            Move::Drop { column } => column,
            Move::Pop { column } if self.pop_out.is_some() => column,
            _ => {
                return Err(IllegalMove::WrongMoveKind {
                    variant: "connect four",
                    expected: if self.pop_out.is_some() {
                        "drop or pop moves"
                    } else {
                        "drop moves"
                    },
                });
            }
        };
        if column >= self.cols {
            return Err(IllegalMove::ColumnOffBoard {
                column: i64::from(column),
                max: self.cols - 1,
            });
        }
        Ok(column)
    }

    /// Checks a pop of `seat`'s bottom disc in `column` and works out what it
    /// does: lines completed by the discs that fell, for either player.
    pub(super) fn play_pop(
        &self,
        position: &Position,
        seat: Seat,
        column: u32,
    ) -> Result<Played, IllegalMove> {
        let bottom = Coord::new(self.rows - 1, column);
        match position.board().at(bottom) {
            None => return Err(IllegalMove::ColumnEmpty { column }),
            Some(owner) if owner != seat => return Err(IllegalMove::NotYourDisc { column }),
            Some(_) => {}
        }
        let mut after = position.clone();
        after.pop(column);
        let opponent = Seat(1 - seat.0);
        let mut lines = [None, None];
        for row in self.rows - after.height(column)..self.rows {
            let at = Coord::new(row, column);
            if let Some(owner) = after.board().at(at) {
                let slot = &mut lines[owner.index()];
                if slot.is_none() {
                    *slot = winning_run(after.board(), at, owner, self.k, Overline::Wins);
                }
            }
        }
        let [mine, theirs] = if seat.0 == 0 {
            lines
        } else {
            [lines[1].take(), lines[0].take()]
        };
        let outcome = match (mine, theirs) {
            (Some(line), None) => Some(Outcome::Win { seat, line }),
            (None, Some(line)) => Some(Outcome::Win {
                seat: opponent,
                line,
            }),
            (Some(line), Some(other)) => {
                Some(match self.pop_out.unwrap_or(PopBothLines::MoverWins) {
                    PopBothLines::MoverWins => Outcome::Win { seat, line },
                    PopBothLines::OpponentWins => Outcome::Win {
                        seat: opponent,
                        line: other,
                    },
                })
            }
            (None, None) => None,
        };
        Ok(Played {
            placement: bottom,
            piece: seat,
            flips: Vec::new(),
            passes: Vec::new(),
            roll: None,
            outcome,
        })
    }

    /// Whether `seat` could pop now (Pop Out, a disc of theirs in the
    /// bottom row).
    pub(super) fn can_pop(&self, position: &Position, seat: Seat) -> bool {
        self.pop_out.is_some()
            && (0..self.cols)
                .any(|col| position.board().at(Coord::new(self.rows - 1, col)) == Some(seat))
    }

    pub(super) fn placement(&self, position: &Position, mv: Move) -> Result<Coord, IllegalMove> {
        let column = self.check(mv)?;
        self.landing(position, column)
            .ok_or(IllegalMove::ColumnFull { column })
    }

    /// Drops into every column with room, left to right; then, in Pop Out,
    /// pops of every column whose bottom disc is `seat`'s, left to right.
    pub(super) fn legal_moves<'a>(
        &self,
        position: &'a Position,
        seat: Seat,
    ) -> impl Iterator<Item = Move> + 'a {
        let (rows, cols, pop_out) = (self.rows, self.cols, self.pop_out.is_some());
        let drops = (0..cols)
            .filter(move |c| position.height(*c) < rows)
            .map(|column| Move::Drop { column });
        let pops = (0..cols)
            .filter(move |c| pop_out && position.board().at(Coord::new(rows - 1, *c)) == Some(seat))
            .map(|column| Move::Pop { column });
        drops.chain(pops)
    }
}

#[cfg(test)]
mod tests {
    use super::super::RuleSet;
    use super::*;

    fn drop(rules: &RuleSet, pos: &mut Position, seat: u8, column: u32) -> Option<Outcome> {
        let played = rules.play(pos, Seat(seat), Move::Drop { column }).unwrap();
        rules.apply(pos, Seat(seat), played.placement);
        played.outcome
    }

    #[test]
    fn discs_fall_to_the_lowest_empty_row() {
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        let mut pos = rules.initial_position(2);
        let first = rules.play(&pos, Seat(0), Move::Drop { column: 3 }).unwrap();
        assert_eq!(first.placement, Coord::new(5, 3));
        rules.apply(&mut pos, Seat(0), first.placement);
        let second = rules.play(&pos, Seat(1), Move::Drop { column: 3 }).unwrap();
        assert_eq!(second.placement, Coord::new(4, 3));
    }

    #[test]
    fn a_full_column_is_refused_and_left_out_of_the_legal_moves() {
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        let mut pos = rules.initial_position(2);
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
        let mut pos = rules.initial_position(2);
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

    /// A 6x7 Pop Out position from rows of `X` (seat 0), `O` (seat 1) and
    /// `.`, top row first.
    fn pop_out_position(rows: &[&str]) -> Position {
        let mut pos = Position::empty(rows.len() as u32, rows[0].len() as u32);
        // Fill bottom-up so every column stays a gravity column.
        for (r, line) in rows.iter().enumerate().rev() {
            for (c, ch) in line.chars().enumerate() {
                let seat = match ch {
                    'X' => Seat(0),
                    'O' => Seat(1),
                    _ => continue,
                };
                pos.put(Coord::new(r as u32, c as u32), seat);
            }
        }
        pos
    }

    fn pop_out(both_lines: PopBothLines) -> RuleSet {
        RuleSet::ConnectFour(ConnectFourRules::STANDARD.with_pop_out(both_lines))
    }

    #[test]
    fn a_pop_removes_your_bottom_disc_and_the_column_falls() {
        let rules = pop_out(PopBothLines::MoverWins);
        let mut pos = pop_out_position(&[
            ".......", ".......", ".......", "O......", "O......", "X......",
        ]);
        assert_eq!(
            rules.play(&pos, Seat(1), Move::Pop { column: 0 }),
            Err(IllegalMove::NotYourDisc { column: 0 })
        );
        assert_eq!(
            rules.play(&pos, Seat(0), Move::Pop { column: 1 }),
            Err(IllegalMove::ColumnEmpty { column: 1 })
        );
        let played = rules.play(&pos, Seat(0), Move::Pop { column: 0 }).unwrap();
        assert_eq!(
            (played.placement, played.outcome.clone()),
            (Coord::new(5, 0), None)
        );
        let before = pos.clone();
        rules.apply_move(&mut pos, played.effect(Move::Pop { column: 0 }));
        assert_eq!(
            pos,
            pop_out_position(&[
                ".......", ".......", ".......", ".......", "O......", "O......"
            ])
        );
        rules.undo_move(&mut pos, played.effect(Move::Pop { column: 0 }));
        assert_eq!(pos, before);
        let legal: Vec<Move> = rules.legal_moves(&before, Seat(0)).collect();
        assert_eq!(legal.last(), Some(&Move::Pop { column: 0 }));
        assert!(
            !rules
                .legal_moves(&before, Seat(1))
                .any(|m| matches!(m, Move::Pop { .. }))
        );
        assert!(matches!(
            RuleSet::ConnectFour(ConnectFourRules::STANDARD).play(
                &before,
                Seat(0),
                Move::Pop { column: 0 }
            ),
            Err(IllegalMove::WrongMoveKind { .. })
        ));
    }

    #[test]
    fn a_pop_that_completes_only_the_opponents_line_makes_the_opponent_win() {
        let rules = pop_out(PopBothLines::MoverWins);
        let pos = pop_out_position(&[
            ".......", ".......", ".......", ".......", "O......", "XOOO...",
        ]);
        let played = rules.play(&pos, Seat(0), Move::Pop { column: 0 }).unwrap();
        assert!(matches!(
            played.outcome,
            Some(Outcome::Win { seat: Seat(1), .. })
        ));
    }

    #[test]
    fn a_pop_that_completes_both_lines_goes_by_the_chosen_rule() {
        let pos = pop_out_position(&[
            ".......", ".......", ".......", "X......", "OXXX...", "XOOO...",
        ]);
        let mover = pop_out(PopBothLines::MoverWins)
            .play(&pos, Seat(0), Move::Pop { column: 0 })
            .unwrap();
        let Some(Outcome::Win { seat, line }) = mover.outcome else {
            panic!("a win")
        };
        assert_eq!(seat, Seat(0));
        assert_eq!(line, (0..4).map(|c| Coord::new(4, c)).collect::<Vec<_>>());
        let opponent = pop_out(PopBothLines::OpponentWins)
            .play(&pos, Seat(0), Move::Pop { column: 0 })
            .unwrap();
        let Some(Outcome::Win { seat, line }) = opponent.outcome else {
            panic!("a win")
        };
        assert_eq!(seat, Seat(1));
        assert_eq!(line, (0..4).map(|c| Coord::new(5, c)).collect::<Vec<_>>());
    }

    #[test]
    fn a_full_board_is_no_draw_in_pop_out_while_the_next_player_can_pop() {
        let small = ConnectFourRules::new(Some(2), Some(3), Some(3), 100).unwrap();
        let pos = pop_out_position(&["OX.", "XOX"]);
        let last = Move::Drop { column: 2 };
        let plain = RuleSet::ConnectFour(small)
            .play(&pos, Seat(1), last)
            .unwrap();
        assert_eq!(plain.outcome, Some(Outcome::Draw));
        let popping = RuleSet::ConnectFour(small.with_pop_out(PopBothLines::MoverWins));
        assert_eq!(popping.play(&pos, Seat(1), last).unwrap().outcome, None);
    }
}
