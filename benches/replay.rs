//! Replay: a game rebuilt from its stored log, the work of every cold load
//! (the first command to a game after a restart) and of GetGame at a past
//! sequence.
//!
//! Issue 15's goal for the rules alone is 10 M events/s on m,n,k. Two
//! figures per log, as events per second (criterion's throughput):
//! - `rules`: [`GameState::replay`] of the domain events, the rules' share;
//! - `decode + rules`: [`log::rebuild`] of the stored protobuf payloads,
//!   what a cold load does once the rows are read;
//! - `SQLite load + rebuild`: the store's read of the log from a real
//!   SQLite file ([`SqliteStore`], the server's own) and the rebuild, a
//!   cold load without the gRPC call;
//! - `SQLite load from a snapshot`: the same from a snapshot taken after
//!   the last event (issue 15's goal: a 100,000-move game in 20 ms).
//!
//! The logs: gomoku 15x15 with 225 placements (the board full, no five
//! anywhere) and m,n,k 1000x1000, k=5, with 100,000 placements, laid out so
//! that no seat has three in a row (`cargo bench --bench replay`).

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use plylog::game::{Command, Event, GameConfig, GameState, SeatInfo, SeatLimits, decide, evolve};
use plylog::proto::convert;
use plylog::registry::{log, snapshot};
use plylog::rules::{Coord, MnkRules, Move, RuleSet, Seat};
use plylog::store::{
    Append, EventStore, LoadFrom, NewEvent, NewGame, Snapshot, SqliteOptions, SqliteStore,
    StoredEvent,
};
use prost::Message;

/// Every event of the logs is recorded at this time (Unix epoch ms).
const AT: i64 = 1_764_547_200_000;

/// A 2-seat m,n,k game on `side` x `side` with k=5, `moves` placements
/// played (at most side², even): its domain events and stored rows.
fn game(side: u32, moves: usize) -> (Vec<(Event, i64)>, Vec<StoredEvent>) {
    let rules = RuleSet::Mnk(MnkRules::new(side.into(), side.into(), 5, 1_000_000).expect("rules"));
    let seat = |id: &str| SeatInfo {
        player_id: id.into(),
        display_name: String::new(),
        symbol: id[..1].into(),
        bot: None,
    };
    let config =
        GameConfig::new(rules, vec![seat("x"), seat("o")], SeatLimits::default()).expect("seats");
    // Cell (r, c) goes to seat (c / 2 + r) % 2: runs of at most two in
    // every direction.
    let (mut x, mut o) = (Vec::new(), Vec::new());
    for r in 0..side {
        for c in 0..side {
            let cell = Coord::new(r, c);
            if (c / 2 + r) % 2 == 0 {
                x.push(cell)
            } else {
                o.push(cell)
            }
        }
    }
    let cells = x.into_iter().zip(o).flat_map(|(x, o)| [x, o]).take(moves);
    let mut state = GameState::new(config.clone(), AT);
    let mut events = vec![(Event::GameCreated(config), AT)];
    for (ply, at) in cells.enumerate() {
        let command = Command::Play {
            seat: Some(Seat((ply % 2) as u8)),
            mv: Move::Place(at),
        };
        for event in decide(&state, &command, AT).expect("a legal placement") {
            evolve(&mut state, &event, AT);
            events.push((event, AT));
        }
    }
    assert!(state.end_reason().is_none() || moves == (side * side) as usize);
    let rules = state.config().rules().clone();
    let mut chain = plylog::store::chain::GENESIS;
    let stored = events
        .iter()
        .zip(1..)
        .map(|((event, at), sequence)| {
            let payload =
                convert::event_to_proto("bench", sequence, *at, event, &rules, 1).encode_to_vec();
            chain = plylog::store::chain::link(&chain, "bench", sequence, &payload);
            StoredEvent {
                sequence,
                payload,
                chain: chain.to_vec(),
            }
        })
        .collect();
    (events, stored)
}

fn replay(c: &mut Criterion) {
    let mut group = c.benchmark_group("replay");
    for (name, side, moves) in [
        ("15x15, 225 moves", 15, 225),
        ("1000x1000, 100000 moves", 1000, 100_000),
    ] {
        let (events, stored) = game(side, moves);
        group.throughput(Throughput::Elements(events.len() as u64));
        group.bench_function(format!("rules: {name}"), |b| {
            b.iter(|| GameState::replay(black_box(events.iter().cloned())).expect("replays"))
        });
        group.bench_function(format!("decode + rules: {name}"), |b| {
            b.iter(|| log::rebuild("bench", black_box(&stored)).expect("rebuilds"))
        });
        let dir = tempfile::tempdir().expect("a temporary directory");
        let runtime = tokio::runtime::Runtime::new().expect("a runtime");
        let store = runtime.block_on(fill(&dir.path().join("replay.db"), &stored));
        // The state a load builds is kept, not dropped: its drop is not
        // timed (`iter_with_large_drop`).
        group.bench_function(format!("SQLite load + rebuild: {name}"), |b| {
            b.iter_with_large_drop(|| {
                let log = runtime
                    .block_on(store.load("bench", LoadFrom::Start))
                    .expect("loads")
                    .expect("a log");
                log::rebuild("bench", &log.events).expect("rebuilds")
            })
        });
        // A snapshot after the last event, as the server keeps one.
        let (state, created_at_ms) = log::rebuild("bench", &stored).expect("rebuilds");
        let last = stored.last().expect("events");
        let chain = last.chain_value().expect("a chain value");
        let payload = snapshot::encode(&state, created_at_ms, chain);
        runtime
            .block_on(store.save_snapshot(Snapshot {
                game_id: "bench".into(),
                sequence: last.sequence,
                payload,
            }))
            .expect("saves the snapshot");
        group.bench_function(format!("SQLite load from a snapshot: {name}"), |b| {
            b.iter_with_large_drop(|| {
                let log = runtime
                    .block_on(store.load("bench", LoadFrom::Snapshot))
                    .expect("loads")
                    .expect("a log");
                let snapshot = log.snapshot.as_ref().expect("the snapshot");
                snapshot::resume("bench", snapshot, &log.events).expect("resumes")
            })
        });
        runtime.block_on(store.close());
    }
    group.finish();
}

/// A SQLite store at `path` holding `stored` as the game `bench`.
async fn fill(path: &std::path::Path, stored: &[StoredEvent]) -> SqliteStore {
    let store = SqliteStore::open(&SqliteOptions::new(path.display().to_string()))
        .await
        .expect("opens");
    let new = |s: &StoredEvent| NewEvent {
        sequence: s.sequence,
        event_type: "bench",
        payload: s.payload.clone().into(),
        recorded_at_ms: AT,
        chain: s.chain_value().expect("a chain value"),
        lifecycle: 0,
    };
    store
        .create(NewGame {
            game_id: "bench".into(),
            created: new(&stored[0]),
            request: None,
            status: 1,
            seat_token_hashes: Vec::new(),
            wake: Default::default(),
            tags: Vec::new(),
        })
        .await
        .expect("creates");
    for (chunk, expected) in stored[1..].chunks(1000).zip((1..).step_by(1000)) {
        store
            .append(Append {
                game_id: "bench".into(),
                expected,
                events: chunk.iter().map(new).collect(),
                request: None,
                status: 1,
                seat_token_hashes: None,
                wake: Default::default(),
                fence: None,
            })
            .await
            .expect("appends");
    }
    store
}

criterion_group!(benches, replay);
criterion_main!(benches);
