//! The exact Connect Four solver against Pascal Pons' test sets
//! (tests/fixtures/connect4-pons/, see its README): every position must get
//! its published score, each solved from a reset solver as Pons measures.
//!
//! The end, middle and opening-easy sets run in plain `cargo test` (about
//! 0.2 s, 0.7 s and 3 s in a debug build); Begin-Medium is `#[ignore]`d: it
//! takes about 9 minutes in a debug build (1.2 billion nodes), 2 in release
//! (`cargo test --release --test engines -- --ignored`). `cargo bench
//! --bench connect4` solves and times all four in release.

use std::sync::atomic::AtomicBool;

use plylog::engine::{Budget, ConnectFourEngine, Engine, MAX_STRENGTH, Node, Score, Solver};
use plylog::rules::{ConnectFourRules, Move, RuleSet, Seat};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

const END_EASY: &str = include_str!("../fixtures/connect4-pons/Test_L3_R1");
const MIDDLE_EASY: &str = include_str!("../fixtures/connect4-pons/Test_L2_R1");
const BEGIN_EASY: &str = include_str!("../fixtures/connect4-pons/Test_L1_R1");
const BEGIN_MEDIUM: &str = include_str!("../fixtures/connect4-pons/Test_L1_R2");

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
