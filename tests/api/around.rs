//! The game around the moves through the API: time controls on a test
//! clock (the server reads it; the test moves it, never sleeps), timeouts
//! that land once also across a restart, and SubmitAction / Redo.

use std::time::Duration;

use plylog::proto as pb;
use plylog::registry::{Clock, RegistrySettings};
use tonic::Code;

use plylog_testkit::*;

/// The test clock's start, Unix epoch milliseconds.
const T: i64 = 1_800_000_000_000;

fn clocked() -> (Clock, RegistrySettings) {
    let clock = Clock::manual(T);
    let registry = RegistrySettings {
        clock: clock.clone(),
        ..settings()
    };
    (clock, registry)
}

fn seconds(s: i64) -> Option<prost_types::Duration> {
    Some(prost_types::Duration {
        seconds: s,
        nanos: 0,
    })
}

/// A tic-tac-toe game with `time_control`.
fn timed_request(game_id: &str, time_control: pb::TimeControl) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        time_control: Some(time_control),
        ..create_request(game_id, mnk(3, 3, 3))
    }
}

fn outcome(game: &pb::Game) -> (i32, i32) {
    let position = position(game);
    let reason = position.outcome.as_ref().map_or(0, |o| o.reason);
    (position.status, reason)
}

/// The kinds of the next `n` events of a followed stream, skipping the
/// caught-up marker and heartbeats; all within 10 s.
async fn next_events(
    stream: &mut tonic::Streaming<pb::StreamEventsResponse>,
    n: usize,
) -> Vec<pb::game_event::Kind> {
    within(async {
        let mut seen = Vec::new();
        while seen.len() < n {
            let item = stream.message().await.unwrap().unwrap();
            if let Some(pb::stream_events_response::Kind::Event(e)) = item.kind {
                seen.push(e.kind.unwrap());
            }
        }
        seen
    })
    .await
}

/// The kinds of the events of a whole log.
async fn log_kinds(client: &mut Client, game_id: &str) -> Vec<pb::game_event::Kind> {
    read_stream(client, game_id, 1)
        .await
        .into_iter()
        .filter_map(|item| match item {
            pb::stream_events_response::Kind::Event(e) => e.kind,
            _ => None,
        })
        .collect()
}

fn time_expired_count(kinds: &[pb::game_event::Kind]) -> usize {
    kinds
        .iter()
        .filter(|k| matches!(k, pb::game_event::Kind::TimeExpired(_)))
        .count()
}

#[tokio::test]
async fn a_clock_that_runs_out_times_the_game_out_once_and_the_stream_says_why() {
    let (clock, registry) = clocked();
    let mut server = TestServer::start_with(registry).await;
    let client = &mut server.client;
    let tc = pb::TimeControl {
        per_move: seconds(30),
        initial: seconds(60),
        increment: seconds(2),
        ..Default::default()
    };
    let game = create_from(client, timed_request("clocked", tc)).await;
    let clocks = position(&game)
        .clocks
        .clone()
        .expect("a timed game shows its clocks");
    assert_eq!(clocks.remaining, vec![seconds(60).unwrap(); 2]);
    assert_eq!(
        clocks.deadline,
        Some(plylog::proto::convert::timestamp(T + 30_000))
    );
    let seed = game.time_control.and_then(|tc| tc.seed);
    assert!(seed.is_some(), "the server fills in the seed");

    clock.advance(10_000);
    let reply = play(client, "clocked", 0, place(1, 1)).await.unwrap();
    let clocks = position(reply.game.as_ref().unwrap())
        .clocks
        .clone()
        .unwrap();
    assert_eq!(clocks.remaining[0], seconds(52).unwrap(), "60 - 10 + 2");
    assert_eq!(
        clocks.turn_started,
        Some(plylog::proto::convert::timestamp(T + 10_000))
    );
    assert_eq!(
        clocks.deadline,
        Some(plylog::proto::convert::timestamp(T + 40_000))
    );

    let mut stream = follow(client, "clocked", 3).await;
    clock.advance(30_000);
    let seen = next_events(&mut stream, 2).await;
    assert_eq!(
        seen[0],
        pb::game_event::Kind::TimeExpired(pb::TimeExpired { seat: 1 })
    );
    let pb::game_event::Kind::GameEnded(ended) = &seen[1] else {
        panic!("a GameEnded: {seen:?}")
    };
    let ended = ended.outcome.clone().unwrap();
    assert_eq!(ended.reason, pb::EndReason::Timeout as i32);
    assert!(matches!(
        ended.kind,
        Some(pb::outcome::Kind::Win(pb::Win { seat: 0, .. }))
    ));
    let game = get_game(client, "clocked").await;
    assert_eq!(
        outcome(&game),
        (pb::GameStatus::Won as i32, pb::EndReason::Timeout as i32)
    );
    assert_eq!(position(&game).clocks.as_ref().unwrap().deadline, None);
    // Later moves find the game over; the timeout is in the log once.
    clock.advance(60_000);
    assert_rejected(
        play(client, "clocked", 1, place(0, 0)).await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );
    assert_eq!(time_expired_count(&log_kinds(client, "clocked").await), 1);
}

#[tokio::test]
async fn a_deadline_passed_while_the_server_was_down_times_out_once_on_restart() {
    let (clock, registry) = clocked();
    let server = TestServer::start_with(registry.clone()).await;
    let mut client = server.client.clone();
    create_from(&mut client, timed_request("down", per_move(10))).await;
    let server = server
        .restart_with(registry.clone(), || clock.advance(15_000))
        .await;
    wait_until(
        "the timed game loaded at startup",
        Duration::from_secs(10),
        || server.registry.is_live("down"),
    )
    .await;
    let mut client = server.client.clone();
    let mut stream = follow(&mut client, "down", 2).await;
    // The first event after creation (a caught-up marker may come first,
    // when the timeout is still being appended).
    let first = next_events(&mut stream, 1).await;
    assert!(
        matches!(first[0], pb::game_event::Kind::TimeExpired(_)),
        "{first:?}"
    );
    let game = get_game(&mut client, "down").await;
    assert_eq!(
        outcome(&game),
        (pb::GameStatus::Won as i32, pb::EndReason::Timeout as i32)
    );
    // Another restart, later still: nothing more is appended.
    let server = server
        .restart_with(registry, || clock.advance(60_000))
        .await;
    let mut client = server.client.clone();
    assert_eq!(time_expired_count(&log_kinds(&mut client, "down").await), 1);
    assert_eq!(get_game(&mut client, "down").await.last_sequence, 3);
}

#[tokio::test]
async fn a_move_that_comes_after_the_deadline_is_refused_and_the_timeout_appended() {
    let (clock, registry) = clocked();
    let server = TestServer::start_with(registry).await;
    let mut client = server.client.clone();
    create_from(&mut client, timed_request("late", per_move(10))).await;
    // The deadline passes but the timer has not fired yet (a busy node):
    // the move comes first.
    clock.advance_without_waking(10_000);
    let status = assert_rejected(
        play(&mut client, "late", 0, place(0, 0)).await,
        Code::FailedPrecondition,
        "TIME_EXPIRED",
    );
    assert_eq!(metadata(&status, "seat").as_deref(), Some("0"));
    let game = get_game(&mut client, "late").await;
    assert_eq!(game.last_sequence, 3, "TimeExpired and GameEnded appended");
    assert_eq!(
        outcome(&game),
        (pb::GameStatus::Won as i32, pb::EndReason::Timeout as i32)
    );
}

#[tokio::test]
async fn resign_abort_and_draw_offers_through_submit_action() {
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    create(client, "resign", mnk(3, 3, 3)).await;
    play(client, "resign", 0, place(0, 0)).await.unwrap();
    let reply = client
        .submit_action(action_request("resign", 0, pb::Action::Resign))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        outcome(reply.game.as_ref().unwrap()),
        (
            pb::GameStatus::Won as i32,
            pb::EndReason::Resignation as i32
        )
    );

    create(client, "abort", mnk(3, 3, 3)).await;
    play(client, "abort", 0, place(0, 0)).await.unwrap();
    let reply = client
        .submit_action(action_request("abort", 1, pb::Action::Abort))
        .await
        .unwrap()
        .into_inner();
    let game = reply.game.unwrap();
    assert_eq!(
        outcome(&game),
        (
            pb::GameStatus::NoResult as i32,
            pb::EndReason::Aborted as i32
        )
    );
    assert!(matches!(
        position(&game).outcome.as_ref().unwrap().kind,
        Some(pb::outcome::Kind::NoResult(_))
    ));

    create(client, "late-abort", mnk(3, 3, 3)).await;
    play_all(client, "late-abort", &[place(0, 0), place(1, 1)]).await;
    assert_rejected(
        client
            .submit_action(action_request("late-abort", 0, pb::Action::Abort))
            .await,
        Code::FailedPrecondition,
        "ABORT_TOO_LATE",
    );

    create(client, "draw", mnk(3, 3, 3)).await;
    assert_rejected(
        client
            .submit_action(action_request("draw", 1, pb::Action::AcceptDraw))
            .await,
        Code::FailedPrecondition,
        "NO_PENDING_OFFER",
    );
    let offered = client
        .submit_action(action_request("draw", 0, pb::Action::OfferDraw))
        .await
        .unwrap()
        .into_inner();
    let offer = position(offered.game.as_ref().unwrap()).draw_offer.clone();
    assert_eq!(
        offer,
        Some(pb::PendingOffer {
            by: 0,
            agreed: vec![0]
        })
    );
    let accepted = client
        .submit_action(action_request("draw", 1, pb::Action::AcceptDraw))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(accepted.events.len(), 2);
    assert_eq!(
        outcome(accepted.game.as_ref().unwrap()),
        (
            pb::GameStatus::Drawn as i32,
            pb::EndReason::Agreement as i32
        )
    );
    let bad = pb::SubmitActionRequest {
        action: 0,
        ..action_request("draw", 0, pb::Action::Resign)
    };
    let status = assert_rejected(
        client.submit_action(bad).await,
        Code::InvalidArgument,
        "INVALID_REQUEST",
    );
    assert_eq!(bad_field(&status).as_deref(), Some("action"));
}

#[tokio::test]
async fn takebacks_by_consent_and_redo() {
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    let consent = pb::CreateGameRequest {
        undo_policy: pb::UndoPolicy::Consent as i32,
        ..create_request("consent", mnk(3, 3, 3))
    };
    create_from(client, consent).await;
    play(client, "consent", 0, place(0, 0)).await.unwrap();
    assert_rejected(
        client
            .undo(pb::UndoRequest {
                game_id: "consent".into(),
                seat: Some(0),
                request_id: String::new(),
                expected_sequence: None,
                view: pb::GameView::Full as i32,
            })
            .await,
        Code::FailedPrecondition,
        "CONSENT_REQUIRED",
    );
    client
        .submit_action(action_request("consent", 0, pb::Action::RequestTakeback))
        .await
        .unwrap();
    let reply = client
        .submit_action(action_request("consent", 1, pb::Action::AcceptTakeback))
        .await
        .unwrap()
        .into_inner();
    assert!(matches!(
        reply.events[1].kind,
        Some(pb::game_event::Kind::MoveUndone(_))
    ));
    let game = reply.game.unwrap();
    assert_eq!(position(&game).ply, 0);
    assert_eq!(position(&game).redoable, 1);
    let redo = |seat| pb::RedoRequest {
        game_id: "consent".into(),
        seat: Some(seat),
        request_id: String::new(),
        expected_sequence: None,
        view: pb::GameView::Full as i32,
    };
    assert_rejected(
        client.redo(redo(1)).await,
        Code::FailedPrecondition,
        "NOT_LAST_MOVER",
    );
    let redone = client.redo(redo(0)).await.unwrap().into_inner();
    assert!(matches!(
        redone.events[0].kind,
        Some(pb::game_event::Kind::MoveRedone(pb::MovePlayed {
            seat: 0,
            ply: 1,
            ..
        }))
    ));
    assert_eq!(board_text(redone.game.as_ref().unwrap())[0], "X..");
    assert_rejected(
        client.redo(redo(0)).await,
        Code::FailedPrecondition,
        "NOTHING_TO_REDO",
    );
}

#[tokio::test]
async fn a_rematch_that_races_the_final_move_starts_the_next_round_after_it() {
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    create(client, "again", mnk(3, 3, 3)).await;
    let moves = x_wins_top_row();
    play_all(client, "again", &moves[..4]).await;
    let rematch = |seat, rotate| pb::RematchRequest {
        game_id: "again".into(),
        seat: Some(seat),
        rotate,
        request_id: String::new(),
        expected_sequence: None,
        view: pb::GameView::Full as i32,
    };
    // Asked for while the round is in play: recorded.
    let asked = client.rematch(rematch(1, true)).await.unwrap().into_inner();
    assert!(matches!(
        asked.events[0].kind,
        Some(pb::game_event::Kind::RematchRequested(
            pb::RematchRequested {
                seat: 1,
                rotate: true
            }
        ))
    ));
    assert_rejected(
        client.rematch(rematch(0, false)).await,
        Code::FailedPrecondition,
        "REMATCH_PENDING",
    );
    // The winning move ends round 0 and starts round 1 in the same reply.
    let last = play(client, "again", 0, moves[4].clone()).await.unwrap();
    assert_eq!(last.events.len(), 2);
    assert_eq!(last.events[0].round, 0);
    assert_eq!(
        last.events[1].kind,
        Some(pb::game_event::Kind::RoundStarted(pb::RoundStarted {
            round: 1,
            first: 1
        }))
    );
    assert_eq!(last.events[1].round, 1);
    let game = last.game.unwrap();
    assert_eq!(position(&game).round, 1);
    assert_eq!(position(&game).seat_to_move, Some(1), "rotated");
    assert_eq!(position(&game).status, pb::GameStatus::InProgress as i32);
    assert_eq!(board_text(&game), ["...", "...", "..."]);
    play(client, "again", 1, place(2, 2)).await.unwrap();

    // One round at a time: the stream and the replay of round 1 hold only
    // its events; round 0 holds the five moves and the request.
    let round_of = |round| pb::StreamEventsRequest {
        game_id: "again".into(),
        from_sequence: 0,
        follow: false,
        round: Some(round),
    };
    for (round, expected) in [(0u32, 7usize), (1, 2)] {
        let mut stream = client
            .stream_events(round_of(round))
            .await
            .unwrap()
            .into_inner();
        let mut events = Vec::new();
        while let Some(item) = within(stream.message()).await.unwrap() {
            if let Some(pb::stream_events_response::Kind::Event(e)) = item.kind {
                events.push(e);
            }
        }
        assert_eq!(events.len(), expected, "round {round}: {events:?}");
        assert!(events.iter().all(|e| e.round == round));
        let replay = client
            .get_replay(pb::GetReplayRequest {
                game_id: "again".into(),
                page_size: 0,
                page_token: String::new(),
                round: Some(round),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(replay.steps.len(), expected);
    }
    // A finished round: the rematch starts the next one at once.
    client
        .submit_action(action_request("again", 0, pb::Action::Resign))
        .await
        .unwrap();
    let next = client
        .rematch(rematch(0, false))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        next.events[0].kind,
        Some(pb::game_event::Kind::RoundStarted(pb::RoundStarted {
            round: 2,
            first: 1
        }))
    );
}

#[tokio::test]
async fn a_seat_away_past_the_grace_period_on_its_turn_forfeits_and_a_reconnect_in_time_changes_nothing()
 {
    let (clock, registry) = clocked();
    let access = plylog::api::auth::AccessSettings {
        seat_tokens: true,
        ..Default::default()
    };
    let mut server = TestServer::start_secured(registry, access).await;
    let client = &mut server.client;
    let request = pb::CreateGameRequest {
        absence: Some(pb::AbsencePolicy {
            grace: seconds(10),
            on_absence: pb::AbsenceAction::Expire as i32,
        }),
        ..create_request("away", mnk(3, 3, 3))
    };
    let created = client.create_game(request).await.unwrap().into_inner();
    let tokens = created.seat_tokens;
    let follow_as = |seat: usize| {
        bearer(
            pb::StreamEventsRequest {
                game_id: "away".into(),
                from_sequence: 0,
                follow: true,
                round: None,
            },
            &tokens[seat],
        )
    };
    // Seat 0 follows the game: present; time passes, nothing happens.
    let mut seat0 = client
        .stream_events(follow_as(0))
        .await
        .unwrap()
        .into_inner();
    within(seat0.message()).await.unwrap().unwrap();
    wait_until("seat 0 present", Duration::from_secs(10), || {
        server.registry.is_live("away")
    })
    .await;
    let present = |game: &pb::Game| position(game).seats_present.clone();
    let mut c = server.client.clone();
    let game = get_game(&mut c, "away").await;
    assert_eq!(present(&game), vec![0]);
    clock.advance(30_000);
    // It drops its stream and comes back within the grace period: nothing
    // is logged (a reconnect is not an event).
    drop(seat0);
    wait_until_present(&mut c, "away", vec![]).await;
    clock.advance(9_000);
    let mut seat0 = c.stream_events(follow_as(0)).await.unwrap().into_inner();
    within(seat0.message()).await.unwrap().unwrap();
    wait_until_present(&mut c, "away", vec![0]).await;
    clock.advance(60_000);
    assert_eq!(get_game(&mut c, "away").await.last_sequence, 1);
    // Gone for good: ten seconds later seat 0 forfeits.
    drop(seat0);
    wait_until_present(&mut c, "away", vec![]).await;
    let mut watch = follow(&mut c, "away", 2).await;
    clock.advance(10_000);
    let seen = next_events(&mut watch, 2).await;
    assert_eq!(
        seen[0],
        pb::game_event::Kind::SeatAbsent(pb::SeatAbsent { seat: 0 })
    );
    let game = get_game(&mut c, "away").await;
    assert_eq!(
        outcome(&game),
        (pb::GameStatus::Won as i32, pb::EndReason::Abandoned as i32)
    );
    // An absence policy needs seat tokens.
    let mut plain = TestServer::start().await;
    let request = pb::CreateGameRequest {
        absence: Some(pb::AbsencePolicy {
            grace: seconds(10),
            on_absence: 0,
        }),
        ..create_request("no-tokens", mnk(3, 3, 3))
    };
    assert_rejected(
        plain.client.create_game(request).await,
        Code::FailedPrecondition,
        "PRESENCE_UNAVAILABLE",
    );
}

/// Waits until the game's latest position lists `seats` as present.
async fn wait_until_present(client: &mut Client, game_id: &str, seats: Vec<u32>) {
    wait_for(
        &format!("seats {seats:?} to be present"),
        Duration::from_secs(10),
        Duration::from_millis(10),
        async || {
            let game = get_game(client, game_id).await;
            (position(&game).seats_present == seats).then_some(())
        },
    )
    .await;
}

/// The games' rows as ListGames lists them (read from the store: listing
/// loads no game), by id.
async fn listed(client: &mut Client) -> std::collections::HashMap<String, pb::GameSummary> {
    let mut games = std::collections::HashMap::new();
    let mut page_token = String::new();
    loop {
        let page = client
            .list_games(pb::ListGamesRequest {
                page_size: 1000,
                page_token,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        games.extend(page.games.into_iter().map(|g| (g.game_id.clone(), g)));
        if page.next_page_token.is_empty() {
            return games;
        }
        page_token = page.next_page_token;
    }
}

/// Waits (at most 30 s) until every game of `ids` is listed as over.
async fn until_over(client: &mut Client, ids: &[String]) {
    let over = async {
        loop {
            let games = listed(client).await;
            if ids
                .iter()
                .all(|id| games[id].status != pb::GameStatus::InProgress as i32)
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), over)
        .await
        .expect("every game timed out within 30 s");
}

/// A game waiting on a deadline need not be in memory: its deadline is in
/// the store's timer queue. Forty timed games with a move each, under a
/// limit of eight games in memory, stay within it (issue 35: 5,000 timed
/// games stayed in memory against a limit of 100, and 400 timed 1000x1000
/// games held 383 MB against a budget of 64 MB, since a game with a clock
/// was never evicted). Once their time runs out, every one times out once,
/// brought back by the queue with no client asking.
#[tokio::test]
async fn games_waiting_on_a_deadline_leave_memory_under_the_limits_and_still_time_out() {
    const GAMES: usize = 40;
    const LIMIT: usize = 8;
    let (clock, registry) = clocked();
    let registry = RegistrySettings {
        max_live_games: LIMIT,
        ..registry
    };
    let server = TestServer::start_with(registry).await;
    let mut client = server.client.clone();
    let ids: Vec<String> = (0..GAMES).map(|g| format!("waiting-{g}")).collect();
    for id in &ids {
        create_from(&mut client, timed_request(id, per_move(60))).await;
        play(&mut client, id, 0, place(1, 1)).await.unwrap();
    }
    let live = server.registry.live_games();
    assert!(
        live <= LIMIT,
        "{live} games in memory against a limit of {LIMIT}"
    );
    clock.advance(60_000);
    until_over(&mut client, &ids).await;
    let live = server.registry.live_games();
    assert!(live <= LIMIT, "{live} games in memory after the timeouts");
    for id in &ids {
        let kinds = log_kinds(&mut client, id).await;
        assert_eq!(time_expired_count(&kinds), 1, "{id}: {kinds:?}");
    }
}

/// A restart loads no game until it is due: of eleven timed games, the one
/// whose deadline passed while the server was down times out at once, and
/// the ten whose deadlines are still ahead stay in the store (issue 35:
/// every timed, absence or bot game was loaded at every start).
#[tokio::test]
async fn a_restart_loads_only_the_games_that_are_due() {
    let (clock, registry) = clocked();
    let server = TestServer::start_with(registry.clone()).await;
    let mut client = server.client.clone();
    create_from(&mut client, timed_request("due", per_move(10))).await;
    let later: Vec<String> = (0..10).map(|g| format!("later-{g}")).collect();
    for id in &later {
        create_from(&mut client, timed_request(id, per_move(600))).await;
    }
    let server = server
        .restart_with(registry, || clock.advance(15_000))
        .await;
    let mut client = server.client.clone();
    until_over(&mut client, &["due".to_owned()]).await;
    for id in &later {
        assert!(
            !server.registry.is_live(id),
            "{id} was loaded before it was due"
        );
    }
    let games = listed(&mut client).await;
    for id in &later {
        assert_eq!(games[id].status, pb::GameStatus::InProgress as i32, "{id}");
    }
}

/// A game with an absence policy may leave memory while its seat to move is
/// away: the store keeps when the seat left along with the game's wake, so
/// the queue brings the game back when the grace period ends, counted from
/// when the seat left (not from the reload, which would put it off for
/// ever; not from the turn's start, which would cut it short).
#[tokio::test]
async fn an_absent_seat_of_a_game_that_left_memory_forfeits_when_its_grace_period_ends() {
    const GRACE_S: i64 = 30;
    let (clock, registry) = clocked();
    let registry = RegistrySettings {
        max_live_games: 2,
        ..registry
    };
    let access = plylog::api::auth::AccessSettings {
        seat_tokens: true,
        ..Default::default()
    };
    let server = TestServer::start_secured(registry, access).await;
    let mut client = server.client.clone();
    let request = pb::CreateGameRequest {
        absence: Some(pb::AbsencePolicy {
            grace: seconds(GRACE_S),
            on_absence: pb::AbsenceAction::Expire as i32,
        }),
        ..create_request("away", mnk(3, 3, 3))
    };
    let created = client.create_game(request).await.unwrap().into_inner();
    let as_seat0 = bearer(
        pb::StreamEventsRequest {
            game_id: "away".into(),
            from_sequence: 0,
            follow: true,
            round: None,
        },
        &created.seat_tokens[0],
    );
    let mut seat0 = client.stream_events(as_seat0).await.unwrap().into_inner();
    within(seat0.message()).await.unwrap().unwrap();
    wait_until_present(&mut client, "away", vec![0]).await;
    // Present for a minute, then gone.
    clock.advance(60_000);
    let left_at = clock.now_ms();
    drop(seat0);
    wait_until_present(&mut client, "away", vec![]).await;
    // Other games push it out of memory.
    for g in 0..4 {
        create(&mut client, &format!("other-{g}"), mnk(3, 3, 3)).await;
        get_game(&mut client, &format!("other-{g}")).await;
    }
    wait_until(
        "the absent game to leave memory",
        Duration::from_secs(10),
        || !server.registry.is_live("away"),
    )
    .await;
    // Not a moment before the grace period after it left.
    clock.advance(GRACE_S * 1000 - 1_000);
    let games = listed(&mut client).await;
    assert_eq!(games["away"].last_sequence, 1, "reported absent too early");
    clock.advance(1_000);
    until_over(&mut client, &["away".to_owned()]).await;
    let mut stream = follow(&mut client, "away", 2).await;
    let seen = next_events(&mut stream, 2).await;
    assert_eq!(
        seen[0],
        pb::game_event::Kind::SeatAbsent(pb::SeatAbsent { seat: 0 })
    );
    let replay = client
        .get_replay(pb::GetReplayRequest {
            game_id: "away".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let absent = replay.steps[1].event.as_ref().unwrap();
    let at = plylog::proto::convert::timestamp_ms(absent.recorded_at.as_ref());
    assert!(
        at >= left_at + GRACE_S * 1000,
        "reported absent at {at}, before the grace period after it left at {left_at}"
    );
}

/// A duration of `seconds` and `nanos`, as sent.
fn duration(seconds: i64, nanos: i32) -> Option<prost_types::Duration> {
    Some(prost_types::Duration { seconds, nanos })
}

#[tokio::test]
async fn time_limits_under_a_second_and_durations_with_a_second_of_nanos_are_refused_naming_the_field()
 {
    let server = TestServer::start().await;
    let mut client = server.client.clone();
    let refused = |time_control: pb::TimeControl, absence: Option<pb::AbsencePolicy>| {
        let mut client = client.clone();
        async move {
            let request = pb::CreateGameRequest {
                absence,
                ..timed_request("refused", time_control)
            };
            let status = assert_rejected(
                client.create_game(request).await,
                Code::InvalidArgument,
                "INVALID_TIME_CONTROL",
            );
            bad_field(&status).unwrap_or_default()
        }
    };
    // The attack's 1 ms turns, and anything under a second.
    let tc = |per_move, initial| pb::TimeControl {
        per_move,
        initial,
        on_expiry: pb::ExpiryPolicy::RandomMove as i32,
        ..Default::default()
    };
    assert_eq!(
        refused(tc(duration(0, 1_000_000), None), None).await,
        "time_control.per_move"
    );
    assert_eq!(
        refused(tc(duration(0, 999_000_000), None), None).await,
        "time_control.per_move"
    );
    assert_eq!(
        refused(tc(None, duration(0, 500_000_000)), None).await,
        "time_control.initial"
    );
    let away = Some(pb::AbsencePolicy {
        grace: duration(0, 10_000_000),
        on_absence: 0,
    });
    assert_eq!(refused(tc(seconds(1), None), away).await, "absence.grace");
    // `{seconds: 1, nanos: 2000000000}` is not a 3 s turn: nanos stay
    // under a second (protobuf's Duration).
    assert_eq!(
        refused(tc(duration(1, 2_000_000_000), None), None).await,
        "time_control.per_move"
    );
    assert_eq!(
        refused(tc(None, duration(60, 1_000_000_000)), None).await,
        "time_control.initial"
    );
    // One second is enough, and nothing refused was created.
    let game = create_from(&mut client, timed_request("ok", tc(seconds(1), None))).await;
    assert_eq!(game.time_control.unwrap().per_move, seconds(1));
    assert_eq!(list_games(&mut client).await.len(), 1);
}

#[tokio::test]
async fn a_huge_game_nobody_plays_ends_after_three_rounds_of_random_moves() {
    let (clock, registry) = clocked();
    let server = TestServer::start_with(registry).await;
    let mut client = server.client.clone();
    let tc = pb::TimeControl {
        per_move: seconds(1),
        on_expiry: pb::ExpiryPolicy::RandomMove as i32,
        ..Default::default()
    };
    let request = pb::CreateGameRequest {
        time_control: Some(tc),
        ..create_request("alone", mnk(1000, 1000, 5))
    };
    create_from(&mut client, request).await;
    let mut stream = follow(&mut client, "alone", 2).await;
    // Nobody moves: each second the server plays a random move, three per
    // seat, then ends the game instead of playing a seventh.
    let mut random_moves = 0;
    let ended = loop {
        clock.advance(1_000);
        let seen = next_events(&mut stream, 2).await;
        assert!(
            matches!(seen[0], pb::game_event::Kind::TimeExpired(_)),
            "{seen:?}"
        );
        match &seen[1] {
            pb::game_event::Kind::MovePlayed(_) => random_moves += 1,
            pb::game_event::Kind::GameEnded(ended) => break ended.clone(),
            other => panic!("a move or the end: {other:?}"),
        }
        assert!(random_moves <= 6, "the game plays on by itself");
    };
    assert_eq!(random_moves, 6);
    let outcome_of_end = ended.outcome.unwrap();
    assert_eq!(outcome_of_end.reason, pb::EndReason::Abandoned as i32);
    assert!(matches!(
        outcome_of_end.kind,
        Some(pb::outcome::Kind::NoResult(_))
    ));
    let game = get_game(&mut client, "alone").await;
    assert_eq!(
        outcome(&game),
        (
            pb::GameStatus::NoResult as i32,
            pb::EndReason::Abandoned as i32
        )
    );
    assert_eq!(game.last_sequence, 1 + 6 * 2 + 2);
    // Time goes on; nothing more is appended.
    clock.advance(60_000);
    assert_eq!(get_game(&mut client, "alone").await.last_sequence, 15);
}

/// Lichess bulk pairing's `startClocksAt`: the games of one CreateGames
/// call start their clocks at the time it gives, not at their creation.
#[tokio::test]
async fn games_created_together_start_their_clocks_together_at_the_time_given() {
    let (clock, registry) = clocked();
    let server = TestServer::start_with(registry).await;
    let mut client = server.client.clone();
    let start = T + 30_000;
    let reply = client
        .create_games(pb::CreateGamesRequest {
            requests: vec![
                timed_request("bulk-1", per_move(10)),
                timed_request("bulk-2", per_move(10)),
            ],
            clocks_start_at: Some(prost_types::Timestamp {
                seconds: start / 1000,
                nanos: 0,
            }),
        })
        .await
        .expect("created")
        .into_inner();
    let ids: Vec<_> = reply
        .responses
        .iter()
        .map(|r| r.game.as_ref().expect("a game").game_id.clone())
        .collect();
    assert_eq!(ids, ["bulk-1", "bulk-2"]);
    // 35 s after the creation: 10 s a move counted from the creation would
    // be long gone; counted from the start at 30 s, 5 s are left.
    clock.advance_without_waking(35_000);
    play(&mut client, "bulk-1", 0, place(0, 0))
        .await
        .expect("in time: the clock started at 30 s");
    // bulk-2's first turn ends at 40 s.
    clock.advance(6_000);
    wait_for(
        "bulk-2 to time out at 40 s",
        Duration::from_secs(10),
        Duration::from_millis(10),
        async || {
            let game = get_game(&mut client, "bulk-2").await;
            (outcome(&game) == (pb::GameStatus::Won as i32, pb::EndReason::Timeout as i32))
                .then_some(())
        },
    )
    .await;
    let events = stored_events(&client, "bulk-1").await;
    let Some(pb::game_event::Kind::GameCreated(created)) = &events[0].kind else {
        panic!("GameCreated first");
    };
    assert_eq!(
        created.clocks_start_at.map(|t| t.seconds),
        Some(start / 1000)
    );
    // More than an hour ahead is refused, naming the field.
    let late = client
        .create_games(pb::CreateGamesRequest {
            requests: vec![timed_request("bulk-3", per_move(10))],
            clocks_start_at: Some(prost_types::Timestamp {
                seconds: (T + 3_700_000) / 1000,
                nanos: 0,
            }),
        })
        .await;
    let status = assert_rejected(late, Code::InvalidArgument, "INVALID_REQUEST");
    assert_eq!(bad_field(&status).as_deref(), Some("clocks_start_at"));
}
