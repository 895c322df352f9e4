//! The exact Connect Four solver on Pascal Pons' four test sets
//! (tests/fixtures/connect4-pons/), each position solved from a reset solver
//! as Pons measures (the reset is not timed).
//!
//! `cargo bench --bench connect4` runs, per set, a criterion benchmark of
//! its first few positions (one iteration solves them all; throughput in
//! positions), then solves all 1,000 positions of each set once and prints a
//! table: positions solved exactly, mean and max solve time, mean and max
//! nodes, beside the means Pons published for his final solver. A filter
//! argument (`cargo bench --bench connect4 -- L3`) narrows both to the sets
//! whose name holds it. Without `--bench` (as `cargo test --benches` runs
//! it) the table covers the first ten positions of each set.
//!
//! Pons' means are from part 12 of his tutorial, "Lower bound transposition
//! table", strong solver, table "Benchmark":
//! <http://blog.gamesolver.org/solving-connect-four/12-lower-bound-transposition-table/>
//! (C++, his machine, 2019; he publishes no maxima). The table's solver has
//! its whole table paged in before it starts, as a long-lived solver has.
//! Begin-Medium takes about two minutes.

use std::hint::black_box;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use criterion::{Criterion, SamplingMode, Throughput};
use plylog::engine::{Budget, Solver};

/// A Pons test set: file name, Pons' name for it, its lines, the positions
/// the criterion benchmark solves per iteration, and Pons' published mean
/// time (microseconds) and mean nodes.
struct Set {
    file: &'static str,
    pons_name: &'static str,
    lines: &'static str,
    sample: usize,
    pons_mean_us: f64,
    pons_mean_nodes: f64,
}

const SETS: [Set; 4] = [
    Set {
        file: "Test_L3_R1",
        pons_name: "End-Easy",
        lines: include_str!("../tests/fixtures/connect4-pons/Test_L3_R1"),
        sample: 100,
        pons_mean_us: 4.568,
        pons_mean_nodes: 51.28,
    },
    Set {
        file: "Test_L2_R1",
        pons_name: "Middle-Easy",
        lines: include_str!("../tests/fixtures/connect4-pons/Test_L2_R1"),
        sample: 100,
        pons_mean_us: 37.45,
        pons_mean_nodes: 449.6,
    },
    Set {
        file: "Test_L1_R1",
        pons_name: "Begin-Easy",
        lines: include_str!("../tests/fixtures/connect4-pons/Test_L1_R1"),
        sample: 20,
        pons_mean_us: 254.6,
        pons_mean_nodes: 3_298.0,
    },
    Set {
        file: "Test_L1_R2",
        pons_name: "Begin-Medium",
        lines: include_str!("../tests/fixtures/connect4-pons/Test_L1_R2"),
        sample: 5,
        pons_mean_us: 96_630.0,
        pons_mean_nodes: 1_201_000.0,
    },
];

/// The positions of a set, with their published scores.
fn positions(set: &Set) -> Vec<(String, i32)> {
    set.lines
        .lines()
        .map(|line| {
            let (moves, score) = line.split_once(' ').expect("moves and a score");
            (moves.to_string(), score.trim().parse().expect("a score"))
        })
        .collect()
}

/// Solves `moves` from a reset solver: the score, the solve time (without
/// the reset) and the nodes.
fn solve(solver: &mut Solver, moves: &str, budget: &Budget<'_>) -> (Option<i32>, Duration, u64) {
    let position = moves.parse().expect("a legal sequence");
    solver.reset();
    let start = Instant::now();
    let score = solver.solve(black_box(&position), budget);
    let elapsed = start.elapsed();
    (score, elapsed, solver.nodes())
}

fn criterion_sets(c: &mut Criterion, sets: &[&Set], budget: &Budget<'_>) {
    let mut solver = Solver::new();
    for set in sets {
        let sample: Vec<(String, i32)> = positions(set).into_iter().take(set.sample).collect();
        let mut group =
            c.benchmark_group(format!("connect4 solve from a reset solver/{}", set.file));
        group.throughput(Throughput::Elements(sample.len() as u64));
        if set.sample < 50 {
            group
                .sampling_mode(SamplingMode::Flat)
                .sample_size(10)
                .measurement_time(Duration::from_secs(20));
        }
        group.bench_function(format!("first {} positions", sample.len()), |b| {
            b.iter_custom(|iterations| {
                let mut total = Duration::ZERO;
                for _ in 0..iterations {
                    for (moves, expected) in &sample {
                        let (score, elapsed, _) = solve(&mut solver, moves, budget);
                        assert_eq!(score, Some(*expected), "{moves}");
                        total += elapsed;
                    }
                }
                total
            })
        });
        group.finish();
    }
}

/// A duration in the unit that suits it.
fn human(d: Duration) -> String {
    let us = d.as_secs_f64() * 1e6;
    if us < 1_000.0 {
        format!("{us:.2} µs")
    } else if us < 1_000_000.0 {
        format!("{:.2} ms", us / 1e3)
    } else {
        format!("{:.2} s", us / 1e6)
    }
}

/// Solves the first `limit` positions of each set and prints the table.
fn table(sets: &[&Set], limit: usize, budget: &Budget<'_>) {
    let mut solver = Solver::new();
    // A new solver's table is untouched zeroed memory: its first searches
    // would pay the page faults. One long solve writes all over it first.
    let (warm_up, _) = &positions(&SETS[3])[0];
    solve(&mut solver, warm_up, budget);
    println!(
        "\n{:<11} {:<13} {:>9} {:>6} {:>11} {:>11} {:>12} {:>11} | {:>15} {:>15}",
        "set",
        "Pons' name",
        "positions",
        "exact",
        "mean time",
        "max time",
        "mean nodes",
        "max nodes",
        "Pons mean time",
        "Pons mean nodes"
    );
    for set in sets {
        let lines: Vec<(String, i32)> = positions(set).into_iter().take(limit).collect();
        let (mut exact, mut total, mut max, mut nodes, mut max_nodes) =
            (0, Duration::ZERO, Duration::ZERO, 0u64, 0u64);
        for (moves, expected) in &lines {
            let (score, elapsed, visited) = solve(&mut solver, moves, budget);
            exact += usize::from(score == Some(*expected));
            total += elapsed;
            max = max.max(elapsed);
            nodes += visited;
            max_nodes = max_nodes.max(visited);
        }
        let n = lines.len() as u32;
        println!(
            "{:<11} {:<13} {:>9} {:>6} {:>11} {:>11} {:>12.1} {:>11} | {:>15} {:>15.1}",
            set.file,
            set.pons_name,
            n,
            exact,
            human(total / n),
            human(max),
            nodes as f64 / f64::from(n),
            max_nodes,
            human(Duration::from_secs_f64(set.pons_mean_us / 1e6)),
            set.pons_mean_nodes
        );
    }
    println!(
        "(Pons: part 12, strong solver, \
         http://blog.gamesolver.org/solving-connect-four/12-lower-bound-transposition-table/)"
    );
}

fn main() {
    let benching = std::env::args().any(|arg| arg == "--bench");
    let filter = std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with('-'))
        .unwrap_or_default();
    let sets: Vec<&Set> = SETS.iter().filter(|s| s.file.contains(&filter)).collect();
    let stop = AtomicBool::new(false);
    let budget = Budget {
        nodes: u64::MAX,
        stop: &stop,
    };
    let mut criterion = Criterion::default().configure_from_args();
    criterion_sets(&mut criterion, &sets, &budget);
    criterion.final_summary();
    table(&sets, if benching { usize::MAX } else { 10 }, &budget);
}
