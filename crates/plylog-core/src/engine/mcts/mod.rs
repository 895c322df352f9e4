//! Monte Carlo tree search with UCT: a tree of sampled lines grown one
//! position per iteration, each iteration finished by a random game.
//!
//! # Map
//! - `mod.rs` (here): [`MctsEngine`], the engine, and
//!   [`MctsEngine::iterations`], what a strength buys; `Search`: the tree (a
//!   `Vec` arena of `Entry`, children by index) and the four steps of an
//!   iteration: select, expand, play out, back up; `Walk`: the root
//!   [`Node`], played on and taken back each iteration ([`Node::play`],
//!   [`Node::undo`]), with the per-game helper that lists moves and plays
//!   random ones (`Lines` for the K-in-a-row games, `Cells` for Othello and
//!   Hex, plain [`Node::moves`] otherwise).
//! - `lines.rs`: `Lines`, the K-in-a-row games' helper: the cells to search
//!   and the cells where one more piece completes a line.
//! - `tests.rs`: the unit tests.

mod lines;

use std::f64::consts::LN_2;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Budget, Choice, Engine, MAX_STRENGTH, Node, Score, Step};
use crate::rules::{Coord, IllegalMove, Move, Outcome, RuleSet, Seat};
use lines::Lines;

/// The exploration constant `c` of the UCT value `w/n + c * sqrt(ln N / n)`
/// (`w` the child's reward, `n` its visits, `N` its parent's visits).
/// UCB1, which UCT applies at every position, has `c = sqrt(2)`; a smaller
/// `c` spends more of the iterations on the moves that look best. In
/// trials at strength 6 (40 games each on gomoku and Othello against
/// `c = 0.7`), `sqrt(2)` won a third of its games, 1.0 and 0.35 about half.
const EXPLORATION: f64 = 0.7;

/// A playout stops, scored as a draw, after this many plies per cell...
const PLIES_PER_CELL: u64 = 4;

/// ...or after this many plies in all, whichever comes first, so that an
/// iteration's cost does not grow with the board past 1,024 cells.
const MAX_PLAYOUT: u64 = 4_096;

/// A chess playout stops after this many plies and is judged on material
/// (see `Walk::adjudicate`).
const CHESS_PLAYOUT: u64 = 100;

/// The material lead, in centipawns, that wins a chess playout cut short:
/// a minor piece.
const CHESS_LEAD: i32 = 300;

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
/// - Chess: playouts list the moves each ply, and one still going after
///   100 plies is judged on material: the side a minor piece or more
///   ahead (Shannon's values: pawn 100, knight and bishop 300, rook 500,
///   queen 900) wins it, else it is a draw.
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
        let boardless = node.position().board().is_none();
        if node.outcome().is_some() || (boardless && !matches!(node.rules(), RuleSet::Chess(_))) {
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
        match (root.rules(), root.position().board()) {
            (RuleSet::Mnk(r), _) => Helper::Lines(Lines::new(root, r.k(), false)),
            (RuleSet::Gomoku(r), _) => Helper::Lines(Lines::new(root, r.board().k(), false)),
            (RuleSet::Wild(r), _) => Helper::Lines(Lines::new(root, r.board().k(), true)),
            (RuleSet::Othello(_) | RuleSet::Hex(_), Some(board)) => {
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

    /// The result of a playout cut short: in chess, a win for the side a
    /// minor piece or more ahead on material (pawn 100, knight and bishop
    /// 300, rook 500, queen 900), otherwise a draw; in other games a draw.
    fn adjudicate(&self) -> Option<Seat> {
        let crate::rules::Position::Chess(chess) = self.node.position() else {
            return None;
        };
        let to_move = self.node.to_move();
        match chess.game().material_balance() {
            lead if lead >= CHESS_LEAD => Some(to_move),
            lead if lead <= -CHESS_LEAD => Some(Seat(1 - to_move.0.min(1))),
            _ => None,
        }
    }

    /// Plays at random to the end of the game, or a draw after 4 plies per
    /// cell (chess: 100 plies, judged on material): the winner, `None` for
    /// a draw.
    fn playout(
        &mut self,
        budget: &Budget<'_>,
        rng: &mut ChaCha8Rng,
    ) -> Result<Option<Seat>, Stopped> {
        let cap = match self.node.position().board() {
            Some(board) => (board.cells() * PLIES_PER_CELL).min(MAX_PLAYOUT),
            None => CHESS_PLAYOUT,
        };
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
                return Ok(self.adjudicate());
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

#[cfg(test)]
mod tests;
