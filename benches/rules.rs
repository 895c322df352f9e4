//! The per-move cost of the rules on a small and a huge board.
//!
//! DESIGN.md's budget: a move's rule work is O(K) through the cell just
//! played, never a board scan, so a 1000x1000 board costs the same per move
//! as a 15x15 one. Each benchmark checks one move (`RuleSet::play`: legality,
//! landing cell, K-in-a-row along four axes, draw counter) on a position with
//! a few dozen stones around the centre; compare the two sizes' times as a
//! ratio within one run (`cargo bench --bench rules`).
//!
//! Hex's budget is the same: its union-find makes a move (check, place with
//! its unions, take back with the rollback) cost about as much on 100x100 as
//! on 11x11, never a flood fill of the board.
//!
//! Chess: one move (read from UCI, checked, played on a copy of the game,
//! which is how it is taken back) in Kiwipete, the busiest of the usual
//! perft positions; the same move as the game layer plays it through the
//! rule set (read from SAN, checked, its facts recorded, applied and
//! taken back); and perft(4) from the start (197,281 leaves) through the
//! same calls as the first, reported in leaves per second.

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use plylog::rules::ChessRules;
use plylog::rules::chess::{ChessGame, ChessVariant, DrawRule, MoveText};
use plylog::rules::{Coord, HexRules, MnkRules, Move, Played, Position, RuleSet, Seat};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;

/// A board of `side` x `side`, five in a row, with stones of both seats in a
/// 7x7 checkerboard around the centre (no five anywhere).
fn setup(side: u32) -> (RuleSet, Position, Move) {
    let rules =
        RuleSet::Mnk(MnkRules::new(side.into(), side.into(), 5, 1_000_000).expect("valid rules"));
    let mut position = rules.initial_position(2);
    let centre = side / 2;
    for row in centre - 3..=centre + 3 {
        for col in centre - 3..=centre + 3 {
            if (row, col) != (centre, centre) {
                let at = Coord::new(row, col);
                let stone = Played::placed(Move::Place(at), at, None);
                rules.apply(&mut position, Seat(((row + col) % 2) as u8), &stone);
            }
        }
    }
    (rules, position, Move::Place(Coord::new(centre, centre)))
}

fn per_move_cost(c: &mut Criterion) {
    let mut group = c.benchmark_group("play one move, k=5");
    for side in [15, 1000] {
        let (rules, position, mv) = setup(side);
        group.bench_function(format!("{side}x{side}"), |b| {
            b.iter(|| black_box(rules.play(black_box(&position), Seat(0), black_box(mv))))
        });
    }
    group.finish();
}

/// A `side` x `side` Hex game with 40% of the cells filled by a seeded
/// random game in which no move won, and the next move (which does not win
/// either).
fn hex_setup(side: u32) -> (RuleSet, Position, Seat, Move) {
    const SEED: u64 = 20261130;
    let rules = RuleSet::Hex(HexRules::new(Some(side.into()), false, 1_000_000).expect("valid"));
    let mut position = rules.initial_position(2);
    let mut cells: Vec<Coord> = (0..side)
        .flat_map(|row| (0..side).map(move |col| Coord::new(row, col)))
        .collect();
    cells.shuffle(&mut ChaCha8Rng::seed_from_u64(SEED));
    let mut placed = 0;
    let mut seat = Seat(0);
    for at in cells {
        let played = rules.play(&position, seat, Move::Place(at)).expect("empty");
        if played.outcome.is_some() {
            continue;
        }
        if placed * 10 >= side * side * 4 {
            return (rules, position, seat, Move::Place(at));
        }
        rules.apply(&mut position, seat, &played);
        placed += 1;
        seat = Seat(1 - seat.0);
    }
    panic!("no move left that does not win (seed {SEED})");
}

fn hex_move_cost(c: &mut Criterion) {
    let mut group = c.benchmark_group("hex: play, place and take back one move");
    for side in [11, 100] {
        let (rules, mut position, seat, mv) = hex_setup(side);
        group.bench_function(format!("{side}x{side}"), |b| {
            b.iter(|| {
                let played = rules.play(black_box(&position), seat, black_box(mv));
                let played = played.expect("legal");
                rules.apply(&mut position, seat, &played);
                rules.undo(&mut position, seat, &played);
            })
        });
    }
    group.finish();
}

fn chess_move_cost(c: &mut Criterion) {
    const KIWIPETE: &str = "r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 1";
    let game = ChessGame::from_fen(ChessVariant::Standard, KIWIPETE).expect("valid");
    let mut group = c.benchmark_group("chess");
    group.bench_function("check, play and take back one move (Kiwipete)", |b| {
        b.iter(|| {
            let mv = game.parse_uci(black_box("e2a6")).expect("UCI");
            let mut after = game.clone();
            after.play(mv).expect("legal");
            black_box(after)
        })
    });
    // As the game layer plays a move: the rules read it (SAN here), check
    // it and record its facts (UCI, SAN, capture, check, ending), apply it
    // and take it back, as hex's bench does.
    let rules = RuleSet::Chess(
        ChessRules::new(
            ChessVariant::Standard,
            Some(KIWIPETE),
            None,
            DrawRule::Claimed,
        )
        .expect("valid"),
    );
    let mut position = rules.initial_position(2);
    let bxa6 = Move::ChessText(MoveText::new("Bxa6").expect("short"));
    group.bench_function(
        "the rules: read SAN, play, apply and undo (Kiwipete)",
        |b| {
            b.iter(|| {
                let played = rules.play(black_box(&position), Seat(0), black_box(bxa6));
                let played = played.expect("legal");
                rules.apply(&mut position, Seat(0), &played);
                rules.undo(&mut position, Seat(0), &played);
            })
        },
    );
    let start = ChessGame::default();
    assert_eq!(start.perft(4), 197_281);
    group.throughput(Throughput::Elements(197_281));
    group.bench_function("perft(4) from the start", |b| {
        b.iter(|| black_box(black_box(&start).perft(4)))
    });
    group.finish();
}

criterion_group!(benches, per_move_cost, hex_move_cost, chess_move_cost);
criterion_main!(benches);
