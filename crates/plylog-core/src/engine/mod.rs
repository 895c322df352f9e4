//! Engines: what a bot seat plays and what the analysis calls answer.
//!
//! Pure like [`crate::rules`]: an engine is given a [`Node`] (the rules, the
//! pieces, the seat to move, the seats in play), a strength, a [`Budget`]
//! and a seeded generator, and returns a [`Choice`]. It never reads a clock
//! or entropy: a bot's move depends only on the log and its seed, so a game
//! replays, and is played again after a restart, move for move. The shell
//! runs engines off the game's actor and stops them through the budget's
//! flag.
//!
//! # Map
//! - [`Engine`]: the trait; one module per engine, each a unit struct:
//!   [`RandomEngine`] (random.rs), [`MinimaxEngine`] (minimax.rs),
//!   [`ConnectFourEngine`] (connect4/, with its exact [`Solver`], its
//!   transposition table and [`OpeningBook`]), [`MctsEngine`] (mcts/). An
//!   engine's unit tests sit beside it in `<engine>/tests.rs`.
//! - [`EngineKind`]: the fieldless name of an engine, as a bot seat and the
//!   wire name it, with [`EngineKind::supports`] and [`EngineKind::engine`].
//! - [`Bot`]: a bot seat's engine, strength and seed; [`Chooser`], what a
//!   bot's move records of it.
//! - [`Node`]: a position to search from, with `play` and `undo` that keep
//!   the seat to move the way the game layer does (passes, seats out).
//! - [`Score`]: an engine's value of a position for the seat to move.
//!
//! # Adding an engine
//! One module here with a unit struct implementing [`Engine`], one arm in
//! [`EngineKind`] (its name, what it supports, the struct), one value of the
//! proto's `Engine` enum and its conversion arm.

mod connect4;
mod mcts;
mod minimax;
mod random;

use std::sync::atomic::{AtomicBool, Ordering};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

pub use connect4::{
    BitboardError, BookEntry, C4Bitboard, ConnectFourEngine, OpeningBook, Solver, generate_book,
};
pub use mcts::MctsEngine;
pub use minimax::MinimaxEngine;
pub use random::{RandomEngine, random_move};

use crate::rules::{IllegalMove, Move, Outcome, Played, Position, RuleSet, Seat};

/// The strongest setting of every engine; strength runs from 1 (weakest) to
/// this, the default.
pub const MAX_STRENGTH: u8 = 10;

/// The engines a bot seat or an analysis can use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum EngineKind {
    /// Uniform over the legal moves ([`RandomEngine`]).
    Random,
    /// Negamax with alpha-beta and a transposition table
    /// ([`MinimaxEngine`]).
    Minimax,
    /// The exact Connect Four solver ([`ConnectFourEngine`]).
    ConnectFour,
    /// Monte Carlo tree search, UCT ([`MctsEngine`]).
    Mcts,
}

impl EngineKind {
    /// Every engine, in the order of the proto's `Engine` enum.
    pub const ALL: [EngineKind; 4] = [
        EngineKind::Random,
        EngineKind::Minimax,
        EngineKind::ConnectFour,
        EngineKind::Mcts,
    ];

    /// The engine's name as events and logs show it: `random`, `minimax`,
    /// `connect4`, `mcts`.
    pub fn name(self) -> &'static str {
        match self {
            EngineKind::Random => "random",
            EngineKind::Minimax => "minimax",
            EngineKind::ConnectFour => "connect4",
            EngineKind::Mcts => "mcts",
        }
    }

    /// The engine itself.
    pub fn engine(self) -> &'static dyn Engine {
        match self {
            EngineKind::Random => &RandomEngine,
            EngineKind::Minimax => &MinimaxEngine,
            EngineKind::ConnectFour => &ConnectFourEngine,
            EngineKind::Mcts => &MctsEngine,
        }
    }

    /// Whether the engine can play a game of `rules` with `seats` seats.
    ///
    /// # Errors
    /// A short lowercase sentence saying why not.
    pub fn supports(self, rules: &RuleSet, seats: usize) -> Result<(), String> {
        self.engine().supports(rules, seats)
    }

    /// The strongest engine for a game of `rules` with `seats` seats:
    /// connect4 for standard Connect Four, minimax for chess and for
    /// two-seat m,n,k and wild boards of at most 16 cells, MCTS for other
    /// games it plays, random for the rest (a race).
    pub fn best_for(rules: &RuleSet, seats: usize) -> EngineKind {
        let small = |rows: u32, cols: u32| u64::from(rows) * u64::from(cols) <= 16;
        let pick = match rules {
            RuleSet::ConnectFour(_) => EngineKind::ConnectFour,
            RuleSet::Chess(_) => EngineKind::Minimax,
            RuleSet::Mnk(r) if small(r.rows(), r.cols()) => EngineKind::Minimax,
            RuleSet::Wild(r) if small(r.board().rows(), r.board().cols()) => EngineKind::Minimax,
            _ => EngineKind::Mcts,
        };
        [pick, EngineKind::Mcts, EngineKind::Random]
            .into_iter()
            .find(|engine| engine.supports(rules, seats).is_ok())
            .unwrap_or(EngineKind::Random)
    }
}

/// A bot seat: the engine that plays for it, how strong, and its seed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct Bot {
    /// The engine.
    pub engine: EngineKind,
    /// 1 (weakest) to [`MAX_STRENGTH`] (strongest).
    pub strength: u8,
    /// Seeds the engine's generator: the move decided for the event at
    /// sequence `s` draws from stream `s` of ChaCha8 seeded with this
    /// (rand_chacha's `ChaCha8Rng::seed_from_u64` then `set_stream(s)`), so
    /// the same seed and log give the same move.
    pub seed: u64,
}

impl Bot {
    /// The generator for the move whose event will have sequence `sequence`.
    pub fn rng(&self, sequence: u64) -> ChaCha8Rng {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        rng.set_stream(sequence);
        rng
    }
}

/// Which engine chose a bot's move, and at what strength: what the move's
/// event records (replay reads it; it never runs the engine again).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Chooser {
    /// The engine.
    pub engine: EngineKind,
    /// Its strength, 1 to [`MAX_STRENGTH`].
    pub strength: u8,
    /// Whether the engine proved the move best: its score was
    /// [`Score::Exact`] (connect4 at [`MAX_STRENGTH`] from its opening book
    /// or its solver, minimax on a game it solved). False for an estimate,
    /// including a move cut short by the server's time limit.
    pub proven: bool,
}

impl Bot {
    /// What a move this bot chose records of it, `proven` as
    /// [`Chooser::proven`].
    pub fn chooser(&self, proven: bool) -> Chooser {
        Chooser {
            engine: self.engine,
            strength: self.strength,
            proven,
        }
    }
}

/// How much work one search may do, and the flag that stops it early.
#[derive(Debug)]
pub struct Budget<'a> {
    /// The most nodes to visit: positions for the tree searches, iterations
    /// for MCTS. A search stopped by its budget returns the best move found
    /// so far; the same budget gives the same answer on every machine.
    pub nodes: u64,
    /// Set by the caller to stop the search at once (a changed position, a
    /// deadline, shutdown); every engine reads it at every node (MCTS: every
    /// iteration and every 64 plies of a playout), and no node's work grows
    /// with the board's size, so a search stops within a small margin of
    /// the flag. A stopped search returns the best move found so far, if
    /// any: unlike a search ended by `nodes`, which move that is depends on
    /// the machine's speed.
    pub stop: &'a AtomicBool,
}

impl Budget<'_> {
    /// Whether the caller asked the search to stop.
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }
}

/// An engine's value of a position for the seat to move.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Score {
    /// The game-theoretic value under perfect play: positive when the seat
    /// to move wins, 0 for a draw, negative when it loses; the larger, the
    /// sooner the win. Connect Four follows Pascal Pons' convention (22
    /// minus the winner's discs at the win, 7x6 board); minimax gives 1 +
    /// the empty cells left when the game ends.
    Exact(i32),
    /// A heuristic estimate in the engine's own units, positive when the
    /// seat to move stands better (minimax cut off by depth or budget: see
    /// [`MinimaxEngine`]).
    Heuristic(i32),
    /// The share of simulated games the seat to move won, per mille (0 to
    /// 1,000; a draw counts half), as MCTS estimates it.
    WinRate(u16),
}

impl Score {
    /// The same value seen by the other seat of a two-seat game.
    pub fn flip(self) -> Score {
        match self {
            Score::Exact(v) => Score::Exact(-v),
            Score::Heuristic(v) => Score::Heuristic(-v),
            Score::WinRate(w) => Score::WinRate(1000u16.saturating_sub(w)),
        }
    }
}

/// What an engine chose: a legal move of the seat to move and its score.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The move.
    pub mv: Move,
    /// The position's value for the seat to move, with this move played
    /// best.
    pub score: Score,
    /// The nodes the search visited.
    pub nodes: u64,
}

/// An engine's analysis of a position: its value and each legal move's,
/// all for the seat to move.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Analysis {
    /// The position's value: the best of `moves`.
    pub score: Score,
    /// Every legal move in the rules' order, with the value of playing it.
    pub moves: Vec<(Move, Score)>,
    /// The nodes the search visited.
    pub nodes: u64,
}

impl Score {
    /// A total order for comparing scores of one engine, best last: a
    /// proven win beats every estimate, which beats a proven loss.
    pub fn rank(self) -> i64 {
        const PROVEN: i64 = 1 << 40;
        match self {
            Score::Exact(v) if v > 0 => PROVEN + i64::from(v),
            Score::Exact(v) if v < 0 => -PROVEN + i64::from(v),
            Score::Exact(_) => 0,
            Score::Heuristic(v) => i64::from(v),
            Score::WinRate(w) => i64::from(w) - 500,
        }
    }
}

/// An engine: chooses a move for the seat to move. Implementations are
/// unit structs, one per file; pure and deterministic for a given node,
/// strength, budget and generator (unless stopped by the flag).
pub trait Engine: Sync {
    /// Whether the engine can play a game of `rules` with `seats` seats.
    ///
    /// # Errors
    /// A short lowercase sentence saying why not (e.g. "the connect4 engine
    /// plays only standard 7x6 Connect Four").
    fn supports(&self, rules: &RuleSet, seats: usize) -> Result<(), String>;

    /// The move to play on `node` at `strength` (1 to [`MAX_STRENGTH`]),
    /// within `budget`, drawing any randomness from `rng`. `None` only when
    /// the seat to move has no legal move or the search was stopped before
    /// it found one.
    fn choose(
        &self,
        node: &Node<'_>,
        strength: u8,
        budget: &Budget<'_>,
        rng: &mut ChaCha8Rng,
    ) -> Option<Choice>;

    /// The value of every legal move on `node`, within `budget` in all. The
    /// default plays each move and asks [`Engine::choose`] on the position
    /// after it (with an equal share of the budget), flipping the answer:
    /// for games with two seats in play only (`None` otherwise). A move that
    /// ends the game scores [`Score::Exact`]: 1 + the empty cells left for
    /// a win, 0 for a draw. `None` when there is no legal move or the
    /// search was stopped before every move had a value.
    fn analyze(
        &self,
        node: &Node<'_>,
        strength: u8,
        budget: &Budget<'_>,
        rng: &mut ChaCha8Rng,
    ) -> Option<Analysis> {
        if node.in_play().count() != 2 {
            return None;
        }
        let moves = node.moves();
        let share = Budget {
            nodes: (budget.nodes / moves.len().max(1) as u64).max(1),
            stop: budget.stop,
        };
        let mut child = node.clone();
        let mut scored = Vec::with_capacity(moves.len());
        let mut nodes = 0;
        for mv in moves {
            if budget.stopped() {
                return None;
            }
            let step = child.play(mv).ok()?;
            let score = match child.outcome() {
                Some(Outcome::Draw) => Score::Exact(0),
                Some(Outcome::Win { seat, .. }) => {
                    let won = Score::Exact(1 + child.empty_cells());
                    if *seat == step.seat { won } else { won.flip() }
                }
                None => {
                    let reply = self.choose(&child, strength, &share, rng)?;
                    nodes += reply.nodes;
                    reply.score.flip()
                }
            };
            child.undo(&step);
            scored.push((mv, score));
        }
        let score = scored.iter().map(|(_, s)| *s).max_by_key(|s| s.rank())?;
        Some(Analysis {
            score,
            moves: scored,
            nodes,
        })
    }
}

/// A position to search from: the rules, the pieces, the seat to move and
/// the seats still in play. [`Node::play`] and [`Node::undo`] move through
/// the game tree, giving the turn on the way the game layer does (the
/// rules' next seat, then any passes, skipping seats out of play).
#[derive(Debug, Clone)]
pub struct Node<'r> {
    rules: &'r RuleSet,
    position: Position,
    to_move: Seat,
    out: Vec<bool>,
    /// Set when the last move played ended the game.
    outcome: Option<Outcome>,
}

/// A move played on a [`Node`], as [`Node::undo`] takes it back.
#[derive(Debug, Clone)]
pub struct Step {
    /// What the move did.
    pub played: Played,
    /// Who played it.
    pub seat: Seat,
}

impl<'r> Node<'r> {
    /// A node of a game in progress: `position` under `rules`, `to_move` to
    /// play, `out[i]` true for each seat out of play (its length is the
    /// number of seats).
    pub fn new(rules: &'r RuleSet, position: Position, to_move: Seat, out: Vec<bool>) -> Self {
        Node {
            rules,
            position,
            to_move,
            out,
            outcome: None,
        }
    }

    /// The rules.
    pub fn rules(&self) -> &'r RuleSet {
        self.rules
    }

    /// The pieces.
    pub fn position(&self) -> &Position {
        &self.position
    }

    /// The seat to move.
    pub fn to_move(&self) -> Seat {
        self.to_move
    }

    /// How many seats the game has (in play or out).
    pub fn seats(&self) -> usize {
        self.out.len()
    }

    /// The seats still in play, in turn order.
    pub fn in_play(&self) -> impl Iterator<Item = Seat> + '_ {
        (0..self.out.len())
            .filter(|i| !self.out[*i])
            .map(|i| Seat(i as u8))
    }

    /// The board's empty cells (0 in games without cells): what an exact
    /// score counts besides the win, so a quicker win scores higher.
    pub fn empty_cells(&self) -> i32 {
        self.position
            .board()
            .map_or(0, |board| board.empty_count() as i32)
    }

    /// How the game ended, when the last move played ended it.
    pub fn outcome(&self) -> Option<&Outcome> {
        self.outcome.as_ref()
    }

    /// The legal moves of the seat to move, in the rules' order; empty once
    /// the game is over.
    pub fn moves(&self) -> Vec<Move> {
        if self.outcome.is_some() {
            return Vec::new();
        }
        self.rules
            .legal_moves(&self.position, self.to_move)
            .collect()
    }

    /// Plays `mv` for the seat to move.
    ///
    /// # Errors
    /// [`IllegalMove`] as the rules say; the node is unchanged.
    pub fn play(&mut self, mv: Move) -> Result<Step, IllegalMove> {
        let seat = self.to_move;
        let played = self.rules.play(&self.position, seat, mv)?;
        self.rules.apply(&mut self.position, seat, &played);
        let mut next = self.rules.next_to_move(self.seats(), seat, &played);
        for pass in &played.passes {
            next = pass.next(self.seats());
        }
        self.to_move = self.skip_out(next);
        self.outcome.clone_from(&played.outcome);
        Ok(Step { played, seat })
    }

    /// Takes back `step`, the last move [`Node::play`] played.
    pub fn undo(&mut self, step: &Step) {
        self.rules.undo(&mut self.position, step.seat, &step.played);
        self.to_move = step.seat;
        self.outcome = None;
    }

    /// `seat`, or the first seat after it in turn order that is in play.
    fn skip_out(&self, seat: Seat) -> Seat {
        let mut next = seat;
        for _ in 0..self.seats() {
            if !self.out[next.index()] {
                break;
            }
            next = next.next(self.seats());
        }
        next
    }
}
