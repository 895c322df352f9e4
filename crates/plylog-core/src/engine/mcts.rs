//! Monte Carlo tree search with UCT: a tree of sampled lines grown one
//! position per iteration, each iteration finished by a random game.
//!
//! # Map
//! - [`MctsEngine`]: the engine, and [`MctsEngine::iterations`], what a
//!   strength buys.
//! - `Search`: the tree (a `Vec` arena of `Entry`, children by index) and
//!   the four steps of an iteration: select, expand, play out, back up.
//! - `Walk`: the root [`Node`], played on and taken back each iteration
//!   ([`Node::play`], [`Node::undo`]), with the per-game helper that lists moves and plays random ones (`Lines` for the
//!   K-in-a-row games, `Cells` for Othello and Hex, plain [`Node::moves`]
//!   otherwise).

use std::f64::consts::LN_2;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Budget, Choice, Engine, MAX_STRENGTH, Node, Score, Step};
use crate::rules::lines::AXES;
use crate::rules::{Board, Coord, IllegalMove, Move, Outcome, RuleSet, Seat};

/// The exploration constant `c` of the UCT value `w/n + c * sqrt(ln N / n)`
/// (`w` the child's reward, `n` its visits, `N` its parent's visits).
/// UCB1, which UCT applies at every position, has `c = sqrt(2)`; a smaller
/// `c` spends more of the iterations on the moves that look best. In
/// trials at strength 6 (40 games each on gomoku and Othello against
/// `c = 0.7`), `sqrt(2)` won a third of its games, 1.0 and 0.35 about half.
const EXPLORATION: f64 = 0.7;

/// Boards of more cells than this, in the K-in-a-row games, are searched
/// only near the stones.
const LOCAL_ABOVE: u64 = 64;

/// How far from a stone (in king steps) a cell is near it.
const REACH: i64 = 2;

/// A playout stops, scored as a draw, after this many plies per cell...
const PLIES_PER_CELL: u64 = 4;

/// ...or after this many plies in all, whichever comes first, so that an
/// iteration's cost does not grow with the board past 1,024 cells.
const MAX_PLAYOUT: u64 = 4_096;

/// A playout checks the stop flag every this many plies.
const STOP_EVERY: u64 = 64;

/// Monte Carlo tree search with the UCT selection rule (Kocsis and
/// Szepesvári 2006, "Bandit based Monte-Carlo Planning"; the four steps as
/// in Browne et al. 2012, "A Survey of Monte Carlo Tree Search Methods").
///
/// Each iteration walks down the tree by the UCT value, adds one child (an
/// untried move drawn from the generator), plays the game out at random
/// and credits the result to every position on the way: a win 1 to its
/// winner and 0 to the other seats, a draw 1/2 to every seat. Each tree
/// position keeps its statistics for the seat that moved into it, so any
/// number of seats works. It plays the most visited move at the root
/// (ties: the one first in the rules' order), with [`Score::WinRate`] its
/// share of the results for the seat to move; [`Choice::nodes`] counts the
/// iterations.
///
/// **Iterations**: `min(budget.nodes, MctsEngine::iterations(strength))`,
/// `25 * 2^(strength - 1)`: 25 at strength 1, 12,800 at strength 10. The
/// stop flag is read before every iteration and every 64 plies of a
/// playout; a stopped search plays the most visited move so far (`None`
/// before the first iteration ends).
///
/// **Deterministic**: every random draw comes from the generator given,
/// the tree is a `Vec` arena walked in index order, and the UCT value uses
/// only IEEE-754 arithmetic and `sqrt` (its logarithm is computed here), so
/// the same node, strength, budget and generator give the same move on
/// every machine.
///
/// **Per game**, through [`Node::play`] and [`Node::moves`] only (passes
/// and the end of the game are the node's):
/// - m,n,k, gomoku and wild: the search keeps the cells where one move
///   completes a line. A seat that can win plays the win; else, in the tree
///   and in playouts, it blocks the next seat's win if there is one. On
///   boards of more than 64 cells only empty cells within two king steps of
///   a stone are searched and played (the centre on an empty board), as
///   gomoku programs do.
/// - Othello and Hex: playouts draw empty cells at random until one is
///   legal, which is a uniform draw over the legal moves without listing
///   them.
/// - Connect Four and Pop Out: playouts list the moves each ply.
/// - A playout ends, scored as a draw, after 4 plies per cell or 4,096
///   plies, whichever is fewer: Pop Out draws on a third repetition, which
///   the game tracks and a node does not, so a playout could otherwise go
///   on without end, and on a large board an iteration then costs no more
///   than on a board of 1,024 cells.
///
/// Snakes and ladders is not supported: it is a race of dice.
#[derive(Debug, Clone, Copy, Default)]
pub struct MctsEngine;

impl MctsEngine {
    /// The iterations a search at `strength` runs before the budget caps
    /// them: `25 * 2^(strength - 1)`, strength clamped to 1 to
    /// [`MAX_STRENGTH`] (25, 50, 100, ... 12,800).
    pub fn iterations(strength: u8) -> u64 {
        25 << (strength.clamp(1, MAX_STRENGTH) - 1)
    }
}

impl Engine for MctsEngine {
    fn supports(&self, rules: &RuleSet, _: usize) -> Result<(), String> {
        match rules {
            RuleSet::SnakesLadders(_) => Err(
                "mcts does not play snakes and ladders: it is a race of dice; use the random engine"
                    .into(),
            ),
            _ => Ok(()),
        }
    }

    fn choose(
        &self,
        node: &Node<'_>,
        strength: u8,
        budget: &Budget<'_>,
        rng: &mut ChaCha8Rng,
    ) -> Option<Choice> {
        if node.outcome().is_some() || node.position().board().is_none() {
            return None;
        }
        let iterations = budget.nodes.min(Self::iterations(strength));
        let mut search = Search::new(node)?;
        let mut done = 0;
        while done < iterations && !budget.stopped() {
            if !search.iterate(budget, rng) {
                break;
            }
            done += 1;
        }
        search.best(done)
    }
}

/// A position of the tree: the move into it, and the results of the
/// iterations that passed through it for the seat that played that move.
#[derive(Debug)]
struct Entry {
    /// The move into this position (the root's is never read).
    mv: Move,
    /// The move's index in its parent's list of moves (the rules' order).
    order: u32,
    /// The seat that played `mv`: the results are counted for it.
    mover: Seat,
    /// Iterations through this position.
    visits: u32,
    /// The mover's results over those iterations (1 a win, 1/2 a draw).
    reward: f64,
    /// The children, in the order they were added.
    children: Vec<u32>,
    /// The moves not yet added as children; `None` until the position is
    /// first expanded.
    untried: Option<Vec<(u32, Move)>>,
    /// When `mv` ended the game: its winner, `None` for a draw.
    end: Option<Option<Seat>>,
}

impl Entry {
    fn new(mv: Move, order: u32, mover: Seat, outcome: Option<&Outcome>) -> Self {
        Entry {
            mv,
            order,
            mover,
            visits: 0,
            reward: 0.0,
            children: Vec::new(),
            untried: None,
            end: outcome.map(winner),
        }
    }
}

/// The winner of `outcome`, `None` for a draw.
fn winner(outcome: &Outcome) -> Option<Seat> {
    match outcome {
        Outcome::Win { seat, .. } => Some(*seat),
        Outcome::Draw => None,
    }
}

/// The search: its tree, the root's helper and the walk each iteration
/// takes from the root and back.
struct Search<'r> {
    tree: Vec<Entry>,
    helper: Helper,
    walk: Walk<'r>,
    /// The indices of the entries of the current iteration's path.
    path: Vec<u32>,
}

/// Why an iteration did not finish.
struct Stopped;

impl<'r> Search<'r> {
    /// A search of `root`; `None` when the seat to move has no move.
    fn new(root: &Node<'r>) -> Option<Self> {
        let helper = Helper::new(root);
        let mut walk = Walk {
            node: root.clone(),
            helper: helper.clone(),
            steps: Vec::new(),
        };
        let moves = walk.moves();
        if moves.is_empty() {
            return None;
        }
        let mut top = Entry::new(Move::Roll, 0, root.to_move(), None);
        top.untried = Some(numbered(moves));
        Some(Search {
            tree: vec![top],
            helper,
            walk,
            path: Vec::new(),
        })
    }

    /// One iteration: select, expand, play out, back up. False when the
    /// budget's flag stopped it.
    fn iterate(&mut self, budget: &Budget<'_>, rng: &mut ChaCha8Rng) -> bool {
        let walk = &mut self.walk;
        walk.rewind(&self.helper);
        self.path.clear();
        self.path.push(0);
        let mut at = 0usize;
        let result = loop {
            if let Some(end) = self.tree[at].end {
                break end;
            }
            if self.tree[at].untried.is_none() {
                let moves = numbered(walk.moves());
                self.tree[at].untried = Some(moves);
            }
            let untried = self.tree[at].untried.as_mut().expect("expanded above");
            if !untried.is_empty() {
                let (order, mv) = untried.swap_remove(rng.random_range(0..untried.len()));
                let mover = walk.node.to_move();
                if walk.play(mv).is_err() {
                    // The rules refused a listed move: leave it out.
                    continue;
                }
                let child = self.tree.len() as u32;
                self.tree
                    .push(Entry::new(mv, order, mover, walk.node.outcome()));
                self.tree[at].children.push(child);
                self.path.push(child);
                match self.tree[child as usize].end {
                    Some(end) => break end,
                    None => match walk.playout(budget, rng) {
                        Ok(end) => break end,
                        Err(Stopped) => {
                            // Take the half-made child back out.
                            self.tree.pop();
                            self.tree[at].children.pop();
                            return false;
                        }
                    },
                }
            }
            let Some(next) = select(&self.tree, at) else {
                // No move and no end: score as a draw.
                break None;
            };
            if walk.play(self.tree[next].mv).is_err() {
                break None;
            }
            self.path.push(next as u32);
            at = next;
        };
        for &index in &self.path {
            let entry = &mut self.tree[index as usize];
            entry.visits += 1;
            entry.reward += match result {
                Some(seat) if seat == entry.mover => 1.0,
                Some(_) => 0.0,
                None => 0.5,
            };
        }
        true
    }

    /// The most visited move at the root (ties: first in the rules' order)
    /// after `done` iterations; `None` when none finished.
    fn best(&self, done: u64) -> Option<Choice> {
        let root = &self.tree[0];
        let best = root
            .children
            .iter()
            .map(|&c| &self.tree[c as usize])
            .filter(|e| e.visits > 0)
            .min_by_key(|e| (std::cmp::Reverse(e.visits), e.order))?;
        let rate = (best.reward * 1000.0 / f64::from(best.visits)).round();
        Some(Choice {
            mv: best.mv,
            score: Score::WinRate(rate.clamp(0.0, 1000.0) as u16),
            nodes: done,
        })
    }
}

/// The child of `tree[at]` with the highest UCT value (ties: the first
/// added).
fn select(tree: &[Entry], at: usize) -> Option<usize> {
    let parent = &tree[at];
    let log = ln(parent.visits.max(1));
    let mut best: Option<(usize, f64)> = None;
    for &child in &parent.children {
        let entry = &tree[child as usize];
        let n = f64::from(entry.visits.max(1));
        let value = entry.reward / n + EXPLORATION * (log / n).sqrt();
        if best.is_none_or(|(_, b)| value > b) {
            best = Some((child as usize, value));
        }
    }
    best.map(|(child, _)| child)
}

/// `moves` numbered in their order.
fn numbered(moves: Vec<Move>) -> Vec<(u32, Move)> {
    moves
        .into_iter()
        .enumerate()
        .map(|(i, mv)| (i as u32, mv))
        .collect()
}

/// `ln(n)` for `n >= 1` from IEEE-754 arithmetic only (the platform's `ln`
/// may differ in the last bit between machines): `n = m * 2^e` with `m` in
/// [1, 2), `ln m = 2 atanh((m - 1) / (m + 1))` by its series.
fn ln(n: u32) -> f64 {
    let e = 31 - n.max(1).leading_zeros();
    let m = f64::from(n.max(1)) / f64::from(1u32 << e);
    let z = (m - 1.0) / (m + 1.0);
    let z2 = z * z;
    let (mut term, mut sum) = (z, 0.0);
    for i in 0..20u32 {
        sum += term / f64::from(2 * i + 1);
        term *= z2;
    }
    f64::from(e) * LN_2 + 2.0 * sum
}

/// How a game's moves are listed and its playouts played.
#[derive(Debug, Clone)]
enum Helper {
    /// The K-in-a-row games (m,n,k, gomoku, wild).
    Lines(Lines),
    /// Othello and Hex: moves are empty cells.
    Cells(Vec<Coord>),
    /// Anything else: the node's moves.
    Plain,
}

impl Helper {
    fn new(root: &Node<'_>) -> Self {
        let board = root.position().board().expect("a game with a board");
        match root.rules() {
            RuleSet::Mnk(r) => Helper::Lines(Lines::new(root, r.k(), false)),
            RuleSet::Gomoku(r) => Helper::Lines(Lines::new(root, r.board().k(), false)),
            RuleSet::Wild(r) => Helper::Lines(Lines::new(root, r.board().k(), true)),
            RuleSet::Othello(_) | RuleSet::Hex(_) => {
                Helper::Cells(Vec::with_capacity(board.empty_count() as usize))
            }
            _ => Helper::Plain,
        }
    }

    /// Makes this helper, of the same game, `base` again once the moves
    /// since are taken back. A playout fills `Cells` afresh.
    fn reset(&mut self, base: &Helper) {
        if let (Helper::Lines(lines), Helper::Lines(base)) = (self, base) {
            lines.reset(base);
        }
    }
}

/// One iteration's position: the root node and its helper, with the
/// moves played on them since the root.
struct Walk<'r> {
    node: Node<'r>,
    helper: Helper,
    /// The moves played since the root, as [`Node::undo`] takes them back.
    steps: Vec<Step>,
}

impl Walk<'_> {
    /// The moves to search from here, in the rules' order.
    fn moves(&mut self) -> Vec<Move> {
        if self.node.outcome().is_some() {
            return Vec::new();
        }
        match &mut self.helper {
            Helper::Lines(lines) => lines.moves(&self.node),
            Helper::Cells(_) | Helper::Plain => self.node.moves(),
        }
    }

    /// Plays `mv` on the node and tells the helper.
    fn play(&mut self, mv: Move) -> Result<(), IllegalMove> {
        let seat = self.node.to_move();
        let step = self.node.play(mv)?;
        if let (Helper::Lines(lines), Some(at)) = (&mut self.helper, step.played.placement) {
            let board = self.node.position().board().expect("a board");
            lines.placed(board, at, mv.piece(seat));
        }
        self.steps.push(step);
        Ok(())
    }

    /// Takes every move back to the root, and makes the helper `base`, the
    /// root's, again. Costs what the moves cost, whatever the board size.
    fn rewind(&mut self, base: &Helper) {
        while let Some(step) = self.steps.pop() {
            self.node.undo(&step);
            if let (Helper::Lines(lines), Some(at)) = (&mut self.helper, step.played.placement) {
                lines.removed(at);
            }
        }
        self.helper.reset(base);
    }

    /// Plays at random to the end of the game, or a draw after 4 plies per
    /// cell: the winner, `None` for a draw.
    fn playout(
        &mut self,
        budget: &Budget<'_>,
        rng: &mut ChaCha8Rng,
    ) -> Result<Option<Seat>, Stopped> {
        let cells = self.node.position().board().map_or(0, |b| b.cells());
        let cap = (cells * PLIES_PER_CELL).min(MAX_PLAYOUT);
        if let Helper::Cells(empty) = &mut self.helper {
            let board = self.node.position().board().expect("a board");
            empty.clear();
            empty.extend(board.empty_cells());
        }
        let mut plies = 0u64;
        loop {
            if let Some(outcome) = self.node.outcome() {
                return Ok(winner(outcome));
            }
            if plies >= cap {
                return Ok(None);
            }
            plies += 1;
            if plies.is_multiple_of(STOP_EVERY) && budget.stopped() {
                return Err(Stopped);
            }
            let played = match &mut self.helper {
                Helper::Lines(lines) => match lines.random_move(&self.node, rng) {
                    Some(mv) => self.play(mv).is_ok(),
                    None => false,
                },
                Helper::Cells(empty) => {
                    // Untried cells are empty[..left]; draw until legal.
                    let mut left = empty.len();
                    let mut found = false;
                    while left > 0 {
                        let i = rng.random_range(0..left);
                        if let Ok(step) = self.node.play(Move::Place(empty[i])) {
                            self.steps.push(step);
                            empty.swap_remove(i);
                            found = true;
                            break;
                        }
                        left -= 1;
                        empty.swap(i, left);
                    }
                    found
                }
                Helper::Plain => {
                    let moves = self.node.moves();
                    !moves.is_empty() && self.play(moves[rng.random_range(0..moves.len())]).is_ok()
                }
            };
            if !played {
                // No move and no end: score as a draw.
                return Ok(None);
            }
        }
    }
}

/// What the K-in-a-row games keep beside the node: the cells to search,
/// and for each piece the cells where one more of it completes K in a row.
#[derive(Debug, Clone)]
struct Lines {
    rows: i64,
    cols: i64,
    k: i64,
    /// Wild: either mark may be placed by either seat.
    wild: bool,
    /// For boards searched near the stones only: how many stones are
    /// within [`REACH`] of each cell (row-major). `None`: every cell.
    near: Option<Vec<u16>>,
    /// The cells to search (row-major flat indices): every cell near a
    /// stone, or every cell; some may have filled since (they are dropped
    /// when met).
    cells: Vec<u32>,
    /// By piece (seat index): cells that were empty when a window of K
    /// cells through them held K-1 of that piece and nothing else; dropped
    /// when met filled or not winning.
    threats: Vec<Vec<u32>>,
    /// A buffer for [`Lines::find_threats`].
    scratch: Vec<bool>,
}

impl Lines {
    fn new(root: &Node<'_>, k: u32, wild: bool) -> Self {
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
    fn reset(&mut self, base: &Lines) {
        self.cells.clone_from(&base.cells);
        self.threats.clone_from(&base.threats);
    }

    /// Takes back what [`Lines::placed`] counted for `at`.
    fn removed(&mut self, at: Coord) {
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
    fn placed(&mut self, board: &Board, at: Coord, piece: Seat) {
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
    fn moves(&mut self, node: &Node<'_>) -> Vec<Move> {
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
    fn random_move(&mut self, node: &Node<'_>, rng: &mut ChaCha8Rng) -> Option<Move> {
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

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use rand::SeedableRng;

    use super::*;
    use crate::rules::{
        ConnectFourRules, GomokuRules, HexRules, MnkRules, OthelloRules, Overline, PopBothLines,
        Position, SnakesLaddersOptions, SnakesLaddersRules, WildRules,
    };

    fn place(row: u32, col: u32) -> Move {
        Move::Place(Coord::new(row, col))
    }

    /// A two-seat node of `rules` after `moves` from the start.
    fn after<'r>(rules: &'r RuleSet, seats: usize, moves: &[Move]) -> Node<'r> {
        let mut node = Node::new(
            rules,
            rules.initial_position(seats),
            Seat(0),
            vec![false; seats],
        );
        for mv in moves {
            node.play(*mv).expect("a legal move");
        }
        node
    }

    /// MCTS's choice on `node` at `strength`, generator seeded with `seed`.
    fn choose(node: &Node<'_>, strength: u8, seed: u64) -> Option<Choice> {
        let stop = AtomicBool::new(false);
        let budget = Budget {
            nodes: u64::MAX,
            stop: &stop,
        };
        MctsEngine.choose(
            node,
            strength,
            &budget,
            &mut ChaCha8Rng::seed_from_u64(seed),
        )
    }

    fn tic_tac_toe() -> RuleSet {
        RuleSet::Mnk(MnkRules::TIC_TAC_TOE)
    }

    fn gomoku() -> RuleSet {
        RuleSet::Gomoku(GomokuRules::new(None, None, None, Overline::DoesNotWin, 225).unwrap())
    }

    #[test]
    fn strength_doubles_the_iterations_from_25_to_12800() {
        let iterations: Vec<u64> = (0..=11).map(MctsEngine::iterations).collect();
        assert_eq!(
            iterations,
            [
                25, 25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12_800, 12_800
            ]
        );
    }

    #[test]
    fn every_game_but_snakes_and_ladders_is_supported() {
        let snakes =
            SnakesLaddersRules::new(SnakesLaddersOptions::default(), 10_000).expect("a race");
        let refusal = MctsEngine
            .supports(&RuleSet::SnakesLadders(snakes), 2)
            .unwrap_err();
        assert!(refusal.contains("snakes and ladders"), "{refusal}");
        for rules in [
            tic_tac_toe(),
            gomoku(),
            RuleSet::Wild(WildRules::new(None, None, None, 100).unwrap()),
            RuleSet::ConnectFour(ConnectFourRules::STANDARD),
            RuleSet::ConnectFour(ConnectFourRules::STANDARD.with_pop_out(PopBothLines::MoverWins)),
            RuleSet::Othello(OthelloRules::new(None).unwrap()),
            RuleSet::Hex(HexRules::new(None, true, 10_000).unwrap()),
        ] {
            assert_eq!(MctsEngine.supports(&rules, 2), Ok(()), "{rules:?}");
        }
    }

    #[test]
    fn takes_an_immediate_win_at_tic_tac_toe() {
        let rules = tic_tac_toe();
        // X on (0,0) and (0,1), O on (1,0) and (1,1): X wins on (0,2), and
        // O would win on (1,2).
        let node = after(
            &rules,
            2,
            &[place(0, 0), place(1, 0), place(0, 1), place(1, 1)],
        );
        let choice = choose(&node, MAX_STRENGTH, 1).expect("a move");
        assert_eq!(choice.mv, place(0, 2));
        assert_eq!(choice.score, Score::WinRate(1000));
    }

    #[test]
    fn blocks_an_immediate_loss_at_tic_tac_toe() {
        let rules = tic_tac_toe();
        // O on (1,1) and (0,1) threatens (2,1); X has no win.
        let node = after(
            &rules,
            2,
            &[place(0, 0), place(1, 1), place(2, 2), place(0, 1)],
        );
        let choice = choose(&node, MAX_STRENGTH, 1).expect("a move");
        assert_eq!(choice.mv, place(2, 1));
    }

    #[test]
    fn takes_an_immediate_win_at_connect_four() {
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        let drops: Vec<Move> = [0, 0, 1, 1, 2, 2]
            .map(|column| Move::Drop { column })
            .to_vec();
        // Both have three in a row; seat 0, to move, completes its own.
        let node = after(&rules, 2, &drops);
        let choice = choose(&node, 6, 1).expect("a move");
        assert_eq!(choice.mv, Move::Drop { column: 3 });
        assert_eq!(choice.score, Score::WinRate(1000));
    }

    #[test]
    fn blocks_an_immediate_loss_at_connect_four() {
        let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
        let drops: Vec<Move> = [0, 6, 1, 6, 2].map(|column| Move::Drop { column }).to_vec();
        // Seat 0 threatens column 3 along the bottom row.
        let node = after(&rules, 2, &drops);
        let choice = choose(&node, 7, 1).expect("a move");
        assert_eq!(choice.mv, Move::Drop { column: 3 });
    }

    #[test]
    fn the_same_seed_gives_the_same_choice_and_other_seeds_may_differ() {
        let rules = RuleSet::Othello(OthelloRules::new(None).unwrap());
        let node = after(&rules, 2, &[]);
        let first = choose(&node, 3, 7).expect("a move");
        assert_eq!(choose(&node, 3, 7), Some(first));
        // The four opening moves are equal; the seed picks among them.
        let mut moves: Vec<Move> = (0..16)
            .map(|seed| choose(&node, 1, seed).expect("a move").mv)
            .collect();
        moves.sort_by_key(|mv| format!("{mv:?}"));
        moves.dedup();
        assert!(moves.len() > 1, "{moves:?}");
    }

    #[test]
    fn gomoku_choices_repeat_with_the_seed() {
        let rules = gomoku();
        let node = after(&rules, 2, &[place(7, 7), place(7, 8), place(8, 8)]);
        let first = choose(&node, 3, 11).expect("a move");
        assert_eq!(choose(&node, 3, 11), Some(first));
    }

    #[test]
    fn no_choice_once_the_game_is_over_or_without_budget() {
        let rules = tic_tac_toe();
        // X completes the top row.
        let node = after(
            &rules,
            2,
            &[
                place(0, 0),
                place(1, 0),
                place(0, 1),
                place(1, 1),
                place(0, 2),
            ],
        );
        assert!(node.outcome().is_some());
        assert_eq!(choose(&node, MAX_STRENGTH, 1), None);

        let stop = AtomicBool::new(false);
        let budget = Budget {
            nodes: 0,
            stop: &stop,
        };
        let start = after(&rules, 2, &[]);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(
            MctsEngine.choose(&start, MAX_STRENGTH, &budget, &mut rng),
            None
        );
    }

    #[test]
    fn a_stopped_search_returns_nothing_before_its_first_iteration() {
        let rules = tic_tac_toe();
        let stop = AtomicBool::new(true);
        let budget = Budget {
            nodes: u64::MAX,
            stop: &stop,
        };
        let node = after(&rules, 2, &[]);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        assert_eq!(
            MctsEngine.choose(&node, MAX_STRENGTH, &budget, &mut rng),
            None
        );
    }

    #[test]
    fn the_budget_caps_the_iterations() {
        let rules = tic_tac_toe();
        let stop = AtomicBool::new(false);
        let budget = Budget {
            nodes: 10,
            stop: &stop,
        };
        let node = after(&rules, 2, &[]);
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let choice = MctsEngine.choose(&node, MAX_STRENGTH, &budget, &mut rng);
        assert_eq!(choice.map(|c| c.nodes), Some(10));
    }

    #[test]
    fn othello_wins_through_the_opponents_pass() {
        let rules = RuleSet::Othello(OthelloRules::new(None).unwrap());
        // Black (seat 0) on (0,2) and (7,7), white on (0,1) and (7,6).
        // Black on (0,0) leaves white without a move: white passes and
        // black takes white's last disc with (7,5). Black on (7,5) instead
        // lets white flip (0,2) back.
        let mut board = crate::rules::Board::new(8, 8);
        for (row, col, seat) in [(0, 2, 0), (7, 7, 0), (0, 1, 1), (7, 6, 1)] {
            board.put(Coord::new(row, col), Seat(seat));
        }
        let node = Node::new(&rules, Position::Othello(board), Seat(0), vec![false; 2]);

        let mut line = node.clone();
        let step = line.play(place(0, 0)).unwrap();
        assert_eq!(
            (step.played.passes, line.to_move()),
            (vec![Seat(1)], Seat(0))
        );

        let choice = choose(&node, 5, 1).expect("a move");
        assert_eq!(choice.mv, place(0, 0));
        assert_eq!(choice.score, Score::WinRate(1000));
    }

    #[test]
    fn three_seats_at_m_n_k_take_their_win() {
        let rules = RuleSet::Mnk(MnkRules::new(5, 5, 3, 100).unwrap());
        // Seat 2, to move, has (4,0) and (4,1).
        let moves = [
            place(0, 0),
            place(2, 0),
            place(4, 0),
            place(0, 4),
            place(2, 4),
            place(4, 1),
            place(1, 2),
            place(3, 3),
        ];
        let node = after(&rules, 3, &moves);
        assert_eq!(node.to_move(), Seat(2));
        let choice = choose(&node, 5, 1).expect("a move");
        assert_eq!(choice.mv, place(4, 2));
        assert_eq!(choice.score, Score::WinRate(1000));
    }

    #[test]
    fn three_seats_play_a_whole_game_of_legal_moves() {
        let rules = RuleSet::Mnk(MnkRules::new(6, 6, 4, 100).unwrap());
        let mut node = after(&rules, 3, &[]);
        let mut plies = 0;
        while node.outcome().is_none() {
            let choice = choose(&node, 2, plies).expect("a move");
            node.play(choice.mv).expect("a legal move");
            plies += 1;
        }
        assert!(plies <= 36);
    }

    #[test]
    fn an_empty_gomoku_board_is_answered_in_the_centre() {
        let rules = gomoku();
        let node = after(&rules, 2, &[]);
        assert_eq!(choose(&node, 1, 1).map(|c| c.mv), Some(place(7, 7)));
    }

    #[test]
    fn gomoku_completes_a_four_and_blocks_an_open_four() {
        let rules = gomoku();
        // Black (seat 0) has four in row 7 from (7,3); white has three in
        // row 9.
        let win = after(
            &rules,
            2,
            &[
                place(7, 3),
                place(9, 3),
                place(7, 4),
                place(9, 4),
                place(7, 5),
                place(9, 5),
                place(7, 6),
                place(0, 0),
            ],
        );
        let choice = choose(&win, 3, 1).expect("a move");
        assert!(
            [place(7, 2), place(7, 7)].contains(&choice.mv),
            "{choice:?}"
        );
        assert_eq!(choice.score, Score::WinRate(1000));

        // White, to move, must stop black's four.
        let block = after(
            &rules,
            2,
            &[
                place(7, 3),
                place(9, 3),
                place(7, 4),
                place(9, 4),
                place(7, 5),
                place(0, 0),
                place(7, 6),
            ],
        );
        let choice = choose(&block, 3, 1).expect("a move");
        assert!(
            [place(7, 2), place(7, 7)].contains(&choice.mv),
            "{choice:?}"
        );
    }

    #[test]
    fn wild_completes_a_line_of_either_mark() {
        let rules = RuleSet::Wild(WildRules::new(None, None, None, 100).unwrap());
        let mark = |row, col, mark| Move::PlaceMark {
            at: Coord::new(row, col),
            mark: Seat(mark),
        };
        // Two O marks on the top row; seat 0 to move completes them.
        let node = after(&rules, 2, &[mark(0, 0, 1), mark(0, 1, 1)]);
        let choice = choose(&node, MAX_STRENGTH, 1).expect("a move");
        assert_eq!(choice.mv, mark(0, 2, 1));
    }

    #[test]
    fn every_other_game_gets_a_legal_move() {
        let pop_out =
            RuleSet::ConnectFour(ConnectFourRules::STANDARD.with_pop_out(PopBothLines::MoverWins));
        let hex = RuleSet::Hex(HexRules::new(Some(5), true, 100).unwrap());
        let cases = [
            (
                pop_out,
                vec![Move::Drop { column: 3 }, Move::Drop { column: 4 }],
            ),
            // Seat 1 may swap.
            (hex, vec![place(2, 2)]),
        ];
        for (rules, moves) in &cases {
            let mut node = after(rules, 2, moves);
            for ply in 0..6 {
                let choice = choose(&node, 3, ply).expect("a move");
                assert!(node.moves().contains(&choice.mv), "{rules:?}: {choice:?}");
                node.play(choice.mv).expect("a legal move");
                if node.outcome().is_some() {
                    break;
                }
            }
        }
    }

    #[test]
    fn each_iteration_takes_the_walk_back_to_the_root() {
        let rules = gomoku();
        let root = after(&rules, 2, &[place(7, 7), place(7, 8), place(8, 8)]);
        let mut search = Search::new(&root).expect("moves");
        let stop = AtomicBool::new(false);
        let budget = Budget {
            nodes: u64::MAX,
            stop: &stop,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for _ in 0..50 {
            assert!(search.iterate(&budget, &mut rng));
        }
        search.walk.rewind(&search.helper);
        assert_eq!(search.walk.node.position(), root.position());
        assert_eq!(search.walk.node.to_move(), root.to_move());
        let (Helper::Lines(walked), Helper::Lines(base)) = (&search.walk.helper, &search.helper)
        else {
            panic!("gomoku keeps lines");
        };
        assert_eq!((&walked.near, &walked.cells), (&base.near, &base.cells));
        assert_eq!(walked.threats, base.threats);
    }

    #[test]
    fn the_logarithm_is_close_to_the_platforms() {
        for n in [1, 2, 3, 10, 1000, 12_800, 1 << 20, u32::MAX] {
            let ours = ln(n);
            let theirs = f64::from(n).ln();
            assert!(
                (ours - theirs).abs() <= 1e-12 * theirs.max(1.0),
                "{n}: {ours} {theirs}"
            );
        }
    }
}
