//! The Milton Bradley snakes-and-ladders board (`fixtures/snakes-ladders`,
//! sources in its README) played by the rules with seeded dice: the mean
//! game length of one player over 200,000 seeded games must be within 0.15
//! turns of the published 39.2251 (exact landing, one die), and the shortest
//! possible game, found by search over the board, must be the published 7.
//! The two overshoot variants are held to the figures computed for them when
//! the data was collected.

use plylog::rules::{Overshoot, RuleSet, Seat, SnakesLaddersOptions, SnakesLaddersRules};

const LADDERS: &str = include_str!("../fixtures/snakes-ladders/milton-bradley-ladders.txt");
const CHUTES: &str = include_str!("../fixtures/snakes-ladders/milton-bradley-chutes.txt");
const EXPECTED: &str = include_str!("../fixtures/snakes-ladders/milton-bradley-expected.json");

/// Games simulated per figure.
const GAMES: u64 = 200_000;

/// The board's 19 jumps, ladders then chutes, as listed in the files.
fn jumps() -> Vec<(i64, i64)> {
    LADDERS
        .lines()
        .chain(CHUTES.lines())
        .filter(|line| !line.trim().is_empty())
        .map(|line| {
            let (from, to) = line.split_once(' ').expect("<from> <to>");
            (from.trim().parse().unwrap(), to.trim().parse().unwrap())
        })
        .collect()
}

fn milton_bradley(overshoot: Overshoot, seed: u64) -> SnakesLaddersRules {
    let options = SnakesLaddersOptions {
        jumps: jumps(),
        overshoot: Some(overshoot),
        seed,
        ..SnakesLaddersOptions::default()
    };
    SnakesLaddersRules::new(options, 1_000_000).unwrap()
}

/// Rolls for one seat until it finishes; the number of rolls (turns).
fn turns_to_finish(rules: SnakesLaddersRules) -> u32 {
    let rules = RuleSet::SnakesLadders(rules);
    let mut position = rules.initial_position(1);
    let mut turns = 0;
    loop {
        let mv = rules.legal_moves(&position, Seat(0)).next().unwrap();
        let played = rules.play(&position, Seat(0), mv).unwrap();
        rules.apply(&mut position, Seat(0), &played);
        turns += 1;
        if played.outcome.is_some() {
            return turns;
        }
    }
}

/// Mean and minimum turns over `GAMES` games seeded `first_seed`,
/// `first_seed + 1`, ..., on two threads.
fn mean_turns(overshoot: Overshoot, first_seed: u64) -> (f64, u32) {
    let board = milton_bradley(overshoot, 0);
    let half = |parity: u64| {
        let board = board.clone();
        std::thread::spawn(move || {
            (first_seed..first_seed + GAMES)
                .filter(|seed| seed % 2 == parity)
                .map(|seed| turns_to_finish(board.clone().with_seed(seed)))
                .fold((0u64, u32::MAX), |(sum, min), t| {
                    (sum + u64::from(t), min.min(t))
                })
        })
    };
    let (even, odd) = (half(0), half(1));
    let (a, b) = (even.join().unwrap(), odd.join().unwrap());
    ((a.0 + b.0) as f64 / GAMES as f64, a.1.min(b.1))
}

/// The first seed: 0, or `PLYLOG_SEED_BASE` to try other seeds by hand.
fn seed_base() -> u64 {
    std::env::var("PLYLOG_SEED_BASE").map_or(0, |s| s.parse().unwrap())
}

fn expected(path: &[&str]) -> f64 {
    let json: serde_json::Value = serde_json::from_str(EXPECTED).unwrap();
    path.iter()
        .fold(&json, |v, key| &v[key])
        .as_f64()
        .expect("a number")
}

#[test]
fn the_board_is_read_from_the_files_and_matches_the_json_copy() {
    let json: serde_json::Value = serde_json::from_str(EXPECTED).unwrap();
    let listed: Vec<(i64, i64)> = ["ladders_from_to", "chutes_from_to"]
        .iter()
        .flat_map(|key| json[key].as_array().unwrap().clone())
        .map(|pair| (pair[0].as_i64().unwrap(), pair[1].as_i64().unwrap()))
        .collect();
    assert_eq!(jumps(), listed);
    assert_eq!(jumps().len(), 19);
}

#[test]
fn the_shortest_game_is_seven_turns() {
    let rules = milton_bradley(Overshoot::ExactLanding, 0);
    assert_eq!(rules.shortest_game(), Some(7));
    let published = expected(&["published_results", "minimum_turns", "value"]);
    assert_eq!(f64::from(rules.shortest_game().unwrap()), published);
}

#[test]
fn exact_landing_averages_the_published_game_length() {
    let published = expected(&[
        "published_results",
        "expected_turns_single_player_exact_landing_stay_on_overshoot",
        "value_decimal",
    ]);
    let (mean, shortest) = mean_turns(Overshoot::ExactLanding, seed_base());
    println!(
        "exact landing: mean {mean:.4} turns over {GAMES} games (published {published}), shortest {shortest}"
    );
    assert!((mean - published).abs() < 0.15, "mean {mean}");
    assert!(shortest >= 7, "a game of {shortest} turns");
}

#[test]
fn the_overshoot_variants_average_their_computed_lengths() {
    for (overshoot, key) in [
        (
            Overshoot::BounceBack,
            "expected_turns_bounce_back_on_overshoot",
        ),
        (
            Overshoot::ReachOrPass,
            "expected_turns_reaching_or_passing_100_wins",
        ),
    ] {
        let computed = expected(&["computed_during_collection_not_published", key]);
        let (mean, _) = mean_turns(overshoot, seed_base());
        println!("{overshoot:?}: mean {mean:.4} turns over {GAMES} games (computed {computed})");
        assert!((mean - computed).abs() < 0.2, "{overshoot:?}: mean {mean}");
    }
}
