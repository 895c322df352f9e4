//! The minimax engine: negamax with alpha-beta pruning, iterative deepening
//! and a transposition table.

use std::collections::HashMap;

use rand_chacha::ChaCha8Rng;

use super::{Budget, Choice, Engine, MAX_STRENGTH, Node, Score, Step};
use crate::rules::{Board, Coord, Move, Outcome, RuleSet, Seat};

/// Negamax with alpha-beta pruning (Knuth and Moore, "An analysis of
/// alpha-beta pruning", Artificial Intelligence 6, 1975), deepened one ply
/// at a time with a transposition table keyed by the position's digest and
/// the seat to move, searching first the move that was best at the previous
/// depth.
///
/// - **Games:** every game of two seats without chance: m,n,k, gomoku,
///   wild, Connect Four and Pop Out, Othello, Hex.
/// - **Strength:** the most plies searched: strength `s` below
///   [`MAX_STRENGTH`] searches `s` plies; [`MAX_STRENGTH`] searches until
///   the game tree is solved or the node budget runs out. Tic-tac-toe (549,946
///   games) and small m,n,k boards solve within the default budget, so the
///   engine plays them perfectly and answers [`Score::Exact`]: 1 + the empty
///   cells left when the game ends under best play (positive when the seat
///   to move wins, so a quicker win scores higher; 0 for a draw).
/// - **Evaluation** where the search stops short of the end (answered as
///   [`Score::Heuristic`], for the seat to move): in the K-in-a-row games
///   (m,n,k, gomoku, Connect Four), the sum over every window of K cells in a
///   row, column or diagonal that holds pieces of one seat only of 4^(n-1)
///   for its n pieces, the mover's windows counted positive and the others'
///   negative; in Othello, the disc difference plus 10 per corner; elsewhere
///   (wild, Hex) 0.
/// - **Budget:** nodes visited; when it runs out during a depth, the best
///   move of the deepest finished depth is played (the first legal move if
///   none finished).
/// - Ties go to the first move in the rules' order: the engine draws nothing
///   from the generator.
#[derive(Debug, Clone, Copy, Default)]
pub struct MinimaxEngine;

/// Values above this are proven results; heuristic values stay below it.
const WON: i32 = 1 << 24;

/// A transposition table entry: a value found searching `depth` plies
/// (`u32::MAX` when it holds to the end of the game), how it bounds the
/// true value, and the best move's index.
#[derive(Debug, Clone, Copy)]
struct Entry {
    depth: u32,
    value: i32,
    bound: Bound,
    best: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bound {
    Exact,
    Lower,
    Upper,
}

/// One search: the node moved through, the table, the nodes visited and
/// whether the budget stopped it.
struct Search<'b, 'r> {
    node: Node<'r>,
    table: HashMap<u64, Entry>,
    nodes: u64,
    budget: &'b Budget<'b>,
    out_of_budget: bool,
}

impl Engine for MinimaxEngine {
    fn supports(&self, rules: &RuleSet, seats: usize) -> Result<(), String> {
        if matches!(rules, RuleSet::SnakesLadders(_)) {
            return Err("minimax does not play snakes and ladders: it is a race of dice".into());
        }
        if seats != 2 {
            return Err(format!(
                "minimax plays games of two seats, not {seats}; use mcts or random"
            ));
        }
        Ok(())
    }

    fn choose(
        &self,
        node: &Node<'_>,
        strength: u8,
        budget: &Budget<'_>,
        _: &mut ChaCha8Rng,
    ) -> Option<Choice> {
        let moves = node.moves();
        let first = *moves.first()?;
        let max_depth = if strength >= MAX_STRENGTH {
            u32::MAX
        } else {
            u32::from(strength.max(1))
        };
        let mut search = Search {
            node: node.clone(),
            table: HashMap::new(),
            nodes: 0,
            budget,
            out_of_budget: false,
        };
        let mut best = (first, Score::Heuristic(0));
        for depth in 1..=max_depth {
            let (value, mv, complete) = search.root(&moves, depth);
            if search.out_of_budget {
                break;
            }
            best = (mv, to_score(value, complete));
            if complete || value.abs() > WON {
                // Solved: deeper searches find the same.
                break;
            }
        }
        Some(Choice {
            mv: best.0,
            score: best.1,
            nodes: search.nodes,
        })
    }
}

/// A search value as a [`Score`]: proven results and a finished tree are
/// exact.
fn to_score(value: i32, complete: bool) -> Score {
    if value > WON {
        Score::Exact(value - WON)
    } else if value < -WON {
        Score::Exact(value + WON)
    } else if complete {
        Score::Exact(0)
    } else {
        Score::Heuristic(value)
    }
}

impl Search<'_, '_> {
    /// Searches the root's `moves` to `depth` plies: the value, the best
    /// move, and whether the tree was searched to its end.
    fn root(&mut self, moves: &[Move], depth: u32) -> (i32, Move, bool) {
        let key = self.key();
        let mut order: Vec<usize> = (0..moves.len()).collect();
        if let Some(entry) = self.table.get(&key) {
            order.retain(|i| *i != entry.best);
            order.insert(0, entry.best);
        }
        let (mut alpha, beta) = (-i32::MAX, i32::MAX);
        let mut best = order[0];
        let mut complete = true;
        for i in order {
            let (value, whole) = self.child(moves[i], depth, -beta, -alpha);
            if self.out_of_budget {
                break;
            }
            complete &= whole;
            if value > alpha {
                alpha = value;
                best = i;
            }
        }
        self.table.insert(
            key,
            Entry {
                depth: if complete { u32::MAX } else { depth },
                value: alpha,
                bound: Bound::Exact,
                best,
            },
        );
        (alpha, moves[best], complete)
    }

    /// Plays `mv` and searches the position after it: its value for the
    /// seat that played it, and whether that is exact to the end.
    fn child(&mut self, mv: Move, depth: u32, alpha: i32, beta: i32) -> (i32, bool) {
        let step: Step = match self.node.play(mv) {
            Ok(step) => step,
            // Listed moves are legal; a refusal would be a rules bug, and
            // is never chosen.
            Err(_) => return (-i32::MAX, true),
        };
        let (value, whole) = self.negamax(depth - 1, alpha, beta);
        self.node.undo(&step);
        (-value, whole)
    }

    /// The value of the node for its seat to move, searched `depth` more
    /// plies within (alpha, beta), and whether it is exact to the end.
    fn negamax(&mut self, depth: u32, mut alpha: i32, beta: i32) -> (i32, bool) {
        self.nodes += 1;
        if self.nodes >= self.budget.nodes
            || (self.nodes.is_multiple_of(1024) && self.budget.stopped())
        {
            self.out_of_budget = true;
            return (0, false);
        }
        if let Some(outcome) = self.node.outcome() {
            return (self.terminal(outcome), true);
        }
        let moves = self.node.moves();
        if moves.is_empty() {
            // No listed move but no outcome: a position the rules leave to
            // the game layer (it does not arise in two-seat games).
            return (0, true);
        }
        if depth == 0 {
            return (evaluate(&self.node), false);
        }
        let key = self.key();
        let mut first = 0;
        if let Some(entry) = self.table.get(&key).copied() {
            if entry.depth >= depth {
                let whole = entry.depth == u32::MAX;
                match entry.bound {
                    Bound::Exact => return (entry.value, whole),
                    Bound::Lower if entry.value >= beta => return (entry.value, whole),
                    Bound::Upper if entry.value <= alpha => return (entry.value, whole),
                    _ => {}
                }
            }
            first = entry.best.min(moves.len() - 1);
        }
        let alpha_in = alpha;
        let mut best = (-i32::MAX, first);
        let mut complete = true;
        let order = std::iter::once(first).chain((0..moves.len()).filter(|i| *i != first));
        for i in order {
            let (value, whole) = self.child(moves[i], depth, -beta, -alpha);
            if self.out_of_budget {
                return (0, false);
            }
            complete &= whole;
            if value > best.0 {
                best = (value, i);
            }
            alpha = alpha.max(value);
            if alpha >= beta {
                break;
            }
        }
        let bound = if best.0 <= alpha_in {
            Bound::Upper
        } else if best.0 >= beta {
            Bound::Lower
        } else {
            Bound::Exact
        };
        self.table.insert(
            key,
            Entry {
                depth: if complete { u32::MAX } else { depth },
                value: best.0,
                bound,
                best: best.1,
            },
        );
        (best.0, complete)
    }

    /// The value of a finished game for the seat to move (the seat after
    /// the one that ended it).
    fn terminal(&self, outcome: &Outcome) -> i32 {
        let empty = self.node.empty_cells();
        match outcome {
            Outcome::Draw => 0,
            Outcome::Win { seat, .. } if *seat == self.node.to_move() => WON + 1 + empty,
            Outcome::Win { .. } => -(WON + 1 + empty),
        }
    }

    /// The table key: the pieces' digest with the seat to move mixed in.
    fn key(&self) -> u64 {
        let seat = u64::from(self.node.to_move().0);
        self.node.position().digest() ^ seat.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }
}

/// The heuristic value of a position for its seat to move (see
/// [`MinimaxEngine`]).
fn evaluate(node: &Node<'_>) -> i32 {
    let Some(board) = node.position().board() else {
        return 0;
    };
    let me = node.to_move();
    match node.rules() {
        RuleSet::Mnk(r) => windows(board, r.k(), me),
        RuleSet::Gomoku(r) => windows(board, r.board().k(), me),
        RuleSet::ConnectFour(r) => windows(board, r.k(), me),
        RuleSet::Othello(_) => discs(board, me),
        RuleSet::Wild(_) | RuleSet::Hex(_) | RuleSet::SnakesLadders(_) => 0,
    }
}

/// The K-window count: every window of `k` cells in a row, column or
/// diagonal holding `n > 0` pieces of one seat only scores 4^(n-1), for
/// `me` positive and for any other seat negative.
fn windows(board: &Board, k: u32, me: Seat) -> i32 {
    let (rows, cols) = (i64::from(board.rows()), i64::from(board.cols()));
    let k = i64::from(k);
    let mut total: i64 = 0;
    for (dr, dc) in [(0, 1), (1, 0), (1, 1), (1, -1)] {
        for row in 0..rows {
            for col in 0..cols {
                let (end_row, end_col) = (row + dr * (k - 1), col + dc * (k - 1));
                if !board.contains(end_row, end_col) {
                    continue;
                }
                let mut owner = None;
                let mut count = 0u32;
                let mut mixed = false;
                for i in 0..k {
                    if let Some(Some(seat)) = board.get(row + dr * i, col + dc * i) {
                        if owner.is_some_and(|o| o != seat) {
                            mixed = true;
                            break;
                        }
                        owner = Some(seat);
                        count += 1;
                    }
                }
                if let (false, Some(owner)) = (mixed, owner) {
                    let value = 4i64.pow(count.min(12) - 1);
                    total += if owner == me { value } else { -value };
                }
            }
        }
    }
    total.clamp(-i64::from(WON - 1), i64::from(WON - 1)) as i32
}

/// Othello: the mover's discs minus the others', plus 10 for each corner
/// the mover holds and minus 10 for each the others hold.
fn discs(board: &Board, me: Seat) -> i32 {
    let sign = |seat: Seat| if seat == me { 1 } else { -1 };
    let (last_row, last_col) = (board.rows() - 1, board.cols() - 1);
    let pieces: i32 = board.pieces().map(|(_, seat)| sign(seat)).sum();
    let corners: i32 = [(0, 0), (0, last_col), (last_row, 0), (last_row, last_col)]
        .into_iter()
        .filter_map(|(row, col)| board.at(Coord::new(row, col)))
        .map(|seat| 10 * sign(seat))
        .sum();
    pieces + corners
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::engine::{Bot, EngineKind};
    use crate::rules::MnkRules;

    fn choose(rules: &RuleSet, cells: &[(u32, u32)], strength: u8) -> Choice {
        let mut node = Node::new(rules, rules.initial_position(2), Seat(0), vec![false; 2]);
        for (row, col) in cells {
            node.play(Move::Place(Coord::new(*row, *col)))
                .expect("legal");
        }
        let stop = AtomicBool::new(false);
        let budget = Budget {
            nodes: 1_000_000,
            stop: &stop,
        };
        MinimaxEngine
            .choose(&node, strength, &budget, &mut bot().rng(1))
            .expect("a move")
    }

    fn bot() -> Bot {
        Bot {
            engine: EngineKind::Minimax,
            strength: MAX_STRENGTH,
            seed: 0,
        }
    }

    #[test]
    fn tic_tac_toe_from_the_empty_board_is_a_proven_draw() {
        let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
        assert_eq!(choose(&rules, &[], MAX_STRENGTH).score, Score::Exact(0));
    }

    #[test]
    fn it_completes_its_own_row_before_blocking() {
        let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
        // X: (0,0) (0,1); O: (1,0) (1,1); X to move wins at (0,2) with 4
        // cells left empty.
        let choice = choose(&rules, &[(0, 0), (1, 0), (0, 1), (1, 1)], MAX_STRENGTH);
        assert_eq!(choice.mv, Move::Place(Coord::new(0, 2)));
        assert_eq!(choice.score, Score::Exact(5));
    }

    #[test]
    fn it_blocks_a_row_it_cannot_beat() {
        let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
        // X: (0,0) (0,1) (2,2)... O to move must block (0,2).
        let choice = choose(&rules, &[(0, 0), (1, 1), (0, 1)], MAX_STRENGTH);
        assert_eq!(choice.mv, Move::Place(Coord::new(0, 2)));
    }

    #[test]
    fn a_shallow_search_answers_a_heuristic() {
        let rules = RuleSet::Mnk(MnkRules::new(7, 7, 4, 1000).expect("valid"));
        let choice = choose(&rules, &[(3, 3)], 2);
        assert!(matches!(choice.score, Score::Heuristic(_)), "{choice:?}");
    }

    #[test]
    fn it_refuses_races_and_more_than_two_seats() {
        let rules = RuleSet::Mnk(MnkRules::TIC_TAC_TOE);
        assert!(MinimaxEngine.supports(&rules, 3).is_err());
        assert!(MinimaxEngine.supports(&rules, 2).is_ok());
    }

    #[test]
    fn the_window_count_favours_the_seat_with_more_open_lines() {
        let mut board = Board::new(3, 3);
        board.put(Coord::new(1, 1), Seat(0));
        // The centre is in 4 of tic-tac-toe's 8 lines.
        assert_eq!(windows(&board, 3, Seat(0)), 4);
        assert_eq!(windows(&board, 3, Seat(1)), -4);
    }
}
