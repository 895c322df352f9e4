use plylog::proto::{self as pb, stream_events_response::Kind};
use plylog::registry::RegistrySettings;
use tonic::Code;
use tonic::Streaming;

use plylog_testkit::*;

fn sequences(items: &[Kind]) -> Vec<u64> {
    items
        .iter()
        .filter_map(|k| {
            if let Kind::Event(e) = k {
                Some(e.sequence)
            } else {
                None
            }
        })
        .collect()
}

/// The next item of a stream; fails the test if none comes within
/// [`within`]'s 10 s (a missed event fails, it does not hang; heartbeats
/// come every 200 ms).
async fn next(stream: &mut Streaming<pb::StreamEventsResponse>) -> Kind {
    within(stream.message())
        .await
        .expect("stream item")
        .expect("stream open")
        .kind
        .unwrap()
}

/// Reads a followed stream until the event `last` arrives, returning the
/// event sequences seen (heartbeats and the marker are skipped); fails the
/// test if `last` has not come within 30 s (heartbeats keep a stream that
/// missed it alive forever).
async fn events_until(stream: &mut Streaming<pb::StreamEventsResponse>, last: u64) -> Vec<u64> {
    let mut seen = Vec::new();
    let reading = async {
        while seen.last() != Some(&last) {
            if let Kind::Event(e) = next(stream).await {
                seen.push(e.sequence);
            }
        }
    };
    if tokio::time::timeout(std::time::Duration::from_secs(30), reading)
        .await
        .is_err()
    {
        panic!("event {last} never came; saw {seen:?}");
    }
    seen
}

#[tokio::test]
async fn history_then_a_caught_up_marker_and_the_stream_ends_without_follow() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "s", mnk(3, 3, 3)).await;
    play_all(c, "s", &[place(0, 0), place(1, 1)]).await;
    let items = read_stream(c, "s", 0).await;
    assert_eq!(sequences(&items), [1, 2, 3]);
    assert_eq!(
        items.last(),
        Some(&Kind::CaughtUp(pb::CaughtUp { sequence: 3 }))
    );
    assert!(matches!(
        &items[0],
        Kind::Event(pb::GameEvent {
            kind: Some(pb::game_event::Kind::GameCreated(_)),
            ..
        })
    ));
    let from_two = read_stream(c, "s", 2).await;
    assert_eq!(sequences(&from_two), [2, 3]);
    let beyond = read_stream(c, "s", 10).await;
    assert_eq!(beyond, vec![Kind::CaughtUp(pb::CaughtUp { sequence: 3 })]);
}

#[tokio::test]
async fn a_followed_stream_sends_new_events_and_heartbeats_when_idle() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "live", mnk(3, 3, 3)).await;
    let mut stream = follow(c, "live", 1).await;
    assert_eq!(sequences(&[next(&mut stream).await]), [1]);
    assert_eq!(
        next(&mut stream).await,
        Kind::CaughtUp(pb::CaughtUp { sequence: 1 })
    );
    // Idle: a heartbeat (interval 200 ms in tests) says the stream is alive.
    let Kind::Heartbeat(beat) = next(&mut stream).await else {
        panic!("expected a heartbeat")
    };
    assert_eq!(beat.sequence, 1);
    assert!(beat.sent_at.is_some());
    play(c, "live", 0, place(2, 2)).await.unwrap();
    assert_eq!(events_until(&mut stream, 2).await, [2]);
    // Quiet again after the event: the heartbeats go on.
    let Kind::Heartbeat(beat) = next(&mut stream).await else {
        panic!("expected a heartbeat after the event")
    };
    assert_eq!(beat.sequence, 2);
    // A stream that starts past the end has sent nothing: its heartbeats say 0.
    let mut ahead = follow(c, "live", 50).await;
    assert_eq!(
        next(&mut ahead).await,
        Kind::CaughtUp(pb::CaughtUp { sequence: 2 })
    );
    let Kind::Heartbeat(beat) = next(&mut ahead).await else {
        panic!("expected a heartbeat")
    };
    assert_eq!(beat.sequence, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn subscribers_starting_anywhere_while_moves_are_played_see_each_event_once_in_order() {
    let mut server = TestServer::start().await;
    create(&mut server.client, "busy", mnk(20, 20, 20)).await;
    const MOVES: u64 = 120;
    // The writer says how far it got; readers start while it is under way.
    let (progress, watch) = tokio::sync::watch::channel(0u64);
    let writer = {
        let mut c = server.client.clone();
        tokio::spawn(async move {
            for i in 0..MOVES as i32 {
                play(&mut c, "busy", (i % 2) as u32, place(i / 20, i % 20))
                    .await
                    .unwrap();
                progress.send_replace(i as u64 + 1);
            }
        })
    };
    let mut readers = Vec::new();
    for r in 0..12u64 {
        let mut c = server.client.clone();
        let mut watch = watch.clone();
        readers.push(tokio::spawn(async move {
            // Reader r subscribes once r * 10 moves are played, from a
            // sequence that may be behind, at or ahead of the log.
            watch.wait_for(|played| *played >= r * 10).await.unwrap();
            let from = (r * 17) % (MOVES + 1) + 1;
            let mut stream = follow(&mut c, "busy", from).await;
            (from, events_until(&mut stream, MOVES + 1).await)
        }));
    }
    writer.await.unwrap();
    for reader in readers {
        let (from, seen) = reader.await.unwrap();
        assert_eq!(
            seen,
            (from..=MOVES + 1).collect::<Vec<_>>(),
            "subscriber from {from}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subscriber_joining_as_the_last_move_lands_still_gets_it() {
    // The classic ordering race: a subscription made after reading the
    // history misses what is appended in between, and nothing after the
    // last move would ever reveal the gap. Readers join while the final
    // moves of a round land and must get the round's last event; the next
    // round waits for them, so that event stays the last one meanwhile.
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "rounds", mnk(20, 20, 20)).await;
    const ROUNDS: u64 = 8;
    const MOVES_PER_ROUND: u64 = 16;
    const JOINERS: u64 = 8;
    for round in 0..ROUNDS {
        let (progress, watch) = tokio::sync::watch::channel(0u64);
        let joiners: Vec<_> = (0..JOINERS)
            .map(|j| {
                let (mut c, mut watch) = (c.clone(), watch.clone());
                tokio::spawn(async move {
                    watch
                        .wait_for(|played| *played >= MOVES_PER_ROUND - JOINERS + j)
                        .await
                        .unwrap();
                    let mut stream = follow(&mut c, "rounds", 1).await;
                    events_until(&mut stream, (round + 1) * MOVES_PER_ROUND + 1).await
                })
            })
            .collect();
        for m in 0..MOVES_PER_ROUND {
            let k = (round * MOVES_PER_ROUND + m) as i32;
            play(c, "rounds", (k % 2) as u32, place(k / 20, k % 20))
                .await
                .unwrap();
            progress.send_replace(m + 1);
        }
        let last = (round + 1) * MOVES_PER_ROUND + 1;
        for joiner in joiners {
            assert_eq!(joiner.await.unwrap(), (1..=last).collect::<Vec<_>>());
        }
    }
}

#[tokio::test]
async fn a_subscriber_that_falls_behind_the_live_buffer_still_gets_every_event_from_the_store() {
    // Two live events buffered per game, and a client whose HTTP/2 window
    // is tiny: the stream cannot keep up and really falls behind.
    let registry = RegistrySettings {
        broadcast_capacity: 2,
        ..settings()
    };
    let mut server = TestServer::start_with(registry).await;
    let c = &mut server.client;
    create(c, "lag", mnk(3, 3, 3)).await;
    let narrow = tonic::transport::Endpoint::from_shared(format!("http://{}", server.addr))
        .unwrap()
        .initial_stream_window_size(Some(1024))
        .initial_connection_window_size(Some(1024))
        .connect()
        .await
        .unwrap();
    let mut slow = plylog::proto::game_service_client::GameServiceClient::new(narrow);
    let mut stream = follow(&mut slow, "lag", 1).await;
    // Play and undo many times without reading the stream.
    const ROUNDS: u64 = 300;
    for _ in 0..ROUNDS {
        play(c, "lag", 0, place(1, 1)).await.unwrap();
        c.undo(pb::UndoRequest {
            game_id: "lag".into(),
            seat: Some(0),
            ..Default::default()
        })
        .await
        .unwrap();
    }
    let last = 1 + 2 * ROUNDS;
    assert_eq!(
        events_until(&mut stream, last).await,
        (1..=last).collect::<Vec<_>>()
    );
    assert!(
        server.registry.stream_catch_ups() > 0,
        "the subscriber never fell behind the live buffer"
    );
}

#[tokio::test]
async fn streaming_an_unknown_game_is_not_found() {
    let mut server = TestServer::start().await;
    let mut stream = follow(&mut server.client, "ghost", 0).await;
    let status = within(stream.message()).await.expect_err("not found");
    assert_eq!(
        (status.code(), reason(&status).as_str()),
        (Code::NotFound, "GAME_NOT_FOUND")
    );
}
