//! Othello (Reversi): two seats on an even-sided board (8x8 by default, 4
//! to 16), starting from the four centre discs. A move places a disc that
//! brackets at least one straight line of the opponent's discs, which flip.
//! A seat with no such move passes; the game ends when neither seat can move,
//! and the seat with more discs wins (equal counts draw). Rules as published
//! by the World Othello Federation (<https://www.worldothello.org/about/about-othello/othello-rules/official-rules/english>).

use super::{
    Board, Coord, EndReason, Game, IllegalMove, InvalidRules, Move, Outcome, Played, Seat,
};

/// The eight directions a line of flips may run.
const DIRECTIONS: [(i64, i64); 8] = [
    (-1, -1),
    (-1, 0),
    (-1, 1),
    (0, -1),
    (0, 1),
    (1, -1),
    (1, 0),
    (1, 1),
];

/// A validated Othello configuration: the board side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct OthelloRules {
    side: u32,
}

impl OthelloRules {
    /// The standard board side.
    pub const DEFAULT_SIDE: u32 = 8;

    /// Checks a configuration; `None` takes the standard 8.
    ///
    /// # Errors
    /// [`InvalidRules`] naming `size` when it is odd or outside 4 to 16.
    pub fn new(side: Option<i64>) -> Result<Self, InvalidRules> {
        let side = side.unwrap_or(Self::DEFAULT_SIDE.into());
        if !(4..=16).contains(&side) || side % 2 != 0 {
            return Err(InvalidRules::new(
                "size",
                format!("size={side} must be even, from 4 to 16"),
            ));
        }
        Ok(OthelloRules { side: side as u32 })
    }

    /// The board side.
    pub fn side(&self) -> u32 {
        self.side
    }

    /// The cell `mv` names, if it is a placement on the board.
    pub(super) fn check(&self, mv: Move) -> Result<Coord, IllegalMove> {
        let at = match mv {
            Move::Place(at) => at,
            Move::PlaceMark { .. } => {
                return Err(IllegalMove::UnexpectedMark { variant: "othello" });
            }
            // Any other kind of move, including kinds added later.
            _ => {
                return Err(IllegalMove::WrongMoveKind {
                    variant: "othello",
                    expected: "place moves",
                });
            }
        };
        at.on_board(self.side, self.side)
    }

    /// The opponent's discs that `seat` placing on the empty `at` would flip.
    fn flips(board: &Board, seat: Seat, at: Coord) -> Vec<Coord> {
        let mut flips = Vec::new();
        for (dr, dc) in DIRECTIONS {
            let (mut row, mut col) = (i64::from(at.row) + dr, i64::from(at.col) + dc);
            let mut line = Vec::new();
            while let Some(Some(owner)) = board.get(row, col) {
                if owner == seat {
                    flips.append(&mut line);
                    break;
                }
                line.push(Coord::new(row as u32, col as u32));
                row += dr;
                col += dc;
            }
        }
        flips
    }

    /// Every cell where `seat` may play, row-major.
    fn moves_of<'a>(position: &'a Board, seat: Seat) -> impl Iterator<Item = Move> + 'a {
        position
            .empty_cells()
            .filter(move |at| !Self::flips(position, seat, *at).is_empty())
            .map(Move::Place)
    }

    fn has_move(position: &Board, seat: Seat) -> bool {
        Self::moves_of(position, seat).next().is_some()
    }
}

/// The name listings show: `othello <side>x<side>`.
impl std::fmt::Display for OthelloRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "othello {0}x{0}", self.side)
    }
}

/// Othello: two seats; a disc that brackets a line flips it; a seat
/// without a move passes.
impl Game for OthelloRules {
    type Position = Board;

    /// The standard opening: seat 1 (white) on the two centre cells of the
    /// main diagonal, seat 0 (black) on the other two.
    fn initial_position(&self, _seats: usize) -> Board {
        let mut position = Board::new(self.side, self.side);
        let (a, b) = (self.side / 2 - 1, self.side / 2);
        for (row, col, seat) in [(a, a, 1), (b, b, 1), (a, b, 0), (b, a, 0)] {
            position.put(Coord::new(row, col), Seat(seat));
        }
        position
    }

    fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        self.check(mv).map(drop)
    }

    /// Checks a move and works out its flips, who must pass after it, and
    /// whether it ends the game (neither seat can move: most discs wins).
    fn play(&self, position: &Board, seat: Seat, mv: Move) -> Result<Played, IllegalMove> {
        let at = self.check(mv)?;
        if position.at(at).is_some() {
            return Err(IllegalMove::CellOccupied {
                row: at.row,
                col: at.col,
            });
        }
        let flips = Self::flips(position, seat, at);
        if flips.is_empty() {
            return Err(IllegalMove::NoFlip {
                row: at.row,
                col: at.col,
            });
        }
        let mut after = position.clone();
        after.put(at, seat);
        flips.iter().for_each(|cell| after.recolor(*cell, seat));
        let opponent = Seat(1 - seat.0);
        let (passes, outcome) = if Self::has_move(&after, opponent) {
            (Vec::new(), None)
        } else if Self::has_move(&after, seat) {
            (vec![opponent], None)
        } else {
            let mine = after.pieces().filter(|(_, s)| *s == seat).count();
            let theirs = after.filled() as usize - mine;
            let outcome = match mine.cmp(&theirs) {
                std::cmp::Ordering::Greater => Outcome::Win {
                    seat,
                    line: Vec::new(),
                },
                std::cmp::Ordering::Less => Outcome::Win {
                    seat: opponent,
                    line: Vec::new(),
                },
                std::cmp::Ordering::Equal => Outcome::Draw,
            };
            (Vec::new(), Some(outcome))
        };
        Ok(Played {
            flips,
            passes,
            ..Played::placed(mv, at, outcome)
        })
    }

    fn apply(&self, board: &mut Board, seat: Seat, played: &Played) {
        board.put(played.cell(), seat);
        played.flips.iter().for_each(|at| board.recolor(*at, seat));
    }

    /// A flipped disc was the other seat's (Othello seats two).
    fn undo(&self, board: &mut Board, seat: Seat, played: &Played) {
        let other = Seat(1 - seat.0);
        played.flips.iter().for_each(|at| board.recolor(*at, other));
        board.clear(played.cell());
    }

    fn legal_moves<'a>(&'a self, board: &'a Board, seat: Seat) -> impl Iterator<Item = Move> + 'a {
        Self::moves_of(board, seat)
    }

    /// Flips change whose a disc is.
    fn pieces_stay_put(&self) -> bool {
        false
    }

    /// The game ends when neither seat can move, on the disc count.
    fn end_reason(&self, _: &Played) -> EndReason {
        EndReason::DiscCount
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Position, RuleSet};
    use super::*;

    fn place(row: u32, col: u32) -> Move {
        Move::Place(Coord::new(row, col))
    }

    #[test]
    fn black_opens_with_the_four_standard_moves_and_each_flips_one_disc() {
        let rules = RuleSet::Othello(OthelloRules::new(None).unwrap());
        let position = rules.initial_position(2);
        let moves: Vec<Move> = rules.legal_moves(&position, Seat(0)).collect();
        assert_eq!(
            moves,
            vec![place(2, 3), place(3, 2), place(4, 5), place(5, 4)]
        );
        let played = rules.play(&position, Seat(0), place(2, 3)).unwrap();
        assert_eq!(played.flips, vec![Coord::new(3, 3)]);
        assert_eq!((played.passes.len(), played.outcome), (0, None));
    }

    #[test]
    fn a_move_that_flips_nothing_is_refused() {
        let rules = RuleSet::Othello(OthelloRules::new(None).unwrap());
        let position = rules.initial_position(2);
        assert_eq!(
            rules.play(&position, Seat(0), place(0, 0)),
            Err(IllegalMove::NoFlip { row: 0, col: 0 })
        );
        assert_eq!(
            rules.play(&position, Seat(0), place(3, 3)),
            Err(IllegalMove::CellOccupied { row: 3, col: 3 })
        );
    }

    #[test]
    fn a_wipe_out_ends_the_game_for_the_seat_with_discs() {
        // 4x4: black takes (0,1)... play until white has no disc left is
        // long; instead build a position where black's move leaves neither
        // seat a move.
        let rules = RuleSet::Othello(OthelloRules::new(Some(4)).unwrap());
        let mut position = Position::Othello(Board::new(4, 4));
        let Position::Othello(board) = &mut position else {
            unreachable!()
        };
        board.put(Coord::new(0, 0), Seat(0));
        board.put(Coord::new(0, 1), Seat(1));
        let played = rules.play(&position, Seat(0), place(0, 2)).unwrap();
        assert_eq!(played.flips, vec![Coord::new(0, 1)]);
        assert_eq!(
            played.outcome,
            Some(Outcome::Win {
                seat: Seat(0),
                line: Vec::new()
            })
        );
    }

    #[test]
    fn sizes_must_be_even_from_four_to_sixteen() {
        assert_eq!(OthelloRules::new(Some(7)).unwrap_err().field, "size");
        assert!(OthelloRules::new(Some(2)).is_err());
        assert!(OthelloRules::new(Some(18)).is_err());
        assert_eq!(OthelloRules::new(Some(16)).unwrap().side(), 16);
    }
}
