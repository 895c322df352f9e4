//! The minimax engine: negamax with alpha-beta pruning, iterative deepening
//! and a transposition table.

use std::collections::{BTreeMap, HashMap};

use rand_chacha::ChaCha8Rng;

use super::{Budget, Choice, Engine, MAX_STRENGTH, Node, Score, Step};
use crate::rules::lines::AXES;
use crate::rules::{Board, Coord, Move, Outcome, Position, RuleSet, Seat, WildRules};

/// Negamax with alpha-beta pruning (Knuth and Moore, "An analysis of
/// alpha-beta pruning", Artificial Intelligence 6, 1975), deepened one ply
/// at a time with a transposition table keyed by the position's digest and
/// the seat to move, searching first the move that was best at the previous
/// depth.
///
/// - **Games:** every game of two seats without chance: m,n,k, gomoku,
///   wild, Connect Four and Pop Out, Othello, Hex, chess.
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
///   negative; in Othello, the disc difference plus 10 per corner; in
///   chess, the material difference in centipawns with the classical
///   values (Shannon, "Programming a computer for playing chess", 1950:
///   pawn 100, knight and bishop 300, rook 500, queen 900); elsewhere
///   (wild, Hex) 0.
/// - **Moves searched:** every legal move, except on boards of more than 64
///   cells in m,n,k, gomoku, wild, Hex and Connect Four without Pop Out:
///   there only the empty cells within two king steps of a piece (the
///   centre on an empty board; in Connect Four, the columns of those
///   cells; Hex's swap when it is legal), in the rules' order, as gomoku
///   programs do and as [`super::MctsEngine`] does.
/// - **Cost per node** does not grow with the board: the searched moves,
///   the table key (a Zobrist-style hash, after Zobrist, "A new hashing
///   method with application for game playing", 1970) and the K-window
///   evaluation are kept up to date move by move (O(K) per axis through
///   the cell played), and the search is set up once per call (one pass
///   over the board). Othello (at most 16x16) and Pop Out list their moves
///   at every node.
/// - **Budget:** nodes visited; when it runs out during a depth, the best
///   move of the deepest finished depth is played (the first move searched
///   if none finished). The stop flag is read at every node.
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

/// One search: the node moved through with what is kept up to date beside
/// it, the table, the nodes visited and whether the budget stopped it.
struct Search<'b, 'r> {
    node: Node<'r>,
    track: Track,
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
        if budget.stopped() || node.outcome().is_some() {
            return None;
        }
        let max_depth = if strength >= MAX_STRENGTH {
            u32::MAX
        } else {
            u32::from(strength.max(1))
        };
        let mut search = Search {
            track: Track::new(node),
            node: node.clone(),
            table: HashMap::new(),
            nodes: 0,
            budget,
            out_of_budget: false,
        };
        let moves = search.moves();
        let first = *moves.first()?;
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
        self.track.played(&self.node, &step);
        let (value, whole) = self.negamax(depth - 1, alpha, beta);
        self.node.undo(&step);
        self.track.undone();
        (-value, whole)
    }

    /// The moves to search from the node (see [`MinimaxEngine`]).
    fn moves(&self) -> Vec<Move> {
        match &self.track.near {
            Some(near) if self.node.outcome().is_none() => near.moves(&self.node),
            _ => self.node.moves(),
        }
    }

    /// The value of the node for its seat to move, searched `depth` more
    /// plies within (alpha, beta), and whether it is exact to the end.
    fn negamax(&mut self, depth: u32, mut alpha: i32, beta: i32) -> (i32, bool) {
        self.nodes += 1;
        if self.nodes >= self.budget.nodes || self.budget.stopped() {
            self.out_of_budget = true;
            return (0, false);
        }
        if let Some(outcome) = self.node.outcome() {
            return (self.terminal(outcome), true);
        }
        let moves = self.moves();
        if moves.is_empty() {
            // No listed move but no outcome: a position the rules leave to
            // the game layer (it does not arise in two-seat games).
            return (0, true);
        }
        if depth == 0 {
            return (self.evaluate(), false);
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

    /// The table key: the pieces' hash with the seat to move mixed in
    /// (chess: its position's own hash, which holds castling rights and
    /// the en passant file too).
    fn key(&self) -> u64 {
        let seat = u64::from(self.node.to_move().0);
        let pieces = match self.node.position() {
            Position::Chess(chess) => chess.game().digest(),
            _ => self.track.key,
        };
        pieces ^ seat.wrapping_mul(0x9E37_79B9_7F4A_7C15)
    }

    /// The heuristic value of the node for its seat to move (see
    /// [`MinimaxEngine`]).
    fn evaluate(&self) -> i32 {
        let me = self.node.to_move();
        if let Some((_, total)) = self.track.windows {
            let total = if me == Seat(0) { total } else { -total };
            return total.clamp(-i64::from(WON - 1), i64::from(WON - 1)) as i32;
        }
        match (self.node.rules(), self.node.position().board()) {
            (RuleSet::ConnectFour(r), Some(board)) => {
                let total = window_total(board, r.k());
                let total = if me == Seat(0) { total } else { -total };
                total.clamp(-i64::from(WON - 1), i64::from(WON - 1)) as i32
            }
            (RuleSet::Othello(_), Some(board)) => discs(board, me),
            _ => match self.node.position() {
                Position::Chess(chess) => chess.game().material_balance(),
                _ => 0,
            },
        }
    }
}

/// The K of the games whose evaluation counts windows and is kept up to
/// date move by move (m,n,k, gomoku, Connect Four without Pop Out).
fn window_k(rules: &RuleSet) -> Option<u32> {
    match rules {
        RuleSet::Mnk(r) => Some(r.k()),
        RuleSet::Gomoku(r) => Some(r.board().k()),
        RuleSet::ConnectFour(r) if r.pop_out().is_none() => Some(r.k()),
        _ => None,
    }
}

/// What a search keeps up to date beside its node, so that no node costs a
/// pass over the board: the pieces' hash, the K-window total (for seat 0)
/// and the cells near the pieces, each restored from `undo` on the way
/// back.
struct Track {
    /// The XOR of [`cell_hash`] over the pieces.
    key: u64,
    /// K and the window total for seat 0, in the games that count windows.
    windows: Option<(u32, i64)>,
    /// The cells to search, on large boards of the games searched near
    /// their pieces.
    near: Option<Near>,
    /// What each move played changed: the key, the total and the change to
    /// `near` before it.
    undo: Vec<(u64, i64, NearChange)>,
}

/// How a move changed [`Near`], for taking it back.
enum NearChange {
    /// Nothing.
    None,
    /// The cells around this one were counted.
    Added(Coord),
    /// The whole set was rebuilt (a swap); this was the old one.
    Replaced(Near),
}

impl Track {
    /// Everything counted afresh from `node`'s board: one pass over it.
    fn new(node: &Node<'_>) -> Self {
        let board = node.position().board();
        let key = board.map_or(0, |b| {
            b.pieces()
                .fold(0, |key, (at, seat)| key ^ cell_hash(b, at, seat))
        });
        let windows = window_k(node.rules())
            .zip(board)
            .map(|(k, board)| (k, window_total(board, k)));
        let local = matches!(
            node.rules(),
            RuleSet::Mnk(_) | RuleSet::Gomoku(_) | RuleSet::Wild(_) | RuleSet::Hex(_)
        ) || matches!(node.rules(), RuleSet::ConnectFour(r) if r.pop_out().is_none());
        let near = board
            .filter(|b| local && b.cells() > LOCAL_ABOVE)
            .map(Near::new);
        Track {
            key,
            windows,
            near,
            undo: Vec::new(),
        }
    }

    /// Counts `step`, just played on `node`.
    fn played(&mut self, node: &Node<'_>, step: &Step) {
        let total = self.windows.map_or(0, |(_, total)| total);
        let mut change = NearChange::None;
        let key = self.key;
        if let Some(board) = node.position().board() {
            match (step.played.mv, step.played.placement) {
                (Move::Pop { .. } | Move::Swap, _) | (_, None) => {
                    // Rare (Pop Out, Hex's one swap): counted afresh.
                    let fresh = Track::new(node);
                    self.key = fresh.key;
                    self.windows = fresh.windows;
                    if let (Some(near), Some(rebuilt)) = (self.near.as_mut(), fresh.near) {
                        change = NearChange::Replaced(std::mem::replace(near, rebuilt));
                    }
                }
                (_, Some(at)) => {
                    let piece = board.at(at).unwrap_or(step.seat);
                    self.key ^= cell_hash(board, at, piece);
                    for flip in &step.played.flips {
                        let now = board.at(*flip).unwrap_or(step.seat);
                        let before = Seat(1 - now.0.min(1));
                        self.key ^= cell_hash(board, *flip, now) ^ cell_hash(board, *flip, before);
                    }
                    if let Some((k, total)) = self.windows.as_mut() {
                        *total += window_change(board, at, piece, *k);
                    }
                    if let Some(near) = self.near.as_mut() {
                        near.add(at);
                        change = NearChange::Added(at);
                    }
                }
            }
        }
        self.undo.push((key, total, change));
    }

    /// Takes back the last move counted.
    fn undone(&mut self) {
        let Some((key, total, change)) = self.undo.pop() else {
            return;
        };
        self.key = key;
        if let Some((_, now)) = self.windows.as_mut() {
            *now = total;
        }
        match change {
            NearChange::None => {}
            NearChange::Added(at) => {
                if let Some(near) = self.near.as_mut() {
                    near.remove(at);
                }
            }
            NearChange::Replaced(old) => self.near = Some(old),
        }
    }
}

/// Boards of more than this many cells are searched near their pieces
/// only (see [`MinimaxEngine`]).
const LOCAL_ABOVE: u64 = 64;

/// How far from a piece (in king steps) a cell is near it.
const REACH: i64 = 2;

/// The hash of `seat`'s piece on `at`: SplitMix64 (Steele, Lea and Flood,
/// "Fast splittable pseudorandom number generators", 2014) of the cell's
/// row-major index and the seat, so that no table of board size is needed.
fn cell_hash(board: &Board, at: Coord, seat: Seat) -> u64 {
    let index = u64::from(at.row) * u64::from(board.cols()) + u64::from(at.col);
    let mut z = (index << 8 | u64::from(seat.0)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The value of a window of K cells holding `mine` of seat 0's pieces and
/// `theirs` of seat 1's: 4^(n-1) for the n pieces of a window of one seat
/// only (n capped at 12), positive for seat 0; 0 for an empty or mixed one.
fn window_value(mine: u32, theirs: u32) -> i64 {
    match (mine, theirs) {
        (0, 0) => 0,
        (n, 0) => 4i64.pow(n.min(12) - 1),
        (0, n) => -(4i64.pow(n.min(12) - 1)),
        _ => 0,
    }
}

/// The K-window count for seat 0: every window of `k` cells in a row,
/// column or diagonal that holds `n > 0` pieces of one seat only scores
/// 4^(n-1), seat 0's positive and seat 1's negative. Counted by putting
/// the pieces one by one on an empty copy of the board (one pass over the
/// board, then O(K) per piece and axis).
fn window_total(board: &Board, k: u32) -> i64 {
    let pieces: Vec<(Coord, Seat)> = board.pieces().collect();
    let mut scratch = board.clone();
    for (at, _) in &pieces {
        scratch.clear(*at);
    }
    let mut total = 0;
    for (at, seat) in pieces {
        total += window_change(&scratch, at, seat, k);
        scratch.put(at, seat);
    }
    total
}

/// How the K-window count for seat 0 changes when `seat`'s piece goes on
/// `at`, empty or not on `board` (`at` is read as empty before and as
/// `seat`'s after): each axis through `at` is walked once, K-1 cells each
/// way, sliding the window's counts along, so O(K) per axis.
fn window_change(board: &Board, at: Coord, seat: Seat, k: u32) -> i64 {
    let k = i64::from(k);
    let (row, col) = (i64::from(at.row), i64::from(at.col));
    let mut change = 0;
    for (dr, dc) in AXES {
        // The cells of the axis from -(k-1) to k-1 that are on the board.
        let on = |step: i64| board.contains(row + step * dr, col + step * dc);
        let back = (1..k).take_while(|step| on(-step)).count() as i64;
        let forward = (1..k).take_while(|step| on(*step)).count() as i64;
        if back + forward + 1 < k {
            continue;
        }
        let piece = |step: i64| match board.get(row + step * dr, col + step * dc) {
            _ if step == 0 => None,
            Some(Some(seat)) => Some(seat),
            _ => None,
        };
        let mut counts = [0u32; 2];
        let count = |counts: &mut [u32; 2], step: i64, sign: i32| {
            if let Some(seat) = piece(step) {
                let slot = &mut counts[seat.index().min(1)];
                *slot = slot.wrapping_add_signed(sign);
            }
        };
        for step in -back..-back + k {
            count(&mut counts, step, 1);
        }
        for start in -back..=forward - k + 1 {
            if start > -back {
                count(&mut counts, start - 1, -1);
                count(&mut counts, start + k - 1, 1);
            }
            let before = window_value(counts[0], counts[1]);
            let mut after = counts;
            after[seat.index().min(1)] += 1;
            change += window_value(after[0], after[1]) - before;
        }
    }
    change
}

/// The cells near the pieces, on a large board: how many pieces are
/// within [`REACH`] of each (cells near none are not kept), by row-major
/// index, so that listing them costs what they number, not the board.
#[derive(Debug, Clone)]
struct Near {
    rows: i64,
    cols: i64,
    counts: BTreeMap<u64, u32>,
}

impl Near {
    /// The cells near `board`'s pieces.
    fn new(board: &Board) -> Self {
        let mut near = Near {
            rows: i64::from(board.rows()),
            cols: i64::from(board.cols()),
            counts: BTreeMap::new(),
        };
        for (at, _) in board.pieces() {
            near.add(at);
        }
        near
    }

    /// The on-board cells within [`REACH`] of `at`, by row-major index.
    fn around(&self, at: Coord) -> impl Iterator<Item = u64> + use<> {
        let (rows, cols) = (self.rows, self.cols);
        let (row, col) = (i64::from(at.row), i64::from(at.col));
        ((row - REACH).max(0)..=(row + REACH).min(rows - 1)).flat_map(move |r| {
            ((col - REACH).max(0)..=(col + REACH).min(cols - 1)).map(move |c| (r * cols + c) as u64)
        })
    }

    /// Counts a piece put on `at`.
    fn add(&mut self, at: Coord) {
        for index in self.around(at) {
            *self.counts.entry(index).or_default() += 1;
        }
    }

    /// Takes back what [`Near::add`] counted for `at`.
    fn remove(&mut self, at: Coord) {
        for index in self.around(at) {
            if let Some(count) = self.counts.get_mut(&index) {
                *count -= 1;
                if *count == 0 {
                    self.counts.remove(&index);
                }
            }
        }
    }

    /// The moves to search on `node`: on the empty cells near a piece (the
    /// centre of an empty board), in the rules' order: a stone (both marks
    /// in wild games), or the cell's column in Connect Four; then Hex's
    /// swap when it is legal.
    fn moves(&self, node: &Node<'_>) -> Vec<Move> {
        let Some(board) = node.position().board() else {
            return node.moves();
        };
        let coord = |index: u64| {
            Coord::new(
                (index / self.cols as u64) as u32,
                (index % self.cols as u64) as u32,
            )
        };
        let mut cells: Vec<Coord> = self
            .counts
            .keys()
            .map(|index| coord(*index))
            .filter(|at| board.at(*at).is_none())
            .collect();
        if self.counts.is_empty() {
            cells.push(Coord::new(board.rows() / 2, board.cols() / 2));
        }
        let mut moves: Vec<Move> = match node.rules() {
            RuleSet::ConnectFour(_) => {
                let mut columns: Vec<u32> = cells.iter().map(|at| at.col).collect();
                columns.sort_unstable();
                columns.dedup();
                columns
                    .into_iter()
                    .map(|column| Move::Drop { column })
                    .collect()
            }
            RuleSet::Wild(_) => cells
                .iter()
                .flat_map(|at| WildRules::MARKS.map(|mark| Move::PlaceMark { at: *at, mark }))
                .collect(),
            _ => cells.into_iter().map(Move::Place).collect(),
        };
        let swap = node
            .rules()
            .play(node.position(), node.to_move(), Move::Swap);
        if matches!(node.rules(), RuleSet::Hex(_)) && swap.is_ok() {
            moves.push(Move::Swap);
        }
        moves
    }
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
mod tests;
