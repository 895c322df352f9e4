use std::collections::{BTreeMap, HashSet};
use std::time::Duration;

use plylog::proto::{self as pb, stream_all_events_response::Kind};
use tonic::{Code, Streaming};

use plylog_testkit::*;

/// A game on a 15x15 board with k = 15: no move wins, so any number of
/// moves up to 225 plays.
fn open_board() -> pb::RuleSet {
    mnk(15, 15, 15)
}

/// Move `ply` (from 0) of an [`open_board`] game, row-major.
fn cell(ply: u32) -> pb::Move {
    place((ply / 15) as i32, (ply % 15) as i32)
}

fn feed_request(after: &[u64], follow: bool, event_types: &[&str]) -> pb::StreamAllEventsRequest {
    pb::StreamAllEventsRequest {
        after: after.to_vec(),
        follow,
        event_types: event_types.iter().map(|t| (*t).to_owned()).collect(),
        ..Default::default()
    }
}

async fn open(
    client: &mut Client,
    request: pb::StreamAllEventsRequest,
) -> Streaming<pb::StreamAllEventsResponse> {
    within(client.stream_all_events(request))
        .await
        .expect("the feed opens")
        .into_inner()
}

/// The next message of a feed; fails the test if none comes within 10 s
/// (a followed feed sends a checkpoint every 200 ms when quiet).
async fn next(feed: &mut Streaming<pb::StreamAllEventsResponse>) -> Option<Kind> {
    within(feed.message())
        .await
        .expect("a feed message")
        .map(|m| m.kind.expect("a kind"))
}

/// Every message of a feed that is not followed, up to its end.
async fn read_to_end(feed: &mut Streaming<pb::StreamAllEventsResponse>) -> Vec<Kind> {
    let mut all = Vec::new();
    while let Some(kind) = next(feed).await {
        all.push(kind);
    }
    all
}

fn events(messages: &[Kind]) -> Vec<&pb::FeedEvent> {
    messages
        .iter()
        .filter_map(|k| match k {
            Kind::Event(e) => Some(e),
            Kind::Checkpoint(_) => None,
        })
        .collect()
}

/// `(game, sequence)` of a feed event.
fn key(event: &pb::FeedEvent) -> (String, u64) {
    let e = event.event.as_ref().expect("the event");
    (e.game_id.clone(), e.sequence)
}

/// Reads a followed feed until it has sent `count` events, returning them
/// with every checkpoint seen; fails the test after 60 s.
async fn follow_until(
    feed: &mut Streaming<pb::StreamAllEventsResponse>,
    count: usize,
) -> (Vec<pb::FeedEvent>, Vec<pb::FeedCheckpoint>) {
    let mut seen = Vec::new();
    let mut checkpoints = Vec::new();
    let reading = async {
        while seen.len() < count {
            match next(feed).await.expect("a followed feed stays open") {
                Kind::Event(e) => seen.push(e),
                Kind::Checkpoint(c) => checkpoints.push(c),
            }
        }
    };
    if tokio::time::timeout(Duration::from_secs(60), reading)
        .await
        .is_err()
    {
        panic!("{count} events never came; saw {}", seen.len());
    }
    (seen, checkpoints)
}

#[tokio::test]
async fn the_feed_numbers_every_event_densely_and_starts_after_its_checkpoint() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    for game in ["a", "b", "c"] {
        create(c, game, open_board()).await;
    }
    play_all(c, "b", &[cell(0), cell(1)]).await;
    play_all(c, "a", &[cell(0)]).await;
    play_all(c, "c", &[cell(0), cell(1), cell(2)]).await;
    let all = read_to_end(&mut open(c, feed_request(&[], false, &[])).await).await;
    let feed = events(&all);
    // Three creations and six moves, at positions 1..=9 in the order they
    // were acknowledged (each call waited for the one before).
    assert_eq!(
        feed.iter().map(|e| e.position).collect::<Vec<_>>(),
        (1..=9).collect::<Vec<_>>()
    );
    let order: Vec<(String, u64)> = feed.iter().map(|e| key(e)).collect();
    let expected: Vec<(String, u64)> = [
        ("a", 1),
        ("b", 1),
        ("c", 1),
        ("b", 2),
        ("b", 3),
        ("a", 2),
        ("c", 2),
        ("c", 3),
        ("c", 4),
    ]
    .iter()
    .map(|(g, s)| ((*g).to_owned(), *s))
    .collect();
    assert_eq!(order, expected);
    assert!(feed.iter().all(|e| e.cell == 0));
    // The last message is a caught-up checkpoint at the last position.
    let Some(Kind::Checkpoint(last)) = all.last() else {
        panic!("the feed ends with a checkpoint: {:?}", all.last());
    };
    assert_eq!(
        (last.positions.as_slice(), last.caught_up),
        (&[9][..], true)
    );
    // Exclusive start: after position 4, the fifth event comes first.
    let rest = read_to_end(&mut open(c, feed_request(&[4], false, &[])).await).await;
    let rest: Vec<(String, u64)> = events(&rest).iter().map(|e| key(e)).collect();
    assert_eq!(rest, expected[4..]);
    // After the last position: nothing but the caught-up checkpoint.
    let none = read_to_end(&mut open(c, feed_request(&[9], false, &[])).await).await;
    assert!(events(&none).is_empty(), "{none:?}");
}

#[tokio::test]
async fn readers_following_while_many_writers_append_see_each_event_once_in_order() {
    let server = TestServer::start().await;
    let c = &mut server.client.clone();
    let games = 8_u32;
    let moves = 25_u32;
    // Some history first, so readers starting at the beginning and in the
    // middle both catch up, then go live.
    for g in 0..games {
        create(c, &format!("g{g}"), open_board()).await;
    }
    let history = u64::from(games);
    let mut from_start = open(c, feed_request(&[], true, &[])).await;
    let mut from_middle = open(c, feed_request(&[history / 2], true, &[])).await;
    let writers: Vec<_> = (0..games)
        .map(|g| {
            let mut client = server.client.clone();
            tokio::spawn(async move {
                for ply in 0..moves {
                    play(&mut client, &format!("g{g}"), ply % 2, cell(ply))
                        .await
                        .expect("move accepted");
                }
            })
        })
        .collect();
    let total = (history + u64::from(games * moves)) as usize;
    let (start, _) = follow_until(&mut from_start, total).await;
    let (middle, _) = follow_until(&mut from_middle, total - (history / 2) as usize).await;
    for writer in writers {
        writer.await.unwrap();
    }
    for (seen, first) in [(&start, 1), (&middle, history / 2 + 1)] {
        // Dense, in order, nothing repeated: positions first..first+len.
        let positions: Vec<u64> = seen.iter().map(|e| e.position).collect();
        assert_eq!(
            positions,
            (first..first + seen.len() as u64).collect::<Vec<_>>()
        );
        let unique: HashSet<(String, u64)> = seen.iter().map(key).collect();
        assert_eq!(unique.len(), seen.len(), "an event came twice");
    }
    // The feed, grouped by game, is each game's own StreamEvents.
    let mut by_game: BTreeMap<String, Vec<pb::GameEvent>> = BTreeMap::new();
    for e in start {
        let event = e.event.unwrap();
        by_game
            .entry(event.game_id.clone())
            .or_default()
            .push(event);
    }
    assert_eq!(by_game.len(), games as usize);
    for (game, feed_events) in by_game {
        let own = stored_events(c, &game).await;
        assert_eq!(feed_events, own, "game {game}");
    }
    // Nothing more arrives on the followed feed: checkpoints only.
    match next(&mut from_start).await {
        Some(Kind::Checkpoint(c)) => assert_eq!(c.positions, [total as u64]),
        other => panic!("after the last event, a checkpoint: {other:?}"),
    }
}

#[tokio::test]
async fn a_filtered_reader_gets_checkpoints_while_it_skips_and_none_ahead_of_a_match() {
    // No heartbeat within the test: every checkpoint it sees is one of a
    // scanned range, whatever the machine's load.
    let mut server = TestServer::start_with(plylog::registry::RegistrySettings {
        heartbeat_interval: Duration::from_secs(600),
        ..settings()
    })
    .await;
    let c = &mut server.client;
    create(c, "busy", open_board()).await;
    play_all(c, "busy", &(0..12).map(cell).collect::<Vec<_>>()).await;
    let mut feed = open(
        c,
        pb::StreamAllEventsRequest {
            checkpoint_interval: 5,
            ..feed_request(&[], true, &["game_created"])
        },
    )
    .await;
    // Catching up over 13 positions, of which only the creation matches:
    // a checkpoint after every five positions scanned, the last caught up.
    let mut catching_up = Vec::new();
    loop {
        match next(&mut feed).await.expect("open") {
            Kind::Event(e) => catching_up.push(format!("event {}", e.position)),
            Kind::Checkpoint(c) => {
                catching_up.push(format!("checkpoint {:?} {}", c.positions, c.caught_up));
                if c.caught_up {
                    break;
                }
            }
        }
    }
    assert_eq!(
        catching_up,
        [
            "event 1",
            "checkpoint [5] false",
            "checkpoint [10] false",
            "checkpoint [13] true"
        ]
    );
    // An idle filtered tail: moves that match nothing still move the
    // checkpoint on, to the last position.
    play_all(c, "busy", &(12..15).map(cell).collect::<Vec<_>>()).await;
    let mut scanned = 13;
    while scanned != 16 {
        match next(&mut feed).await.expect("open") {
            Kind::Checkpoint(c) => scanned = c.positions[0],
            Kind::Event(e) => panic!("a move does not match: {e:?}"),
        }
    }
    // A new game matches: no checkpoint reaches it before it is sent.
    create(c, "late", open_board()).await;
    let (late, checkpoints) = follow_until(&mut feed, 1).await;
    assert_eq!(
        (late[0].position, key(&late[0])),
        (17, ("late".to_owned(), 1))
    );
    assert!(
        checkpoints.iter().all(|c| c.positions[0] < 17),
        "{checkpoints:?}"
    );
}

#[tokio::test]
async fn bad_feed_requests_are_refused_with_the_field_at_fault() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "g", open_board()).await;
    for (request, code, reason_is) in [
        (
            feed_request(&[], false, &["move_made"]),
            Code::InvalidArgument,
            "INVALID_REQUEST",
        ),
        (
            feed_request(&[0, 0], false, &[]),
            Code::InvalidArgument,
            "INVALID_REQUEST",
        ),
        (
            pb::StreamAllEventsRequest {
                checkpoint_interval: 100_001,
                ..feed_request(&[], false, &[])
            },
            Code::InvalidArgument,
            "INVALID_REQUEST",
        ),
        // One event stored: position 2 is past the end.
        (
            feed_request(&[2], false, &[]),
            Code::OutOfRange,
            "SEQUENCE_OUT_OF_RANGE",
        ),
    ] {
        let status = within(c.stream_all_events(request.clone()))
            .await
            .expect_err("refused");
        assert_eq!(
            (status.code(), reason(&status).as_str()),
            (code, reason_is),
            "{request:?}: {status:?}"
        );
    }
}

/// `(game, lifecycle, player ids, whether an outcome came)` of each event
/// of a lifecycle feed.
fn lives(feed: &[&pb::FeedEvent]) -> Vec<(String, pb::Lifecycle, Vec<String>, bool)> {
    feed.iter()
        .map(|e| {
            let game = e.event.as_ref().expect("the event").game_id.clone();
            (
                game,
                e.lifecycle(),
                e.player_ids.clone(),
                e.outcome.is_some(),
            )
        })
        .collect()
}

/// Plays a game of every lifecycle: "won" (won, the win undone and
/// played again, then a rematch), "resigned" (labelled `cup=spring`, its
/// second seat resigns) and "three" (three seats, one resigns and the game
/// goes on).
async fn live_every_lifecycle(c: &mut Client) {
    create(c, "won", mnk(3, 3, 3)).await;
    create_from(
        c,
        pb::CreateGameRequest {
            labels: [("cup".to_owned(), "spring".to_owned())].into(),
            ..create_request("resigned", connect_four())
        },
    )
    .await;
    let moves = x_wins_top_row();
    play_all(c, "won", &moves).await;
    // The winner takes its winning move back, and plays it again.
    c.undo(pb::UndoRequest {
        game_id: "won".into(),
        seat: Some(0),
        ..Default::default()
    })
    .await
    .expect("the winning move undone");
    play(c, "won", 0, moves[4].clone())
        .await
        .expect("won again");
    c.rematch(pb::RematchRequest {
        game_id: "won".into(),
        seat: Some(1),
        ..Default::default()
    })
    .await
    .expect("a rematch");
    // Of three seats, one resigns: out of play, the game goes on.
    create_from(
        c,
        pb::CreateGameRequest {
            seats: vec![seat("ann", "A"), seat("bo", "B"), seat("cy", "C")],
            ..create_request("three", mnk(4, 4, 3))
        },
    )
    .await;
    for game in ["three", "resigned"] {
        c.submit_action(pb::SubmitActionRequest {
            game_id: game.into(),
            seat: Some(1),
            action: pb::Action::Resign as i32,
            ..Default::default()
        })
        .await
        .expect("resigned");
    }
}

/// The lifecycle events [`live_every_lifecycle`] makes, in order, as
/// [`lives`] tells them.
fn every_lifecycle() -> Vec<(String, pb::Lifecycle, Vec<String>, bool)> {
    let players = || vec!["alice".to_owned(), "bob".to_owned()];
    let won = |life, outcome| ("won".to_owned(), life, players(), outcome);
    let resigned = |life, outcome| ("resigned".to_owned(), life, players(), outcome);
    let three = |life| {
        let ids = ["ann", "bo", "cy"].map(String::from).to_vec();
        ("three".to_owned(), life, ids, false)
    };
    use pb::Lifecycle::*;
    vec![
        won(Created, false),
        resigned(Created, false),
        won(Ended, true),
        won(Reopened, false),
        won(Ended, true),
        won(RoundStarted, false),
        three(Created),
        three(SeatOut),
        resigned(Ended, true),
    ]
}

#[tokio::test]
async fn a_lifecycle_feed_tells_each_start_end_and_reopening_with_the_players() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    live_every_lifecycle(c).await;
    let request = pb::StreamAllEventsRequest {
        lifecycle_only: true,
        ..Default::default()
    };
    let all = read_to_end(&mut open(c, request).await).await;
    assert_eq!(lives(&events(&all)), every_lifecycle());
    let players = || vec!["alice".to_owned(), "bob".to_owned()];
    let resigned = |life, outcome| ("resigned".to_owned(), life, players(), outcome);
    use pb::Lifecycle::*;
    // The full feed marks the same events, and only those.
    let every = read_to_end(&mut open(c, feed_request(&[], false, &[])).await).await;
    let marked: Vec<_> = events(&every)
        .into_iter()
        .filter(|e| e.lifecycle() != Unspecified)
        .collect();
    assert_eq!(lives(&marked), lives(&events(&all)));
    // A filter on what is fixed at creation: the labelled game only.
    let request = pb::StreamAllEventsRequest {
        lifecycle_only: true,
        filter: "labels.cup = \"spring\" AND kind = \"connect_four\"".into(),
        ..Default::default()
    };
    let filtered = read_to_end(&mut open(c, request).await).await;
    assert_eq!(
        lives(&events(&filtered)),
        [resigned(Created, false), resigned(Ended, true)]
    );
    let request = pb::StreamAllEventsRequest {
        filter: "seats.player_id = \"carol\"".into(),
        ..Default::default()
    };
    let none = read_to_end(&mut open(c, request).await).await;
    assert!(events(&none).is_empty());
    // The feed's last checkpoint still covers every position.
    let Some(Kind::Checkpoint(last)) = none.last() else {
        panic!("a checkpoint ends the feed");
    };
    assert_eq!(last.positions, [events(&every).len() as u64]);
}

#[tokio::test]
async fn a_lifecycle_reader_following_live_gets_each_start_and_end_with_the_players() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    // Open before anything is written: the events come as they commit
    // (from the writer's tail of the feed, on SQLite).
    let request = pb::StreamAllEventsRequest {
        lifecycle_only: true,
        follow: true,
        ..Default::default()
    };
    let mut feed = open(c, request).await;
    live_every_lifecycle(c).await;
    let expected = every_lifecycle();
    let (seen, _) = follow_until(&mut feed, expected.len()).await;
    assert_eq!(lives(&seen.iter().collect::<Vec<_>>()), expected);
}

#[tokio::test]
async fn a_reader_from_the_end_gets_only_what_commits_after_it_opened() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "before", open_board()).await;
    play_all(c, "before", &[cell(0), cell(1)]).await;
    let request = pb::StreamAllEventsRequest {
        from_end: true,
        follow: true,
        ..Default::default()
    };
    let mut feed = open(c, request).await;
    // Caught up at once, at the feed's end.
    let Some(Kind::Checkpoint(start)) = next(&mut feed).await else {
        panic!("a checkpoint first");
    };
    assert_eq!(
        (start.positions.as_slice(), start.caught_up),
        (&[3][..], true)
    );
    create(c, "after", open_board()).await;
    let (seen, _) = follow_until(&mut feed, 1).await;
    assert_eq!(
        (key(&seen[0]), seen[0].position),
        (("after".to_owned(), 1), 4)
    );
    // Not with a start of its own.
    let both = pb::StreamAllEventsRequest {
        from_end: true,
        after: vec![1],
        ..Default::default()
    };
    let status = assert_rejected(
        c.stream_all_events(both).await,
        Code::InvalidArgument,
        "INVALID_REQUEST",
    );
    assert_eq!(bad_field(&status).as_deref(), Some("from_end"));
    for filter in [
        "status = WON",
        "created_at > \"2026-01-01T00:00:00Z\"",
        "kind = ",
    ] {
        let request = pb::StreamAllEventsRequest {
            filter: filter.into(),
            ..Default::default()
        };
        let status = assert_rejected(
            c.stream_all_events(request).await,
            Code::InvalidArgument,
            "INVALID_REQUEST",
        );
        assert_eq!(bad_field(&status).as_deref(), Some("filter"), "{filter}");
    }
}
