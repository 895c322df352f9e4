//! MCTS against the random engine: at least 95% wins on 15x15 gomoku and
//! on 8x8 Othello, over 200 seeded games of each, 100 with MCTS as seat 0
//! and 100 as seat 1.
//!
//! Games are played in process through the rules and the engines, the way
//! the game layer does it: a [`Node`] from the initial position, each
//! seat's [`Bot`] choosing a move with the generator `bot.rng(ply)` (ply =
//! moves played so far), [`Node::play`] giving the turn on (Othello's
//! passes included) and saying when the game ends.
//!
//! Game `i` of a kind (0 to 199) uses seed `i` for both bots and seats
//! MCTS at `i % 2`, so each seat's test below plays the games of its
//! parity; the four tests run in parallel. Each prints every game's result
//! and its seat's tally; `cargo test --test rules mcts_strength -- --nocapture`
//! shows them.

use std::sync::atomic::AtomicBool;

use plylog::engine::{Bot, Budget, EngineKind, MctsEngine, Node};
use plylog::rules::{GomokuRules, OthelloRules, Outcome, Overline, RuleSet, Seat};

/// Games per kind, half with MCTS as each seat.
const GAMES: u64 = 200;

/// The strength MCTS plays at: 50 iterations a move
/// ([`MctsEngine::iterations`]), low enough for the 400 games to take about
/// a minute in a debug build on two busy cores (8 s in release). It wins
/// all 200 gomoku games and 198 of the 200 Othello games (a draw as seat 0,
/// a loss as seat 1).
const STRENGTH: u8 = 2;

/// The share of games MCTS must win, per game kind and seat.
const REQUIRED: f64 = 0.95;

/// Wins, draws and losses of MCTS.
#[derive(Debug, Default)]
struct Tally {
    wins: u64,
    draws: u64,
    losses: u64,
}

impl Tally {
    fn games(&self) -> u64 {
        self.wins + self.draws + self.losses
    }

    fn win_rate(&self) -> f64 {
        self.wins as f64 / self.games() as f64
    }
}

/// Plays one game between `bots` (by seat) to its end: the winner, `None`
/// for a draw, and the moves played.
fn play(rules: &RuleSet, bots: [Bot; 2]) -> (Option<Seat>, u64) {
    let mut node = Node::new(rules, rules.initial_position(2), Seat(0), vec![false; 2]);
    let stop = AtomicBool::new(false);
    let budget = Budget {
        nodes: u64::MAX,
        stop: &stop,
    };
    let mut ply = 0;
    loop {
        let bot = bots[node.to_move().index()];
        let choice = bot
            .engine
            .engine()
            .choose(&node, bot.strength, &budget, &mut bot.rng(ply))
            .unwrap_or_else(|| panic!("{} has no move at ply {ply}", bot.engine.name()));
        node.play(choice.mv)
            .unwrap_or_else(|e| panic!("{} chose an illegal move: {e}", bot.engine.name()));
        ply += 1;
        match node.outcome() {
            Some(Outcome::Win { seat, .. }) => return (Some(*seat), ply),
            Some(Outcome::Draw) => return (None, ply),
            None => {}
        }
    }
}

/// Plays the games of `kind` where MCTS sits at `seat`, prints them and
/// the tally, and checks the win rate.
fn mcts_beats_random(kind: &str, rules: &RuleSet, seat: Seat) {
    let mut tally = Tally::default();
    for seed in (0..GAMES).filter(|i| i % 2 == seat.index() as u64) {
        let mcts = Bot {
            engine: EngineKind::Mcts,
            strength: STRENGTH,
            seed,
        };
        let random = Bot {
            engine: EngineKind::Random,
            strength: 1,
            seed,
        };
        let bots = if seat == Seat(0) {
            [mcts, random]
        } else {
            [random, mcts]
        };
        let (winner, plies) = play(rules, bots);
        let result = match winner {
            Some(w) if w == seat => {
                tally.wins += 1;
                "win"
            }
            Some(_) => {
                tally.losses += 1;
                "loss"
            }
            None => {
                tally.draws += 1;
                "draw"
            }
        };
        eprintln!("{kind} game {seed} (seed {seed}, mcts as {seat}): {result} in {plies} plies");
    }
    eprintln!(
        "{kind}, mcts strength {STRENGTH} ({} iterations) as {seat} against random: \
         {} wins, {} draws, {} losses of {} ({:.1}% wins)",
        MctsEngine::iterations(STRENGTH),
        tally.wins,
        tally.draws,
        tally.losses,
        tally.games(),
        100.0 * tally.win_rate(),
    );
    assert!(
        tally.win_rate() >= REQUIRED,
        "{kind}: mcts as {seat} won {} of {}, below {REQUIRED}",
        tally.wins,
        tally.games()
    );
}

/// 15x15, K = 5, with the wire's default overline rule: exactly five wins
/// (standard gomoku).
fn gomoku() -> RuleSet {
    let rules = GomokuRules::new(None, None, None, Overline::DoesNotWin, 225).expect("15x15, k=5");
    RuleSet::Gomoku(rules)
}

fn othello() -> RuleSet {
    RuleSet::Othello(OthelloRules::new(None).expect("8x8"))
}

#[test]
fn mcts_wins_95_percent_of_gomoku_games_against_random_as_seat_0() {
    mcts_beats_random("gomoku 15x15", &gomoku(), Seat(0));
}

#[test]
fn mcts_wins_95_percent_of_gomoku_games_against_random_as_seat_1() {
    mcts_beats_random("gomoku 15x15", &gomoku(), Seat(1));
}

#[test]
fn mcts_wins_95_percent_of_othello_games_against_random_as_seat_0() {
    mcts_beats_random("othello 8x8", &othello(), Seat(0));
}

#[test]
fn mcts_wins_95_percent_of_othello_games_against_random_as_seat_1() {
    mcts_beats_random("othello 8x8", &othello(), Seat(1));
}
