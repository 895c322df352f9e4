//! plylog's chess rules against python-chess, an independent
//! implementation: `scripts/chess_oracle.py` plays seeded random games
//! (from the standard start and five positions with castling, en passant
//! and promotions, a third of the moves taking a piece back so positions
//! repeat) and says of every position its FEN, each legal move in UCI and
//! SAN, check, mate, stalemate, insufficient material, the draws that can
//! be claimed and the endings by rule; this replays each game through
//! `plylog::rules::chess::ChessGame` and compares everything, ply by ply.
//!
//! Needs a Python with python-chess (`tests/requirements.txt`):
//! `PLYLOG_PYTHON` names it, or `.venv/bin/python` in the repository is
//! used when it has it. Without one the test is listed as ignored with the
//! reason printed; with `PLYLOG_REQUIRE_PYTHON=1` (as in `.ci/run`) that
//! fails it instead.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::Command;

use libtest_mimic::Trial;
use plylog::rules::chess::{ChessGame, ChessVariant};
use plylog_testkit::optional;

/// The seed of the games (game `i` draws from `random.Random(SEED + i)`).
const SEED: u64 = 7;

/// How many games, and at most how many plies each.
const GAMES: u32 = 40;
const MAX_PLIES: u32 = 600;

/// The Python to run the script with, if one has python-chess.
fn python() -> Option<PathBuf> {
    crate::python_client::python_with("chess")
}

/// The test, named `chess_oracle::<test>`: ignored (or failed, as
/// `PLYLOG_REQUIRE_PYTHON` says) without python-chess.
pub(crate) fn trials() -> Vec<Trial> {
    let python = optional::availability(
        "chess_oracle",
        python().is_some(),
        "PLYLOG_REQUIRE_PYTHON",
        "no Python with python-chess: `.venv/bin/pip install -r tests/requirements.txt`, or set PLYLOG_PYTHON",
    );
    vec![optional::trial(
        "chess_oracle::every_position_of_random_games_agrees_with_python_chess",
        &python,
        every_position_of_random_games_agrees_with_python_chess,
    )]
}

/// What python-chess says of a position, read from one line of the script.
#[derive(Debug, PartialEq, Eq, serde::Deserialize)]
struct Said {
    fen: String,
    legal: BTreeSet<String>,
    check: bool,
    checkmate: bool,
    stalemate: bool,
    insufficient: bool,
    claim_threefold: bool,
    claim_fifty: bool,
    fivefold: bool,
    seventyfive: bool,
}

impl Said {
    /// The same, as plylog's rules say it of `game`.
    fn of(game: &ChessGame) -> Said {
        Said {
            fen: game.fen(),
            legal: game
                .legal_moves()
                .into_iter()
                .map(|mv| format!("{} {}", game.uci(mv), game.san(mv)))
                .collect(),
            check: game.in_check(),
            checkmate: game.is_checkmate(),
            stalemate: game.is_stalemate(),
            insufficient: game.insufficient_material(),
            claim_threefold: game.can_claim_threefold_repetition(),
            claim_fifty: game.can_claim_fifty_moves(),
            fivefold: game.is_fivefold_repetition(),
            seventyfive: game.is_seventy_five_moves(),
        }
    }
}

async fn every_position_of_random_games_agrees_with_python_chess() {
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("scripts/chess_oracle.py");
    println!("seed {SEED}, {GAMES} games of at most {MAX_PLIES} plies");
    let output = Command::new(python().expect("checked by the harness"))
        .arg(script)
        .args(["--seed", &SEED.to_string()])
        .args(["--games", &GAMES.to_string()])
        .args(["--max-plies", &MAX_PLIES.to_string()])
        .output()
        .expect("python runs");
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut game: Option<ChessGame> = None;
    let (mut games, mut positions, mut moves_checked) = (0, 0, 0);
    let mut seen = BTreeSet::new();
    for line in String::from_utf8(output.stdout).expect("UTF-8").lines() {
        let value: serde_json::Value = serde_json::from_str(line).expect("JSON");
        if let Some(start) = value.get("start").and_then(|s| s.as_str()) {
            game = Some(ChessGame::from_fen(ChessVariant::Standard, start).expect(start));
            games += 1;
            continue;
        }
        let game = game.as_mut().expect("a start first");
        let said: Said = serde_json::from_value(value.clone()).expect("a position");
        assert_eq!(Said::of(game), said, "game {games}, position {positions}");
        for (flag, on) in [
            ("claim_threefold", said.claim_threefold),
            ("claim_fifty", said.claim_fifty),
            ("fivefold", said.fivefold),
            ("seventyfive", said.seventyfive),
            ("checkmate", said.checkmate),
            ("stalemate", said.stalemate),
            ("insufficient", said.insufficient),
        ] {
            if on {
                seen.insert(flag);
            }
        }
        positions += 1;
        moves_checked += said.legal.len();
        if let Some(uci) = value.get("move").and_then(|m| m.as_str()) {
            let mv = game.parse_uci(uci).expect(uci);
            // Its SAN reads back as the same move.
            assert_eq!(game.parse_san(&game.san(mv)), Ok(mv), "{uci}");
            game.play(mv).unwrap_or_else(|e| panic!("{uci}: {e}"));
        } else {
            assert!(game.ending().is_some() || positions > 0, "a last position");
        }
    }
    println!(
        "{games} games, {positions} positions, {moves_checked} legal moves (UCI and SAN): no divergence; seen {seen:?}"
    );
    assert_eq!(games, GAMES);
    // The games reach every rule compared, so each comparison means something.
    assert_eq!(seen.len(), 7, "{seen:?}");
}
