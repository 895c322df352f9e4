//! The Connect Four engine and its exact solver, for the standard 7 wide x 6
//! high board.
//!
//! # Map
//! - `solver.rs`: [`Solver`], the exact solver, Pascal Pons' method:
//!   negamax with alpha-beta on a bitboard, null-window searches that narrow
//!   the score window, centre-first and threat-counting move order, pruning
//!   of moves that lose at once. [`Solver::solve`] gives a position's exact
//!   score, [`Solver::analyze`] the score of each column. Also the
//!   depth-limited search of the weaker levels.
//! - `table.rs`: the solver's 32 MiB transposition table of upper and lower
//!   bounds.
//! - `bitboard.rs`: [`C4Bitboard`], the position it solves (two 64-bit
//!   masks), built from a Pons move string (`"4453"`, or `str::parse`) or
//!   from the crate's [`Position`](crate::rules::Position) and the seat to
//!   move; [`BitboardError`] says why one cannot be built. Also the
//!   evaluation at the search's horizon.
//! - `book.rs`: [`OpeningBook`], the exact scores of the opening positions,
//!   and [`generate_book`], which computes them.
//! - `mod.rs` (here): [`ConnectFourEngine`], the [`Engine`]: perfect play at
//!   [`MAX_STRENGTH`] (the book, then the solver), a depth-limited search
//!   below it.
//! - `tests.rs`: the unit tests of all of the above.
//!
//! # Scores
//! Pons' convention, from the side to move: 0 for a draw; a win scores 22
//! minus the number of discs the winner has placed when its four is complete
//! (a win with the 4th disc scores 18, with the 21st and last, 1); a loss
//! scores the opponent's win, negated. After `n` discs, winning with the
//! next disc scores `(43 - n) / 2`.
//!
//! # Sources
//! - Pascal Pons, "Solving Connect 4: how to build a perfect AI", parts 1 to
//!   12 (2017-2019), <http://blog.gamesolver.org/solving-connect-four/>: the
//!   bitboard and key, the null-window narrowing of part 8, the non-losing
//!   moves of part 9, the move order of part 10, the table of parts 7, 11
//!   (partial keys by the Chinese remainder theorem) and 12 (lower bounds
//!   too), the score convention and the test sets. Written from the
//!   tutorial's descriptions; no code is taken from his (AGPL) repository.
//! - John Tromp, "John's Connect Four Playground",
//!   <https://tromp.github.io/c4/c4.html>, and his Fhourstones benchmark:
//!   the bitboard with one spare bit on top of each column, four in a row
//!   found with shifts and ands, a position keyed in 49 bits.
//! - Victor Allis, "A Knowledge-based Approach of Connect-Four" (M.Sc.
//!   thesis, Vrije Universiteit Amsterdam, 1988): threats, and the parity
//!   of the rows they sit on (the first player wants odd rows, the second
//!   even rows), which the depth-limited search's evaluation weighs.

mod bitboard;
mod book;
mod solver;
mod table;

pub use bitboard::{BitboardError, C4Bitboard};
pub use book::{BookEntry, OpeningBook, generate as generate_book};
pub use solver::Solver;

use rand::Rng;
use rand_chacha::ChaCha8Rng;

use super::{Analysis, Budget, Choice, Engine, MAX_STRENGTH, Node, Score, random_move};
use crate::rules::{ConnectFourRules, Move, RuleSet};
use bitboard::{ORDER, WIDTH};
use solver::{INFINITY, Stopped, WIN_UNIT};

/// The best of `values` (column, value): the highest value, among equals
/// the one `rng` draws (uniformly, in the order given), so play varies from
/// seed to seed but not from run to run.
fn pick(values: &[(u32, i32)], rng: &mut ChaCha8Rng) -> Option<(u32, i32)> {
    let best = values.iter().map(|(_, value)| *value).max()?;
    let tied: Vec<u32> = values
        .iter()
        .filter(|(_, value)| *value == best)
        .map(|(col, _)| *col)
        .collect();
    let col = match tied.len() {
        1 => tied[0],
        n => tied[rng.random_range(0..n)],
    };
    Some((col, best))
}

/// Plies the search looks ahead at strengths below [`MAX_STRENGTH`]: twice
/// the strength (2 at strength 1, 18 at strength 9).
fn depth_for(strength: u8) -> u32 {
    2 * u32::from(strength)
}

/// At [`MAX_STRENGTH`], how deep the first, cheap fallback search goes
/// before the exact one, and its share of the node budget (one part in
/// this many).
const FALLBACK_DEPTH: u32 = 8;
/// See [`FALLBACK_DEPTH`].
const FALLBACK_SHARE: u64 = 8;

/// Standard Connect Four (7x6, four in a row, no Pop Out), two seats.
///
/// At [`MAX_STRENGTH`] it plays perfectly when its opening book (see
/// [`OpeningBook`]) or its budget allows: a position in the book gets its
/// best columns and exact score from there at once; otherwise, with a fresh
/// [`Solver`]:
/// 1. a fallback first: iterative deepening to 8 plies within an eighth of
///    the node budget, as below;
/// 2. the exact search, until three quarters of the budget are spent: a
///    winning column if there is one, else the position's score and one
///    null-window search per column for whether it keeps that score (the
///    best columns of [`Solver::analyze`], for less work). To analyse, it
///    then scores the other columns exactly, one by one, as long as the
///    budget lasts. Exact scores are [`Score::Exact`], Pons' convention;
/// 3. if the exact search ran out of nodes, the fallback deepens on towards
///    18 plies with the rest of the budget, and its values stand for the
///    columns without an exact score, as [`Score::Heuristic`] (capped, when
///    the position's score is proven, below the best columns' score, which
///    they are proven not to reach). Likewise when the search is stopped.
///
/// Below it, strength `s` searches `2 * s` plies (2 at strength 1, 18 at
/// strength 9) by iterative deepening within the whole budget, without a
/// table, and keeps the values of the deepest depth it completed. Its
/// scores are [`Score::Heuristic`] in thousandths of a Pons score: a result
/// the search reached is the Pons score times 1,000 (0 for a draw); a
/// position at the horizon is estimated within ±999 from its threats (empty
/// cells that would complete a four), 4 each, 6 on the rows the owner's
/// parity favours (Allis: odd rows for the first player, even for the
/// second), and 1 per disc in the centre column, the opponent's counting
/// against.
///
/// [`Engine::choose`] plays a best column, drawing among equals with
/// `rng`, so play varies from seed to seed but not from run to run.
/// Depth 1 is searched whatever the budget, so a legal move always comes
/// back while there is one. On a game it does not support, `choose` plays
/// a random legal move (see [`random_move`]) with a heuristic score of 0
/// and `analyze` answers `None`.
#[derive(Debug, Clone, Copy, Default)]
pub struct ConnectFourEngine;

impl ConnectFourEngine {
    /// The bitboard of `node`, when the engine supports its game and the
    /// game is not over.
    fn bitboard(&self, node: &Node<'_>) -> Option<C4Bitboard> {
        if node.outcome().is_some() {
            return None;
        }
        self.supports(node.rules(), node.seats()).ok()?;
        C4Bitboard::from_position(node.position(), node.to_move()).ok()
    }

    /// Step 1 at [`MAX_STRENGTH`]: the fallback's depth and values.
    fn fallback(
        solver: &mut Solver,
        position: &C4Bitboard,
        budget: &Budget<'_>,
        every_move: bool,
    ) -> (u32, Vec<(u32, i32)>) {
        let nodes = budget.nodes / FALLBACK_SHARE;
        solver.deepen(position, None, FALLBACK_DEPTH, nodes, every_move, budget)
    }

    /// Steps 1 and 2 at [`MAX_STRENGTH`], without the book: the best
    /// columns and their exact score, if the search proves them within
    /// `budget` (what the book's generation asks of each position).
    fn prove(
        solver: &mut Solver,
        position: &C4Bitboard,
        budget: &Budget<'_>,
    ) -> Result<(Vec<u32>, i32), Stopped> {
        Self::fallback(solver, position, budget, false);
        Self::exact(solver, budget, |s| s.best_columns(position, budget))
    }

    /// Step 2 at [`MAX_STRENGTH`]: sets the exact search's node limit, and
    /// runs `exact` unless the search is already stopped.
    fn exact<T>(
        solver: &mut Solver,
        budget: &Budget<'_>,
        exact: impl FnOnce(&mut Solver) -> Result<T, Stopped>,
    ) -> Result<T, Stopped> {
        solver.limit = budget.nodes - budget.nodes / 4;
        if budget.stopped() {
            return Err(Stopped);
        }
        exact(solver)
    }

    /// Step 3 at [`MAX_STRENGTH`]: the fallback deepened with the rest of
    /// the budget.
    fn deepen_rest(
        solver: &mut Solver,
        position: &C4Bitboard,
        known: (u32, Vec<(u32, i32)>),
        budget: &Budget<'_>,
        every_move: bool,
    ) -> Vec<(u32, i32)> {
        let rest = budget.nodes.saturating_sub(solver.nodes);
        let depth = depth_for(MAX_STRENGTH - 1);
        let (_, values) = solver.deepen(position, Some(known), depth, rest, every_move, budget);
        values
    }
}

impl Engine for ConnectFourEngine {
    fn supports(&self, rules: &RuleSet, seats: usize) -> Result<(), String> {
        match rules {
            RuleSet::ConnectFour(rules) if *rules == ConnectFourRules::STANDARD && seats == 2 => {
                Ok(())
            }
            _ => {
                Err("the connect4 engine plays only standard 7x6 connect four for two seats".into())
            }
        }
    }

    fn choose(
        &self,
        node: &Node<'_>,
        strength: u8,
        budget: &Budget<'_>,
        rng: &mut ChaCha8Rng,
    ) -> Option<Choice> {
        if node.outcome().is_some() {
            return None;
        }
        let Some(position) = self.bitboard(node) else {
            let mv = random_move(node.rules(), node.position(), node.to_move(), rng)?;
            return Some(Choice {
                mv,
                score: Score::Heuristic(0),
                nodes: 0,
            });
        };
        let mut solver = Solver::new();
        let strength = strength.clamp(1, MAX_STRENGTH);
        let (column, score) = if strength < MAX_STRENGTH {
            let depth = depth_for(strength);
            let (_, values) = solver.deepen(&position, None, depth, budget.nodes, false, budget);
            let (column, value) = pick(&values, rng)?;
            (column, Score::Heuristic(value))
        } else if let Some(entry) = OpeningBook::standard().get(&position) {
            let values: Vec<(u32, i32)> = entry.columns().map(|col| (col, entry.score)).collect();
            let (column, value) = pick(&values, rng)?;
            (column, Score::Exact(value))
        } else {
            let known = Self::fallback(&mut solver, &position, budget, false);
            match Self::exact(&mut solver, budget, |s| s.best_columns(&position, budget)) {
                Ok((columns, best)) => {
                    let values: Vec<(u32, i32)> = columns.iter().map(|col| (*col, best)).collect();
                    let (column, value) = pick(&values, rng)?;
                    (column, Score::Exact(value))
                }
                Err(Stopped) => {
                    let values = Self::deepen_rest(&mut solver, &position, known, budget, false);
                    let (column, value) = pick(&values, rng)?;
                    (column, Score::Heuristic(value))
                }
            }
        };
        Some(Choice {
            mv: Move::Drop { column },
            score,
            nodes: solver.nodes(),
        })
    }

    /// Every legal column's value, as the type's docs say: at
    /// [`MAX_STRENGTH`] Pons' exact scores (those of [`Solver::analyze`]: a
    /// column that wins at once scores by the discs placed, as Pons counts)
    /// for the best columns and for as many others as the budget allows;
    /// heuristic values of a search with a full window for each column
    /// otherwise. The position's score is the best columns' exact score
    /// once proven. `None` on a game it does not support.
    fn analyze(
        &self,
        node: &Node<'_>,
        strength: u8,
        budget: &Budget<'_>,
        _: &mut ChaCha8Rng,
    ) -> Option<Analysis> {
        let position = self.bitboard(node)?;
        let mut solver = Solver::new();
        let mut exact = [None; WIDTH as usize];
        let mut best = None;
        let values = if strength.clamp(1, MAX_STRENGTH) < MAX_STRENGTH {
            let depth = depth_for(strength.max(1));
            let (_, values) = solver.deepen(&position, None, depth, budget.nodes, true, budget);
            values
        } else {
            let book = OpeningBook::standard();
            let known = Self::fallback(&mut solver, &position, budget, true);
            best = Self::exact(&mut solver, budget, |s| match book.get(&position) {
                Some(entry) => Ok((entry.columns().collect(), entry.score)),
                None => s.best_columns(&position, budget),
            })
            .ok();
            if let Some((columns, score)) = &best {
                for col in columns {
                    exact[*col as usize] = Some(*score);
                }
                for col in ORDER {
                    if position.can_play(col) && exact[col as usize].is_none() {
                        // A column whose position after is in the book.
                        let after = position.after(position.drop_cell(col));
                        if let Some(entry) =
                            book.get(&after).filter(|_| !position.is_winning_move(col))
                        {
                            exact[col as usize] = Some(-entry.score);
                            continue;
                        }
                        match solver.column_score(&position, col, budget) {
                            Ok(score) => exact[col as usize] = Some(score),
                            Err(Stopped) => break,
                        }
                    }
                }
            }
            let complete =
                (0..WIDTH).all(|col| exact[col as usize].is_some() || !position.can_play(col));
            if complete {
                known.1
            } else {
                Self::deepen_rest(&mut solver, &position, known, budget, true)
            }
        };
        // A column without an exact score scores less than the best columns.
        let cap = best
            .as_ref()
            .map_or(INFINITY, |(_, score)| (score - 1) * WIN_UNIT);
        let moves: Vec<(Move, Score)> = node
            .moves()
            .into_iter()
            .filter_map(|mv| {
                let Move::Drop { column } = mv else {
                    return None;
                };
                let score = match exact[column as usize] {
                    Some(score) => Score::Exact(score),
                    None => {
                        let (_, value) = values.iter().find(|(col, _)| *col == column)?;
                        Score::Heuristic((*value).min(cap))
                    }
                };
                Some((mv, score))
            })
            .collect();
        let score = match best {
            Some((_, score)) => Score::Exact(score),
            None => moves.iter().map(|(_, s)| *s).max_by_key(|s| s.rank())?,
        };
        Some(Analysis {
            score,
            moves,
            nodes: solver.nodes(),
        })
    }
}

#[cfg(test)]
mod tests;
