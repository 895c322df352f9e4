//! Bot seats and the analysis calls: bots play their turns by themselves,
//! nobody moves for them, an undo takes their reply back, the same seeds
//! give the same game after a restart, analyses are bounded.

use std::time::{Duration, Instant};

use plylog::proto as pb;
use plylog::registry::{Clock, EngineSettings};
use prost::Message;
use tonic::Code;

use plylog_testkit::*;

/// A bot seat playing `engine` at `strength` with `seed`.
fn bot(id: &str, symbol: &str, engine: pb::Engine, strength: u32, seed: u64) -> pb::Seat {
    pb::Seat {
        bot: Some(pb::Bot {
            engine: engine as i32,
            strength,
            seed: Some(seed),
        }),
        ..seat(id, symbol)
    }
}

/// CreateGame for `rules` with `seats`.
fn with_seats(game_id: &str, rules: pb::RuleSet, seats: Vec<pb::Seat>) -> pb::CreateGameRequest {
    pb::CreateGameRequest {
        seats,
        ..create_request(game_id, rules)
    }
}

/// Follows `game_id` until it is over; returns its events (from sequence
/// 1) and the final status. Fails after `limit`.
async fn until_over(
    client: &mut Client,
    game_id: &str,
    limit: Duration,
) -> (Vec<pb::GameEvent>, pb::GameStatus) {
    let mut stream = follow(client, game_id, 0).await;
    let mut events = Vec::new();
    let reading = async {
        loop {
            let item = stream
                .message()
                .await
                .expect("stream item")
                .expect("the stream stays open until the game ends");
            if let Some(pb::stream_events_response::Kind::Event(event)) = item.kind {
                let over = match &event.kind {
                    Some(pb::game_event::Kind::MovePlayed(m)) => m.outcome.is_some(),
                    Some(pb::game_event::Kind::GameEnded(_)) => true,
                    _ => false,
                };
                events.push(event);
                if over {
                    return;
                }
            }
        }
    };
    if tokio::time::timeout(limit, reading).await.is_err() {
        panic!("{game_id} did not end within {limit:?}: {events:?}");
    }
    let game = get_game(client, game_id).await;
    (events, position(&game).status())
}

/// The moves of `events` with the engine that chose each.
fn moves(events: &[pb::GameEvent]) -> Vec<(u32, Option<pb::Chooser>)> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(pb::game_event::Kind::MovePlayed(m)) => Some((m.seat, m.chosen_by)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn two_minimax_bots_play_tic_tac_toe_to_a_draw_by_themselves() {
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    let seats = vec![
        bot("x", "X", pb::Engine::Minimax, 0, 1),
        bot("o", "O", pb::Engine::Minimax, 10, 2),
    ];
    let game = create_from(client, with_seats("bots", mnk(3, 3, 3), seats)).await;
    // Strength 0 reads as 10; the seeds are as sent.
    let created = game.seats[0].bot.as_ref().expect("a bot seat");
    assert_eq!((created.strength, created.seed), (10, Some(1)));
    let (events, status) = until_over(client, "bots", Duration::from_secs(60)).await;
    assert_eq!(
        status,
        pb::GameStatus::Drawn,
        "perfect play draws: {events:?}"
    );
    let moves = moves(&events);
    assert_eq!(moves.len(), 9, "a draw fills the board");
    for (i, (seat, chooser)) in moves.iter().enumerate() {
        assert_eq!(*seat, i as u32 % 2);
        let chooser = chooser.expect("each move names its engine");
        assert_eq!(chooser.engine(), pb::Engine::Minimax);
        assert_eq!(chooser.strength, 10);
        // Tic-tac-toe is solved within the budget: every move is proven.
        assert!(chooser.proven, "move {i} is not proven: {chooser:?}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_bot_on_a_million_cells_keeps_its_time_limit_and_leaves_the_pool_to_other_bots() {
    // One bot thread, and a quick time limit: the huge game's bots must
    // take turns with the tic-tac-toe game's, one move each at a time.
    let registry = plylog::registry::RegistrySettings {
        engines: EngineSettings {
            bot_threads: 1,
            bot_move_time: Duration::from_millis(200),
            ..EngineSettings::default()
        },
        ..settings()
    };
    let mut server = TestServer::start_with(registry).await;
    let client = &mut server.client;
    let huge = vec![
        bot("a", "X", pb::Engine::Minimax, 10, 1),
        bot("b", "O", pb::Engine::Minimax, 10, 2),
    ];
    create_from(client, with_seats("huge", mnk(1000, 1000, 5), huge)).await;
    let small = vec![
        bot("x", "X", pb::Engine::Minimax, 10, 3),
        bot("o", "O", pb::Engine::Minimax, 10, 4),
    ];
    create_from(client, with_seats("small", mnk(3, 3, 3), small)).await;
    let (events, status) = until_over(client, "small", Duration::from_secs(120)).await;
    assert_eq!(status, pb::GameStatus::Drawn, "{events:?}");
    // Meanwhile the huge game moved too, each move cut by the time limit:
    // an estimate, recorded as not proven, still naming its engine.
    wait_until_sequence(client, "huge", 3).await;
    let huge_events: Vec<pb::GameEvent> = read_stream(client, "huge", 0)
        .await
        .into_iter()
        .filter_map(|kind| match kind {
            pb::stream_events_response::Kind::Event(event) => Some(event),
            _ => None,
        })
        .collect();
    let huge_moves = moves(&huge_events);
    assert!(huge_moves.len() >= 2, "{huge_moves:?}");
    // The first two moves, searched with at most one stone on the board:
    // nothing there can be proven within the limit, so each is a search
    // cut short. (Later the two bots may build a real forced five, which
    // a search can prove in time: under load the huge game gets further
    // while the small one plays, and such a proven move was seen.)
    for (_, chooser) in huge_moves.into_iter().take(2) {
        let chooser = chooser.expect("a bot's move names its engine");
        assert_eq!(chooser.engine(), pb::Engine::Minimax);
        assert!(!chooser.proven, "{chooser:?}");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_bot_answers_a_players_move_and_nobody_moves_or_acts_for_it() {
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    let seats = vec![
        seat("ann", "X"),
        bot("bot", "O", pb::Engine::Minimax, 10, 7),
    ];
    let created = client
        .create_game(with_seats("vs", mnk(3, 3, 3), seats))
        .await
        .unwrap()
        .into_inner();
    assert!(
        created.seat_tokens.is_empty() || created.seat_tokens[1].is_empty(),
        "nobody gets a bot seat's token"
    );
    // The bot is not to move: it waits.
    assert_rejected(
        play(client, "vs", 1, place(1, 1)).await,
        Code::FailedPrecondition,
        "SEAT_IS_BOT",
    );
    play(client, "vs", 0, place(0, 0)).await.expect("ann moves");
    // A corner by X is answered in the centre (anything else loses).
    wait_until_sequence(client, "vs", 3).await;
    let game = get_game(client, "vs").await;
    assert_eq!(board_text(&game)[1], ".O.");
    assert_eq!(position(&game).seat_to_move, Some(0));
    assert_rejected(
        client
            .submit_action(pb::SubmitActionRequest {
                game_id: "vs".into(),
                seat: Some(1),
                action: pb::Action::Resign as i32,
                ..Default::default()
            })
            .await,
        Code::FailedPrecondition,
        "SEAT_IS_BOT",
    );
    assert_rejected(
        client
            .rematch(pb::RematchRequest {
                game_id: "vs".into(),
                seat: Some(1),
                ..Default::default()
            })
            .await,
        Code::FailedPrecondition,
        "SEAT_IS_BOT",
    );
    server.stop().await;
}

/// Waits until `game_id`'s last sequence is at least `sequence`.
async fn wait_until_sequence(client: &mut Client, game_id: &str, sequence: u64) {
    let mut stream = follow(client, game_id, 0).await;
    loop {
        let item = within(stream.message())
            .await
            .expect("stream item")
            .expect("stream open");
        if let Some(pb::stream_events_response::Kind::Event(event)) = item.kind
            && event.sequence >= sequence
        {
            return;
        }
    }
}

#[tokio::test]
async fn a_players_undo_takes_back_the_bots_reply_with_its_own_move() {
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    let seats = vec![seat("ann", "X"), bot("bot", "O", pb::Engine::Random, 1, 3)];
    create_from(client, with_seats("takeback", mnk(3, 3, 3), seats)).await;
    play(client, "takeback", 0, place(0, 0)).await.unwrap();
    wait_until_sequence(client, "takeback", 3).await;
    let undone = client
        .undo(pb::UndoRequest {
            game_id: "takeback".into(),
            seat: Some(0),
            ..Default::default()
        })
        .await
        .expect("ann takes her move back")
        .into_inner();
    let undone: Vec<u64> = undone
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            Some(pb::game_event::Kind::MoveUndone(u)) => Some(u.undone_sequence),
            _ => None,
        })
        .collect();
    assert_eq!(undone, [3, 2], "the bot's reply, then ann's move");
    let game = get_game(client, "takeback").await;
    assert_eq!(board_text(&game), ["...", "...", "..."]);
    assert_eq!(position(&game).seat_to_move, Some(0));
    server.stop().await;
}

#[tokio::test]
async fn a_minimax_bot_plays_chess_by_material_and_takes_a_hanging_queen() {
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    // White (the bot, to move) has a rook on d2; Black's queen on d5 hangs.
    let chess = rules(pb::rule_set::Kind::Chess(pb::ChessRules {
        fen: "4k3/8/8/3q4/8/8/3R4/4K3 w - - 0 1".into(),
        ..pb::ChessRules::default()
    }));
    let seats = vec![bot("w", "W", pb::Engine::Minimax, 2, 1), seat("b", "B")];
    create_from(client, with_seats("hanging", chess, seats)).await;
    wait_until_sequence(client, "hanging", 2).await;
    let events = stored_events(client, "hanging").await;
    let Some(pb::game_event::Kind::MovePlayed(played)) = &events[1].kind else {
        panic!("the bot's move: {events:?}")
    };
    assert_eq!(played.chess.as_ref().map(|c| c.san.as_str()), Some("Rxd5"));
    assert_eq!(
        played.chosen_by.expect("a bot's move").engine(),
        pb::Engine::Minimax
    );
    server.stop().await;
}

#[tokio::test]
async fn two_mcts_bots_play_chess_within_their_budget() {
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    let chess = rules(pb::rule_set::Kind::Chess(pb::ChessRules::default()));
    let seats = vec![
        bot("w", "W", pb::Engine::Mcts, 1, 1),
        bot("b", "B", pb::Engine::Mcts, 1, 2),
    ];
    create_from(client, with_seats("mcts-chess", chess, seats)).await;
    // Six plies, each chosen by MCTS.
    wait_until_sequence(client, "mcts-chess", 7).await;
    let events = stored_events(client, "mcts-chess").await;
    let moves = moves(&events[..7]);
    assert_eq!(moves.len(), 6, "{events:?}");
    for (i, (seat, chooser)) in moves.iter().enumerate() {
        assert_eq!(*seat, i as u32 % 2);
        assert_eq!(chooser.expect("a bot's move").engine(), pb::Engine::Mcts);
    }
    server.stop().await;
}

#[tokio::test]
async fn bot_seats_an_engine_cannot_play_are_refused_at_creation() {
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    let cases = [
        (
            vec![seat("a", "X"), bot("b", "O", pb::Engine::Connect4, 10, 1)],
            mnk(3, 3, 3),
            "ENGINE_UNSUPPORTED",
            "seats[1].bot.engine",
        ),
        (
            vec![
                seat("a", "X"),
                seat("b", "O"),
                bot("c", "Z", pb::Engine::Minimax, 10, 1),
            ],
            mnk(4, 4, 3),
            "ENGINE_UNSUPPORTED",
            "seats[2].bot.engine",
        ),
        (
            vec![seat("a", "X"), bot("b", "O", pb::Engine::Random, 11, 1)],
            mnk(3, 3, 3),
            "INVALID_SEATS",
            "seats[1].bot.strength",
        ),
        (
            vec![seat("a", "X"), bot("b", "O", pb::Engine::Unspecified, 1, 1)],
            mnk(3, 3, 3),
            "INVALID_SEATS",
            "seats[1].bot.engine",
        ),
    ];
    for (seats, rules, reason, field) in cases {
        let refused = assert_rejected(
            client.create_game(with_seats("", rules, seats)).await,
            Code::InvalidArgument,
            reason,
        );
        assert_eq!(bad_field(&refused).as_deref(), Some(field));
    }
    server.stop().await;
}

/// A SuggestMove request on a position set up from `rules` and `moves`.
fn suggest_on(
    rules: pb::RuleSet,
    moves: Vec<pb::Move>,
    engine: pb::Engine,
) -> pb::SuggestMoveRequest {
    pb::SuggestMoveRequest {
        target: Some(pb::AnalysisTarget {
            source: Some(pb::analysis_target::Source::Setup(pb::PositionSetup {
                rules: Some(rules),
                seats: 2,
                moves,
            })),
            at_sequence: None,
        }),
        engine: engine as i32,
        ..Default::default()
    }
}

#[tokio::test]
async fn suggest_move_finds_the_win_and_scores_it_exactly() {
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    // X (0,0) (0,1), O (1,0) (1,1): X wins at (0,2), leaving 4 cells empty.
    let moves = vec![place(0, 0), place(1, 0), place(0, 1), place(1, 1)];
    let hint = client
        .suggest_move(suggest_on(
            mnk(3, 3, 3),
            moves.clone(),
            pb::Engine::Unspecified,
        ))
        .await
        .expect("a hint")
        .into_inner();
    assert_eq!(
        hint.engine(),
        pb::Engine::Minimax,
        "the best engine for 3x3"
    );
    assert_eq!(hint.r#move, Some(place(0, 2)));
    assert_eq!(hint.seat, 0);
    assert_eq!(
        hint.score.and_then(|s| s.kind),
        Some(pb::score::Kind::Exact(5))
    );
    // The same on a game, read at its latest sequence; the analysis is
    // read-only.
    create(client, "hint", mnk(3, 3, 3)).await;
    play_all(client, "hint", &moves).await;
    let on_game = client
        .suggest_move(pb::SuggestMoveRequest {
            target: Some(pb::AnalysisTarget {
                source: Some(pb::analysis_target::Source::GameId("hint".into())),
                at_sequence: None,
            }),
            ..Default::default()
        })
        .await
        .expect("a hint on a game")
        .into_inner();
    assert_eq!((on_game.r#move, on_game.sequence), (Some(place(0, 2)), 5));
    assert_eq!(get_game(client, "hint").await.last_sequence, 5);
    // Every move scored: the win, the blocks and the losses.
    let analysis = client
        .analyze_position(pb::AnalyzePositionRequest {
            target: suggest_on(mnk(3, 3, 3), moves, pb::Engine::Minimax).target,
            engine: pb::Engine::Minimax as i32,
            ..Default::default()
        })
        .await
        .expect("an analysis")
        .into_inner();
    assert_eq!(analysis.moves.len(), 5);
    assert_eq!(
        analysis.score.and_then(|s| s.kind),
        Some(pb::score::Kind::Exact(5))
    );
    // A finished game has nothing to suggest.
    play(client, "hint", 0, place(0, 2)).await.unwrap();
    assert_rejected(
        client
            .suggest_move(pb::SuggestMoveRequest {
                target: Some(pb::AnalysisTarget {
                    source: Some(pb::analysis_target::Source::GameId("hint".into())),
                    at_sequence: None,
                }),
                ..Default::default()
            })
            .await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );
    server.stop().await;
}

#[tokio::test]
async fn analyses_are_refused_beyond_the_server_limit_and_bad_setups_name_their_field() {
    let registry = plylog::registry::RegistrySettings {
        engines: EngineSettings {
            max_analyses: 0,
            ..EngineSettings::default()
        },
        ..settings()
    };
    let mut server = TestServer::start_with(registry).await;
    let client = &mut server.client;
    assert_rejected(
        client
            .suggest_move(suggest_on(mnk(3, 3, 3), vec![], pb::Engine::Random))
            .await,
        Code::Unavailable,
        "OVERLOADED",
    );
    let illegal = assert_rejected(
        client
            .suggest_move(suggest_on(
                mnk(3, 3, 3),
                vec![place(0, 0), place(0, 0)],
                pb::Engine::Random,
            ))
            .await,
        Code::InvalidArgument,
        "CELL_OCCUPIED",
    );
    assert_eq!(
        bad_field(&illegal).as_deref(),
        Some("target.setup.moves[1]")
    );
    // Each refused setup move carries its own reason, as SubmitMove's.
    for (moves, reason) in [
        (vec![place(0, 0), place(3, 0)], "OUT_OF_BOUNDS"),
        (
            vec![
                place(0, 0),
                place(1, 0),
                place(0, 1),
                place(1, 1),
                place(0, 2),
                place(2, 2),
            ],
            "GAME_OVER",
        ),
    ] {
        let refused = assert_rejected(
            client
                .suggest_move(suggest_on(mnk(3, 3, 3), moves.clone(), pb::Engine::Random))
                .await,
            Code::InvalidArgument,
            reason,
        );
        let last = format!("target.setup.moves[{}]", moves.len() - 1);
        assert_eq!(bad_field(&refused), Some(last), "{reason}");
    }
    assert_rejected(
        client
            .suggest_move(suggest_on(mnk(3, 3, 3), vec![], pb::Engine::Connect4))
            .await,
        Code::InvalidArgument,
        "ENGINE_UNSUPPORTED",
    );
    server.stop().await;
}

/// A bot-versus-bot Othello game (about 60 moves), MCTS against MCTS.
fn slow_bots(game_id: &str) -> pb::CreateGameRequest {
    let seats = vec![
        bot("a", "X", pb::Engine::Mcts, 3, 11),
        bot("b", "O", pb::Engine::Mcts, 2, 12),
    ];
    let rules = pb::RuleSet {
        kind: Some(pb::rule_set::Kind::Othello(pb::OthelloRules::default())),
    };
    with_seats(game_id, rules, seats)
}

/// The events as stored, without what differs between two games (their
/// ids): the same seeds must give the same bytes otherwise.
fn log_bytes(events: &[pb::GameEvent]) -> Vec<Vec<u8>> {
    events
        .iter()
        .map(|e| {
            pb::GameEvent {
                game_id: String::new(),
                ..e.clone()
            }
            .encode_to_vec()
        })
        .collect()
}

#[tokio::test]
async fn the_same_seeds_give_the_same_bot_game_byte_for_byte_across_a_restart() {
    // A clock that stands still: every event is recorded at the same time,
    // so two games' logs can be compared byte for byte.
    let clock = Clock::manual(1_700_000_000_000);
    let registry = plylog::registry::RegistrySettings {
        clock: clock.clone(),
        ..settings()
    };
    let mut server = TestServer::start_with(registry.clone()).await;
    create_from(&mut server.client, slow_bots("straight")).await;
    let (straight, _) = until_over(&mut server.client, "straight", Duration::from_secs(120)).await;
    create_from(&mut server.client, slow_bots("restarted")).await;
    // Stop the server in the middle of the game: after a few moves, with
    // many still to come.
    wait_until_sequence(&mut server.client, "restarted", 10).await;
    let before = get_game(&mut server.client, "restarted").await;
    assert_eq!(position(&before).status(), pb::GameStatus::InProgress);
    assert!(
        before.last_sequence + 10 < straight.len() as u64,
        "stopped at {} of {}: too late to test a restart",
        before.last_sequence,
        straight.len()
    );
    let mut server = server.restart_with(registry, || {}).await;
    let (restarted, _) =
        until_over(&mut server.client, "restarted", Duration::from_secs(120)).await;
    eprintln!(
        "{} events in each game; the restarted one was stopped at sequence {}",
        straight.len(),
        before.last_sequence
    );
    assert!(straight.len() > 10, "a real game: {}", straight.len());
    assert_eq!(log_bytes(&restarted), log_bytes(&straight));
    server.stop().await;
}

#[tokio::test]
async fn sixty_four_bot_games_at_once_leave_the_other_games_answering() {
    const BOT_GAMES: usize = 64;
    let mut server = TestServer::start().await;
    let client = &mut server.client;
    for i in 0..BOT_GAMES {
        let seats = vec![
            bot("a", "R", pb::Engine::Minimax, 4, i as u64),
            bot("b", "Y", pb::Engine::Minimax, 3, i as u64),
        ];
        create_from(
            client,
            with_seats(&format!("load-{i}"), connect_four(), seats),
        )
        .await;
    }
    // Meanwhile players play tic-tac-toe, one move at a time, timing each.
    let mut latencies = Vec::new();
    let mut game = 0;
    let started = Instant::now();
    let mut finished = 0;
    while finished < BOT_GAMES {
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "{finished} of {BOT_GAMES} bot games finished in 300 s"
        );
        let id = format!("player-{game}");
        create(client, &id, mnk(3, 3, 3)).await;
        for (i, mv) in x_wins_top_row().into_iter().enumerate() {
            let sent = Instant::now();
            play(client, &id, i as u32 % 2, mv)
                .await
                .expect("a player's move is answered");
            latencies.push(sent.elapsed());
        }
        game += 1;
        finished = 0;
        for i in 0..BOT_GAMES {
            let status = position(&get_game(client, &format!("load-{i}")).await).status();
            finished += usize::from(status != pb::GameStatus::InProgress);
        }
    }
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() - 1) as f64 * q) as usize];
    eprintln!(
        "{BOT_GAMES} bot games (minimax 4 vs minimax 3, Connect Four) finished in {:.1} s; \
         meanwhile {} player moves: p50 {:?}, p99 {:?}, max {:?}",
        started.elapsed().as_secs_f64(),
        latencies.len(),
        at(0.5),
        at(0.99),
        latencies.last().unwrap()
    );
    server.stop().await;
}
