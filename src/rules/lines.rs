//! K-in-a-row detection through the cell just played.
//!
//! Only the four axes through the new piece are walked, at most K-1 cells
//! each way, so a check costs O(K) whatever the board size: no board scan.

use super::{Board, Coord, Seat};

/// The four axes as (row step, col step): horizontal, vertical, and the two
/// diagonals.
pub const AXES: [(i64, i64); 4] = [(0, 1), (1, 0), (1, 1), (1, -1)];

/// If putting `seat`'s piece on the empty cell `at` makes a run of at least
/// `k` of its pieces along some axis, returns that run (capped at K-1 cells
/// each side of `at`), ordered along the axis. The board itself is read as it
/// is: `at` counts as `seat`'s piece whatever it holds.
pub fn k_in_a_row(board: &Board, at: Coord, seat: Seat, k: u32) -> Option<Vec<Coord>> {
    let reach = i64::from(k.saturating_sub(1));
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
        if back + forward + 1 >= i64::from(k) {
            let line = (-back..=forward)
                .map(|step| Coord::new((row + step * dr) as u32, (col + step * dc) as u32))
                .collect();
            return Some(line);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board_from(rows: &[&str]) -> Board {
        let mut board = Board::new(rows.len() as u32, rows[0].len() as u32);
        for (r, line) in rows.iter().enumerate() {
            for (c, ch) in line.chars().enumerate() {
                let seat = match ch {
                    'X' => Some(Seat(0)),
                    'O' => Some(Seat(1)),
                    _ => None,
                };
                board.set(Coord::new(r as u32, c as u32), seat);
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
    fn k_of_one_wins_with_any_piece() {
        let board = Board::new(1, 1);
        assert_eq!(
            k_in_a_row(&board, Coord::new(0, 0), Seat(0), 1),
            Some(vec![Coord::new(0, 0)])
        );
    }
}
