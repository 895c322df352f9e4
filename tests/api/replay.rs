use std::time::Duration;

use plylog::proto as pb;
use tonic::Code;

use plylog_testkit::*;

#[tokio::test]
async fn get_game_rebuilds_every_past_position() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "past", mnk(3, 3, 3)).await;
    play_all(c, "past", &[place(0, 0), place(1, 1), place(2, 2)]).await;
    c.undo(pb::UndoRequest {
        game_id: "past".into(),
        seat: Some(0),
        ..Default::default()
    })
    .await
    .unwrap();
    let at = |seq| pb::GetGameRequest {
        game_id: "past".into(),
        at_sequence: Some(seq),
    };
    let expected = [
        (1, vec!["...", "...", "..."]),
        (2, vec!["X..", "...", "..."]),
        (3, vec!["X..", ".O.", "..."]),
        (4, vec!["X..", ".O.", "..X"]),
        (5, vec!["X..", ".O.", "..."]),
    ];
    for (seq, text) in expected {
        let game = c
            .get_game(at(seq))
            .await
            .unwrap()
            .into_inner()
            .game
            .unwrap();
        assert_eq!(position(&game).sequence, seq);
        assert_eq!(game.last_sequence, 5);
        assert_eq!(board_text(&game), text, "at sequence {seq}");
    }
    for beyond in [6, 7, u64::MAX] {
        let status = assert_rejected(
            c.get_game(at(beyond)).await,
            Code::OutOfRange,
            "SEQUENCE_OUT_OF_RANGE",
        );
        assert_eq!(metadata(&status, "last_sequence").as_deref(), Some("5"));
    }
    let status = assert_rejected(
        c.get_game(pb::GetGameRequest {
            game_id: "missing".into(),
            at_sequence: None,
        })
        .await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
    assert_eq!(status.message(), "game missing not found");
}

#[tokio::test]
async fn get_replay_returns_every_event_with_the_position_after_it() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "rp", connect_four()).await;
    play_all(c, "rp", &[drop_in(0), drop_in(0), drop_in(6)]).await;
    c.undo(pb::UndoRequest {
        game_id: "rp".into(),
        seat: Some(0),
        ..Default::default()
    })
    .await
    .unwrap();
    let replay = c
        .get_replay(pb::GetReplayRequest {
            game_id: "rp".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(replay.steps.len(), 5);
    for (i, step) in replay.steps.iter().enumerate() {
        let event = step.event.as_ref().unwrap();
        let pos = step.position.as_ref().unwrap();
        assert_eq!((event.sequence, pos.sequence), (i as u64 + 1, i as u64 + 1));
    }
    let plies: Vec<u32> = replay
        .steps
        .iter()
        .map(|s| s.position.as_ref().unwrap().ply)
        .collect();
    assert_eq!(plies, [0, 1, 2, 3, 2]);
    let to_move: Vec<_> = replay
        .steps
        .iter()
        .map(|s| s.position.as_ref().unwrap().seat_to_move)
        .collect();
    assert_eq!(to_move, [Some(0), Some(1), Some(0), Some(1), Some(0)]);
    let last = replay.steps[4]
        .position
        .as_ref()
        .unwrap()
        .board
        .as_ref()
        .unwrap();
    assert_eq!(
        last.pieces,
        vec![
            pb::Piece {
                row: 4,
                col: 0,
                seat: 1
            },
            pb::Piece {
                row: 5,
                col: 0,
                seat: 0
            }
        ]
    );
    // The replay's game is GetGame's game.
    assert_eq!(replay.game.unwrap(), get_game(c, "rp").await);
    assert_rejected(
        c.get_replay(pb::GetReplayRequest {
            game_id: "zzz".into(),
            ..Default::default()
        })
        .await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
}

#[tokio::test]
async fn get_replay_pages_join_up_to_the_whole_log() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "pages", mnk(4, 4, 4)).await;
    play_all(
        c,
        "pages",
        &[place(0, 0), place(1, 1), place(2, 2), place(3, 3)],
    )
    .await;
    let whole = c
        .get_replay(pb::GetReplayRequest {
            game_id: "pages".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((whole.steps.len(), whole.next_page_token.as_str()), (5, ""));
    // The pages after the first carry the game in the basic view.
    let full = whole.game.clone().unwrap();
    let basic = pb::Game {
        position: full.position.clone().map(|position| pb::Position {
            board: None,
            ..position
        }),
        game_id: full.game_id.clone(),
        created_at: full.created_at,
        last_sequence: full.last_sequence,
        ..pb::Game::default()
    };
    let mut steps = Vec::new();
    let mut token = String::new();
    loop {
        let expected = if token.is_empty() { &full } else { &basic };
        let page = c
            .get_replay(pb::GetReplayRequest {
                game_id: "pages".into(),
                page_size: 2,
                page_token: token,
                round: None,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert!(page.steps.len() <= 2);
        assert_eq!(page.game.as_ref(), Some(expected));
        steps.extend(page.steps);
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(steps, whole.steps);
    let bad = c
        .get_replay(pb::GetReplayRequest {
            game_id: "pages".into(),
            page_size: 2,
            page_token: "x".into(),
            round: None,
            ..Default::default()
        })
        .await;
    assert_rejected(bad, Code::InvalidArgument, "INVALID_PAGE_TOKEN");
}

#[tokio::test]
async fn a_replay_page_stays_under_a_default_clients_message_limit() {
    use prost::Message;
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    // Text rows of 32 four-emoji symbols make every position large.
    let request = pb::CreateGameRequest {
        seats: vec![seat("a", "😀😀😀😀"), seat("b", "🎲🎲🎲🎲")],
        ..create_request("wide", mnk(32, 32, 32))
    };
    create_from(c, request).await;
    for i in 0..600 {
        play(c, "wide", i % 2, place((i / 32) as i32, (i % 32) as i32))
            .await
            .unwrap();
    }
    let (mut steps, mut token, mut pages) = (0, String::new(), 0);
    loop {
        let page = c
            .get_replay(pb::GetReplayRequest {
                game_id: "wide".into(),
                page_size: 0,
                page_token: token.clone(),
                round: None,
                ..Default::default()
            })
            .await
            .expect("every page fits a default client")
            .into_inner();
        assert!(
            page.encoded_len() < 4 * 1024 * 1024,
            "{}",
            page.encoded_len()
        );
        steps += page.steps.len();
        pages += 1;
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    assert_eq!(steps, 601);
    assert!(pages > 1, "601 large steps fit one page");
}

/// Events only (`position_every: 0`), every Nth, and by sequence: the steps
/// are the same events, and a step carries exactly the position asked for,
/// equal to GetGame's at that sequence.
#[tokio::test]
async fn get_replay_carries_positions_only_where_asked() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "sparse", connect_four()).await;
    let drops: Vec<_> = [0, 1, 0, 1, 2, 3, 2].into_iter().map(drop_in).collect();
    play_all(c, "sparse", &drops).await;
    let client = c.clone();
    let replay = |every: Option<u32>, at: Vec<u64>| {
        let mut c = client.clone();
        async move {
            c.get_replay(pb::GetReplayRequest {
                game_id: "sparse".into(),
                position_every: every,
                position_at: at,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
        }
    };
    let full = replay(None, vec![]).await;
    let with = |r: &pb::GetReplayResponse| -> Vec<u64> {
        r.steps
            .iter()
            .filter(|s| s.position.is_some())
            .map(|s| s.event.as_ref().unwrap().sequence)
            .collect()
    };
    assert_eq!(with(&full), (1..=8).collect::<Vec<_>>());
    for (every, at, expected) in [
        (Some(0), vec![], vec![]),
        (Some(3), vec![], vec![3, 6, 8]),
        (Some(0), vec![5, 2, 99], vec![2, 5]),
        (Some(4), vec![1], vec![1, 4, 8]),
    ] {
        let sparse = replay(every, at.clone()).await;
        assert_eq!(with(&sparse), expected, "every {every:?}, at {at:?}");
        let events = |r: &pb::GetReplayResponse| -> Vec<pb::GameEvent> {
            r.steps.iter().map(|s| s.event.clone().unwrap()).collect()
        };
        assert_eq!(events(&sparse), events(&full));
        for step in sparse.steps.iter().filter(|s| s.position.is_some()) {
            let sequence = step.event.as_ref().unwrap().sequence;
            let at = c
                .get_game(pb::GetGameRequest {
                    game_id: "sparse".into(),
                    at_sequence: Some(sequence),
                })
                .await
                .unwrap()
                .into_inner()
                .game
                .unwrap();
            assert_eq!(
                step.position.as_ref(),
                at.position.as_ref(),
                "at {sequence}"
            );
        }
    }
    assert_rejected(
        c.get_replay(pb::GetReplayRequest {
            game_id: "sparse".into(),
            position_at: (1..=1001).collect(),
            ..Default::default()
        })
        .await,
        Code::InvalidArgument,
        "INVALID_REQUEST",
    );
}

#[tokio::test]
async fn get_replay_basic_view_leaves_out_the_configuration_and_the_board() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "viewed", mnk(3, 3, 3)).await;
    play_all(c, "viewed", &[place(0, 0), place(1, 1), place(2, 2)]).await;
    let latest = get_game(c, "viewed").await;
    let replay = |view: i32| {
        let mut c = c.clone();
        async move {
            c.get_replay(pb::GetReplayRequest {
                game_id: "viewed".into(),
                position_every: Some(0),
                view,
                ..Default::default()
            })
            .await
        }
    };
    // Unspecified is the full view: GetGame's game.
    let full = replay(pb::GameView::Unspecified as i32)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(full.game.as_ref(), Some(&latest));
    assert_eq!(board_text(&latest), ["X..", ".O.", "..X"]);
    let explicit = replay(pb::GameView::Full as i32)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(explicit, full);
    let basic = replay(pb::GameView::Basic as i32)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(basic.steps, full.steps);
    assert_eq!(basic.steps.len(), 4);
    let game = basic.game.clone().unwrap();
    assert_eq!(game.rules, None);
    assert!(game.seats.is_empty());
    let mut position = latest.position.clone().unwrap();
    position.board = None;
    assert_eq!(game.position, Some(position));
    assert_eq!(game.last_sequence, latest.last_sequence);
    assert_rejected(replay(7).await, Code::InvalidArgument, "INVALID_REQUEST");
    // Unspecified is the full view on the first page only: a page after it
    // carries the basic view, unless the full one is asked for.
    let page = |view: i32, page_token: &str| {
        let mut c = c.clone();
        let page_token = page_token.to_owned();
        async move {
            c.get_replay(pb::GetReplayRequest {
                game_id: "viewed".into(),
                page_size: 2,
                page_token,
                position_every: Some(0),
                view,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner()
        }
    };
    let first = page(pb::GameView::Unspecified as i32, "").await;
    assert_eq!(first.game.as_ref(), Some(&latest));
    let token = first.next_page_token;
    assert!(!token.is_empty(), "two pages");
    let second = page(pb::GameView::Unspecified as i32, &token).await;
    assert_eq!(second.game, Some(game));
    assert_eq!(second.steps, full.steps[2..]);
    let second = page(pb::GameView::Full as i32, &token).await;
    assert_eq!(second.game.as_ref(), Some(&latest));
}

/// GetReplay sends stored events as they are stored, after checking each
/// one: a payload that breaks the integrity chain, that does not frame, or
/// that names another sequence, is DATA_LOSS / LOG_CORRUPT (the log is
/// corrupt), never passed on, also by a node that holds the game in memory.
#[tokio::test]
async fn get_replay_refuses_a_stored_event_that_is_not_its_own() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "bad", mnk(3, 3, 3)).await;
    play_all(c, "bad", &[place(0, 0), place(1, 1), place(2, 2)]).await;
    // A twin game with the same moves: its events frame and carry the same
    // sequences, only the game they name (and so their chain) differs.
    create(c, "twin", mnk(3, 3, 3)).await;
    play_all(c, "twin", &[place(0, 0), place(1, 1), place(2, 2)]).await;
    let db = std::sync::Arc::clone(&server.db);
    let replay = |every: Option<u32>| {
        let mut c = c.clone();
        async move {
            c.get_replay(pb::GetReplayRequest {
                game_id: "bad".into(),
                position_every: every,
                ..Default::default()
            })
            .await
        }
    };
    let whole = replay(Some(0)).await.unwrap().into_inner();
    assert_eq!(whole.steps.len(), 4);
    let corruptions = [
        // The twin's event 3 stored as this game's: only the integrity
        // chain (and, with positions, the game id) tells.
        "UPDATE events SET payload = (SELECT payload FROM events \
         WHERE game_id = 'twin' AND sequence = 3) WHERE game_id = 'bad' AND sequence = 3",
        // Event 2's payload stored as event 3.
        "UPDATE events SET payload = (SELECT payload FROM events \
         WHERE game_id = 'bad' AND sequence = 2) WHERE game_id = 'bad' AND sequence = 3",
        // Event 3's payload cut short inside its first field.
        "UPDATE events SET payload = substr(payload, 1, 3) \
         WHERE game_id = 'bad' AND sequence = 3",
    ];
    for sql in corruptions {
        let saved = "CREATE TABLE saved AS SELECT * FROM events WHERE game_id = 'bad'";
        execute(&db, saved).await;
        assert_eq!(execute(&db, sql).await, 1);
        for every in [Some(0), None] {
            let status = replay(every).await.unwrap_err();
            assert_eq!(
                (status.code(), reason(&status).as_str()),
                (Code::DataLoss, "LOG_CORRUPT"),
                "{sql}, every {every:?}: {status:?}"
            );
        }
        execute(
            &db,
            "DELETE FROM events WHERE game_id = 'bad' AND sequence = 3",
        )
        .await;
        execute(
            &db,
            "INSERT INTO events SELECT * FROM saved WHERE sequence = 3",
        )
        .await;
        execute(&db, "DROP TABLE saved").await;
        assert_eq!(replay(Some(0)).await.unwrap().into_inner(), whole);
    }
}

/// With the heavy-read pool full of reads that cannot go on (a lock held on
/// PostgreSQL's snapshots table stops each at its first read), one more
/// heavy read is refused at once with UNAVAILABLE / OVERLOADED and a retry
/// delay, a replay without positions (not heavy) is answered, and so are
/// another game's moves and GetGame; once the lock goes, the held reads
/// are answered. Needs PostgreSQL (`DATABASE_URL`); skipped otherwise.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_the_heavy_read_pool_full_other_calls_are_answered_and_one_more_heavy_read_is_refused()
{
    use sqlx::Connection;
    use tonic_types::StatusExt;

    let Some(db) = TestDatabase::postgres().await else {
        println!("skipped: needs PostgreSQL (DATABASE_URL=postgres://...)");
        return;
    };
    let registry = plylog::registry::RegistrySettings {
        heavy_reads: plylog::registry::HeavyReadSettings {
            threads: 1,
            max_heavy_reads: 2,
        },
        ..settings()
    };
    let server = TestServer::start_on(db, registry).await;
    let mut c = server.client.clone();
    create(&mut c, "long", mnk(15, 15, 5)).await;
    play_all(
        &mut c,
        "long",
        &[place(0, 0), place(1, 1), place(2, 2), place(3, 3)],
    )
    .await;
    create(&mut c, "other", mnk(3, 3, 3)).await;
    let client = c.clone();
    let past = |at: u64| {
        let mut c = client.clone();
        async move {
            c.get_game(pb::GetGameRequest {
                game_id: "long".into(),
                at_sequence: Some(at),
            })
            .await
        }
    };
    let mut lock = sqlx::PgConnection::connect(&server.db.url).await.unwrap();
    sqlx::query("BEGIN").execute(&mut lock).await.unwrap();
    sqlx::query("LOCK TABLE snapshots IN ACCESS EXCLUSIVE MODE")
        .execute(&mut lock)
        .await
        .unwrap();
    let held: Vec<_> = (2..4).map(|at| tokio::spawn(past(at))).collect();
    wait_until("two heavy reads admitted", Duration::from_secs(10), || {
        server.registry.heavy_reads() == 2
    })
    .await;
    // The pool is full: one more heavy read is refused at once, a past
    // view or a replay with positions alike.
    let refused = assert_rejected(within(past(4)).await, Code::Unavailable, "OVERLOADED");
    assert!(
        refused
            .get_error_details()
            .retry_info()
            .and_then(|r| r.retry_delay)
            .is_some(),
        "a retry delay: {refused:?}"
    );
    let replay = |every: Option<u32>| {
        let mut c = client.clone();
        async move {
            c.get_replay(pb::GetReplayRequest {
                game_id: "long".into(),
                position_every: every,
                ..Default::default()
            })
            .await
        }
    };
    assert_rejected(within(replay(None)).await, Code::Unavailable, "OVERLOADED");
    // Reads that rebuild nothing, and another game's moves, are answered.
    let events = within(replay(Some(0))).await.unwrap().into_inner();
    assert_eq!(events.steps.len(), 5);
    within(play(&mut c, "other", 0, place(1, 1))).await.unwrap();
    within(play(&mut c, "other", 1, place(0, 0))).await.unwrap();
    assert_eq!(within(get_game(&mut c, "other")).await.last_sequence, 3);
    assert_eq!(
        server.registry.heavy_reads(),
        2,
        "the held reads still wait"
    );
    // The lock goes: the held reads are answered, and their slots free.
    sqlx::query("COMMIT").execute(&mut lock).await.unwrap();
    for (read, at) in held.into_iter().zip(2..) {
        let game = within(read)
            .await
            .unwrap()
            .unwrap()
            .into_inner()
            .game
            .unwrap();
        assert_eq!(position(&game).sequence, at);
    }
    assert_eq!(server.registry.heavy_reads(), 0);
    within(past(4)).await.unwrap();
}
