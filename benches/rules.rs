//! The per-move cost of the rules on a small and a huge board.
//!
//! DESIGN.md's budget: a move's rule work is O(K) through the cell just
//! played, never a board scan, so a 1000x1000 board costs the same per move
//! as a 15x15 one. Each benchmark checks one move (`RuleSet::play`: legality,
//! landing cell, K-in-a-row along four axes, draw counter) on a position with
//! a few dozen stones around the centre; compare the two sizes' times as a
//! ratio within one run (`cargo bench --bench rules`).

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use plylog::rules::{Coord, MnkRules, Move, Played, Position, RuleSet, Seat};

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

criterion_group!(benches, per_move_cost);
criterion_main!(benches);
