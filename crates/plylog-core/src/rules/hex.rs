//! Hex: two seats take turns placing a stone on an empty cell of an n×n
//! rhombus (11×11 by default); seat 0 wins by joining the top row to the
//! bottom row with a chain of its stones, seat 1 by joining the left column
//! to the right column. A full board always has exactly one such chain, so
//! Hex has no draws. (Rules as on HexWiki, <https://www.hexwiki.net/index.php/Rules>;
//! the edges, the first player and the cell numbering follow OpenSpiel's
//! `hex`, so the two can be compared move by move.)
//!
//! Cell (r, c) touches six cells: (r-1, c), (r-1, c+1), (r, c-1), (r, c+1),
//! (r+1, c-1) and (r+1, c): the rhombus leans right as rows go down.
//!
//! **Swap rule** (optional, HexWiki "Swap rule", the "swap pieces" form):
//! on seat 1's first move it may play [`Move::Swap`] instead of a stone.
//! Seat 0's stone at (r, c) then leaves the board and seat 1 gets a stone at
//! the mirrored cell (c, r), which is the same position with the colours
//! exchanged; seat 0 moves next. The log records the swap as a move of its
//! own kind, whose placement is the mirrored cell.
//!
//! **Win detection** is a union-find over the cells plus four virtual edge
//! nodes (Tarjan, "Efficiency of a good but not linear set union
//! algorithm", JACM 1975), with union by rank and no path compression so
//! that every union can be rolled back (a stack of the changes each move
//! made): checking a move reads the roots of its at most six neighbours and
//! costs O(log n²) whatever the board size; undo restores the sets exactly.
//! No flood fill.

use super::mnk::check_board;
use super::{
    Board, Coord, EndReason, Game, GamePosition, IllegalMove, InvalidRules, Move, Outcome, Played,
    Seat, check_landing,
};

/// The six neighbours of a cell as (row step, col step).
const NEIGHBOURS: [(i64, i64); 6] = [(-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0)];

/// A validated Hex configuration: an n×n board, with or without the swap
/// rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HexRules {
    size: u32,
    swap: bool,
}

impl HexRules {
    /// The standard board side.
    pub const DEFAULT_SIZE: u32 = 11;

    /// Checks a configuration: `size` (absent: 11) from 2 up to what
    /// `max_cells` allows; `swap` turns the swap rule on.
    ///
    /// # Errors
    /// [`InvalidRules`] naming `size` when it is below 2 or the board has
    /// more than `max_cells` cells.
    pub fn new(size: Option<i64>, swap: bool, max_cells: u64) -> Result<Self, InvalidRules> {
        let size = size.unwrap_or(Self::DEFAULT_SIZE.into());
        if size < 2 {
            return Err(InvalidRules::new(
                "size",
                format!("size={size} must be at least 2"),
            ));
        }
        let (size, _, _) = check_board(size, size, 1, max_cells)
            .map_err(|e| InvalidRules { field: "size", ..e })?;
        // Union-find nodes are u32: the cells and the four edges.
        if u64::from(size) * u64::from(size) + 4 > u64::from(u32::MAX) {
            return Err(InvalidRules::new(
                "size",
                format!("size={size} has more cells than the union-find can number"),
            ));
        }
        Ok(HexRules { size, swap })
    }

    /// The board side.
    pub fn size(&self) -> u32 {
        self.size
    }

    /// Whether seat 1 may swap on its first move.
    pub fn swap(&self) -> bool {
        self.swap
    }

    /// The cell `mv` names, if it is a placement on the board (or a swap,
    /// when the rule is on: `None`).
    fn check(&self, mv: Move) -> Result<Option<Coord>, IllegalMove> {
        let at = match mv {
            Move::Place(at) => at,
            Move::Swap if self.swap => return Ok(None),
            Move::PlaceMark { .. } => return Err(IllegalMove::UnexpectedMark { variant: "hex" }),
            Move::Drop { .. }
            | Move::Pop { .. }
            | Move::Roll
            | Move::Swap
            | Move::Chess(_)
            | Move::ChessText(_) => {
                return Err(IllegalMove::WrongMoveKind {
                    variant: "hex",
                    expected: if self.swap {
                        "place or swap moves"
                    } else {
                        "place moves"
                    },
                });
            }
        };
        at.on_board(self.size, self.size).map(Some)
    }

    /// Seat 0's only stone, when `seat` may swap it now: seat 1, on a board
    /// holding exactly one stone, seat 0's.
    fn swappable(position: &HexPosition, seat: Seat) -> Option<Coord> {
        if seat != Seat(1) || position.board.filled() != 1 {
            return None;
        }
        position
            .board
            .pieces()
            .find(|(_, owner)| *owner == Seat(0))
            .map(|(at, _)| at)
    }
}

/// The mirror image of `at` across the board's long diagonal: (c, r).
fn mirror(at: Coord) -> Coord {
    Coord::new(at.col, at.row)
}

/// A Hex position: the board and the union-find of connected stones, with
/// the changes each move made so that undo can roll them back.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct HexPosition {
    board: Board,
    /// Parent of each node: the n² cells row-major, then the four edges
    /// (top, bottom, left, right). A root is its own parent.
    parent: Vec<u32>,
    /// Upper bound on each root's tree height (union by rank).
    rank: Vec<u8>,
    /// (node, its parent before, its rank before) for every change, in
    /// order; `moves` marks where each move's changes start.
    changes: Vec<(u32, u32, u8)>,
    moves: Vec<usize>,
}

impl HexPosition {
    /// The empty n×n board.
    fn empty(size: u32) -> Self {
        let nodes = size * size + 4;
        HexPosition {
            board: Board::new(size, size),
            parent: (0..nodes).collect(),
            rank: vec![0; nodes as usize],
            changes: Vec::new(),
            moves: Vec::new(),
        }
    }

    /// The node of the edge `index` (0 top, 1 bottom, 2 left, 3 right).
    fn edge(&self, index: u32) -> u32 {
        self.board.rows() * self.board.cols() + index
    }

    /// The node of a cell.
    fn node(&self, at: Coord) -> u32 {
        at.row * self.board.cols() + at.col
    }

    /// The root of `node`'s set: O(log nodes) by union by rank.
    fn find(&self, mut node: u32) -> u32 {
        while self.parent[node as usize] != node {
            node = self.parent[node as usize];
        }
        node
    }

    /// The nodes a stone of `seat` on `at` joins: its own-colour
    /// neighbours and the edges of `seat`'s own that it touches.
    fn joins(&self, at: Coord, seat: Seat) -> impl Iterator<Item = u32> + '_ {
        let last = self.board.rows() - 1;
        let (row, col) = (i64::from(at.row), i64::from(at.col));
        let stones = NEIGHBOURS.iter().filter_map(move |(dr, dc)| {
            let (r, c) = (row + dr, col + dc);
            (self.board.get(r, c) == Some(Some(seat)))
                .then(|| self.node(Coord::new(r as u32, c as u32)))
        });
        let edges = match seat {
            Seat(0) => [(at.row == 0, 0), (at.row == last, 1)],
            _ => [(at.col == 0, 2), (at.col == last, 3)],
        };
        let edges = edges
            .into_iter()
            .filter(|(touches, _)| *touches)
            .map(|(_, edge)| self.edge(edge));
        stones.chain(edges)
    }

    /// The two edge nodes `seat` must join.
    fn goal(&self, seat: Seat) -> (u32, u32) {
        match seat {
            Seat(0) => (self.edge(0), self.edge(1)),
            _ => (self.edge(2), self.edge(3)),
        }
    }

    /// Whether a stone of `seat` on the empty `at` would join `seat`'s two
    /// edges: both edges' roots are among the roots the stone joins.
    fn would_connect(&self, at: Coord, seat: Seat) -> bool {
        let (a, b) = self.goal(seat);
        let (a, b) = (self.find(a), self.find(b));
        let (mut found_a, mut found_b) = (false, false);
        for root in self.joins(at, seat).map(|node| self.find(node)) {
            found_a |= root == a;
            found_b |= root == b;
        }
        found_a && found_b
    }

    /// Links the roots of `a` and `b` by rank, recording the change.
    fn union(&mut self, a: u32, b: u32) {
        let (a, b) = (self.find(a), self.find(b));
        if a == b {
            return;
        }
        let (low, high) = if self.rank[a as usize] < self.rank[b as usize] {
            (a, b)
        } else {
            (b, a)
        };
        self.changes
            .push((low, self.parent[low as usize], self.rank[low as usize]));
        self.parent[low as usize] = high;
        if self.rank[low as usize] == self.rank[high as usize] {
            self.changes
                .push((high, self.parent[high as usize], self.rank[high as usize]));
            self.rank[high as usize] += 1;
        }
    }

    /// Puts `seat`'s stone on `at` and joins it to its sets, as one move.
    fn place(&mut self, at: Coord, seat: Seat) {
        self.moves.push(self.changes.len());
        self.board.put(at, seat);
        let node = self.node(at);
        let joins: Vec<u32> = self.joins(at, seat).collect();
        joins.into_iter().for_each(|other| self.union(node, other));
    }

    /// Takes the last placed stone, on `at`, back off the board and rolls
    /// its unions back.
    fn unplace(&mut self, at: Coord) {
        let start = self.moves.pop().expect("a stone to take back");
        for (node, parent, rank) in self.changes.drain(start..).rev() {
            self.parent[node as usize] = parent;
            self.rank[node as usize] = rank;
        }
        self.board.clear(at);
    }
}

impl GamePosition for HexPosition {
    fn board(&self) -> Option<&Board> {
        Some(&self.board)
    }

    fn heap_bytes(&self) -> usize {
        self.board.heap_bytes()
            + 5 * self.parent.len()
            + 9 * self.changes.capacity()
            + 8 * self.moves.capacity()
    }
}

/// The name listings show: `hex <size>x<size>`, then ` swap` with the swap
/// rule.
impl std::fmt::Display for HexRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "hex {0}x{0}", self.size)?;
        if self.swap {
            f.write_str(" swap")?;
        }
        Ok(())
    }
}

/// Hex: two seats, a stone on any empty cell (or the swap), joining one's
/// own two edges wins.
impl Game for HexRules {
    type Position = HexPosition;

    fn initial_position(&self, _seats: usize) -> HexPosition {
        HexPosition::empty(self.size)
    }

    fn check_move(&self, mv: Move) -> Result<(), IllegalMove> {
        self.check(mv).map(drop)
    }

    fn play(&self, position: &HexPosition, seat: Seat, mv: Move) -> Result<Played, IllegalMove> {
        let Some(at) = self.check(mv)? else {
            // The swapped stone joins the same edges, mirrored: seat 1
            // cannot win on it (a one-cell board is refused).
            let taken = Self::swappable(position, seat).ok_or(IllegalMove::SwapNotAllowed)?;
            return Ok(Played::placed(mv, mirror(taken), None));
        };
        if position.board.at(at).is_some() {
            return Err(IllegalMove::CellOccupied {
                row: at.row,
                col: at.col,
            });
        }
        let outcome = position.would_connect(at, seat).then(|| Outcome::Win {
            seat,
            line: Vec::new(),
        });
        Ok(Played::placed(mv, at, outcome))
    }

    fn apply(&self, position: &mut HexPosition, seat: Seat, played: &Played) {
        let at = played.cell();
        if played.mv == Move::Swap {
            position.unplace(mirror(at));
        }
        position.place(at, seat);
    }

    fn undo(&self, position: &mut HexPosition, _seat: Seat, played: &Played) {
        let at = played.cell();
        position.unplace(at);
        if played.mv == Move::Swap {
            position.place(mirror(at), Seat(0));
        }
    }

    /// A swap must take seat 0's only stone, at the mirror of its
    /// placement; a stone lands on an empty cell.
    fn check_played(
        &self,
        position: &HexPosition,
        seat: Seat,
        played: &Played,
    ) -> Result<(), String> {
        match (played.mv, played.placement) {
            (Move::Swap, Some(at)) if Self::swappable(position, seat) == Some(mirror(at)) => Ok(()),
            (Move::Swap, _) => Err("a swap that does not mirror seat 0's only stone".into()),
            _ => check_landing(Some(&position.board), played, None),
        }
    }

    /// Row-major empty cells, then the swap where it is allowed.
    fn legal_moves<'a>(
        &'a self,
        position: &'a HexPosition,
        seat: Seat,
    ) -> impl Iterator<Item = Move> + 'a {
        let swap = (self.swap && Self::swappable(position, seat).is_some()).then_some(Move::Swap);
        position.board.empty_cells().map(Move::Place).chain(swap)
    }

    /// A swap takes seat 0's stone off the board, so with the swap rule on
    /// the pieces must be read off the board, not off the moves.
    fn pieces_stay_put(&self) -> bool {
        !self.swap
    }

    /// Hex has no draws: a game ends when a seat joins its sides.
    fn end_reason(&self, _: &Played) -> EndReason {
        EndReason::Connection
    }

    fn legal_move_count(&self, position: &HexPosition, seat: Seat) -> usize {
        let swap = self.swap && Self::swappable(position, seat).is_some();
        position.board.empty_count() as usize + usize::from(swap)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn play(rules: &HexRules, position: &mut HexPosition, seat: u8, mv: Move) -> Played {
        let played = rules.play(position, Seat(seat), mv).unwrap();
        rules.apply(position, Seat(seat), &played);
        played
    }

    fn place(row: u32, col: u32) -> Move {
        Move::Place(Coord::new(row, col))
    }

    #[test]
    fn a_chain_along_the_anti_diagonal_joins_top_to_bottom_but_the_diagonal_does_not() {
        let rules = HexRules::new(Some(3), false, 100).unwrap();
        let mut position = rules.initial_position(2);
        // Seat 0 on (0,2), (1,1), (2,0): neighbours, a chain top to bottom.
        let moves = [(0, 2), (0, 0), (1, 1), (1, 0)];
        for (i, (r, c)) in moves.into_iter().enumerate() {
            assert_eq!(
                play(&rules, &mut position, (i % 2) as u8, place(r, c)).outcome,
                None
            );
        }
        let last = play(&rules, &mut position, 0, place(2, 0));
        assert_eq!(
            last.outcome,
            Some(Outcome::Win {
                seat: Seat(0),
                line: Vec::new()
            })
        );
        // (0,0), (1,1), (2,2) are not neighbours in a row: no chain.
        let mut position = rules.initial_position(2);
        for (i, (r, c)) in [(0, 0), (0, 1), (1, 1), (1, 0)].into_iter().enumerate() {
            play(&rules, &mut position, (i % 2) as u8, place(r, c));
        }
        assert_eq!(
            rules.play(&position, Seat(0), place(2, 2)).unwrap().outcome,
            None
        );
    }

    #[test]
    fn seat_one_wins_left_to_right_and_undo_rolls_the_sets_back() {
        let rules = HexRules::new(Some(2), false, 100).unwrap();
        let mut position = rules.initial_position(2);
        let start = position.clone();
        let first = play(&rules, &mut position, 0, place(0, 0));
        let before = position.clone();
        let join = play(&rules, &mut position, 1, place(1, 0));
        assert_eq!(join.outcome, None);
        let row = play(&rules, &mut position, 0, place(0, 1));
        // Seat 0's (0,0)-(0,1) is a row, not top to bottom; seat 1's
        // (1,0)-(1,1) joins left to right.
        let win = rules.play(&position, Seat(1), place(1, 1)).unwrap();
        assert!(matches!(
            win.outcome,
            Some(Outcome::Win { seat: Seat(1), .. })
        ));
        rules.undo(&mut position, Seat(0), &row);
        rules.undo(&mut position, Seat(1), &join);
        assert_eq!(position, before);
        rules.undo(&mut position, Seat(0), &first);
        assert_eq!(position, start);
    }

    #[test]
    fn the_swap_mirrors_seat_zeros_first_stone_once_and_undo_restores_it() {
        let rules = HexRules::new(Some(5), true, 100).unwrap();
        let mut position = rules.initial_position(2);
        assert_eq!(
            rules.play(&position, Seat(1), Move::Swap),
            Err(IllegalMove::SwapNotAllowed)
        );
        play(&rules, &mut position, 0, place(1, 3));
        let before = position.clone();
        assert_eq!(
            rules.legal_moves(&position, Seat(1)).last(),
            Some(Move::Swap)
        );
        assert_eq!(rules.legal_move_count(&position, Seat(1)), 25);
        let swap = play(&rules, &mut position, 1, Move::Swap);
        assert_eq!(swap.placement, Some(Coord::new(3, 1)));
        assert_eq!(
            position.board.pieces().collect::<Vec<_>>(),
            vec![(Coord::new(3, 1), Seat(1))]
        );
        assert_eq!(
            rules.check_played(&before, Seat(1), &swap),
            Ok(()),
            "the recorded swap fits the position it was played on"
        );
        assert_eq!(
            rules.play(&position, Seat(0), Move::Swap),
            Err(IllegalMove::SwapNotAllowed)
        );
        assert!(
            !rules
                .legal_moves(&position, Seat(0))
                .any(|m| m == Move::Swap)
        );
        rules.undo(&mut position, Seat(1), &swap);
        assert_eq!(position, before);
        let off = HexRules::new(Some(5), false, 100).unwrap();
        assert!(matches!(
            off.check_move(Move::Swap),
            Err(IllegalMove::WrongMoveKind { .. })
        ));
    }

    #[test]
    fn sizes_run_from_two_to_the_cell_limit() {
        assert_eq!(HexRules::new(None, false, 1000).unwrap().size(), 11);
        assert_eq!(
            HexRules::new(Some(1), false, 1000).unwrap_err().field,
            "size"
        );
        assert_eq!(
            HexRules::new(Some(32), false, 1000).unwrap_err().field,
            "size"
        );
        assert!(HexRules::new(Some(1000), false, 1_000_000).is_ok());
    }
}
