use plylog::proto as pb;
use tonic::Code;

use plylog_testkit::*;

#[tokio::test]
async fn a_tic_tac_toe_game_is_created_empty_with_seat_zero_to_move() {
    let mut server = TestServer::start().await;
    let game = create(&mut server.client, "ttt-1", mnk(3, 3, 3)).await;
    assert_eq!(game.game_id, "ttt-1");
    assert_eq!(game.last_sequence, 1);
    let pos = position(&game);
    assert_eq!(
        (pos.sequence, pos.ply, pos.status()),
        (1, 0, pb::GameStatus::InProgress)
    );
    assert_eq!(pos.seat_to_move, Some(0));
    assert_eq!(board_text(&game), vec!["...", "...", "..."]);
    assert_eq!(game.seats, two_seats());
}

#[tokio::test]
async fn connect_four_defaults_are_filled_in_and_an_absent_game_id_gets_a_uuid() {
    let mut server = TestServer::start().await;
    let game = create(&mut server.client, "", connect_four()).await;
    assert!(uuid_like(&game.game_id), "{}", game.game_id);
    let Some(pb::rule_set::Kind::ConnectFour(rules)) = game.rules.unwrap().kind else {
        panic!("connect four")
    };
    assert_eq!(
        (rules.rows, rules.cols, rules.k),
        (Some(6), Some(7), Some(4))
    );
}

/// Asserts CreateGame refuses `request` as INVALID_ARGUMENT with `reason`,
/// naming `field` in its BadRequest.
async fn assert_invalid(
    client: &mut Client,
    request: pb::CreateGameRequest,
    reason: &str,
    field: &str,
) {
    let status = assert_rejected(
        client.create_game(request).await,
        Code::InvalidArgument,
        reason,
    );
    assert_eq!(bad_field(&status).as_deref(), Some(field), "{status:?}");
}

fn uuid_like(id: &str) -> bool {
    id.len() == 36 && id.chars().filter(|c| *c == '-').count() == 4
}

#[tokio::test]
async fn impossible_rules_are_invalid_arguments_naming_the_field() {
    let mut server = TestServer::start().await;
    let cases = [
        (Some(mnk(5, 5, 6)), "rules.mnk.k"),
        (Some(mnk(0, 3, 3)), "rules.mnk.rows"),
        (Some(mnk(3, -2, 3)), "rules.mnk.cols"),
        (Some(mnk(3, 3, 0)), "rules.mnk.k"),
        (Some(mnk(1001, 1000, 5)), "rules.mnk.rows"),
        (
            Some(pb::RuleSet {
                kind: Some(pb::rule_set::Kind::ConnectFour(pb::ConnectFourRules {
                    rows: Some(-1),
                    ..Default::default()
                })),
            }),
            "rules.connect_four.rows",
        ),
        (None, "rules"),
        (Some(pb::RuleSet { kind: None }), "rules"),
    ];
    for (rules, field) in cases {
        let request = pb::CreateGameRequest {
            rules,
            ..create_request("bad", mnk(3, 3, 3))
        };
        assert_invalid(&mut server.client, request, "INVALID_RULES", field).await;
    }
    let status = server
        .client
        .create_game(create_request("big", mnk(5, 5, 6)))
        .await
        .unwrap_err();
    assert_eq!(
        status.message(),
        "rules.mnk.k: k=6 cannot fit on a 5x5 board"
    );
    // Nothing was created by any of them.
    let games = list_games(&mut server.client).await;
    assert!(games.is_empty());
}

#[tokio::test]
async fn bad_seats_are_invalid_arguments_naming_the_seat() {
    let mut server = TestServer::start().await;
    let cases = [
        (vec![seat("a", "X")], "seats"),
        (vec![], "seats"),
        (vec![seat("a", "X"), seat("b", "X")], "seats[1].symbol"),
        (vec![seat("a", "X"), seat("", "O")], "seats[1].player_id"),
        (vec![seat("a", ""), seat("b", "O")], "seats[0].symbol"),
        // Names that act on a terminal or reorder text (issue 35).
        (
            vec![seat("admin\u{202e}gnp.exe", "X"), seat("b", "O")],
            "seats[0].player_id",
        ),
        (
            vec![seat("a", "X"), seat("bob\r\u{1b}[31mred", "O")],
            "seats[1].player_id",
        ),
        (
            vec![
                seat("a", "X"),
                pb::Seat {
                    display_name: "\u{1b}]0;pwned\u{7}".into(),
                    ..seat("b", "O")
                },
            ],
            "seats[1].display_name",
        ),
    ];
    for (seats, field) in cases {
        let request = pb::CreateGameRequest {
            seats,
            ..create_request("bad", mnk(3, 3, 3))
        };
        assert_invalid(&mut server.client, request, "INVALID_SEATS", field).await;
    }
}

#[tokio::test]
async fn three_seats_with_unique_symbols_take_turns_in_seat_order() {
    let mut server = TestServer::start().await;
    let request = pb::CreateGameRequest {
        seats: vec![seat("a", "X"), seat("b", "O"), seat("c", "△")],
        ..create_request("three", mnk(4, 4, 3))
    };
    server.client.create_game(request).await.unwrap();
    for seat in 0..3 {
        play(&mut server.client, "three", seat, place(0, seat as i32))
            .await
            .unwrap();
    }
    let game = get_game(&mut server.client, "three").await;
    assert_eq!(position(&game).seat_to_move, Some(0));
    assert_eq!(board_text(&game)[0], "XO△.");
}

#[tokio::test]
async fn a_game_id_in_use_is_already_exists_and_a_malformed_one_is_invalid() {
    let mut server = TestServer::start().await;
    create(&mut server.client, "taken", mnk(3, 3, 3)).await;
    assert_rejected(
        server
            .client
            .create_game(create_request("taken", connect_four()))
            .await,
        Code::AlreadyExists,
        "GAME_EXISTS",
    );
    let status = assert_rejected(
        server
            .client
            .create_game(create_request("no spaces/please", mnk(3, 3, 3)))
            .await,
        Code::InvalidArgument,
        "INVALID_REQUEST",
    );
    assert_eq!(bad_field(&status).as_deref(), Some("game_id"));
}

#[tokio::test]
async fn a_retried_creation_returns_the_same_game_and_a_reused_request_id_is_refused() {
    let mut server = TestServer::start().await;
    let request = pb::CreateGameRequest {
        request_id: "req-1".into(),
        ..create_request("", mnk(3, 3, 3))
    };
    let first = create_from(&mut server.client, request.clone()).await;
    // A move later, the retry still gets the creation reply, byte for byte.
    play(&mut server.client, &first.game_id, 0, place(1, 1))
        .await
        .unwrap();
    let again = create_from(&mut server.client, request.clone()).await;
    assert_eq!(first, again);
    let other = pb::CreateGameRequest {
        rules: Some(mnk(4, 4, 3)),
        ..request
    };
    assert_rejected(
        server.client.create_game(other).await,
        Code::AlreadyExists,
        "REQUEST_ID_REUSED",
    );
    let games = list_games(&mut server.client).await;
    assert_eq!(games.len(), 1);
}

#[tokio::test]
async fn a_retried_creation_that_spells_out_the_defaults_is_the_same_request() {
    let mut server = TestServer::start().await;
    let request = pb::CreateGameRequest {
        request_id: "req-c4".into(),
        ..create_request("c4", connect_four())
    };
    let first = server
        .client
        .create_game(request.clone())
        .await
        .unwrap()
        .into_inner();
    let explicit = pb::RuleSet {
        kind: Some(pb::rule_set::Kind::ConnectFour(pb::ConnectFourRules {
            rows: Some(6),
            cols: Some(7),
            k: Some(4),
            ..Default::default()
        })),
    };
    let spelled_out = pb::CreateGameRequest {
        rules: Some(explicit),
        ..request
    };
    let again = server
        .client
        .create_game(spelled_out)
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first, again);
}

#[tokio::test]
async fn games_are_listed_oldest_first_a_page_at_a_time() {
    let mut server = TestServer::start().await;
    for i in 0..5 {
        create(&mut server.client, &format!("g{i}"), mnk(3, 3, 3)).await;
    }
    play(&mut server.client, "g0", 0, place(0, 0))
        .await
        .unwrap();
    let mut seen = Vec::new();
    let mut token = String::new();
    loop {
        let page = server
            .client
            .list_games(pb::ListGamesRequest {
                page_size: 2,
                page_token: token,
                order_by: String::new(),
                filter: String::new(),
            })
            .await
            .unwrap()
            .into_inner();
        assert!(page.games.len() <= 2);
        seen.extend(page.games);
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
    }
    let ids: Vec<_> = seen.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids, ["g0", "g1", "g2", "g3", "g4"]);
    assert_eq!(seen[0].last_sequence, 2);
    assert_eq!(seen[0].status(), pb::GameStatus::InProgress);
    assert_eq!(seen[1].seats, two_seats());
    let bad = server
        .client
        .list_games(pb::ListGamesRequest {
            page_size: 2,
            page_token: "zzz".into(),
            order_by: String::new(),
            filter: String::new(),
        })
        .await;
    assert_rejected(bad, Code::InvalidArgument, "INVALID_PAGE_TOKEN");
    for forged in ["+2", "02", "2.0", "-1"] {
        let bad = server
            .client
            .list_games(pb::ListGamesRequest {
                page_size: 2,
                page_token: forged.into(),
                order_by: String::new(),
                filter: String::new(),
            })
            .await;
        assert_rejected(bad, Code::InvalidArgument, "INVALID_PAGE_TOKEN");
    }
    let bad = server
        .client
        .list_games(pb::ListGamesRequest {
            page_size: -1,
            page_token: String::new(),
            order_by: String::new(),
            filter: String::new(),
        })
        .await;
    let status = assert_rejected(bad, Code::InvalidArgument, "INVALID_REQUEST");
    assert_eq!(bad_field(&status).as_deref(), Some("page_size"));
}

#[tokio::test]
async fn games_are_listed_newest_first_when_asked_with_their_last_activity() {
    let mut server = TestServer::start().await;
    for i in 0..5 {
        create(&mut server.client, &format!("g{i}"), mnk(3, 3, 3)).await;
    }
    play(&mut server.client, "g1", 0, place(0, 0))
        .await
        .unwrap();
    let list = |token: String, order_by: &str| pb::ListGamesRequest {
        page_size: 2,
        page_token: token,
        order_by: order_by.into(),
        filter: String::new(),
    };
    let mut seen = Vec::new();
    let mut tokens = Vec::new();
    let mut token = String::new();
    loop {
        let page = server
            .client
            .list_games(list(token, "created_at desc"))
            .await
            .unwrap()
            .into_inner();
        seen.extend(page.games);
        if page.next_page_token.is_empty() {
            break;
        }
        token = page.next_page_token;
        tokens.push(token.clone());
    }
    let ids: Vec<_> = seen.iter().map(|g| g.game_id.as_str()).collect();
    assert_eq!(ids, ["g4", "g3", "g2", "g1", "g0"]);
    // updated_at is the time of the last event: the move, for g1.
    let g1 = &seen[3];
    let (created, updated) = (g1.created_at.unwrap(), g1.updated_at.unwrap());
    assert!((updated.seconds, updated.nanos) >= (created.seconds, created.nanos));
    let event = server
        .client
        .get_replay(pb::GetReplayRequest {
            game_id: "g1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .steps
        .pop()
        .unwrap()
        .event
        .unwrap();
    assert_eq!(g1.updated_at, event.recorded_at);
    assert_eq!(
        seen[4].updated_at, seen[4].created_at,
        "g0: only its creation"
    );

    // A token is good only with the order it was issued for.
    let bad = server
        .client
        .list_games(list(tokens[0].clone(), "created_at"))
        .await;
    assert_rejected(bad, Code::InvalidArgument, "INVALID_PAGE_TOKEN");
    let oldest_first_token = server
        .client
        .list_games(list(String::new(), ""))
        .await
        .unwrap()
        .into_inner()
        .next_page_token;
    let bad = server
        .client
        .list_games(list(oldest_first_token, "created_at desc"))
        .await;
    assert_rejected(bad, Code::InvalidArgument, "INVALID_PAGE_TOKEN");
    let bad = server
        .client
        .list_games(list(String::new(), "updated_at desc"))
        .await;
    let status = assert_rejected(bad, Code::InvalidArgument, "INVALID_REQUEST");
    assert_eq!(bad_field(&status).as_deref(), Some("order_by"));
}

#[tokio::test]
async fn an_oversized_page_size_is_clamped_to_the_maximum_not_refused() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "big", mnk(110, 110, 5)).await;
    let legal = c
        .list_legal_moves(pb::ListLegalMovesRequest {
            game_id: "big".into(),
            page_size: i32::MAX,
            page_token: String::new(),
        })
        .await
        .expect("an oversized page_size is clamped (AIP-158)")
        .into_inner();
    // 12,100 empty cells: the page holds the maximum, 10,000, and says more
    // follow.
    assert_eq!((legal.moves.len(), legal.total), (10_000, 12_100));
    assert!(!legal.next_page_token.is_empty());
    let games = c
        .list_games(pb::ListGamesRequest {
            page_size: 1_000_000,
            page_token: String::new(),
            order_by: String::new(),
            filter: String::new(),
        })
        .await
        .expect("clamped")
        .into_inner();
    assert_eq!(games.games.len(), 1);
    let replay = c
        .get_replay(pb::GetReplayRequest {
            game_id: "big".into(),
            page_size: 10_001,
            page_token: String::new(),
            round: None,
            ..Default::default()
        })
        .await
        .expect("clamped")
        .into_inner();
    assert_eq!(replay.steps.len(), 1);
}

#[tokio::test]
async fn gomoku_defaults_to_fifteen_by_fifteen_exactly_five_and_refuses_an_unknown_overline_rule() {
    let mut server = TestServer::start().await;
    let gomoku = |overline| pb::RuleSet {
        kind: Some(pb::rule_set::Kind::Gomoku(pb::GomokuRules {
            overline,
            ..Default::default()
        })),
    };
    let game = create(&mut server.client, "gomoku", gomoku(0)).await;
    let Some(pb::rule_set::Kind::Gomoku(rules)) = game.rules.unwrap().kind else {
        panic!("gomoku")
    };
    assert_eq!(
        (rules.rows, rules.cols, rules.k),
        (Some(15), Some(15), Some(5))
    );
    assert_eq!(rules.overline(), pb::OverlineRule::Exact);
    let freestyle = create(&mut server.client, "", gomoku(1)).await;
    let Some(pb::rule_set::Kind::Gomoku(rules)) = freestyle.rules.unwrap().kind else {
        panic!("gomoku")
    };
    assert_eq!(rules.overline(), pb::OverlineRule::Freestyle);
    let request = create_request("bad-overline", gomoku(9));
    assert_invalid(
        &mut server.client,
        request,
        "INVALID_RULES",
        "rules.gomoku.overline",
    )
    .await;
}

#[tokio::test]
async fn create_games_creates_each_once_and_refuses_a_bad_batch_whole() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let item = |i: usize| pb::CreateGameRequest {
        request_id: format!("pairing-{i}"),
        ..create_request("", connect_four())
    };
    let batch = pb::CreateGamesRequest {
        requests: (0..3).map(item).collect(),
        clocks_start_at: None,
    };
    let first = c.create_games(batch.clone()).await.unwrap().into_inner();
    assert_eq!(first.responses.len(), 3);
    let ids: Vec<String> = first
        .responses
        .iter()
        .map(|r| r.game.as_ref().unwrap().game_id.clone())
        .collect();
    // A retry of the whole batch creates nothing and answers the same.
    let again = c.create_games(batch).await.unwrap().into_inner();
    assert_eq!(again.responses, first.responses);
    assert_eq!(list_games(c).await.len(), 3);
    // One bad request refuses all of them, naming it.
    let mut bad: Vec<_> = (3..6).map(item).collect();
    bad[1].seats.pop();
    let answer = c
        .create_games(pb::CreateGamesRequest {
            requests: bad,
            clocks_start_at: None,
        })
        .await;
    let status = assert_rejected(answer, Code::InvalidArgument, "INVALID_SEATS");
    assert_eq!(bad_field(&status).as_deref(), Some("requests[1].seats"));
    for count in [0, 101] {
        let answer = c
            .create_games(pb::CreateGamesRequest {
                requests: (10..10 + count).map(item).collect(),
                clocks_start_at: None,
            })
            .await;
        let status = assert_rejected(answer, Code::InvalidArgument, "INVALID_REQUEST");
        assert_eq!(bad_field(&status).as_deref(), Some("requests"));
    }
    // Created concurrently: listed in the order they committed.
    let mut listed: Vec<String> = list_games(c).await.into_iter().map(|g| g.game_id).collect();
    let mut ids = ids;
    listed.sort();
    ids.sort();
    assert_eq!(listed, ids, "nothing of the refused batches was created");
}

#[tokio::test]
async fn create_games_writes_every_new_game_or_none() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let item = |i: usize| pb::CreateGameRequest {
        request_id: format!("round-{i}"),
        ..create_request("", connect_four())
    };
    let taken = c
        .create_game(create_request("taken", connect_four()))
        .await
        .unwrap()
        .into_inner();
    // The last game names an id another game has: the call is refused and
    // none of the four before it exists.
    let mut clash: Vec<_> = (0..5).map(item).collect();
    clash[4].game_id = "taken".to_owned();
    let answer = c
        .create_games(pb::CreateGamesRequest {
            requests: clash.clone(),
            clocks_start_at: None,
        })
        .await;
    assert_rejected(answer, Code::AlreadyExists, "GAME_EXISTS");
    let listed = list_games(c).await;
    assert_eq!(
        listed
            .iter()
            .map(|g| g.game_id.as_str())
            .collect::<Vec<_>>(),
        ["taken"],
        "nothing of the refused call was created"
    );
    // Two requests of one call with one request id, or one game id.
    for (field, second) in [("request_id", 3), ("game_id", 2)] {
        let mut twice: Vec<_> = (10..14).map(item).collect();
        if field == "game_id" {
            twice[0].game_id = "twin".to_owned();
            twice[second].game_id = "twin".to_owned();
        } else {
            twice[second].request_id = twice[1].request_id.clone();
        }
        let answer = c
            .create_games(pb::CreateGamesRequest {
                requests: twice,
                clocks_start_at: None,
            })
            .await;
        let status = assert_rejected(answer, Code::InvalidArgument, "INVALID_REQUEST");
        assert_eq!(
            bad_field(&status).as_deref(),
            Some(format!("requests[{second}].{field}").as_str())
        );
    }
    // A game an earlier call created comes back as it was; the others of
    // the call are created around it, in the call's order.
    let alone = c
        .create_games(pb::CreateGamesRequest {
            requests: vec![item(1)],
            clocks_start_at: None,
        })
        .await
        .unwrap()
        .into_inner();
    clash[4].game_id.clear();
    let round = c
        .create_games(pb::CreateGamesRequest {
            requests: clash,
            clocks_start_at: None,
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(round.responses.len(), 5);
    assert_eq!(round.responses[1], alone.responses[0]);
    let mut listed: Vec<String> = list_games(c).await.into_iter().map(|g| g.game_id).collect();
    let mut ids: Vec<String> = round
        .responses
        .iter()
        .map(|r| r.game.as_ref().unwrap().game_id.clone())
        .chain([taken.game.unwrap().game_id])
        .collect();
    listed.sort();
    ids.sort();
    assert_eq!(listed, ids);
    // One call sent four times at once, twice with its requests in the
    // other order: one creates the games, every call answers with them
    // (and none waits on another in a cycle: a deadlock on PostgreSQL).
    let batch = pb::CreateGamesRequest {
        requests: (20..28).map(item).collect(),
        clocks_start_at: None,
    };
    let calls = (0..4).map(|n| {
        let mut c = c.clone();
        let mut batch = batch.clone();
        if n % 2 == 1 {
            batch.requests.reverse();
        }
        async move {
            let mut answer = c.create_games(batch).await.map(tonic::Response::into_inner);
            if n % 2 == 1
                && let Ok(answer) = answer.as_mut()
            {
                answer.responses.reverse();
            }
            answer
        }
    });
    let answers = futures_util::future::join_all(calls).await;
    let first = answers[0].as_ref().expect("created").clone();
    for answer in &answers {
        assert_eq!(answer.as_ref().expect("created"), &first);
    }
    assert_eq!(list_games(c).await.len(), ids.len() + 8);
}
