//! The Prometheus endpoint, scraped after a scripted game on a test clock:
//! the three game-health signals (rejected moves by reason, time to the
//! first move, game length in moves and seconds), games finished by result,
//! and the service's calls by method and code.

use std::collections::HashMap;

use plylog::proto as pb;
use plylog::registry::{Clock, RegistrySettings};

use plylog_testkit::*;

/// The test clock's start, Unix epoch milliseconds.
const T: i64 = 1_800_000_000_000;

fn value(metrics: &HashMap<String, f64>, series: &str) -> f64 {
    *metrics
        .get(series)
        .unwrap_or_else(|| panic!("{series} missing; the scrape has {metrics:#?}"))
}

/// A test server whose clock is a manual one at [`T`], and that clock.
async fn on_the_test_clock() -> (TestServer, Clock) {
    let clock = Clock::manual(T);
    let server = TestServer::start_with(RegistrySettings {
        clock: clock.clone(),
        ..settings()
    })
    .await;
    (server, clock)
}

#[tokio::test]
async fn a_scripted_game_shows_in_the_three_signals_and_the_call_counts() {
    let (server, clock) = on_the_test_clock().await;
    let mut client = server.client.clone();
    create(&mut client, "scripted", mnk(3, 3, 3)).await;
    // Nobody moves for 7 s: the first-move histogram sees 7 s.
    clock.advance(7_000);
    play(&mut client, "scripted", 0, place(0, 0)).await.unwrap();
    // Four refusals, each with its reason; the last on a game nobody has.
    let occupied = play(&mut client, "scripted", 1, place(0, 0)).await;
    assert_eq!(reason(&occupied.unwrap_err()), "CELL_OCCUPIED");
    let out_of_turn = play(&mut client, "scripted", 0, place(2, 2)).await;
    assert_eq!(reason(&out_of_turn.unwrap_err()), "NOT_YOUR_TURN");
    let stale = client
        .submit_move(pb::SubmitMoveRequest {
            expected_sequence: Some(1),
            ..move_request("scripted", 1, place(1, 0))
        })
        .await;
    assert_eq!(reason(&stale.unwrap_err()), "SEQUENCE_MISMATCH");
    let nowhere = play(&mut client, "nowhere", 0, place(0, 0)).await;
    assert_eq!(reason(&nowhere.unwrap_err()), "GAME_NOT_FOUND");
    // X takes the top row, the game 60 s old at its last move.
    play(&mut client, "scripted", 1, place(1, 0)).await.unwrap();
    play(&mut client, "scripted", 0, place(0, 1)).await.unwrap();
    play(&mut client, "scripted", 1, place(1, 1)).await.unwrap();
    clock.set(T + 60_000);
    let last = play(&mut client, "scripted", 0, place(0, 2)).await.unwrap();
    assert_eq!(
        position(&last.game.unwrap()).status,
        pb::GameStatus::Won as i32,
        "the game is over"
    );

    let metrics = server.scrape().await;
    let mnk = |name: &str| value(&metrics, &format!("{name}{{kind=\"mnk\"}}"));
    let rejected = |kind: &str, reason: &str| {
        value(
            &metrics,
            &format!("plylog_moves_rejected_total{{kind=\"{kind}\",reason=\"{reason}\"}}"),
        )
    };
    // 1. Rejected moves by reason: one each.
    assert_eq!(rejected("mnk", "CELL_OCCUPIED"), 1.0);
    assert_eq!(rejected("mnk", "NOT_YOUR_TURN"), 1.0);
    assert_eq!(rejected("mnk", "SEQUENCE_MISMATCH"), 1.0);
    assert_eq!(rejected("unknown", "GAME_NOT_FOUND"), 1.0);
    // 2. Time to the first move: one game, 7 s.
    assert_eq!(mnk("plylog_first_move_seconds_count"), 1.0);
    assert_eq!(mnk("plylog_first_move_seconds_sum"), 7.0);
    // 3. Game length: 5 plies in 60 s.
    assert_eq!(mnk("plylog_game_length_plies_count"), 1.0);
    assert_eq!(mnk("plylog_game_length_plies_sum"), 5.0);
    assert_eq!(mnk("plylog_game_duration_seconds_sum"), 60.0);
    assert_eq!(
        value(
            &metrics,
            "plylog_games_finished_total{kind=\"mnk\",result=\"win\",reason=\"line_completed\"}"
        ),
        1.0
    );
    assert_eq!(mnk("plylog_games_created_total"), 1.0);
    // The calls, by method and code, and their latency.
    let calls = |method: &str, code: &str| {
        value(
            &metrics,
            &format!("plylog_grpc_calls_total{{method=\"{method}\",code=\"{code}\"}}"),
        )
    };
    assert_eq!(calls("CreateGame", "OK"), 1.0);
    assert_eq!(calls("SubmitMove", "OK"), 5.0);
    assert_eq!(calls("SubmitMove", "FAILED_PRECONDITION"), 2.0);
    assert_eq!(calls("SubmitMove", "ABORTED"), 1.0);
    assert_eq!(calls("SubmitMove", "NOT_FOUND"), 1.0);
    assert_eq!(
        value(
            &metrics,
            "plylog_grpc_call_duration_seconds_count{method=\"SubmitMove\"}"
        ),
        9.0
    );
    // The store: five appends (creation is not an append), one event each
    // (the winning move carries the outcome).
    assert_eq!(value(&metrics, "plylog_store_append_events_count"), 5.0);
    assert_eq!(value(&metrics, "plylog_store_append_events_sum"), 5.0);
    assert_eq!(value(&metrics, "plylog_live_games"), 1.0);
    assert!(
        metrics
            .keys()
            .all(|s| !s.starts_with("plylog_shed_calls_total")),
        "nothing was shed"
    );
}

#[tokio::test]
async fn a_stream_counts_with_its_final_code_and_a_path_nobody_serves_mints_no_label() {
    let server = TestServer::start().await;
    let mut client = server.client.clone();
    create(&mut client, "streamed", mnk(3, 3, 3)).await;
    // A finished (unfollowed) stream ends OK in its trailers.
    read_stream(&mut client, "streamed", 1).await;
    // An unknown method on this service is UNIMPLEMENTED, labelled
    // "unknown" whatever its name.
    let channel = channel(server.addr).await;
    let mut grpc = tonic::client::Grpc::new(channel);
    grpc.ready().await.unwrap();
    let path = http::uri::PathAndQuery::from_static("/plylog.v1.GameService/NoSuchMethod");
    let codec = tonic_prost::ProstCodec::<pb::GetGameRequest, pb::Game>::default();
    let status = grpc
        .unary(
            tonic::Request::new(pb::GetGameRequest::default()),
            path,
            codec,
        )
        .await
        .unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unimplemented);

    let metrics = server.scrape().await;
    assert_eq!(
        value(
            &metrics,
            "plylog_grpc_calls_total{method=\"StreamEvents\",code=\"OK\"}"
        ),
        1.0
    );
    assert_eq!(
        value(
            &metrics,
            "plylog_grpc_calls_total{method=\"unknown\",code=\"UNIMPLEMENTED\"}"
        ),
        1.0
    );
    assert!(
        metrics
            .keys()
            .all(|series| !series.contains("NoSuchMethod")),
        "a caller's path is never a label"
    );
}

/// CreateGame's `matched_at`: the first-move metric measures from when a
/// matchmaking service matched the players, the GameCreated event keeps
/// it, and a time too far from the server's clock is refused (a little
/// ahead reads as the creation).
#[tokio::test]
async fn time_to_the_first_move_counts_from_the_match_when_create_game_gives_it() {
    let (server, clock) = on_the_test_clock().await;
    let mut client = server.client.clone();
    let matched = |game_id: &str, at_ms: i64| pb::CreateGameRequest {
        matched_at: Some(plylog::proto::convert::timestamp(at_ms)),
        ..create_request(game_id, mnk(3, 3, 3))
    };
    // Matched 5 s before the creation, first move 2 s after it: 7 s.
    let game = create_from(&mut client, matched("matched", T - 5_000)).await;
    assert_eq!(game.game_id, "matched");
    clock.advance(2_000);
    play(&mut client, "matched", 0, place(0, 0)).await.unwrap();
    let metrics = server.scrape().await;
    assert_eq!(
        value(&metrics, "plylog_first_move_seconds_sum{kind=\"mnk\"}"),
        7.0
    );
    assert_eq!(matched_at_of(&client, "matched").await, Some(T - 5_000));
    // 30 s ahead of the server's clock: read as the creation.
    create_from(&mut client, matched("ahead", T + 2_000 + 30_000)).await;
    assert_eq!(matched_at_of(&client, "ahead").await, Some(T + 2_000));
    // More than 24 hours before, or more than a minute ahead: refused.
    for (game_id, at_ms) in [
        ("old", T + 2_000 - 24 * 3_600_000 - 1_000),
        ("future", T + 2_000 + 61_000),
    ] {
        let refused = client
            .create_game(matched(game_id, at_ms))
            .await
            .expect_err("refused");
        assert_eq!(
            (refused.code(), reason(&refused).as_str()),
            (tonic::Code::InvalidArgument, "INVALID_REQUEST"),
            "{game_id}: {refused:?}"
        );
        assert!(refused.message().contains("matched_at"), "{refused:?}");
    }
}

/// The `matched_at` of game `game_id`'s GameCreated event, Unix epoch
/// milliseconds.
async fn matched_at_of(client: &Client, game_id: &str) -> Option<i64> {
    match stored_events(client, game_id).await[0].kind.clone() {
        Some(pb::game_event::Kind::GameCreated(created)) => created
            .matched_at
            .map(|at| plylog::proto::convert::timestamp_ms(Some(&at))),
        other => panic!("a GameCreated first: {other:?}"),
    }
}
