//! Snapshots are only a cache: with them, without them and with a bad one,
//! every answer is the same.

use std::time::Duration;

use plylog::proto as pb;
use sqlx::Connection;

use crate::helpers::*;

/// The game's stored snapshot: its sequence and payload, if it has one.
async fn stored_snapshot(db: &TestDatabase, game_id: &str) -> Option<(i64, Vec<u8>)> {
    let sql = "SELECT sequence, payload FROM snapshots WHERE game_id = $1";
    match &db.file {
        Some(_) => {
            let mut conn = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
            let query = sqlx::query_as(sql).bind(game_id);
            query.fetch_optional(&mut conn).await.unwrap()
        }
        None => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
            let query = sqlx::query_as(sql).bind(game_id);
            query.fetch_optional(&mut conn).await.unwrap()
        }
    }
}

/// Replaces the game's snapshot with `payload` at `sequence`.
async fn plant_snapshot(db: &TestDatabase, game_id: &str, sequence: i64, payload: Vec<u8>) {
    execute(
        db,
        &format!("DELETE FROM snapshots WHERE game_id = '{game_id}'"),
    )
    .await;
    let sql = "INSERT INTO snapshots (game_id, sequence, payload) VALUES ($1, $2, $3)";
    match &db.file {
        Some(_) => {
            let mut conn = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
            let query = sqlx::query(sql).bind(game_id).bind(sequence).bind(payload);
            query.execute(&mut conn).await.unwrap();
        }
        None => {
            let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
            let query = sqlx::query(sql).bind(game_id).bind(sequence).bind(payload);
            query.execute(&mut conn).await.unwrap();
        }
    }
}

/// Waits until the game's stored snapshot is at `sequence` (they are
/// saved in the background) and returns its payload.
async fn snapshot_at(db: &TestDatabase, game_id: &str, sequence: i64) -> Vec<u8> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        match stored_snapshot(db, game_id).await {
            Some((at, payload)) if at == sequence => return payload,
            other => assert!(
                tokio::time::Instant::now() < deadline,
                "no snapshot at {sequence}: {:?}",
                other.map(|(at, _)| at)
            ),
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// A server that takes a snapshot every 4 events, with a 5×5 game
/// `game_id` (k=5) of `moves` moves on it.
async fn with_game(game_id: &str, moves: i32) -> TestServer {
    let mut server = TestServer::start_with(plylog::registry::RegistrySettings {
        snapshot_every: 4,
        ..settings()
    })
    .await;
    let c = &mut server.client;
    create(c, game_id, mnk(5, 5, 5)).await;
    for i in 0..moves {
        play(c, game_id, (i % 2) as u32, cell(i)).await.unwrap();
    }
    server
}

/// Everything a client can read of a game: GetGame at every sequence,
/// GetReplay in pages of 3 with every position, and GetReplay events only
/// from the middle.
async fn answers(client: &mut Client, game_id: &str, last: u64) -> Vec<String> {
    let mut seen = Vec::new();
    for at in 1..=last {
        let game = game_at(client, game_id, at).await.unwrap();
        seen.push(format!("{game:?}"));
    }
    for position_every in [None, Some(0), Some(4)] {
        let mut page_token = String::new();
        loop {
            let page = client
                .get_replay(pb::GetReplayRequest {
                    game_id: game_id.into(),
                    page_size: 3,
                    page_token,
                    position_every,
                    position_at: vec![7],
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            seen.push(format!("{:?}", page.steps));
            page_token = page.next_page_token;
            if page_token.is_empty() {
                break;
            }
        }
    }
    seen
}

/// Cells of a 5×5 board in row-major order: played in turn from cell 0,
/// no five in a row before cell 20.
fn cell(i: i32) -> pb::Move {
    place(i / 5, i % 5)
}

#[tokio::test]
async fn answers_are_the_same_with_without_and_with_an_unusable_snapshot() {
    let mut server = with_game("snap", 10).await;
    let c = &mut server.client;
    // An undo of a move a snapshot holds, then more moves.
    c.undo(pb::UndoRequest {
        game_id: "snap".into(),
        seat: Some(1),
        ..Default::default()
    })
    .await
    .unwrap();
    for i in 9..18 {
        play(c, "snap", (i % 2) as u32, cell(i)).await.unwrap();
    }
    let latest = get_game(c, "snap").await;
    let last = latest.last_sequence;
    assert_eq!(last, 21);
    let db = std::sync::Arc::clone(&server.db);
    // Taken after sequences 4, 8, 12, 16 and 20; the latest is kept.
    let good = snapshot_at(&db, "snap", 20).await;
    let warm = answers(&mut server.client, "snap", last).await;
    // A cold load from the snapshot, then views of the past that resume
    // from it or replay from the start.
    let mut server = server.restart().await;
    assert_eq!(get_game(&mut server.client, "snap").await, latest);
    assert_eq!(answers(&mut server.client, "snap", last).await, warm);
    // Without any snapshot; then with unusable ones: another format, bytes
    // that do not decode, trailing bytes, and a snapshot planted at a
    // sequence whose event it was not taken after (its guard).
    let mut other_format = good.clone();
    other_format[0] = 2;
    let mut trailing = good.clone();
    trailing.push(0);
    let unusable = [
        (20, other_format),
        (20, good[..good.len() / 2].to_vec()),
        (20, trailing),
        (17, good.clone()),
    ];
    execute(&db, "DELETE FROM snapshots").await;
    server = server.restart().await;
    assert_eq!(get_game(&mut server.client, "snap").await, latest);
    assert_eq!(answers(&mut server.client, "snap", last).await, warm);
    for (sequence, payload) in unusable {
        plant_snapshot(&db, "snap", sequence, payload).await;
        server = server.restart().await;
        assert_eq!(
            get_game(&mut server.client, "snap").await,
            latest,
            "snapshot at {sequence}"
        );
        assert_eq!(answers(&mut server.client, "snap", last).await, warm);
    }
    // Back to the good one, and a move on the state resumed from it.
    plant_snapshot(&db, "snap", 20, good).await;
    server = server.restart().await;
    let reply = play(&mut server.client, "snap", 0, cell(18)).await.unwrap();
    assert_eq!(reply.events[0].sequence, 22);
    let on_resumed = get_game(&mut server.client, "snap").await;
    execute(&db, "DELETE FROM snapshots").await;
    server = server.restart().await;
    assert_eq!(get_game(&mut server.client, "snap").await, on_resumed);
}

/// GetGame of `game_id` right after event `at`.
async fn game_at(
    client: &mut Client,
    game_id: &str,
    at: u64,
) -> Result<pb::GetGameResponse, tonic::Status> {
    let request = pb::GetGameRequest {
        game_id: game_id.into(),
        at_sequence: Some(at),
    };
    client
        .get_game(request)
        .await
        .map(tonic::Response::into_inner)
}

#[tokio::test]
async fn a_cold_load_and_a_past_view_start_from_the_snapshot() {
    let mut server = with_game("used", 6).await;
    let c = &mut server.client;
    let latest = get_game(c, "used").await;
    let at_6 = game_at(c, "used", 6).await.unwrap();
    let db = std::sync::Arc::clone(&server.db);
    snapshot_at(&db, "used", 4).await;
    // Events 2 and 3 gone: only a load from the snapshot at 4 (which needs
    // events 4 on) can answer; a replay from sequence 1 cannot.
    let mut server = server.restart().await;
    let sql = "DELETE FROM events WHERE game_id = 'used' AND sequence BETWEEN 2 AND 3";
    assert_eq!(execute(&db, sql).await, 2);
    let c = &mut server.client;
    assert_eq!(get_game(c, "used").await, latest);
    assert_eq!(game_at(c, "used", 6).await.unwrap(), at_6);
    let status = game_at(c, "used", 3).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Internal, "{status:?}");
}
