//! Wild tic-tac-toe and its m,n,k generalisation: two players, and a move
//! names both the cell and the mark (either player may place either symbol);
//! whoever completes K in a row of one mark wins, whichever mark it is.
//! (Wild tic-tac-toe as described in Berlekamp, Conway and Guy, *Winning
//! Ways for your Mathematical Plays*, and on Wikipedia's "Wild tic-tac-toe".)

use super::lines::Overline;
use super::{Board, Coord, Game, IllegalMove, InvalidRules, MnkRules, Move, Played, Seat};

/// A validated wild configuration: an m,n,k board whose two marks are the
/// two seats' symbols.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct WildRules {
    board: MnkRules,
}

impl WildRules {
    /// The marks a move may place: seat 0's symbol and seat 1's.
    pub const MARKS: [Seat; 2] = [Seat(0), Seat(1)];

    /// Checks a configuration; `None` takes tic-tac-toe's value (3, 3, 3).
    ///
    /// # Errors
    /// [`InvalidRules`] as for [`MnkRules::new`].
    pub fn new(
        rows: Option<i64>,
        cols: Option<i64>,
        k: Option<i64>,
        max_cells: u64,
    ) -> Result<Self, InvalidRules> {
        let board = MnkRules::new(
            rows.unwrap_or(3),
            cols.unwrap_or(3),
            k.unwrap_or(3),
            max_cells,
        )?;
        Ok(WildRules { board })
    }

    /// The board and run length, as an m,n,k configuration.
    pub fn board(&self) -> &MnkRules {
        &self.board
    }

    /// The cell and mark of `mv`, if it is a marked placement on the board.
    pub(super) fn check(&self, mv: Move) -> Result<(Coord, Seat), IllegalMove> {
        let Move::PlaceMark { at, mark } = mv else {
            return Err(IllegalMove::WrongMoveKind {
                variant: "wild",
                expected: "place moves with a mark",
            });
        };
        if !Self::MARKS.contains(&mark) {
            return Err(IllegalMove::NoSuchMark { mark: mark.0 });
        }
        self.board.check(Move::Place(at))?;
        Ok((at, mark))
    }
}

/// The name listings show: `wild tic-tac-toe` for 3,3,3, otherwise `wild
/// <rows>x<cols> k=<k>`.
impl std::fmt::Display for WildRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let board = &self.board;
        if *board == MnkRules::TIC_TAC_TOE {
            f.write_str("wild tic-tac-toe")
        } else {
            write!(f, "wild {}x{} k={}", board.rows(), board.cols(), board.k())
        }
    }
}

/// Wild tic-tac-toe: two seats, either mark; whoever completes a line of
/// one mark wins. Placing and taking back are the m,n,k-game's.
impl Game for WildRules {
    type Position = Board;

    fn initial_position(&self, seats: usize) -> Board {
        self.board.initial_position(seats)
    }

    fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        self.check(mv).map(drop)
    }

    fn play(&self, board: &Board, seat: Seat, mv: Move) -> Result<Played, IllegalMove> {
        let (at, _) = self.check(mv)?;
        self.board.place(board, seat, mv, at, Overline::Wins)
    }

    fn apply(&self, board: &mut Board, seat: Seat, played: &Played) {
        self.board.apply(board, seat, played);
    }

    fn undo(&self, board: &mut Board, seat: Seat, played: &Played) {
        self.board.undo(board, seat, played);
    }

    fn legal_moves<'a>(&'a self, board: &'a Board, _seat: Seat) -> impl Iterator<Item = Move> + 'a {
        board
            .empty_cells()
            .flat_map(|at| Self::MARKS.map(|mark| Move::PlaceMark { at, mark }))
    }

    fn legal_move_count(&self, board: &Board, _seat: Seat) -> usize {
        Self::MARKS.len() * board.empty_count() as usize
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Outcome, RuleSet};
    use super::*;

    fn mark(row: u32, col: u32, mark: u8) -> Move {
        Move::PlaceMark {
            at: Coord::new(row, col),
            mark: Seat(mark),
        }
    }

    #[test]
    fn completing_a_line_of_the_other_players_mark_wins_for_the_mover() {
        let rules = RuleSet::Wild(WildRules::new(None, None, None, 100).unwrap());
        let mut position = rules.initial_position(2);
        // Seat 1 (O) has placed two O marks, seat 0 (X) one O mark.
        for (seat, mv) in [(0, mark(0, 0, 1)), (1, mark(2, 2, 1)), (0, mark(1, 0, 0))] {
            let played = rules.play(&position, Seat(seat), mv).unwrap();
            assert_eq!(played.outcome, None);
            rules.apply(&mut position, Seat(seat), &played);
        }
        let last = rules.play(&position, Seat(1), mark(1, 1, 1)).unwrap();
        let Some(Outcome::Win { seat, line }) = last.outcome else {
            panic!("a win")
        };
        assert_eq!((seat, last.mv.piece(Seat(1))), (Seat(1), Seat(1)));
        assert_eq!(
            line,
            vec![Coord::new(0, 0), Coord::new(1, 1), Coord::new(2, 2)]
        );
    }

    #[test]
    fn legal_moves_list_both_marks_on_every_empty_cell() {
        let rules = RuleSet::Wild(WildRules::new(Some(2), Some(2), Some(2), 100).unwrap());
        let position = rules.initial_position(2);
        let moves: Vec<Move> = rules.legal_moves(&position, Seat(0)).collect();
        assert_eq!(moves.len(), 8);
        assert_eq!(rules.legal_move_count(&position, Seat(0)), 8);
        assert_eq!(moves[..2], [mark(0, 0, 0), mark(0, 0, 1)]);
    }

    #[test]
    fn a_move_without_a_mark_or_with_a_third_mark_is_refused() {
        let rules = WildRules::new(None, None, None, 100).unwrap();
        assert!(matches!(
            rules.check(Move::Place(Coord::new(0, 0))),
            Err(IllegalMove::WrongMoveKind { .. })
        ));
        assert_eq!(
            rules.check(mark(0, 0, 2)),
            Err(IllegalMove::NoSuchMark { mark: 2 })
        );
        assert!(matches!(
            rules.check(mark(3, 0, 0)),
            Err(IllegalMove::CellOffBoard { .. })
        ));
    }
}
