use std::time::Duration;

use plylog::proto as pb;
use plylog::registry::RegistrySettings;
use tonic::Code;

use plylog_testkit::*;

/// Asserts a RESOURCE_EXHAUSTED status naming `limit`.
#[track_caller]
fn assert_limit(status: &tonic::Status, reason_name: &str, limit: &str) {
    assert_eq!(
        (status.code(), reason(status).as_str()),
        (Code::ResourceExhausted, reason_name),
        "{status:?}"
    );
    assert_eq!(metadata(status, "limit").as_deref(), Some(limit));
    assert!(status.message().contains(limit), "{status:?}");
}

/// The first item of a stream: its error status, if it is one.
async fn first_error(client: &mut Client, game_id: &str) -> Option<tonic::Status> {
    let opened = client
        .stream_events(pb::StreamEventsRequest {
            game_id: game_id.into(),
            from_sequence: 1,
            follow: true,
            round: None,
        })
        .await;
    match opened {
        Err(status) => Some(status),
        Ok(stream) => within(stream.into_inner().message()).await.err(),
    }
}

#[tokio::test]
async fn a_request_over_the_size_limit_is_resource_exhausted_naming_it() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let mut request = create_request("huge", mnk(3, 3, 3));
    request.seats[0].display_name = "x".repeat(100 * 1024);
    let status = c.create_game(request).await.unwrap_err();
    assert_limit(&status, "REQUEST_TOO_LARGE", "max_request_bytes");
    assert_eq!(metadata(&status, "max").as_deref(), Some("65536"));
    // The server carries on.
    create(c, "small", mnk(3, 3, 3)).await;
}

#[tokio::test]
async fn open_streams_are_limited_per_server_and_per_game() {
    let registry = RegistrySettings {
        max_streams: 2,
        max_streams_per_game: 1,
        ..settings()
    };
    let mut server = TestServer::start_with(registry).await;
    let c = &mut server.client;
    for game in ["s1", "s2", "s3"] {
        create(c, game, mnk(3, 3, 3)).await;
    }
    let first = follow(c, "s1", 1).await;
    let status = first_error(c, "s1").await.expect("a second stream on s1");
    assert_limit(&status, "LIMIT_REACHED", "max_streams_per_game");
    let second = follow(c, "s2", 1).await;
    let status = first_error(c, "s3").await.expect("a third stream");
    assert_limit(&status, "LIMIT_REACHED", "max_streams");
    // Hanging up gives the slot back.
    drop((first, second));
    let mut reopened = false;
    for _ in 0..100 {
        if first_error(c, "s3").await.is_none() {
            reopened = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(reopened, "the stream slots were never given back");
}

#[tokio::test]
async fn a_flood_of_warm_games_never_locks_another_game_out() {
    let registry = RegistrySettings {
        max_live_games: 4,
        ..settings()
    };
    let mut server = TestServer::start_with(registry).await;
    let c = &mut server.client;
    create(c, "watched", mnk(3, 3, 3)).await;
    create(c, "victim", mnk(3, 3, 3)).await;
    for g in 0..8 {
        create(c, &format!("flood-{g}"), mnk(3, 3, 3)).await;
    }
    // A spectator keeps "watched" subscribed: it is never evicted.
    let mut stream = follow(c, "watched", 1).await;
    within(stream.message()).await.unwrap();
    // A client keeps its own games warm, over and over...
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flood_client = c.clone();
    let flood: Vec<_> = (0..4)
        .map(|worker| {
            let mut c = flood_client.clone();
            let stop = std::sync::Arc::clone(&stop);
            tokio::spawn(async move {
                let mut calls = 0;
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    let game_id = format!("flood-{}", (calls + worker) % 8);
                    get_game(&mut c, &game_id).await;
                    calls += 1;
                }
                calls
            })
        })
        .collect();
    // ...while another plays its game to the end: every call is served,
    // its game loaded again each time by evicting an idle one.
    let mut seat = 0;
    for mv in x_wins_top_row() {
        get_game(c, "victim").await;
        play(c, "victim", seat, mv)
            .await
            .expect("never LIMIT_REACHED");
        seat = 1 - seat;
        assert!(
            server.registry.is_live("watched"),
            "a watched game was evicted"
        );
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    let mut flood_calls = 0;
    for worker in flood {
        flood_calls += worker.await.unwrap();
    }
    assert!(flood_calls > 0);
    // Once the flood stops, the count is back within the limit.
    let registry = server.registry.clone();
    wait_until(
        "the live games back within 4",
        Duration::from_secs(5),
        || registry.live_games() <= 4,
    )
    .await;
    assert!(server.registry.is_live("watched"));
}

/// A server whose live games may weigh `bytes` in all.
async fn with_memory_budget(bytes: usize) -> TestServer {
    TestServer::start_with(RegistrySettings {
        max_live_bytes: bytes,
        ..settings()
    })
    .await
}

#[tokio::test]
async fn live_games_stay_within_the_memory_budget_by_evicting_the_least_recently_used() {
    // Each 1000x1000 game weighs about 1 MB once loaded; the budget holds
    // three and a half.
    const BUDGET: usize = 3_500_000;
    let mut server = with_memory_budget(BUDGET).await;
    let c = &mut server.client;
    let live = server.registry.clone();
    create(c, "kept", mnk(1000, 1000, 5)).await;
    for g in 0..8 {
        let game_id = format!("big-{g}");
        create(c, &game_id, mnk(1000, 1000, 5)).await;
        play(c, &game_id, 0, place(g, g)).await.unwrap();
        // "kept" is used between every other game: never the least recent.
        get_game(c, "kept").await;
        wait_until(
            "the live games within the budget",
            Duration::from_secs(5),
            || live.live_bytes() <= BUDGET,
        )
        .await;
        assert!(
            live.is_live("kept"),
            "the most recently used game was evicted"
        );
    }
    assert!(live.live_games() <= 3, "{} games live", live.live_games());
    // Evicted games load again, with everything they had.
    for g in 0..8 {
        let game = get_game(c, &format!("big-{g}")).await;
        assert_eq!(game.last_sequence, 2);
        wait_until(
            "the live games within the budget",
            Duration::from_secs(5),
            || live.live_bytes() <= BUDGET,
        )
        .await;
    }
}

#[tokio::test]
async fn games_loaded_over_the_budget_leave_as_soon_as_they_are_idle_not_at_their_timeout() {
    // Each 1000x1000 game weighs about 1 MB once loaded: the budget holds
    // one and a half, and an idle game would stay for the default 300 s.
    const BUDGET: usize = 1_500_000;
    let mut server = with_memory_budget(BUDGET).await;
    let c = &mut server.client;
    let live = server.registry.clone();
    create(c, "watched", mnk(1000, 1000, 5)).await;
    let mut watching = follow(c, "watched", 1).await;
    within(watching.message()).await.unwrap();
    // "watched" cannot go: "big" loads over the budget to take its move,
    // then leaves once it answered.
    create(c, "big", mnk(1000, 1000, 5)).await;
    play(c, "big", 0, place(0, 0)).await.unwrap();
    wait_until(
        "the game played over the budget to leave",
        Duration::from_secs(5),
        || !live.is_live("big"),
    )
    .await;
    assert!(live.is_live("watched"));
    // Both watched: both stay, over the budget; once nobody watches,
    // memory is back within it.
    let mut watching_big = follow(c, "big", 1).await;
    within(watching_big.message()).await.unwrap();
    assert!(
        live.live_bytes() > BUDGET,
        "{} bytes live",
        live.live_bytes()
    );
    drop((watching, watching_big));
    wait_until(
        "the live games within the budget once unwatched",
        Duration::from_secs(5),
        || live.live_bytes() <= BUDGET,
    )
    .await;
}

#[tokio::test]
async fn a_games_request_ids_count_in_what_it_weighs() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "plain", mnk(20, 20, 20)).await;
    create(c, "keyed", mnk(20, 20, 20)).await;
    // A reply to GetGame comes after the game's actor has weighed every
    // move before it.
    let weighed = |c: &mut Client, game_id: &'static str| {
        let mut c = c.clone();
        let live = server.registry.clone();
        async move {
            get_game(&mut c, game_id).await;
            live.live_bytes()
        }
    };
    weighed(c, "plain").await;
    let before = weighed(c, "keyed").await;
    for i in 0..10 {
        play(c, "plain", i % 2, place(0, i as i32)).await.unwrap();
    }
    let plain = weighed(c, "plain").await - before;
    for i in 0..10u32 {
        let request = pb::SubmitMoveRequest {
            request_id: format!("{i:0>128}"),
            ..move_request("keyed", i % 2, place(0, i as i32))
        };
        c.submit_move(request).await.unwrap();
    }
    let keyed = weighed(c, "keyed").await - before - plain;
    // Each id counts once with its fingerprint (the request, well under
    // 1 KiB) and the record's overhead: not less, and not much more.
    assert!(
        (plain + 10 * 128..=plain + 10 * (128 + 1024)).contains(&keyed),
        "10 moves weigh {plain} bytes, with 128-character request ids {keyed}"
    );
}
