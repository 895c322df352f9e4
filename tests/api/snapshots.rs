//! Snapshots are only a cache: with them, without them and with a bad one,
//! every answer is the same.

use std::time::Duration;

use plylog::proto as pb;
use sqlx::Connection;

use plylog_testkit::*;

/// Runs `$body` with `$conn` a fresh connection to the test's database,
/// SQLite or PostgreSQL (its type differs, so each arm compiles `$body`
/// for its own).
macro_rules! with_connection {
    ($db:expr, $conn:ident => $body:expr) => {
        match &$db.file {
            Some(_) => {
                let mut $conn = sqlx::SqliteConnection::connect(&$db.url).await.unwrap();
                $body
            }
            None => {
                let mut $conn = sqlx::PgConnection::connect(&$db.url).await.unwrap();
                $body
            }
        }
    };
}

/// The game's stored snapshot: its sequence and payload, if it has one.
async fn stored_snapshot(db: &TestDatabase, game_id: &str) -> Option<(i64, Vec<u8>)> {
    let sql = "SELECT sequence, payload FROM snapshots WHERE game_id = $1";
    with_connection!(db, conn => sqlx::query_as(sql)
        .bind(game_id)
        .fetch_optional(&mut conn)
        .await
        .unwrap())
}

/// Replaces the game's snapshot with `payload` at `sequence`.
async fn plant_snapshot(db: &TestDatabase, game_id: &str, sequence: i64, payload: Vec<u8>) {
    execute(
        db,
        &format!("DELETE FROM snapshots WHERE game_id = '{game_id}'"),
    )
    .await;
    let sql = "INSERT INTO snapshots (game_id, sequence, payload) VALUES ($1, $2, $3)";
    with_connection!(db, conn => {
        let query = sqlx::query(sql).bind(game_id).bind(sequence).bind(payload);
        query.execute(&mut conn).await.unwrap();
    });
}

/// Waits until the game's stored snapshot is at `sequence` (they are
/// saved in the background) and returns its payload.
async fn snapshot_at(db: &TestDatabase, game_id: &str, sequence: i64) -> Vec<u8> {
    wait_for(
        &format!("a snapshot at {sequence}"),
        Duration::from_secs(10),
        Duration::from_millis(10),
        async || match stored_snapshot(db, game_id).await {
            Some((at, payload)) if at == sequence => Some(payload),
            _ => None,
        },
    )
    .await
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

/// The stored chain value of event `sequence` of `game_id`.
async fn stored_chain(db: &TestDatabase, game_id: &str, sequence: i64) -> Vec<u8> {
    let sql = "SELECT chain FROM events WHERE game_id = $1 AND sequence = $2";
    let (chain,): (Vec<u8>,) = with_connection!(db, conn => sqlx::query_as(sql)
        .bind(game_id)
        .bind(sequence)
        .fetch_one(&mut conn)
        .await
        .unwrap());
    chain
}

/// A snapshot forged whole: `payload` (a snapshot of another game) made to
/// vouch for the log whose chain value is `chain` (its checksum made
/// again). Its layout: the format version (one byte), the checksum (32),
/// the creation time (a postcard varint), the chain value (32), the state.
fn forged(payload: &[u8], chain: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    let mut body = payload[33..].to_vec();
    let time = body.iter().position(|b| b & 0x80 == 0).unwrap() + 1;
    body[time..time + 32].copy_from_slice(chain);
    let mut forged = payload[..1].to_vec();
    forged.extend_from_slice(&sha2::Sha256::digest(&body));
    forged.extend_from_slice(&body);
    forged
}

/// A cold load resumes from the snapshot, and a view of the past before it
/// replays from the start. Shown with a forged snapshot (another game's
/// state, vouching for this game's log: a snapshot's checks cannot tell a
/// forgery from the truth, only a change from what was written): the
/// latest state is the forged one's, the view before it the log's.
#[tokio::test]
async fn a_cold_load_and_a_past_view_start_from_the_snapshot() {
    let mut server = with_game("used", 6).await;
    let c = &mut server.client;
    let at_3 = game_at(c, "used", 3).await.unwrap();
    // Another game whose first three moves (cells 10 to 12) leave room
    // for this one's next three (cells 3 to 5).
    create(c, "other", mnk(5, 5, 5)).await;
    for i in 10..13 {
        play(c, "other", (i % 2) as u32, cell(i)).await.unwrap();
    }
    let db = std::sync::Arc::clone(&server.db);
    snapshot_at(&db, "used", 4).await;
    let other = snapshot_at(&db, "other", 4).await;
    let chain = stored_chain(&db, "used", 4).await;
    plant_snapshot(&db, "used", 4, forged(&other, &chain)).await;
    let mut server = server.restart().await;
    let c = &mut server.client;
    let latest = get_game(c, "used").await;
    assert_eq!(latest.last_sequence, 7);
    // The log's moves 4 to 6 (O, X, O on cells 3, 4, 5) on the forged
    // state's three stones (X, O, X on cells 10, 11, 12).
    let board = latest.position.unwrap().board.unwrap().text;
    assert_eq!(
        board,
        ["...OX", "O....", "XOX..", ".....", "....."],
        "resumed from the forged snapshot"
    );
    assert_eq!(game_at(c, "used", 3).await.unwrap(), at_3);
}

/// Changes one bit of the stored payload of event `sequence` of `game_id`
/// (bit `bit` of byte `at`).
async fn flip_event_bit(db: &TestDatabase, game_id: &str, sequence: i64, at: usize, bit: u8) {
    let read = "SELECT payload FROM events WHERE game_id = $1 AND sequence = $2";
    let write = "UPDATE events SET payload = $1 WHERE game_id = $2 AND sequence = $3";
    let (mut payload,): (Vec<u8>,) = with_connection!(db, conn => sqlx::query_as(read)
        .bind(game_id)
        .bind(sequence)
        .fetch_one(&mut conn)
        .await
        .unwrap());
    payload[at] ^= 1 << bit;
    with_connection!(db, conn => {
        let query = sqlx::query(write).bind(payload).bind(game_id).bind(sequence);
        query.execute(&mut conn).await.unwrap();
    });
}

/// Issue 35, item 10: a changed byte of a snapshot changes no answer (it
/// was 24 changed answers and 8 panicked actors of 126 one-byte changes),
/// and a corrupt event under a snapshot is found: the server refuses the
/// game (DATA_LOSS, LOG_CORRUPT) instead of serving it and taking moves on
/// it, with the snapshot and without it.
#[tokio::test]
async fn a_changed_snapshot_changes_no_answer_and_a_corrupt_log_is_refused_under_a_snapshot() {
    let mut server = with_game("snap", 9).await;
    let db = std::sync::Arc::clone(&server.db);
    let good = snapshot_at(&db, "snap", 8).await;
    let latest = get_game(&mut server.client, "snap").await;
    let seed = 35u64;
    println!("seed {seed}");
    let mut rng = <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(seed);
    // As many one-byte changes as the attack made, each on a cold load.
    for _ in 0..126 {
        let at = rand::Rng::random_range(&mut rng, 0..good.len());
        let bit = rand::Rng::random_range(&mut rng, 0..8);
        let mut changed = good.clone();
        changed[at] ^= 1 << bit;
        plant_snapshot(&db, "snap", 8, changed).await;
        server = server.restart().await;
        assert_eq!(
            get_game(&mut server.client, "snap").await,
            latest,
            "bit {bit} of byte {at} of the snapshot changed"
        );
    }
    // Event 5, a move the snapshot at 8 covers, changes. With the
    // snapshot, a cold load serves the snapshot's state (the true one: its
    // checksum and chain value vouch for it) but the first move finds the
    // change and refuses, and so does every call after it; the changed
    // event is never sent. Without the snapshot, the load refuses.
    plant_snapshot(&db, "snap", 8, good).await;
    flip_event_bit(&db, "snap", 5, 3, 0).await;
    let get = |c: &mut Client| {
        let mut c = c.clone();
        async move {
            c.get_game(pb::GetGameRequest {
                game_id: "snap".into(),
                at_sequence: None,
            })
            .await
        }
    };
    let refused = |status: tonic::Status, what: &str| {
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (tonic::Code::DataLoss, "LOG_CORRUPT"),
            "{what}: {status:?}"
        );
    };
    server = server.restart().await;
    let c = &mut server.client;
    assert_eq!(get(c).await.unwrap().into_inner().game.unwrap(), latest);
    refused(
        game_at(c, "snap", 5).await.unwrap_err(),
        "the view at the changed event",
    );
    refused(
        play(c, "snap", 1, cell(9)).await.unwrap_err(),
        "a move on the snapshot",
    );
    refused(get(c).await.unwrap_err(), "a read after the move found it");
    execute(&db, "DELETE FROM snapshots").await;
    server = server.restart().await;
    let c = &mut server.client;
    refused(get(c).await.unwrap_err(), "a read without the snapshot");
    refused(
        play(c, "snap", 1, cell(9)).await.unwrap_err(),
        "a move without the snapshot",
    );
    // Restored, the game is served again as it was.
    flip_event_bit(&db, "snap", 5, 3, 0).await;
    server = server.restart().await;
    assert_eq!(get_game(&mut server.client, "snap").await, latest);
}
