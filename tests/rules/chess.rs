//! Chess move generation against published perft counts
//! (`tests/fixtures/chess`, with their sources): every position's tree of
//! legal moves walked through plylog's rules (`ChessGame::perft`, which
//! plays them as a game does), the leaves counted at each depth.

use plylog::rules::chess::{ChessGame, ChessSetupError, ChessVariant};
use plylog_testkit::{PerftCase, UNREACHABLE, perft_cases};
use rand::SeedableRng;
use rand::seq::IndexedRandom;

/// Checks each case's counts up to `max_depth` (all listed when `None`).
fn check(variant: ChessVariant, cases: &[&PerftCase], max_depth: Option<u32>) -> usize {
    let mut checked = 0;
    for case in cases {
        // Standard positions with Chess960's castling (the `xfen-` ones,
        // a king on h8 with a queen-side right, ...) are Chess960 games.
        let game = match ChessGame::from_fen(variant, &case.fen) {
            Err(ChessSetupError::Chess960Castling(_)) => {
                ChessGame::from_fen(ChessVariant::Chess960, &case.fen)
            }
            read => read,
        };
        let game = match game {
            Ok(game) => game,
            Err(e) if UNREACHABLE.contains(&case.id.as_str()) => {
                println!("{} refused, as expected: {e}", case.id);
                continue;
            }
            Err(e) => panic!("{} ({}): {e}", case.id, case.fen),
        };
        for &(depth, count) in &case.counts {
            if max_depth.is_some_and(|max| depth > max) {
                continue;
            }
            assert_eq!(
                game.perft(depth),
                count,
                "{} ({}) at depth {depth}",
                case.id,
                case.fen
            );
            checked += 1;
        }
    }
    checked
}

#[test]
fn the_tricky_positions_match_their_counts_to_every_listed_depth() {
    let cases = perft_cases(include_str!("../fixtures/chess/tricky.perft"));
    assert_eq!(cases.len(), 26);
    let checked = check(
        ChessVariant::Standard,
        &cases.iter().collect::<Vec<_>>(),
        None,
    );
    println!(
        "{checked} counts of {} positions",
        cases.len() - UNREACHABLE.len()
    );
}

#[test]
fn a_seeded_sample_of_random_positions_matches_to_depth_three() {
    let cases = perft_cases(include_str!("../fixtures/chess/random.perft"));
    assert_eq!(cases.len(), 6_838);
    let seed = 40;
    println!("seed {seed}");
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let sample: Vec<&PerftCase> = cases.choose_multiple(&mut rng, 500).collect();
    check(ChessVariant::Standard, &sample, Some(3));
}

#[test]
#[ignore = "every random position to depth 4: minutes in a debug build"]
fn every_random_position_matches_to_depth_four() {
    let cases = perft_cases(include_str!("../fixtures/chess/random.perft"));
    check(
        ChessVariant::Standard,
        &cases.iter().collect::<Vec<_>>(),
        Some(4),
    );
}

#[test]
fn every_chess960_start_matches_to_depth_three() {
    let cases = perft_cases(include_str!("../fixtures/chess/chess960.perft"));
    assert_eq!(cases.len(), 960);
    check(
        ChessVariant::Chess960,
        &cases.iter().collect::<Vec<_>>(),
        Some(3),
    );
}

#[test]
fn every_real_game_replays_move_by_move_and_is_written_back_as_it_was() {
    use plylog::rules::chess::{ChessEnding, Side, pgn};
    let text = include_str!("../fixtures/chess/lichess_db_sample.pgn");
    let games = pgn::parse(text).expect("the sample reads");
    assert_eq!(games.len(), 438);
    // Each game's movetext as the file has it, white space aside.
    let movetexts: Vec<String> = text
        .split("\n[Event ")
        .map(|game| {
            game.lines()
                .filter(|line| !line.starts_with('[') && !line.ends_with("\"]"))
                .flat_map(str::split_whitespace)
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect();
    assert_eq!(movetexts.len(), games.len());
    let (mut plies, mut on_the_board) = (0, 0);
    for (at, (game, movetext)) in games.iter().zip(&movetexts).enumerate() {
        let site = game.tag("Site").unwrap_or("?");
        let (moves, end) = game
            .replay()
            .unwrap_or_else(|e| panic!("game {at} ({site}): {e}"));
        // The rules write each move as the file does.
        let mut position = game.start().expect("a start");
        for (mv, written) in moves.iter().zip(&game.moves) {
            assert_eq!(position.san(*mv), written.san, "game {at} ({site})");
            position.play(*mv).expect("replayed");
        }
        plies += moves.len();
        // A game that ended on the board has the result the rules give.
        if let Some(ending) = end.ending() {
            on_the_board += 1;
            let result = match (ending, end.side_to_move()) {
                (ChessEnding::Checkmate, Side::White) => "0-1",
                (ChessEnding::Checkmate, Side::Black) => "1-0",
                _ => "1/2-1/2",
            };
            assert_eq!(game.result, result, "game {at} ({site}): {ending:?}");
            assert_eq!(game.tag("Result"), Some(result));
        }
        let written = pgn::write(game);
        let again = pgn::parse(&written).expect("its own output reads");
        assert_eq!(again, std::slice::from_ref(game), "game {at} ({site})");
        let written_movetext = written
            .lines()
            .filter(|line| !line.starts_with('['))
            .flat_map(str::split_whitespace)
            .collect::<Vec<_>>()
            .join(" ");
        assert_eq!(&written_movetext, movetext, "game {at} ({site})");
    }
    println!("438 games, {plies} plies, {on_the_board} ended on the board: no divergence");
}
