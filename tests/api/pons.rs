//! Every sequence of Pascal Pons' four Connect Four test sets (4,000 real
//! mid-game positions; see tests/fixtures/connect4-pons/README.md), played
//! move by move through SubmitMove on the running server, and scored exactly
//! by AnalyzePosition.

use std::time::Instant;

use futures::StreamExt;
use plylog::proto as pb;
use tonic::Code;

use plylog_testkit::*;

const SETS: [(&str, &str); 4] = [
    (
        "Test_L3_R1",
        include_str!("../fixtures/connect4-pons/Test_L3_R1"),
    ),
    (
        "Test_L2_R1",
        include_str!("../fixtures/connect4-pons/Test_L2_R1"),
    ),
    (
        "Test_L1_R1",
        include_str!("../fixtures/connect4-pons/Test_L1_R1"),
    ),
    (
        "Test_L1_R2",
        include_str!("../fixtures/connect4-pons/Test_L1_R2"),
    ),
];

/// Games played at once, so the writer group-commits many games' moves.
const CONCURRENT_GAMES: usize = 32;

/// Plays one sequence (columns 1-based, as Pons writes them) and checks it.
async fn play_sequence(mut client: Client, game_id: String, columns: Vec<i32>) -> usize {
    create(&mut client, &game_id, connect_four()).await;
    for (i, column) in columns.iter().enumerate() {
        let reply = play(&mut client, &game_id, (i % 2) as u32, drop_in(column - 1))
            .await
            .unwrap_or_else(|s| {
                panic!("{game_id}: move {} (column {column}) refused: {s:?}", i + 1)
            });
        let pos = reply.game.as_ref().map(position).unwrap();
        assert_eq!(
            pos.status(),
            pb::GameStatus::InProgress,
            "{game_id}: the game ended early at move {}",
            i + 1
        );
    }
    let replay = client
        .get_replay(pb::GetReplayRequest {
            game_id: game_id.clone(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let replayed: Vec<i32> = replay
        .steps
        .iter()
        .filter_map(|s| match &s.event.as_ref()?.kind {
            Some(pb::game_event::Kind::MovePlayed(m)) => match m.r#move.as_ref()?.kind {
                Some(pb::r#move::Kind::Drop(d)) => Some(d.column + 1),
                _ => None,
            },
            _ => None,
        })
        .collect();
    assert_eq!(
        replayed, columns,
        "{game_id}: the replay differs from the moves played"
    );
    // The actor's live state equals the fold of the stored log.
    let live = get_game(&mut client, &game_id).await;
    assert_eq!(
        replay.game.as_ref(),
        Some(&live),
        "{game_id}: live state != replay"
    );
    let board = replay
        .game
        .as_ref()
        .map(position)
        .and_then(|p| p.board.as_ref())
        .unwrap();
    assert_eq!(board.pieces.len(), columns.len(), "{game_id}: disc count");
    // A column already holding six discs refuses a seventh.
    if let Some(full) = (1..=7).find(|c| columns.iter().filter(|x| *x == c).count() == 6) {
        let status = play(
            &mut client,
            &game_id,
            (columns.len() % 2) as u32,
            drop_in(full - 1),
        )
        .await
        .unwrap_err();
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (Code::FailedPrecondition, "COLUMN_FULL")
        );
    }
    columns.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_pons_sequence_is_accepted_move_by_move_and_replays_exactly() {
    let server = TestServer::start().await;
    let mut games = Vec::new();
    for (set, text) in SETS {
        for (line_no, line) in text.lines().enumerate() {
            let moves = line.split_whitespace().next().expect("a move sequence");
            let columns = moves
                .bytes()
                .map(|b| i32::from(b - b'0'))
                .collect::<Vec<_>>();
            assert!(
                columns.iter().all(|c| (1..=7).contains(c)),
                "{set}:{}",
                line_no + 1
            );
            games.push((format!("{set}-{}", line_no + 1), columns));
        }
    }
    assert_eq!(games.len(), 4000);
    let started = Instant::now();
    let moves: usize = futures::stream::iter(games)
        .map(|(id, columns)| play_sequence(server.client.clone(), id, columns))
        .buffer_unordered(CONCURRENT_GAMES)
        .fold(0, |sum, n| async move { sum + n })
        .await;
    let secs = started.elapsed().as_secs_f64();
    assert_eq!(moves, 78_997);
    eprintln!(
        "pons: 4000 games, {moves} moves in {secs:.1} s ({:.0} moves/s)",
        moves as f64 / secs
    );
}

/// Asks AnalyzePosition for the exact value of every line of `text` (a Pons
/// set) and checks it against the published score; returns the lines.
async fn analyze_set(server: &TestServer, set: &str, text: &str) -> usize {
    let lines: Vec<(usize, String, i32)> = text
        .lines()
        .enumerate()
        .map(|(i, line)| {
            let (moves, score) = line.split_once(' ').expect("moves and score");
            (i + 1, moves.to_owned(), score.parse().expect("a score"))
        })
        .collect();
    let count = lines.len();
    let started = Instant::now();
    // As many at once as the server analyses at once (2 by default).
    futures::stream::iter(lines)
        .map(|(line, moves, expected)| {
            let mut client = server.client.clone();
            async move {
                let moves = moves
                    .bytes()
                    .map(|b| drop_in(i32::from(b - b'1')))
                    .collect();
                let request = pb::AnalyzePositionRequest {
                    target: Some(pb::AnalysisTarget {
                        source: Some(pb::analysis_target::Source::Setup(pb::PositionSetup {
                            rules: Some(connect_four()),
                            seats: 2,
                            moves,
                        })),
                        at_sequence: None,
                    }),
                    engine: pb::Engine::Connect4 as i32,
                    ..Default::default()
                };
                let analysis = client
                    .analyze_position(request)
                    .await
                    .unwrap_or_else(|s| panic!("{set}:{line}: {s:?}"))
                    .into_inner();
                assert_eq!(
                    analysis.score.and_then(|s| s.kind),
                    Some(pb::score::Kind::Exact(expected)),
                    "{set}:{line}"
                );
                // The position's value is its best move's.
                let best = analysis
                    .moves
                    .iter()
                    .filter_map(|m| match m.score.and_then(|s| s.kind) {
                        Some(pb::score::Kind::Exact(v)) => Some(v),
                        _ => None,
                    })
                    .max();
                assert_eq!(best, Some(expected), "{set}:{line}: {:?}", analysis.moves);
            }
        })
        .buffer_unordered(2)
        .collect::<Vec<()>>()
        .await;
    eprintln!(
        "pons {set}: {count} positions scored exactly through AnalyzePosition in {:.1} s",
        started.elapsed().as_secs_f64()
    );
    count
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn analyze_position_scores_the_easy_pons_sets_exactly() {
    let server = TestServer::start().await;
    let mut scored = 0;
    for (set, text) in &SETS[..2] {
        scored += analyze_set(&server, set, text).await;
    }
    assert_eq!(scored, 2000);
}

/// The beginning-of-game sets take minutes in a release build (every
/// column of 2,000 positions proven exactly) and far longer in a debug one:
/// run with `cargo test --release --test api -- --ignored beginning_pons`.
/// Each analysis may take up to 10 minutes here.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "minutes in a release build, hours in a debug one"]
async fn analyze_position_scores_the_beginning_pons_sets_exactly() {
    let registry = plylog::registry::RegistrySettings {
        engines: plylog::registry::EngineSettings {
            analysis_time: std::time::Duration::from_secs(600),
            ..Default::default()
        },
        ..settings()
    };
    let server = TestServer::start_with(registry).await;
    let mut scored = 0;
    for (set, text) in &SETS[2..] {
        scored += analyze_set(&server, set, text).await;
    }
    assert_eq!(scored, 2000);
}
