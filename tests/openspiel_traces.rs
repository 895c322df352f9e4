//! Random games played by OpenSpiel (an independent implementation), in
//! `tests/fixtures/openspiel/` (see its README for the source, the format and
//! how to regenerate them with `scripts/openspiel_traces.py`), replayed
//! through plylog's game aggregate: at every ply our legal moves must equal
//! OpenSpiel's, every move must be accepted, and the game must end exactly at
//! the trace's last move with the same winner (or a draw).
//!
//! Covered: tic-tac-toe, m,n,k (4x4 k3, 5x6 k4, 7x7 k5), Connect Four (6x7
//! k4, 4x5 k3, 5x4 k4, 7x9 k5) and freestyle gomoku (9x9, 15x15; OpenSpiel's
//! gomoku lets an overline win). `othello_8x8.jsonl` waits for the Othello
//! rule set.

use std::path::Path;

use plylog::game::{Command, Event, GameConfig, GameState, SeatInfo, SeatLimits, decide, evolve};
use plylog::rules::{
    ConnectFourRules, Coord, GomokuRules, MnkRules, Move, Outcome, Overline, RuleSet, Seat,
};
use serde_json::Value;

fn rules(trace: &Value) -> RuleSet {
    let size = |key: &str| trace[key].as_i64().expect(key);
    let (rows, cols, k) = (size("rows"), size("cols"), size("k"));
    match trace["game"].as_str().unwrap() {
        "tic_tac_toe" | "mnk" => RuleSet::Mnk(MnkRules::new(rows, cols, k, 1_000_000).unwrap()),
        "connect_four" => RuleSet::ConnectFour(
            ConnectFourRules::new(Some(rows), Some(cols), Some(k), 1_000_000).unwrap(),
        ),
        "gomoku" => RuleSet::Gomoku(
            GomokuRules::new(Some(rows), Some(cols), Some(k), Overline::Wins, 1_000_000).unwrap(),
        ),
        other => panic!("no rule set for {other}"),
    }
}

/// A move as the traces write it: `[row, col]` or a column number.
fn trace_move(value: &Value) -> Move {
    match value {
        Value::Array(cell) => Move::Place(Coord::new(
            cell[0].as_u64().unwrap() as u32,
            cell[1].as_u64().unwrap() as u32,
        )),
        Value::Number(column) => Move::Drop {
            column: column.as_u64().unwrap() as u32,
        },
        other => panic!("unexpected move {other}"),
    }
}

/// Replays one trace; returns the number of plies checked.
fn replay(trace: &Value, name: &str) -> usize {
    let rules = rules(trace);
    let seats = ["first", "second"]
        .map(|s| SeatInfo {
            player_id: s.into(),
            display_name: String::new(),
            symbol: s[..1].into(),
        })
        .to_vec();
    let mut state = GameState::new(GameConfig::new(rules, seats, SeatLimits::default()).unwrap());
    let moves = trace["moves"].as_array().unwrap();
    let legal = trace["legal"].as_array().unwrap();
    assert_eq!(moves.len(), legal.len(), "{name}");
    for (ply, (mv, listed)) in moves.iter().zip(legal).enumerate() {
        assert!(
            state.outcome().is_none(),
            "{name}: ended before ply {}",
            ply + 1
        );
        let ours: Vec<Move> = state
            .config()
            .rules()
            .legal_moves(state.position())
            .collect();
        let theirs: Vec<Move> = listed.as_array().unwrap().iter().map(trace_move).collect();
        assert_eq!(ours, theirs, "{name}: legal moves before ply {}", ply + 1);
        let seat = Seat((ply % 2) as u8);
        let events = decide(
            &state,
            &Command::Play {
                seat,
                mv: trace_move(mv),
            },
        )
        .unwrap_or_else(|e| panic!("{name}: ply {} refused: {e}", ply + 1));
        events.iter().for_each(|e| evolve(&mut state, e));
        assert!(matches!(events.as_slice(), [Event::MovePlayed { .. }]));
    }
    let expected = trace["outcome"]["winner"].as_u64().map(|seat| seat as u8);
    match state.outcome() {
        Some(Outcome::Win { seat, .. }) => assert_eq!(Some(seat.0), expected, "{name}: winner"),
        Some(Outcome::Draw) => assert_eq!(expected, None, "{name}: a draw"),
        None => panic!("{name}: the game did not end at its last move"),
    }
    moves.len()
}

#[test]
fn every_openspiel_game_has_the_same_legal_moves_at_every_ply_and_the_same_outcome() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/openspiel");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut games = 0;
    let mut plies = 0;
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        if name.starts_with("othello") {
            continue;
        }
        let text = std::fs::read_to_string(&file).unwrap();
        let mut in_file = 0;
        for (line_no, line) in text.lines().enumerate() {
            let trace: Value = serde_json::from_str(line).unwrap();
            plies += replay(&trace, &format!("{name}:{}", line_no + 1));
            in_file += 1;
        }
        eprintln!("{name}: {in_file} games agree");
        games += in_file;
    }
    eprintln!("openspiel: {games} games, {plies} plies checked");
    assert_eq!(games, 2400);
}
