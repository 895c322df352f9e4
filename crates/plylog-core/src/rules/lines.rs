//! K-in-a-row detection through the cell just played.
//!
//! Only the four axes through the new piece are walked, at most K-1 cells
//! each way, so a check costs O(K) whatever the board size: no board scan.

use super::{Board, Coord, Outcome, Seat};

/// The four axes as (row step, col step): horizontal, vertical, and the two
/// diagonals.
pub const AXES: [(i64, i64); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];

/// Whether a run longer than K (an overline) wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum Overline {
    /// K or more in a row wins (freestyle gomoku, m,n,k-games, Connect Four).
    Wins,
    /// Only exactly K in a row wins; a longer run does not end the game
    /// (standard gomoku's "exactly five" rule).
    DoesNotWin,
}

/// If putting `seat`'s piece on the empty cell `at` makes a run of at least
/// `k` of its pieces along some axis, returns that run (capped at K-1 cells
/// each side of `at`), ordered along the axis. The board itself is read as it
/// is: `at` counts as `seat`'s piece whatever it holds.
pub fn k_in_a_row(board: &Board, at: Coord, seat: Seat, k: u32) -> Option<Vec<Coord>> {
    winning_run(board, at, seat, k, Overline::Wins)
}

/// The winning run through `at` under `overline`: as [`k_in_a_row`] when
/// overlines win; otherwise only a run of exactly `k` counts (each axis is
/// walked up to K cells each way, enough to tell K from K+1), and it is
/// returned whole. O(K) either way.
pub fn winning_run(
    board: &Board,
    at: Coord,
    seat: Seat,
    k: u32,
    overline: Overline,
) -> Option<Vec<Coord>> {
    let reach = i64::from(match overline {
        Overline::Wins => k.saturating_sub(1),
        Overline::DoesNotWin => k,
    });
    let (row, col) = (i64::from(at.row), i64::from(at.col));
    for (dr, dc) in AXES {
        let count = |sign: i64| {
            (1..=reach)
                .take_while(|step| {
                    board.get(row + sign * step * dr, col + sign * step * dc) == Some(Some(seat))
                })
                .count() as i64
        };
        let (back, forward) = (count(-1), count(1));
        let len = back + forward + 1;
        let wins = match overline {
            Overline::Wins => len >= i64::from(k),
            Overline::DoesNotWin => len == i64::from(k),
        };
        if wins {
            let line = (-back..=forward)
                .map(|step| Coord::new((row + step * dr) as u32, (col + step * dc) as u32))
                .collect();
            return Some(line);
        }
    }
    None
}

/// What putting `piece` on the empty cell `at` does for `seat`, the mover:
/// a win for `seat` when it completes a winning run of `piece` through `at`
/// (see [`winning_run`]; in wild games the piece may be the other seat's
/// mark), else a draw when it fills the last empty cell, else nothing. The
/// board is read before the piece is put down. O(K).
pub fn placement_outcome(
    board: &Board,
    at: Coord,
    seat: Seat,
    piece: Seat,
    k: u32,
    overline: Overline,
) -> Option<Outcome> {
    if let Some(line) = winning_run(board, at, piece, k, overline) {
        return Some(Outcome::Win { seat, line });
    }
    (board.filled() + 1 >= board.cells()).then_some(Outcome::Draw)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board_from(rows: &[&str]) -> Board {
        let mut board = Board::new(rows.len() as u32, rows[0].len() as u32);
        for (r, line) in rows.iter().enumerate() {
            for (c, ch) in line.chars().enumerate() {
                let seat = match ch {
                    'X' => Seat(0),
                    'O' => Seat(1),
                    _ => continue,
                };
                board.put(Coord::new(r as u32, c as u32), seat);
            }
        }
        board
    }

    #[test]
    fn a_horizontal_run_is_found_through_its_middle() {
        let board = board_from(&["XX.X", "....", "...."]);
        let line = k_in_a_row(&board, Coord::new(0, 2), Seat(0), 4).unwrap();
        assert_eq!(line, (0..4).map(|c| Coord::new(0, c)).collect::<Vec<_>>());
    }

    #[test]
    fn both_diagonals_are_found() {
        let board = board_from(&["X..O", ".XO.", "....", "O..."]);
        assert!(k_in_a_row(&board, Coord::new(2, 2), Seat(0), 3).is_some());
        assert!(k_in_a_row(&board, Coord::new(2, 1), Seat(1), 4).is_some());
        assert!(k_in_a_row(&board, Coord::new(2, 1), Seat(0), 3).is_none());
    }

    #[test]
    fn a_vertical_run_stops_at_the_board_edge_and_at_other_pieces() {
        let board = board_from(&["X", "X", "O", "X"]);
        assert!(k_in_a_row(&board, Coord::new(2, 0), Seat(0), 4).is_some());
        assert!(k_in_a_row(&board, Coord::new(2, 0), Seat(0), 5).is_none());
        assert!(k_in_a_row(&board, Coord::new(2, 0), Seat(1), 2).is_none());
    }

    #[test]
    fn an_overline_wins_only_when_overlines_win() {
        // X X X . X X : filling (0,3) makes six in a row.
        let board = board_from(&["XXX.XX", "......"]);
        let at = Coord::new(0, 3);
        assert_eq!(
            winning_run(&board, at, Seat(0), 5, Overline::Wins).map(|l| l.len()),
            Some(6)
        );
        assert_eq!(
            winning_run(&board, at, Seat(0), 5, Overline::DoesNotWin),
            None
        );
        // X X . X X X O: five exactly, bounded by the edge and by O.
        let board = board_from(&["XX.XX", "....."]);
        let line = winning_run(&board, Coord::new(0, 2), Seat(0), 5, Overline::DoesNotWin).unwrap();
        assert_eq!(line, (0..5).map(|c| Coord::new(0, c)).collect::<Vec<_>>());
    }

    #[test]
    fn an_exact_five_on_one_axis_wins_despite_an_overline_on_another() {
        let board = board_from(&["..X...", "..X...", "XX.XXX", "..X...", "..X...", "......"]);
        // Row 2 becomes six (overline); column 2 becomes exactly five.
        let line = winning_run(&board, Coord::new(2, 2), Seat(0), 5, Overline::DoesNotWin).unwrap();
        assert_eq!(line, (0..5).map(|r| Coord::new(r, 2)).collect::<Vec<_>>());
    }

    #[test]
    fn k_of_one_wins_with_any_piece() {
        let board = Board::new(1, 1);
        assert_eq!(
            k_in_a_row(&board, Coord::new(0, 0), Seat(0), 1),
            Some(vec![Coord::new(0, 0)])
        );
    }
}
