//! The exact Connect Four solver against Pascal Pons' test sets
//! (tests/fixtures/connect4-pons/, see its README): every position must get
//! its published score, each solved from a reset solver as Pons measures.
//!
//! The end, middle and opening-easy sets run in plain `cargo test` (about
//! 0.2 s, 0.7 s and 3 s in a debug build); Begin-Medium is `#[ignore]`d: it
//! takes about 9 minutes in a debug build (1.2 billion nodes), 2 in release
//! (`cargo test --release --test rules engines:: -- --ignored`). `cargo bench
//! --bench connect4` solves and times all four in release.

use std::sync::atomic::AtomicBool;

use plylog::engine::{
    Bot, Budget, ConnectFourEngine, Engine, EngineKind, MAX_STRENGTH, Node, Score, Solver,
};
use plylog::rules::{ConnectFourRules, Move, Outcome, RuleSet, Seat};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const END_EASY: &str = include_str!("../../fixtures/connect4-pons/Test_L3_R1");
const MIDDLE_EASY: &str = include_str!("../../fixtures/connect4-pons/Test_L2_R1");
const BEGIN_EASY: &str = include_str!("../../fixtures/connect4-pons/Test_L1_R1");
const BEGIN_MEDIUM: &str = include_str!("../../fixtures/connect4-pons/Test_L1_R2");

/// The lines of a test set: the move string and its score.
fn lines(set: &'static str) -> impl Iterator<Item = (usize, &'static str, i32)> {
    set.lines().enumerate().map(|(i, line)| {
        let (moves, score) = line
            .split_once(' ')
            .unwrap_or_else(|| panic!("line {}: no score", i + 1));
        let score = score
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("line {}: {e}", i + 1));
        (i + 1, moves, score)
    })
}

/// Solves every position of `set`, each from a reset solver without a node
/// limit, and fails listing the lines whose score is not the published one.
fn every_score_matches(name: &str, set: &'static str) {
    let stop = AtomicBool::new(false);
    let budget = Budget {
        nodes: u64::MAX,
        stop: &stop,
    };
    let mut solver = Solver::new();
    let mut positions = 0;
    let mut wrong = Vec::new();
    for (line, moves, expected) in lines(set) {
        solver.reset();
        let position = moves
            .parse()
            .unwrap_or_else(|e| panic!("{name} line {line}: {e}"));
        let score = solver.solve(&position, &budget);
        if score != Some(expected) {
            wrong.push(format!("line {line} {moves}: {score:?}, not {expected}"));
        }
        positions += 1;
    }
    assert_eq!(positions, 1000, "{name}: positions");
    assert!(wrong.is_empty(), "{name}: {}", wrong.join("\n"));
}

#[test]
fn every_end_game_easy_position_gets_its_exact_score() {
    every_score_matches("Test_L3_R1", END_EASY);
}

#[test]
fn every_middle_game_easy_position_gets_its_exact_score() {
    every_score_matches("Test_L2_R1", MIDDLE_EASY);
}

#[test]
fn every_opening_easy_position_gets_its_exact_score() {
    every_score_matches("Test_L1_R1", BEGIN_EASY);
}

#[test]
#[ignore = "about 9 minutes in a debug build, 2 in release"]
fn every_opening_medium_position_gets_its_exact_score() {
    every_score_matches("Test_L1_R2", BEGIN_MEDIUM);
}

#[test]
fn the_best_column_of_analyze_has_the_score_of_the_position() {
    let stop = AtomicBool::new(false);
    let budget = Budget {
        nodes: u64::MAX,
        stop: &stop,
    };
    let mut solver = Solver::new();
    for (line, moves, expected) in lines(END_EASY).step_by(10) {
        let position = moves.parse().expect("a legal sequence");
        let scores = solver.analyze(&position, &budget).expect("no limit");
        assert_eq!(
            scores.iter().flatten().max(),
            Some(&expected),
            "line {line} {moves}"
        );
    }
}

#[test]
fn the_strongest_engine_plays_a_column_of_the_best_score_and_says_so() {
    let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
    let stop = AtomicBool::new(false);
    let budget = Budget {
        nodes: u64::MAX,
        stop: &stop,
    };
    let mut solver = Solver::new();
    for (line, moves, expected) in lines(END_EASY).chain(lines(MIDDLE_EASY)).step_by(20) {
        let mut node = Node::new(&rules, rules.initial_position(2), Seat(0), vec![false; 2]);
        for ch in moves.chars() {
            let column = ch.to_digit(10).expect("a digit") - 1;
            node.play(Move::Drop { column }).expect("a legal move");
        }
        let mut rng = ChaCha8Rng::seed_from_u64(line as u64);
        let choice = ConnectFourEngine
            .choose(&node, MAX_STRENGTH, &budget, &mut rng)
            .expect("a move");
        assert_eq!(choice.score, Score::Exact(expected), "line {line} {moves}");
        let Move::Drop { column } = choice.mv else {
            panic!("line {line}: {:?} is not a drop", choice.mv)
        };
        let position = moves.parse().expect("a legal sequence");
        let scores = solver.analyze(&position, &budget).expect("no limit");
        assert_eq!(
            scores[column as usize],
            Some(expected),
            "line {line} {moves}: column {column}"
        );
    }
}

/// Plays standard Connect Four from the empty board, connect4 at strength
/// 10 (seed `seed`) as the first player against MCTS at `mcts` (seed
/// `seed + 1000`), each with the server's default budget of 1,000,000
/// nodes: the winner (`None` for a draw) and whether every one of
/// connect4's moves was proven.
fn exact_first_against_mcts(seed: u64, mcts: u8) -> (Option<Seat>, bool) {
    let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
    let mut node = Node::new(&rules, rules.initial_position(2), Seat(0), vec![false; 2]);
    let stop = AtomicBool::new(false);
    let budget = Budget {
        nodes: 1_000_000,
        stop: &stop,
    };
    let bots = [
        Bot {
            engine: EngineKind::ConnectFour,
            strength: MAX_STRENGTH,
            seed,
        },
        Bot {
            engine: EngineKind::Mcts,
            strength: mcts,
            seed: seed + 1000,
        },
    ];
    let mut proven = true;
    for ply in 0.. {
        let bot = bots[node.to_move().index()];
        let choice = bot
            .engine
            .engine()
            .choose(&node, bot.strength, &budget, &mut bot.rng(ply))
            .expect("a move while the game is on");
        if bot.engine == EngineKind::ConnectFour {
            proven &= matches!(choice.score, Score::Exact(_));
        }
        node.play(choice.mv).expect("a legal move");
        match node.outcome() {
            Some(Outcome::Win { seat, .. }) => return (Some(*seat), proven),
            Some(Outcome::Draw) => return (None, proven),
            None => {}
        }
    }
    unreachable!("a game of Connect Four ends within 42 plies")
}

/// The number in environment variable `name`, or `default`.
fn env_or(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Connect4 at strength 10 moving first never loses: seeded games against
/// MCTS (seeds 0 to N-1, printed), 4 games at MCTS strength 4 by default
/// (C4_GAMES and C4_MCTS_STRENGTH change them: `C4_GAMES=50
/// C4_MCTS_STRENGTH=10 cargo test --release --test rules -- --ignored
/// --nocapture first_player` is issue 35's 50 games).
///
/// Ignored until `data/connect4-book.bin` holds the whole opening book (it
/// holds the empty board only): without it the engine's early moves after
/// the first are not proven within the default budget (generate it with
/// `plylog connect4-book`, see the README).
#[test]
#[ignore = "needs the whole opening book (plylog connect4-book)"]
fn the_exact_engine_as_first_player_never_loses_to_mcts() {
    let games = env_or("C4_GAMES", 4);
    let mcts = env_or("C4_MCTS_STRENGTH", 4) as u8;
    let (mut wins, mut draws, mut losses, mut unproven) = (0, 0, 0, 0);
    for seed in 0..games {
        let (winner, proven) = exact_first_against_mcts(seed, mcts);
        eprintln!("seed {seed}: winner {winner:?}, every move proven: {proven}");
        match winner {
            Some(Seat(0)) => wins += 1,
            Some(_) => losses += 1,
            None => draws += 1,
        }
        unproven += u64::from(!proven);
    }
    eprintln!(
        "connect4 (10) first against mcts ({mcts}): {wins} wins, {draws} draws, {losses} losses \
         in {games} games; {unproven} with a move not proven"
    );
    assert_eq!(
        (losses, draws),
        (0, 0),
        "a perfect first player wins every game"
    );
}

/// The empty board, from the opening book (data/connect4-book.bin): the
/// first player wins with its last disc (Pons' score 1), and only in the
/// middle column (index 3), proven within the server's default budget of
/// 1,000,000 nodes, which the solver alone is far from enough for.
#[test]
fn the_empty_board_is_proven_a_first_player_win_in_the_middle_column_only() {
    let rules = RuleSet::ConnectFour(ConnectFourRules::STANDARD);
    let node = Node::new(&rules, rules.initial_position(2), Seat(0), vec![false; 2]);
    let stop = AtomicBool::new(false);
    let budget = Budget {
        nodes: 1_000_000,
        stop: &stop,
    };
    for seed in 0..3 {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let choice = ConnectFourEngine
            .choose(&node, MAX_STRENGTH, &budget, &mut rng)
            .expect("a move");
        assert_eq!(choice.mv, Move::Drop { column: 3 }, "seed {seed}");
        assert_eq!(choice.score, Score::Exact(1), "seed {seed}");
    }
    let mut rng = ChaCha8Rng::seed_from_u64(0);
    let analysis = ConnectFourEngine
        .analyze(&node, MAX_STRENGTH, &budget, &mut rng)
        .expect("an analysis");
    assert_eq!(analysis.score, Score::Exact(1));
    for (mv, score) in analysis.moves {
        match mv {
            Move::Drop { column: 3 } => assert_eq!(score, Score::Exact(1)),
            // Proven not to win: below the middle column's score.
            _ => assert!(score.rank() < Score::Exact(1).rank(), "{mv:?}: {score:?}"),
        }
    }
}
