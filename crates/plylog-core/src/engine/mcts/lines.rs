//! The K-in-a-row games' helper, [`Lines`]: the cells the search looks at
//! (near the stones on a large board) and, for each piece, the cells where
//! one more of it completes a line, kept up to date move by move so that a
//! seat takes its win and blocks the next seat's without listing every
//! move.

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use crate::engine::Node;
use crate::rules::lines::AXES;
use crate::rules::{Board, Coord, Move, Outcome, Seat};

/// Boards of more cells than this, in the K-in-a-row games, are searched
/// only near the stones.
const LOCAL_ABOVE: u64 = 64;

/// How far from a stone (in king steps) a cell is near it.
const REACH: i64 = 2;

/// What the K-in-a-row games keep beside the node: the cells to search,
/// and for each piece the cells where one more of it completes K in a row.
#[derive(Debug, Clone)]
pub(super) struct Lines {
    rows: i64,
    cols: i64,
    k: i64,
    /// Wild: either mark may be placed by either seat.
    wild: bool,
    /// For boards searched near the stones only: how many stones are
    /// within [`REACH`] of each cell (row-major). `None`: every cell.
    pub(super) near: Option<Vec<u16>>,
    /// The cells to search (row-major flat indices): every cell near a
    /// stone, or every cell; some may have filled since (they are dropped
    /// when met).
    pub(super) cells: Vec<u32>,
    /// By piece (seat index): cells that were empty when a window of K
    /// cells through them held K-1 of that piece and nothing else; dropped
    /// when met filled or not winning.
    pub(super) threats: Vec<Vec<u32>>,
    /// A buffer for [`Lines::find_threats`].
    scratch: Vec<bool>,
}

impl Lines {
    pub(super) fn new(root: &Node<'_>, k: u32, wild: bool) -> Self {
        let board = root.position().board().expect("a board");
        let (rows, cols) = (i64::from(board.rows()), i64::from(board.cols()));
        let local = board.cells() > LOCAL_ABOVE;
        let mut lines = Lines {
            rows,
            cols,
            k: i64::from(k),
            wild,
            near: local.then(|| vec![0; board.cells() as usize]),
            cells: Vec::new(),
            threats: vec![Vec::new(); root.seats().max(2)],
            scratch: Vec::new(),
        };
        let pieces: Vec<(Coord, Seat)> = board.pieces().collect();
        if let Some(near) = &mut lines.near {
            for (at, _) in &pieces {
                let (row, col) = (i64::from(at.row), i64::from(at.col));
                for r in (row - REACH).max(0)..=(row + REACH).min(rows - 1) {
                    for c in (col - REACH).max(0)..=(col + REACH).min(cols - 1) {
                        near[(r * cols + c) as usize] += 1;
                    }
                }
            }
        }
        for at in board.empty_cells() {
            let index = lines.flat(at);
            if lines.near.as_ref().is_none_or(|near| near[index] > 0) {
                lines.cells.push(index as u32);
            }
        }
        if pieces.is_empty() && local {
            lines
                .cells
                .push(lines.flat(Coord::new(board.rows() / 2, board.cols() / 2)) as u32);
        }
        for (at, piece) in pieces {
            lines.find_threats(board, at, piece);
        }
        // Keep the live threats only, once each, so that iterations do not
        // check the dead ones again and again.
        let mut threats = std::mem::take(&mut lines.threats);
        for (piece, list) in threats.iter_mut().enumerate() {
            let piece = Seat(piece as u8);
            let seat = if wild { root.to_move() } else { piece };
            list.sort_unstable();
            list.dedup();
            list.retain(|&index| lines.completes(root, seat, piece, index).is_some());
        }
        lines.threats = threats;
        lines
    }

    /// Makes this a copy of `base` once every placement since it was
    /// taken back ([`Lines::removed`]), reusing the buffers.
    pub(super) fn reset(&mut self, base: &Lines) {
        self.cells.clone_from(&base.cells);
        self.threats.clone_from(&base.threats);
    }

    /// Takes back what [`Lines::placed`] counted for `at`.
    pub(super) fn removed(&mut self, at: Coord) {
        if let Some(near) = &mut self.near {
            let (row, col) = (i64::from(at.row), i64::from(at.col));
            for r in (row - REACH).max(0)..=(row + REACH).min(self.rows - 1) {
                for c in (col - REACH).max(0)..=(col + REACH).min(self.cols - 1) {
                    near[(r * self.cols + c) as usize] -= 1;
                }
            }
        }
    }

    fn flat(&self, at: Coord) -> usize {
        at.row as usize * self.cols as usize + at.col as usize
    }

    fn coord(&self, index: u32) -> Coord {
        Coord::new(index / self.cols as u32, index % self.cols as u32)
    }

    /// Tells the helper that `piece` was put on `at` (the board has it).
    pub(super) fn placed(&mut self, board: &Board, at: Coord, piece: Seat) {
        if let Some(near) = &mut self.near {
            let (row, col) = (i64::from(at.row), i64::from(at.col));
            for r in (row - REACH).max(0)..=(row + REACH).min(self.rows - 1) {
                for c in (col - REACH).max(0)..=(col + REACH).min(self.cols - 1) {
                    let index = (r * self.cols + c) as usize;
                    near[index] += 1;
                    if near[index] == 1 && board.get(r, c) == Some(None) {
                        self.cells.push(index as u32);
                    }
                }
            }
        }
        self.find_threats(board, at, piece);
    }

    /// Adds to `piece`'s threats the empty cell of each window of K cells
    /// along an axis through `at` that holds K-1 of `piece` and one empty
    /// cell. Reads at most 2K-2 cells per axis, stopping at the first cell
    /// that is off the board or holds another piece.
    fn find_threats(&mut self, board: &Board, at: Coord, piece: Seat) {
        let k = self.k;
        let (row, col) = (i64::from(at.row), i64::from(at.col));
        for (dr, dc) in AXES {
            // How far the run of empty cells and `piece` reaches each way.
            let open = |sign: i64| {
                (1..k)
                    .take_while(|step| {
                        let cell = board.get(row + sign * step * dr, col + sign * step * dc);
                        matches!(cell, Some(None)) || cell == Some(Some(piece))
                    })
                    .count() as i64
            };
            let (back, forward) = (open(-1), open(1));
            if back + forward + 1 < k {
                continue;
            }
            // Empty cells of the span -back..=forward, as offsets.
            let span = &mut self.scratch;
            span.clear();
            span.extend(
                (-back..=forward)
                    .map(|step| board.get(row + step * dr, col + step * dc) == Some(None)),
            );
            let mut empties = span[..k as usize].iter().filter(|e| **e).count();
            // Windows start at offsets -back ..= forward - k + 1.
            for start in 0..=(back + forward + 1 - k) as usize {
                if start > 0 {
                    empties -= usize::from(span[start - 1]);
                    empties += usize::from(span[start + k as usize - 1]);
                }
                if empties == 1 {
                    let i = (start..start + k as usize)
                        .find(|i| span[*i])
                        .expect("one empty cell");
                    let step = i as i64 - back;
                    let index = (row + step * dr) * self.cols + col + step * dc;
                    self.threats[piece.index()].push(index as u32);
                }
            }
        }
    }

    /// The first live threat of `piece` that wins for `seat` when `seat`
    /// plays it, dropping the dead ones met on the way.
    fn winning(&mut self, node: &Node<'_>, seat: Seat, piece: Seat) -> Option<Move> {
        while let Some(&index) = self.threats[piece.index()].last() {
            if let Some(mv) = self.completes(node, seat, piece, index) {
                return Some(mv);
            }
            self.threats[piece.index()].pop();
        }
        None
    }

    /// The move by which `seat` puts `piece` on the cell `index` and wins,
    /// if that cell is empty and the rules say it wins.
    fn completes(&self, node: &Node<'_>, seat: Seat, piece: Seat, index: u32) -> Option<Move> {
        let at = self.coord(index);
        let mv = if self.wild {
            Move::PlaceMark { at, mark: piece }
        } else {
            Move::Place(at)
        };
        let board = node.position().board().expect("a board");
        if board.at(at).is_some() {
            return None;
        }
        let played = node.rules().play(node.position(), seat, mv).ok()?;
        matches!(played.outcome, Some(Outcome::Win { seat: s, .. }) if s == seat).then_some(mv)
    }

    /// A win for the seat to move, or else a cell where the next seat would
    /// win (two seats or more, not wild), as the move that plays it.
    fn forced(&mut self, node: &Node<'_>) -> Option<(Move, bool)> {
        let seat = node.to_move();
        if self.wild {
            return WILD_MARKS
                .iter()
                .find_map(|&mark| self.winning(node, seat, mark))
                .map(|mv| (mv, true));
        }
        if let Some(mv) = self.winning(node, seat, seat) {
            return Some((mv, true));
        }
        let next = next_in_play(node);
        if next == seat {
            return None;
        }
        self.winning(node, next, next).map(|mv| (mv, false))
    }

    /// The moves to search: a win if there is one; else every cell where
    /// the next seat would win, if any; else every cell to search.
    pub(super) fn moves(&mut self, node: &Node<'_>) -> Vec<Move> {
        let board = node.position().board().expect("a board");
        match self.forced(node) {
            Some((mv, true)) => return vec![mv],
            Some((_, false)) => {
                let next = next_in_play(node);
                let mut blocks: Vec<u32> = self.threats[next.index()]
                    .iter()
                    .copied()
                    .filter(|&i| self.completes(node, next, next, i).is_some())
                    .collect();
                blocks.sort_unstable();
                blocks.dedup();
                return blocks
                    .into_iter()
                    .map(|i| Move::Place(self.coord(i)))
                    .collect();
            }
            None => {}
        }
        let mut cells: Vec<u32> = self
            .cells
            .iter()
            .copied()
            .filter(|&i| board.at(self.coord(i)).is_none())
            .collect();
        cells.sort_unstable();
        cells.dedup();
        if self.wild {
            cells
                .into_iter()
                .flat_map(|i| {
                    let at = self.coord(i);
                    WILD_MARKS.map(|mark| Move::PlaceMark { at, mark })
                })
                .collect()
        } else {
            cells
                .into_iter()
                .map(|i| Move::Place(self.coord(i)))
                .collect()
        }
    }

    /// A playout's move: a win, else a block, else a cell to search drawn
    /// at random (and a mark drawn at random, in wild games).
    pub(super) fn random_move(&mut self, node: &Node<'_>, rng: &mut ChaCha8Rng) -> Option<Move> {
        if let Some((mv, _)) = self.forced(node) {
            return Some(mv);
        }
        let board = node.position().board().expect("a board");
        while !self.cells.is_empty() {
            let i = rng.random_range(0..self.cells.len());
            let at = self.coord(self.cells[i]);
            if board.at(at).is_some() {
                self.cells.swap_remove(i);
                continue;
            }
            return Some(if self.wild {
                let mark = WILD_MARKS[rng.random_range(0..WILD_MARKS.len())];
                Move::PlaceMark { at, mark }
            } else {
                Move::Place(at)
            });
        }
        None
    }
}

/// The marks of a wild game.
const WILD_MARKS: [Seat; 2] = crate::rules::WildRules::MARKS;

/// The seat in play after the seat to move, in turn order.
fn next_in_play(node: &Node<'_>) -> Seat {
    let seat = node.to_move();
    let seats = node.seats();
    let mut next = seat.next(seats);
    for _ in 0..seats {
        if node.in_play().any(|s| s == next) {
            return next;
        }
        next = next.next(seats);
    }
    seat
}
