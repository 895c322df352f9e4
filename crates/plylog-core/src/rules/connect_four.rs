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
//! that count from [`super::GamePosition::digest`].

use super::lines::{Overline, placement_outcome, winning_run};
use super::mnk::check_board;
use super::{
    Board, Coord, Game, GamePosition, IllegalMove, InvalidRules, MAX_SEATS, Move, Outcome, Played,
    Seat, check_landing,
};

/// A Connect Four position: the board and how many discs each column holds,
/// so a drop finds its row in O(1).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ConnectFourPosition {
    board: Board,
    /// Discs per column; a column's lowest empty row is `rows - 1 - height`.
    heights: Vec<u32>,
}

impl ConnectFourPosition {
    /// The empty rows x cols board.
    fn empty(rows: u32, cols: u32) -> Self {
        ConnectFourPosition {
            board: Board::new(rows, cols),
            heights: vec![0; cols as usize],
        }
    }

    /// How many discs column `col` holds (0 when `col` is off the board).
    pub fn height(&self, col: u32) -> u32 {
        self.heights.get(col as usize).copied().unwrap_or(0)
    }

    /// Puts `seat`'s disc on `at`, the lowest empty cell of its column.
    fn put(&mut self, at: Coord, seat: Seat) {
        self.board.put(at, seat);
        self.heights[at.col as usize] += 1;
    }

    /// Takes the top disc of `at`'s column away: the inverse of
    /// [`ConnectFourPosition::put`].
    fn clear(&mut self, at: Coord) {
        self.board.clear(at);
        self.heights[at.col as usize] -= 1;
    }

    /// Removes the bottom disc of column `col` and lets the discs above fall
    /// one row.
    fn pop(&mut self, col: u32) {
        self.restack(col, |discs| {
            discs.remove(0);
        });
    }

    /// Puts `seat`'s disc back under column `col`, lifting the discs above
    /// one row: the inverse of [`ConnectFourPosition::pop`].
    fn unpop(&mut self, col: u32, seat: Seat) {
        self.restack(col, |discs| discs.insert(0, seat));
    }

    /// Takes column `col`'s discs out (bottom first), lets `change` edit the
    /// stack, and puts them back from the bottom row up. O(rows).
    fn restack(&mut self, col: u32, change: impl FnOnce(&mut Vec<Seat>)) {
        let rows = self.board.rows();
        let mut discs = Vec::with_capacity(rows as usize);
        while self.height(col) > 0 {
            let top = Coord::new(rows - self.height(col), col);
            discs.push(self.board.at(top).expect("a gravity column has no gaps"));
            self.clear(top);
        }
        discs.reverse();
        change(&mut discs);
        for (i, seat) in discs.into_iter().enumerate() {
            self.put(Coord::new(rows - 1 - i as u32, col), seat);
        }
    }
}

impl GamePosition for ConnectFourPosition {
    fn board(&self) -> Option<&Board> {
        Some(&self.board)
    }

    fn heap_bytes(&self) -> usize {
        self.board.heap_bytes() + 4 * self.heights.len()
    }
}

/// Who wins when a pop completes lines for both players at once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PopBothLines {
    /// The player who popped (the default).
    MoverWins,
    /// The other player.
    OpponentWins,
}

/// A validated Connect Four configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    fn landing(&self, position: &ConnectFourPosition, column: u32) -> Option<Coord> {
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
    fn play_pop(
        &self,
        position: &ConnectFourPosition,
        seat: Seat,
        column: u32,
    ) -> Result<Played, IllegalMove> {
        let bottom = Coord::new(self.rows - 1, column);
        match position.board.at(bottom) {
            None => return Err(IllegalMove::ColumnEmpty { column }),
            Some(owner) if owner != seat => return Err(IllegalMove::NotYourDisc { column }),
            Some(_) => {}
        }
        let mut after = position.clone();
        after.pop(column);
        let height = after.height(column);
        let after = &after.board;
        let opponent = Seat(1 - seat.0);
        let mut lines = [None, None];
        for row in self.rows - height..self.rows {
            let at = Coord::new(row, column);
            if let Some(owner) = after.at(at) {
                let slot = &mut lines[owner.index()];
                if slot.is_none() {
                    *slot = winning_run(after, at, owner, self.k, Overline::Wins);
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
        Ok(Played::placed(Move::Pop { column }, bottom, outcome))
    }

    /// Whether `seat` could pop now (Pop Out, a disc of theirs in the
    /// bottom row).
    fn can_pop(&self, position: &ConnectFourPosition, seat: Seat) -> bool {
        self.pop_out.is_some()
            && (0..self.cols)
                .any(|col| position.board.at(Coord::new(self.rows - 1, col)) == Some(seat))
    }

    /// Checks a drop into `column` and works out what it does: K in a row
    /// through the landing cell wins; the last empty cell draws, except in
    /// Pop Out while the opponent can still pop.
    fn play_drop(
        &self,
        position: &ConnectFourPosition,
        seat: Seat,
        column: u32,
    ) -> Result<Played, IllegalMove> {
        let at = self
            .landing(position, column)
            .ok_or(IllegalMove::ColumnFull { column })?;
        let mut outcome =
            placement_outcome(&position.board, at, seat, seat, self.k, Overline::Wins);
        if outcome == Some(Outcome::Draw) && self.pop_out.is_some() {
            let mut after = position.clone();
            after.put(at, seat);
            if self.can_pop(&after, Seat(1 - seat.0)) {
                outcome = None;
            }
        }
        Ok(Played::placed(Move::Drop { column }, at, outcome))
    }
}

/// Connect Four and Pop Out: drops fall to the lowest empty row; pops take
/// the mover's bottom disc out. Up to [`MAX_SEATS`] seats without Pop Out,
/// two with it.
/// The name listings show: `connect-four` for the standard 6x7 board,
/// otherwise `connect-four <rows>x<cols> k=<k>`; ` pop-out` follows when
/// pops are allowed.
impl std::fmt::Display for ConnectFourRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connect-four")?;
        let std = Self::STANDARD;
        if (self.rows, self.cols, self.k) != (std.rows, std.cols, std.k) {
            write!(f, " {}x{} k={}", self.rows, self.cols, self.k)?;
        }
        if self.pop_out.is_some() {
            f.write_str(" pop-out")?;
        }
        Ok(())
    }
}

impl Game for ConnectFourRules {
    type Position = ConnectFourPosition;

    fn initial_position(&self, _seats: usize) -> ConnectFourPosition {
        ConnectFourPosition::empty(self.rows, self.cols)
    }

    fn seat_range(&self) -> (usize, usize) {
        match self.pop_out {
            Some(_) => (2, 2),
            None => (2, MAX_SEATS),
        }
    }

    fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        self.check(mv).map(drop)
    }

    fn play(
        &self,
        position: &ConnectFourPosition,
        seat: Seat,
        mv: Move,
    ) -> Result<Played, IllegalMove> {
        let column = self.check(mv)?;
        match mv {
            Move::Pop { .. } => self.play_pop(position, seat, column),
            _ => self.play_drop(position, seat, column),
        }
    }

    fn apply(&self, position: &mut ConnectFourPosition, seat: Seat, played: &Played) {
        match played.mv {
            Move::Pop { column } => position.pop(column),
            _ => position.put(played.cell(), seat),
        }
    }

    fn undo(&self, position: &mut ConnectFourPosition, seat: Seat, played: &Played) {
        match played.mv {
            Move::Pop { column } => position.unpop(column, seat),
            _ => position.clear(played.cell()),
        }
    }

    /// A drop lands on its column's lowest empty cell; a pop takes the
    /// mover's own disc from the bottom of its column. Anything else would
    /// break the columns' stacking, so it is refused here.
    fn check_played(
        &self,
        position: &ConnectFourPosition,
        seat: Seat,
        played: &Played,
    ) -> Result<(), String> {
        let (cell, expected) = match played.mv {
            Move::Pop { column } => (Some(Coord::new(self.rows - 1, column)), Some(seat)),
            Move::Drop { column } => (self.landing(position, column), None),
            _ => (None, None),
        };
        if cell.is_none() || played.placement != cell {
            return Err(format!(
                "{:?} recorded at {:?}, not where it lands",
                played.mv, played.placement
            ));
        }
        check_landing(Some(&position.board), played, expected)
    }

    fn legal_moves<'a>(
        &'a self,
        position: &'a ConnectFourPosition,
        seat: Seat,
    ) -> impl Iterator<Item = Move> + 'a {
        let (rows, cols, pop_out) = (self.rows, self.cols, self.pop_out.is_some());
        let drops = (0..cols)
            .filter(move |c| position.height(*c) < rows)
            .map(|column| Move::Drop { column });
        let pops = (0..cols)
            .filter(move |c| pop_out && position.board.at(Coord::new(rows - 1, *c)) == Some(seat))
            .map(|column| Move::Pop { column });
        drops.chain(pops)
    }

    /// Pops repeat positions, so Pop Out draws on a third repetition.
    fn draws_on_repetition(&self) -> bool {
        self.pop_out.is_some()
    }

    /// Pops move discs down their column.
    fn pieces_stay_put(&self) -> bool {
        self.pop_out.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Position, RuleSet};
    use super::*;

    fn drop(rules: &RuleSet, pos: &mut Position, seat: u8, column: u32) -> Option<Outcome> {
        let played = rules.play(pos, Seat(seat), Move::Drop { column }).unwrap();
        rules.apply(pos, Seat(seat), &played);
        played.outcome
    }

    #[test]
    fn discs_fall_to_the_lowest_empty_row() {
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        let mut pos = rules.initial_position(2);
        let first = rules.play(&pos, Seat(0), Move::Drop { column: 3 }).unwrap();
        assert_eq!(first.placement, Some(Coord::new(5, 3)));
        rules.apply(&mut pos, Seat(0), &first);
        let second = rules.play(&pos, Seat(1), Move::Drop { column: 3 }).unwrap();
        assert_eq!(second.placement, Some(Coord::new(4, 3)));
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
        let mut pos = ConnectFourPosition::empty(rows.len() as u32, rows[0].len() as u32);
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
        Position::ConnectFour(pos)
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
            (Some(Coord::new(5, 0)), None)
        );
        let before = pos.clone();
        rules.apply(&mut pos, Seat(0), &played);
        assert_eq!(
            pos,
            pop_out_position(&[
                ".......", ".......", ".......", ".......", "O......", "O......"
            ])
        );
        rules.undo(&mut pos, Seat(0), &played);
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
