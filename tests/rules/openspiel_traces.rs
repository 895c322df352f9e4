//! Random games played by OpenSpiel (an independent implementation), in
//! `tests/fixtures/openspiel/` (see its README for the source, the format and
//! how to regenerate them with `scripts/openspiel_traces.py`), replayed
//! through plylog's game aggregate: at every ply our legal moves must equal
//! OpenSpiel's, every move must be accepted, and the game must end exactly at
//! the trace's last move with the same winner (or a draw).
//!
//! Covered: tic-tac-toe, m,n,k (4x4 k3, 5x6 k4, 7x7 k5), Connect Four (6x7
//! k4, 4x5 k3, 5x4 k4, 7x9 k5), freestyle gomoku (9x9, 15x15; OpenSpiel's
//! gomoku lets an overline win), Othello 8x8, whose traces write a pass
//! as a move of its own where we append it automatically after the move
//! that forced it, and Hex (5x5, 7x7, 11x11, without the swap rule).

use crate::T0;
use std::path::Path;

use plylog::game::{Command, Event, GameState, decide, evolve};
use plylog::rules::{
    ConnectFourRules, Coord, GomokuRules, HexRules, MnkRules, Move, OthelloRules, Outcome,
    Overline, RuleSet, Seat,
};
use serde_json::Value;

fn rules(trace: &Value) -> RuleSet {
    let size = |key: &str| trace[key].as_i64().expect(key);
    let (rows, cols) = (size("rows"), size("cols"));
    match trace["game"].as_str() {
        Some("othello") => {
            assert_eq!(rows, cols);
            return RuleSet::Othello(OthelloRules::new(Some(rows)).unwrap());
        }
        Some("hex") => {
            assert_eq!(rows, cols);
            return RuleSet::Hex(HexRules::new(Some(rows), false, 1_000_000).unwrap());
        }
        _ => {}
    }
    let k = size("k");
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

/// Whether the trace's move is an Othello pass.
fn is_pass(value: &Value) -> bool {
    value == "pass"
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

/// Replays one trace; returns the number of plies checked and of passes.
fn replay(trace: &Value, name: &str) -> (usize, usize) {
    let mut passes = 0;
    let rules = rules(trace);
    let mut state = GameState::new(crate::table(rules, &["first", "second"]), T0);
    let moves = trace["moves"].as_array().unwrap();
    let legal = trace["legal"].as_array().unwrap();
    assert_eq!(moves.len(), legal.len(), "{name}");
    for (ply, (mv, listed)) in moves.iter().zip(legal).enumerate() {
        assert!(
            state.outcome().is_none(),
            "{name}: ended before ply {}",
            ply + 1
        );
        let seat = Seat((ply % 2) as u8);
        if is_pass(mv) {
            // We pass for the seat automatically, right after the move that
            // left it without one: it is already the other seat's turn.
            assert_eq!(listed.as_array().unwrap(), &[Value::from("pass")], "{name}");
            assert_eq!(
                state
                    .config()
                    .rules()
                    .legal_move_count(state.position(), seat),
                0,
                "{name}"
            );
            assert_eq!(
                state.to_move(),
                Some(Seat(1 - seat.0)),
                "{name}: no pass recorded at ply {}",
                ply + 1
            );
            passes += 1;
            continue;
        }
        assert_eq!(
            state.to_move(),
            Some(seat),
            "{name}: seat to move at ply {}",
            ply + 1
        );
        let ours: Vec<Move> = state
            .config()
            .rules()
            .legal_moves(state.position(), seat)
            .collect();
        let theirs: Vec<Move> = listed.as_array().unwrap().iter().map(trace_move).collect();
        assert_eq!(ours, theirs, "{name}: legal moves before ply {}", ply + 1);
        let events = decide(
            &state,
            &Command::Play {
                seat: Some(seat),
                mv: trace_move(mv),
            },
            T0,
        )
        .unwrap_or_else(|e| panic!("{name}: ply {} refused: {e}", ply + 1));
        events.iter().for_each(|e| evolve(&mut state, e, T0));
        let passed = events
            .iter()
            .filter(|e| matches!(e, Event::TurnPassed { .. }))
            .count();
        let next_is_pass = moves.get(ply + 1).is_some_and(is_pass);
        assert_eq!(
            passed,
            usize::from(next_is_pass),
            "{name}: passes after ply {}",
            ply + 1
        );
    }
    let expected = trace["outcome"]["winner"].as_u64().map(|seat| seat as u8);
    match state.outcome() {
        Some(Outcome::Win { seat, .. }) => assert_eq!(Some(seat.0), expected, "{name}: winner"),
        Some(Outcome::Draw) => assert_eq!(expected, None, "{name}: a draw"),
        None => panic!("{name}: the game did not end at its last move"),
    }
    (moves.len(), passes)
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
    let mut passes = 0;
    for file in files {
        let name = file.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).unwrap();
        let mut in_file = 0;
        for (line_no, line) in text.lines().enumerate() {
            let trace: Value = serde_json::from_str(line).unwrap();
            let (checked, passed) = replay(&trace, &format!("{name}:{}", line_no + 1));
            plies += checked;
            passes += passed;
            in_file += 1;
        }
        eprintln!("{name}: {in_file} games agree");
        games += in_file;
    }
    eprintln!("openspiel: {games} games, {plies} plies ({passes} passes) checked");
    assert_eq!(games, 2910);
    assert!(passes > 0, "the Othello traces exercise passing");
}
