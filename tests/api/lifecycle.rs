use std::time::Duration;

use plylog::app::{Application, Settings};
use plylog::proto as pb;
use plylog::registry::RegistrySettings;
use tonic::Code;

use plylog_testkit::*;

#[tokio::test]
async fn after_a_restart_on_the_same_file_every_game_continues_exactly_where_it_was() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "t", mnk(3, 3, 3)).await;
    create(c, "c", connect_four()).await;
    create(c, "w", mnk(3, 3, 3)).await;
    play_all(c, "t", &[place(0, 0), place(1, 1)]).await;
    play_all(c, "c", &[drop_in(3), drop_in(3), drop_in(4)]).await;
    c.undo(pb::UndoRequest {
        game_id: "c".into(),
        seat: Some(0),
        ..Default::default()
    })
    .await
    .unwrap();
    play_all(c, "w", &x_wins_top_row()).await;
    let retried = pb::SubmitMoveRequest {
        request_id: "r-1".into(),
        ..move_request("t", 0, place(2, 2))
    };
    let original = c.submit_move(retried.clone()).await.unwrap().into_inner();
    let before: Vec<pb::Game> = futures::future::join_all(["t", "c", "w"].map(|id| {
        let mut c = c.clone();
        async move { get_game(&mut c, id).await }
    }))
    .await;

    let mut server = server.restart().await;
    let c = &mut server.client;
    for game in &before {
        assert_eq!(&get_game(c, &game.game_id).await, game);
    }
    assert_eq!(c.submit_move(retried).await.unwrap().into_inner(), original);
    // Play on: O's turn in "t", seat 0's turn in "c"; "w" is over.
    play(c, "t", 1, place(2, 0)).await.unwrap();
    let reply = play(c, "c", 0, drop_in(3)).await.unwrap();
    assert_eq!(reply.events[0].sequence, 6);
    assert_rejected(
        play(c, "w", 1, place(2, 2)).await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );
    let games = list_games(c).await;
    assert_eq!(games.len(), 3);
}

#[tokio::test]
async fn an_idle_game_dropped_from_memory_is_loaded_again_by_replay() {
    let registry = RegistrySettings {
        idle_timeout: Duration::from_millis(50),
        ..settings()
    };
    let mut server = TestServer::start_with(registry).await;
    let live = server.registry.clone();
    let dropped = || async {
        wait_until(
            "the idle game to leave memory",
            Duration::from_secs(10),
            || !live.is_live("idle"),
        )
        .await;
    };
    let c = &mut server.client;
    create(c, "idle", mnk(3, 3, 3)).await;
    play(c, "idle", 0, place(0, 0)).await.unwrap();
    // The game leaves memory between moves: each move loads it anew by
    // replay and continues the same log.
    for (seat, mv) in [(1, place(1, 1)), (0, place(2, 2))] {
        dropped().await;
        play(c, "idle", seat, mv).await.unwrap();
    }
    dropped().await;
    let game = get_game(c, "idle").await;
    assert_eq!(
        (game.last_sequence, board_text(&game)),
        (4, vec!["X..".to_owned(), ".O.".into(), "..X".into()])
    );
}

#[tokio::test]
async fn stopping_the_server_ends_open_streams_with_unavailable() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "bye", mnk(3, 3, 3)).await;
    let mut stream = follow(c, "bye", 0).await;
    within(stream.message()).await.unwrap();
    within(stream.message()).await.unwrap();
    let stopping = tokio::spawn(server.stop());
    let status = loop {
        match within(stream.message()).await {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("the stream ended without a status"),
            Err(status) => break status,
        }
    };
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::Unavailable, "SHUTTING_DOWN")
    );
    stopping.await.unwrap();
}

/// The durability settings the server's store reports, read back from the
/// database it opened.
async fn durability_of(settings: Settings) -> Vec<(String, String)> {
    let app = Application::build(settings).await.expect("server builds");
    let durability = app.store().durability().await.expect("settings read back");
    app.store().close().await;
    durability
}

#[tokio::test]
async fn an_acknowledged_move_is_flushed_to_disk_by_the_settings_in_force() {
    // A SIGKILL keeps the operating system's cache, so the crash test cannot
    // tell a flushed commit from a cached one; these settings can.
    let db = TestDatabase::fresh().await;
    let mut settings = Settings::new("127.0.0.1:0".parse().unwrap(), db.url.clone());
    settings.access.seat_token_secret_file = Some(db.secret_file());
    let durability = durability_of(settings.clone()).await;
    let expected: &[(&str, &str)] = if db.file.is_some() {
        &[("journal_mode", "wal"), ("synchronous", "FULL")]
    } else {
        &[
            ("synchronous_commit", "on"),
            ("fsync", "on"),
            ("full_page_writes", "on"),
        ]
    };
    for (name, value) in expected {
        assert!(
            durability.contains(&((*name).to_owned(), (*value).to_owned())),
            "{name}={value} not in force: {durability:?}"
        );
    }
    if db.file.is_some() {
        // The documented opt-in is what it says, so the reading is real.
        let normal = durability_of(Settings {
            sqlite_synchronous_normal: true,
            ..settings
        })
        .await;
        assert!(normal.contains(&("synchronous".to_owned(), "NORMAL".to_owned())));
    }
}

#[tokio::test]
async fn a_new_game_stays_in_memory_and_a_missing_one_leaves_nothing_there() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "warm", mnk(3, 3, 3)).await;
    // Kept warm by CreateGame itself: its first move needs no replay.
    assert!(server.registry.is_live("warm"));
    for _ in 0..3 {
        assert_rejected(
            c.get_game(pb::GetGameRequest {
                game_id: "ghost".into(),
                at_sequence: None,
            })
            .await,
            Code::NotFound,
            "GAME_NOT_FOUND",
        );
        assert!(!server.registry.is_live("ghost"));
    }
    assert_eq!(server.registry.live_games(), 1);
}
