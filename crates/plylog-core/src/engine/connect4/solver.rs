//! The exact solver, [`Solver`]: negamax with alpha-beta and null-window
//! narrowing over a [`C4Bitboard`] with the [`Table`]; and the
//! depth-limited search that the engine's weaker levels and fallback use.

use std::sync::atomic::AtomicBool;

use super::bitboard::{C4Bitboard, CELLS, ORDER, WIDTH};
use super::table::{Bound, TABLE_ENTRIES, Table};
use crate::engine::Budget;

/// A search ran out of nodes or was stopped before it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Stopped;

/// The depth-limited search's unit for game results: a win of Pons score
/// `s` is worth `s * WIN_UNIT`, more than any estimate.
pub(super) const WIN_UNIT: i32 = 1000;
/// Beyond any value of the depth-limited search.
pub(super) const INFINITY: i32 = 100 * WIN_UNIT;

/// The exact solver for standard 7x6 Connect Four, after Pascal Pons'
/// "Solving Connect 4" tutorial: negamax with alpha-beta over a bitboard,
/// null-window searches that halve the window of possible scores (part 8),
/// only moves that do not lose at once (part 9), moves that create the most
/// threats first, centre first on ties (part 10), and a transposition table
/// of upper and lower bounds (parts 7, 11 and 12).
///
/// The table is allocated once per solver, 33,554,315 bytes (6,710,863
/// entries of 5 bytes: just under 32 MiB), and kept across solves, which
/// share what it holds; [`Solver::reset`] empties it.
///
/// Scores follow Pons' convention, from the side to move: 0 for a draw; a
/// win scores 22 minus the number of discs the winner has placed when its
/// four is complete (18 with its 4th disc, 1 with its 21st and last); a loss
/// scores the opponent's win, negated.
///
/// Positions are `C4Bitboard`s (bit `7 * column + row`, row 0 the bottom),
/// built with `str::parse` from Pons' move strings (`"4453"`: one digit per
/// disc, `1` the leftmost column, the first player first) or with
/// `C4Bitboard::from_position` from the crate's
/// [`Position`](crate::rules::Position) and the seat to move.
///
/// # Sources
/// - Pascal Pons, "Solving Connect 4: how to build a perfect AI", parts 1 to
///   12, <http://blog.gamesolver.org/solving-connect-four/>, and his test
///   sets (`tests/fixtures/connect4-pons`). Written from the tutorial's
///   descriptions; no code is taken from his (AGPL) repository.
/// - John Tromp, <https://tromp.github.io/c4/c4.html> and the Fhourstones
///   benchmark: the bitboard, four in a row by shifts, the 49-bit key.
/// - Victor Allis, "A Knowledge-based Approach of Connect-Four" (M.Sc.
///   thesis, Vrije Universiteit Amsterdam, 1988): threats and their rows'
///   parity, which the weaker levels' evaluation weighs.
///
/// ```
/// use std::sync::atomic::AtomicBool;
/// use plylog_core::engine::{Budget, Solver};
///
/// let stop = AtomicBool::new(false);
/// let budget = Budget { nodes: u64::MAX, stop: &stop };
/// let mut solver = Solver::new();
/// // The first player holds columns 1 to 3 of the bottom row and wins
/// // with its fourth disc, in column 4.
/// let position = "112233".parse().expect("a legal sequence");
/// assert_eq!(solver.solve(&position, &budget), Some(18));
/// ```
pub struct Solver {
    table: Table,
    /// Nodes visited since the solver was made or last reset.
    pub(super) nodes: u64,
    /// The node count at which the running search stops.
    pub(super) limit: u64,
}

impl std::fmt::Debug for Solver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Solver")
            .field("table_entries", &self.table.entries.len())
            .field("nodes", &self.nodes)
            .finish_non_exhaustive()
    }
}

impl Default for Solver {
    fn default() -> Self {
        Solver::new()
    }
}

impl Solver {
    /// The transposition table's size in bytes: 33,554,315, under 32 MiB.
    pub const TABLE_BYTES: usize = TABLE_ENTRIES * 5;

    /// A solver with an empty table. The table is zeroed memory, so the
    /// pages a search never touches cost nothing.
    pub fn new() -> Solver {
        Solver {
            table: Table::new(),
            nodes: 0,
            limit: u64::MAX,
        }
    }

    /// Empties the table and sets the node count to 0, so the next solve
    /// starts afresh (and its node count is its own). Clears only the parts
    /// of the table written since the last reset.
    pub fn reset(&mut self) {
        self.table.clear();
        self.nodes = 0;
    }

    /// Nodes visited since the solver was made or last reset, by every
    /// search.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }

    /// The exact score of `position` for the side to move, in Pons'
    /// convention; `None` when `budget.stop` was set (checked at every
    /// node) or `budget.nodes` nodes were visited before the score was
    /// proven. A full board scores 0.
    pub fn solve(&mut self, position: &C4Bitboard, budget: &Budget<'_>) -> Option<i32> {
        if budget.stopped() {
            return None;
        }
        self.limit = self.nodes.saturating_add(budget.nodes);
        self.solve_exact(position, budget).ok()
    }

    /// The exact score of each column of `position` (index 0 the leftmost),
    /// as Pons' `analyze`: the score the side to move gets by playing there
    /// (the win score if it completes a four, else the child position's
    /// score negated); `None` for a full column. `None` overall when the
    /// budget ran out or the search was stopped before every score was
    /// proven; the budget covers all seven.
    pub fn analyze(
        &mut self,
        position: &C4Bitboard,
        budget: &Budget<'_>,
    ) -> Option<[Option<i32>; WIDTH as usize]> {
        if budget.stopped() {
            return None;
        }
        self.limit = self.nodes.saturating_add(budget.nodes);
        self.analyze_exact(position, budget).ok()
    }

    /// Counts a node; fails once the limit is passed or when the caller
    /// asked to stop.
    fn visit(&mut self, budget: &Budget<'_>) -> Result<(), Stopped> {
        self.nodes += 1;
        if self.nodes > self.limit || budget.stopped() {
            return Err(Stopped);
        }
        Ok(())
    }

    fn analyze_exact(
        &mut self,
        position: &C4Bitboard,
        budget: &Budget<'_>,
    ) -> Result<[Option<i32>; WIDTH as usize], Stopped> {
        let mut scores = [None; WIDTH as usize];
        for col in 0..WIDTH {
            if position.can_play(col) {
                scores[col as usize] = Some(self.column_score(position, col, budget)?);
            }
        }
        Ok(scores)
    }

    /// The exact score of playing `col` (playable) on `position`: the win
    /// score if it completes a four, else the child position's score
    /// negated.
    pub(super) fn column_score(
        &mut self,
        position: &C4Bitboard,
        col: u32,
        budget: &Budget<'_>,
    ) -> Result<i32, Stopped> {
        if position.is_winning_move(col) {
            return Ok(position.win_score());
        }
        let child = position.after(position.drop_cell(col));
        Ok(-self.solve_exact(&child, budget)?)
    }

    /// The columns of `position` that score best, in [`ORDER`], and their
    /// exact score: the winning columns if there are any; else the root's
    /// score `v` by [`Solver::solve_exact`], then each column's child tested
    /// with one null window (is its score at most `-v`?), which the table
    /// filled by the root's search makes cheap. The same columns as the best
    /// of [`Solver::analyze`], for less work.
    pub(super) fn best_columns(
        &mut self,
        position: &C4Bitboard,
        budget: &Budget<'_>,
    ) -> Result<(Vec<u32>, i32), Stopped> {
        let playable = ORDER.into_iter().filter(|col| position.can_play(*col));
        let wins: Vec<u32> = playable
            .clone()
            .filter(|col| position.is_winning_move(*col))
            .collect();
        if !wins.is_empty() {
            return Ok((wins, position.win_score()));
        }
        let best = self.solve_exact(position, budget)?;
        let mut columns = Vec::new();
        for col in playable {
            let child = position.after(position.drop_cell(col));
            let as_good = if child.can_win_next() {
                -child.win_score() == best
            } else {
                self.negamax(&child, -best, 1 - best, budget)? <= -best
            };
            if as_good {
                columns.push(col);
            }
        }
        Ok((columns, best))
    }

    /// Pons part 8: null-window searches that narrow `[min, max]`, the
    /// scores still possible, until it holds one; each probe is at the
    /// middle, moved towards 0 while the window is wide on that side, as
    /// positions near the start tend to score near 0.
    fn solve_exact(&mut self, position: &C4Bitboard, budget: &Budget<'_>) -> Result<i32, Stopped> {
        if position.can_win_next() {
            return Ok(position.win_score());
        }
        let moves = position.moves as i32;
        let mut min = -(CELLS - moves) / 2;
        let mut max = (CELLS + 1 - moves) / 2;
        while min < max {
            let mut probe = min + (max - min) / 2;
            if probe <= 0 && min / 2 < probe {
                probe = min / 2;
            } else if probe >= 0 && max / 2 > probe {
                probe = max / 2;
            }
            let score = self.negamax(position, probe, probe + 1, budget)?;
            if score <= probe {
                max = score;
            } else {
                min = score;
            }
        }
        Ok(min)
    }

    /// The score of `position` if it lies in `(alpha, beta)`; else a bound
    /// on the same side of the window as the score (at most `alpha`, or at
    /// least `beta`). The side to move cannot win with its next disc.
    fn negamax(
        &mut self,
        position: &C4Bitboard,
        mut alpha: i32,
        mut beta: i32,
        budget: &Budget<'_>,
    ) -> Result<i32, Stopped> {
        debug_assert!(alpha < beta);
        debug_assert!(!position.can_win_next());
        self.visit(budget)?;
        let next = position.non_losing_moves();
        let moves = position.moves as i32;
        if next == 0 {
            // Every move lets the opponent win with its next disc.
            return Ok(-(CELLS - moves) / 2);
        }
        if moves >= CELLS - 2 {
            // Neither of the last two discs can win.
            return Ok(0);
        }
        // The opponent cannot win with its next disc: the earliest loss is
        // later, so the score is at least this.
        let lowest = -(CELLS - 2 - moves) / 2;
        if alpha < lowest {
            alpha = lowest;
            if alpha >= beta {
                return Ok(alpha);
            }
        }
        // Nor can the side to move: the earliest win is with the disc after.
        let highest = (CELLS - 1 - moves) / 2;
        if beta > highest {
            beta = highest;
            if alpha >= beta {
                return Ok(beta);
            }
        }
        let key = position.key();
        match self.table.get(key) {
            Some(Bound::Lower(lower)) if alpha < lower => {
                alpha = lower;
                if alpha >= beta {
                    return Ok(alpha);
                }
            }
            Some(Bound::Upper(upper)) if beta > upper => {
                beta = upper;
                if alpha >= beta {
                    return Ok(beta);
                }
            }
            _ => {}
        }
        let (cells, len) = position.ordered(next);
        for cell in &cells[..len] {
            let score = -self.negamax(&position.after(*cell), -beta, -alpha, budget)?;
            if score >= beta {
                self.table.put(key, Bound::Lower(score));
                return Ok(score);
            }
            alpha = alpha.max(score);
        }
        self.table.put(key, Bound::Upper(alpha));
        Ok(alpha)
    }

    /// The value of each legal column of `position` searched `depth` plies
    /// deep, in [`ORDER`]. With `every_move` each column is searched with
    /// the full window and every value is exact; without, the best value
    /// and those equal to it are exact, the others upper bounds below it.
    fn root_values(
        &mut self,
        position: &C4Bitboard,
        depth: u32,
        every_move: bool,
        budget: &Budget<'_>,
    ) -> Result<Vec<(u32, i32)>, Stopped> {
        let mut values = Vec::with_capacity(WIDTH as usize);
        let mut best = 1 - INFINITY;
        for col in ORDER {
            if !position.can_play(col) {
                continue;
            }
            let value = if position.is_winning_move(col) {
                position.win_score() * WIN_UNIT
            } else {
                let child = position.after(position.drop_cell(col));
                if child.can_win_next() {
                    -child.win_score() * WIN_UNIT
                } else {
                    // A window from just below the best so far finds the
                    // moves as good as it exactly.
                    let alpha = if every_move { -INFINITY } else { best - 1 };
                    -self.search(&child, -INFINITY, -alpha, depth - 1, budget)?
                }
            };
            best = best.max(value);
            values.push((col, value));
        }
        Ok(values)
    }

    /// Negamax with alpha-beta cut `depth` plies deep, in units of
    /// [`WIN_UNIT`]: a game result reached within the horizon is its Pons
    /// score times the unit (0 for a draw), a position at the horizon is
    /// [`C4Bitboard::evaluate`]d. The side to move cannot win with its next
    /// disc. Like [`Solver::negamax`] but without the table.
    fn search(
        &mut self,
        position: &C4Bitboard,
        mut alpha: i32,
        beta: i32,
        depth: u32,
        budget: &Budget<'_>,
    ) -> Result<i32, Stopped> {
        self.visit(budget)?;
        let next = position.non_losing_moves();
        let moves = position.moves as i32;
        if next == 0 {
            return Ok(-(CELLS - moves) / 2 * WIN_UNIT);
        }
        if moves >= CELLS - 2 {
            return Ok(0);
        }
        if depth == 0 {
            return Ok(position.evaluate());
        }
        let (cells, len) = position.ordered(next);
        for cell in &cells[..len] {
            let value = -self.search(&position.after(*cell), -beta, -alpha, depth - 1, budget)?;
            if value >= beta {
                return Ok(value);
            }
            alpha = alpha.max(value);
        }
        Ok(alpha)
    }

    /// Iterative deepening to `max_depth` plies (or the end of the game)
    /// within `nodes` more nodes, from `known` (a depth searched and its
    /// values) or from depth 1, which is searched whatever the budget (at
    /// most seven nodes) so that a legal move is never missing: the deepest
    /// depth completed and the values of [`Solver::root_values`] there.
    pub(super) fn deepen(
        &mut self,
        position: &C4Bitboard,
        known: Option<(u32, Vec<(u32, i32)>)>,
        max_depth: u32,
        nodes: u64,
        every_move: bool,
        budget: &Budget<'_>,
    ) -> (u32, Vec<(u32, i32)>) {
        let (mut depth, mut values) = match known {
            Some(known) => known,
            None => {
                let never = AtomicBool::new(false);
                let free = Budget {
                    nodes: u64::MAX,
                    stop: &never,
                };
                self.limit = u64::MAX;
                match self.root_values(position, 1, every_move, &free) {
                    Ok(values) => (1, values),
                    Err(Stopped) => unreachable!("a search without limit stopped"),
                }
            }
        };
        self.limit = self.nodes.saturating_add(nodes);
        let last = max_depth.min(CELLS as u32 - position.moves);
        while depth < last && !budget.stopped() {
            match self.root_values(position, depth + 1, every_move, budget) {
                Ok(deeper) => (depth, values) = (depth + 1, deeper),
                Err(Stopped) => break,
            }
        }
        (depth, values)
    }
}
