//! Gomoku: an m,n,k-game on a 15x15 board with K = 5 by default, played
//! either freestyle (five or more in a row wins) or with the standard
//! "exactly five" rule, under which an overline (six or more) does not win
//! and the game goes on. (Rules as in the Gomocup freestyle and standard
//! gomoku rule sets; see e.g. <https://gomocup.org/detail-information/>.)

use super::lines::Overline;
use super::{Board, Coord, Game, IllegalMove, InvalidRules, MnkRules, Move, Played, Seat};

/// A validated gomoku configuration: an m,n,k board plus the overline rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct GomokuRules {
    board: MnkRules,
    overline: Overline,
}

impl GomokuRules {
    /// The default board side.
    pub const DEFAULT_SIDE: u32 = 15;
    /// The default run length.
    pub const DEFAULT_K: u32 = 5;

    /// Checks a configuration; `None` takes the default (15, 15, 5).
    ///
    /// # Errors
    /// [`InvalidRules`] as for [`MnkRules::new`].
    pub fn new(
        rows: Option<i64>,
        cols: Option<i64>,
        k: Option<i64>,
        overline: Overline,
        max_cells: u64,
    ) -> Result<Self, InvalidRules> {
        let board = MnkRules::new(
            rows.unwrap_or(Self::DEFAULT_SIDE.into()),
            cols.unwrap_or(Self::DEFAULT_SIDE.into()),
            k.unwrap_or(Self::DEFAULT_K.into()),
            max_cells,
        )?;
        Ok(GomokuRules { board, overline })
    }

    /// The board and run length, as an m,n,k configuration.
    pub fn board(&self) -> &MnkRules {
        &self.board
    }

    /// Whether an overline wins.
    pub fn overline(&self) -> Overline {
        self.overline
    }

    pub(super) fn check(&self, mv: Move) -> Result<Coord, IllegalMove> {
        self.board.check(mv).map_err(|e| match e {
            IllegalMove::WrongMoveKind { expected, .. } => IllegalMove::WrongMoveKind {
                variant: "gomoku",
                expected,
            },
            IllegalMove::UnexpectedMark { .. } => IllegalMove::UnexpectedMark { variant: "gomoku" },
            other => other,
        })
    }
}

/// The name listings show: `gomoku <rows>x<cols>`, then ` k=<k>` when K is
/// not 5 and ` freestyle` when an overline wins.
impl std::fmt::Display for GomokuRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "gomoku {}x{}", self.board.rows(), self.board.cols())?;
        if self.board.k() != Self::DEFAULT_K {
            write!(f, " k={}", self.board.k())?;
        }
        if self.overline == Overline::Wins {
            f.write_str(" freestyle")?;
        }
        Ok(())
    }
}

/// Gomoku: an m,n,k-game whose overline rule is an option. Everything but
/// the win test is the m,n,k-game's.
impl Game for GomokuRules {
    type Position = Board;

    fn initial_position(&self, seats: usize) -> Board {
        self.board.initial_position(seats)
    }

    fn seat_range(&self) -> (usize, usize) {
        self.board.seat_range()
    }

    fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        self.check(mv).map(drop)
    }

    fn play(&self, board: &Board, seat: Seat, mv: Move) -> Result<Played, IllegalMove> {
        let at = self.check(mv)?;
        self.board.place(board, seat, mv, at, self.overline)
    }

    fn apply(&self, board: &mut Board, seat: Seat, played: &Played) {
        self.board.apply(board, seat, played);
    }

    fn undo(&self, board: &mut Board, seat: Seat, played: &Played) {
        self.board.undo(board, seat, played);
    }

    fn legal_moves<'a>(&'a self, board: &'a Board, seat: Seat) -> impl Iterator<Item = Move> + 'a {
        self.board.legal_moves(board, seat)
    }

    fn legal_move_count(&self, board: &Board, seat: Seat) -> usize {
        self.board.legal_move_count(board, seat)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Outcome, RuleSet, Seat};
    use super::*;

    /// Plays `cells` alternately (black, seat 0, first) and returns the
    /// outcome of each move.
    fn play(rules: &RuleSet, cells: &[(u32, u32)]) -> Vec<Option<Outcome>> {
        let mut position = rules.initial_position(2);
        cells
            .iter()
            .enumerate()
            .map(|(i, &(r, c))| {
                let seat = Seat((i % 2) as u8);
                let played = rules
                    .play(&position, seat, Move::Place(Coord::new(r, c)))
                    .unwrap();
                rules.apply(&mut position, seat, &played);
                played.outcome
            })
            .collect()
    }

    /// Black builds X X X . X X on row 7 and fills the gap; white plays
    /// elsewhere.
    const OVERLINE: [(u32, u32); 11] = [
        (7, 0),
        (0, 0),
        (7, 1),
        (0, 2),
        (7, 2),
        (0, 4),
        (7, 4),
        (0, 6),
        (7, 5),
        (0, 8),
        (7, 3),
    ];

    #[test]
    fn an_overline_wins_freestyle_but_not_under_the_exact_five_rule() {
        let freestyle =
            RuleSet::Gomoku(GomokuRules::new(None, None, None, Overline::Wins, 1000).unwrap());
        let outcomes = play(&freestyle, &OVERLINE);
        assert!(
            matches!(outcomes.last(), Some(Some(Outcome::Win { seat: Seat(0), line })) if line.len() == 6)
        );
        let exact = RuleSet::Gomoku(
            GomokuRules::new(None, None, None, Overline::DoesNotWin, 1000).unwrap(),
        );
        assert!(play(&exact, &OVERLINE).iter().all(Option::is_none));
    }

    #[test]
    fn defaults_are_fifteen_by_fifteen_five_in_a_row() {
        let rules = GomokuRules::new(None, None, None, Overline::DoesNotWin, 1_000_000).unwrap();
        assert_eq!(
            (
                rules.board().rows(),
                rules.board().cols(),
                rules.board().k()
            ),
            (15, 15, 5)
        );
        assert_eq!(
            GomokuRules::new(Some(4), Some(4), None, Overline::Wins, 100)
                .unwrap_err()
                .field,
            "k"
        );
    }

    #[test]
    fn a_drop_is_the_wrong_kind_of_move() {
        let rules = GomokuRules::new(None, None, None, Overline::Wins, 1000).unwrap();
        assert_eq!(
            rules.check(Move::Drop { column: 0 }),
            Err(IllegalMove::WrongMoveKind {
                variant: "gomoku",
                expected: "place moves"
            })
        );
    }
}
