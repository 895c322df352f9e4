use plylog::proto as pb;
use tonic::Code;

use plylog_testkit::*;

#[tokio::test]
async fn three_in_a_row_wins_with_the_winning_line_and_ends_the_game() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "win", mnk(3, 3, 3)).await;
    // X: (0,0) (0,1) (0,2); O: (1,0) (1,1)
    let reply = play_all(c, "win", &x_wins_top_row()).await;
    let [event] = reply.events.as_slice() else {
        panic!("one event")
    };
    assert_eq!(event.sequence, 6);
    let Some(pb::game_event::Kind::MovePlayed(played)) = &event.kind else {
        panic!("move played")
    };
    assert_eq!((played.seat, played.ply), (0, 5));
    assert_eq!(played.placement, Some(pb::Cell { row: 0, col: 2 }));
    let Some(pb::outcome::Kind::Win(win)) = played.outcome.as_ref().and_then(|o| o.kind.clone())
    else {
        panic!("win")
    };
    assert_eq!(win.seat, 0);
    assert_eq!(
        win.line,
        (0..3)
            .map(|col| pb::Cell { row: 0, col })
            .collect::<Vec<_>>()
    );
    let game = reply.game.unwrap();
    assert_eq!(position(&game).status(), pb::GameStatus::Won);
    assert_eq!(position(&game).seat_to_move, None);
    assert_eq!(board_text(&game), vec!["XXX", "OO.", "..."]);
    assert_rejected(
        play(c, "win", 1, place(2, 2)).await,
        Code::FailedPrecondition,
        "GAME_OVER",
    );
}

#[tokio::test]
async fn a_full_board_without_a_line_is_a_draw() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "draw", mnk(3, 3, 3)).await;
    // X O X / X O O / O X X
    let moves = [
        (0, 0),
        (0, 1),
        (0, 2),
        (1, 1),
        (1, 0),
        (1, 2),
        (2, 1),
        (2, 0),
        (2, 2),
    ]
    .map(|(r, col)| place(r, col));
    let reply = play_all(c, "draw", &moves).await;
    let game = reply.game.unwrap();
    assert_eq!(position(&game).status(), pb::GameStatus::Drawn);
    assert!(matches!(
        position(&game).outcome.as_ref().unwrap().kind,
        Some(pb::outcome::Kind::Draw(_))
    ));
}

#[tokio::test]
async fn every_illegal_move_is_refused_with_its_reason_and_appends_nothing() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "ttt", mnk(3, 3, 3)).await;
    play(c, "ttt", 0, place(1, 1)).await.unwrap();
    let cases = [
        (
            move_request("ttt", 1, place(1, 1)),
            Code::FailedPrecondition,
            "CELL_OCCUPIED",
        ),
        (
            move_request("ttt", 0, place(0, 0)),
            Code::FailedPrecondition,
            "NOT_YOUR_TURN",
        ),
        (
            move_request("ttt", 1, place(3, 0)),
            Code::InvalidArgument,
            "OUT_OF_BOUNDS",
        ),
        (
            move_request("ttt", 1, place(0, -1)),
            Code::InvalidArgument,
            "OUT_OF_BOUNDS",
        ),
        (
            move_request("ttt", 1, drop_in(0)),
            Code::InvalidArgument,
            "WRONG_MOVE_KIND",
        ),
        (
            move_request("ttt", 7, place(0, 0)),
            Code::InvalidArgument,
            "INVALID_REQUEST",
        ),
        (
            pb::SubmitMoveRequest {
                seat: None,
                ..move_request("ttt", 1, place(0, 0))
            },
            Code::InvalidArgument,
            "INVALID_REQUEST",
        ),
        (
            pb::SubmitMoveRequest {
                r#move: None,
                ..move_request("ttt", 1, place(0, 0))
            },
            Code::InvalidArgument,
            "INVALID_REQUEST",
        ),
        (
            move_request("", 1, place(0, 0)),
            Code::InvalidArgument,
            "INVALID_REQUEST",
        ),
        (
            move_request("nope", 1, place(0, 0)),
            Code::NotFound,
            "GAME_NOT_FOUND",
        ),
    ];
    for (request, code, expected) in cases {
        assert_rejected(c.submit_move(request).await, code, expected);
    }
    let status = c
        .submit_move(move_request("ttt", 0, place(0, 0)))
        .await
        .unwrap_err();
    assert_eq!(metadata(&status, "seat_to_move").as_deref(), Some("1"));
    // Off the board is refused as such even when it is not the seat's turn.
    let status = assert_rejected(
        c.submit_move(move_request("ttt", 0, place(3, 0))).await,
        Code::InvalidArgument,
        "OUT_OF_BOUNDS",
    );
    assert_eq!(bad_field(&status).as_deref(), Some("move.place"));
    let status = c
        .submit_move(move_request("ttt", 1, place(1, 1)))
        .await
        .unwrap_err();
    assert_eq!(status.message(), "cell (1, 1) is occupied");
    let game = get_game(c, "ttt").await;
    assert_eq!(
        (game.last_sequence, position(&game).seat_to_move),
        (2, Some(1))
    );
}

#[tokio::test]
async fn connect_four_discs_fall_and_a_full_column_is_refused() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "c4", connect_four()).await;
    let first = play(c, "c4", 0, drop_in(3)).await.unwrap();
    let Some(pb::game_event::Kind::MovePlayed(played)) = &first.events[0].kind else {
        panic!()
    };
    assert_eq!(played.placement, Some(pb::Cell { row: 5, col: 3 }));
    for i in 1..6 {
        play(c, "c4", i % 2, drop_in(3)).await.unwrap();
    }
    assert_rejected(
        play(c, "c4", 0, drop_in(3)).await,
        Code::FailedPrecondition,
        "COLUMN_FULL",
    );
    assert_rejected(
        play(c, "c4", 0, drop_in(7)).await,
        Code::InvalidArgument,
        "OUT_OF_BOUNDS",
    );
    assert_rejected(
        play(c, "c4", 0, drop_in(-1)).await,
        Code::InvalidArgument,
        "OUT_OF_BOUNDS",
    );
    assert_rejected(
        play(c, "c4", 0, place(0, 0)).await,
        Code::InvalidArgument,
        "WRONG_MOVE_KIND",
    );
    let legal = c
        .list_legal_moves(pb::ListLegalMovesRequest {
            game_id: "c4".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(legal.total, 6);
    assert!(!legal.moves.contains(&drop_in(3)));
    assert_eq!(legal.seat_to_move, Some(0));
}

#[tokio::test]
async fn a_turn_token_ahead_of_the_log_is_aborted_like_a_stale_one() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "ahead", mnk(3, 3, 3)).await;
    for ahead in [2, 3, 100, u64::MAX] {
        let request = pb::SubmitMoveRequest {
            expected_sequence: Some(ahead),
            ..move_request("ahead", 0, place(0, 0))
        };
        let status = assert_rejected(
            c.submit_move(request).await,
            Code::Aborted,
            "SEQUENCE_MISMATCH",
        );
        assert_eq!(metadata(&status, "current_sequence").as_deref(), Some("1"));
    }
    assert_eq!(get_game(c, "ahead").await.last_sequence, 1);
}

#[tokio::test]
async fn a_retry_is_answered_from_its_record_whatever_turn_token_it_carries() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "again", mnk(3, 3, 3)).await;
    let request = pb::SubmitMoveRequest {
        request_id: "m-once".into(),
        expected_sequence: Some(1),
        ..move_request("again", 0, place(0, 0))
    };
    let original = c.submit_move(request.clone()).await.unwrap().into_inner();
    play(c, "again", 1, place(1, 1)).await.unwrap();
    // The turn token is checked when a request is first decided; a retry of
    // a recorded request gets the original reply with any token or none.
    for token in [Some(1), Some(2), Some(3), Some(99), None] {
        let retry = pb::SubmitMoveRequest {
            expected_sequence: token,
            ..request.clone()
        };
        assert_eq!(c.submit_move(retry).await.unwrap().into_inner(), original);
    }
    assert_eq!(get_game(c, "again").await.last_sequence, 3);
}

#[tokio::test]
async fn a_stale_expected_sequence_is_aborted_with_the_current_one() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "tok", mnk(3, 3, 3)).await;
    let ok = pb::SubmitMoveRequest {
        expected_sequence: Some(1),
        ..move_request("tok", 0, place(0, 0))
    };
    c.submit_move(ok).await.unwrap();
    let stale = pb::SubmitMoveRequest {
        expected_sequence: Some(1),
        ..move_request("tok", 1, place(1, 1))
    };
    let status = assert_rejected(
        c.submit_move(stale).await,
        Code::Aborted,
        "SEQUENCE_MISMATCH",
    );
    assert_eq!(metadata(&status, "current_sequence").as_deref(), Some("2"));
    assert_eq!(get_game(c, "tok").await.last_sequence, 2);
}

#[tokio::test]
async fn a_retried_move_returns_the_original_reply_and_a_reused_request_id_is_refused() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "idem", mnk(3, 3, 3)).await;
    let request = pb::SubmitMoveRequest {
        request_id: "m-1".into(),
        ..move_request("idem", 0, place(0, 0))
    };
    let first = c.submit_move(request.clone()).await.unwrap().into_inner();
    play(c, "idem", 1, place(1, 1)).await.unwrap();
    // The retry comes after another move: still the original reply.
    let retry = c.submit_move(request.clone()).await.unwrap().into_inner();
    assert_eq!(retry, first);
    let other = pb::SubmitMoveRequest {
        r#move: Some(place(2, 2)),
        ..request
    };
    assert_rejected(
        c.submit_move(other).await,
        Code::AlreadyExists,
        "REQUEST_ID_REUSED",
    );
    assert_eq!(get_game(c, "idem").await.last_sequence, 3);
}

#[tokio::test]
async fn legal_moves_are_listed_row_major_a_page_at_a_time_and_none_once_over() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "lm", mnk(3, 3, 3)).await;
    play(c, "lm", 0, place(0, 1)).await.unwrap();
    let mut moves = Vec::new();
    let mut token = String::new();
    let mut pages = Vec::new();
    loop {
        let page = c
            .list_legal_moves(pb::ListLegalMovesRequest {
                game_id: "lm".into(),
                page_size: 3,
                page_token: token,
            })
            .await
            .unwrap()
            .into_inner();
        assert_eq!(
            (page.total, page.sequence, page.seat_to_move),
            (8, 2, Some(1))
        );
        pages.push(page.moves.len());
        moves.extend(page.moves);
        if page.next_page_token.is_empty() {
            break;
        }
        // Eight moves make three pages: a token that pages back fails
        // here instead of looping.
        assert!(pages.len() < 3, "pages {pages:?} and still a token");
        token = page.next_page_token;
    }
    // The last page says it is the last: no token to an empty page.
    assert_eq!(pages, [3, 3, 2]);
    let expected: Vec<_> = (0..9)
        .filter(|i| *i != 1)
        .map(|i| place(i / 3, i % 3))
        .collect();
    assert_eq!(moves, expected);
    // A page token from before a move is refused, not silently shifted.
    let first = c
        .list_legal_moves(pb::ListLegalMovesRequest {
            game_id: "lm".into(),
            page_size: 3,
            page_token: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    for (seat, mv) in [
        (1, place(1, 0)),
        (0, place(0, 0)),
        (1, place(1, 1)),
        (0, place(0, 2)),
    ] {
        play(c, "lm", seat, mv).await.unwrap();
    }
    let stale = c
        .list_legal_moves(pb::ListLegalMovesRequest {
            game_id: "lm".into(),
            page_size: 3,
            page_token: first.next_page_token,
        })
        .await;
    let status = assert_rejected(stale, Code::Aborted, "SEQUENCE_MISMATCH");
    assert_eq!(metadata(&status, "current_sequence").as_deref(), Some("6"));
    let over = c
        .list_legal_moves(pb::ListLegalMovesRequest {
            game_id: "lm".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        (over.total, over.moves.len(), over.seat_to_move),
        (0, 0, None)
    );
    assert_rejected(
        c.list_legal_moves(pb::ListLegalMovesRequest {
            game_id: "none".into(),
            ..Default::default()
        })
        .await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
}

#[tokio::test]
async fn in_wild_tic_tac_toe_completing_the_other_seats_line_wins_for_the_mover() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let wild = pb::RuleSet {
        kind: Some(pb::rule_set::Kind::Wild(pb::WildRules::default())),
    };
    create(c, "wild", wild.clone()).await;
    // X puts an O in the corner, O answers with an O, X plays an X; then O
    // completes the diagonal of O marks and wins.
    play_all(
        c,
        "wild",
        &[
            place_mark(0, 0, 1),
            place_mark(2, 2, 1),
            place_mark(1, 0, 0),
        ],
    )
    .await;
    let won = play(c, "wild", 1, place_mark(1, 1, 1))
        .await
        .unwrap()
        .game
        .unwrap();
    let Some(pb::outcome::Kind::Win(win)) = position(&won).outcome.clone().unwrap().kind else {
        panic!("a win")
    };
    assert_eq!(win.seat, 1);
    assert_eq!(board_text(&won), vec!["O..", "XO.", "..O"]);
    // A wild move needs its mark; a third mark is refused.
    create(c, "wild-2", wild.clone()).await;
    assert_rejected(
        play(c, "wild-2", 0, place(0, 0)).await,
        Code::InvalidArgument,
        "WRONG_MOVE_KIND",
    );
    let status = assert_rejected(
        play(c, "wild-2", 0, place_mark(0, 0, 2)).await,
        Code::InvalidArgument,
        "INVALID_REQUEST",
    );
    assert_eq!(bad_field(&status).as_deref(), Some("move.place.mark"));
    // Wild games seat exactly two; other games refuse a mark.
    let three = pb::CreateGameRequest {
        seats: vec![seat("a", "X"), seat("b", "O"), seat("c", "Z")],
        ..create_request("wild-3", wild)
    };
    assert_rejected(
        c.create_game(three).await,
        Code::InvalidArgument,
        "INVALID_SEATS",
    );
    create(c, "plain", mnk(3, 3, 3)).await;
    let status = assert_rejected(
        play(c, "plain", 0, place_mark(0, 0, 0)).await,
        Code::InvalidArgument,
        "INVALID_REQUEST",
    );
    assert_eq!(bad_field(&status).as_deref(), Some("move.place.mark"));
    assert!(
        status.message().contains("only allowed in wild games"),
        "{}",
        status.message()
    );
}

#[tokio::test]
async fn othello_opens_with_four_moves_flips_discs_and_refuses_a_move_that_flips_nothing() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let othello = pb::RuleSet {
        kind: Some(pb::rule_set::Kind::Othello(pb::OthelloRules::default())),
    };
    let game = create(c, "oth", othello).await;
    assert_eq!(board_text(&game)[3..5], ["...OX...", "...XO..."]);
    let legal = c
        .list_legal_moves(pb::ListLegalMovesRequest {
            game_id: "oth".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        legal.moves,
        [place(2, 3), place(3, 2), place(4, 5), place(5, 4)]
    );
    let status = assert_rejected(
        play(c, "oth", 0, place(0, 0)).await,
        Code::FailedPrecondition,
        "NO_FLIP",
    );
    assert_eq!(status.message(), "a disc on (0, 0) would flip nothing");
    let reply = play(c, "oth", 0, place(2, 3)).await.unwrap();
    let Some(pb::game_event::Kind::MovePlayed(played)) = &reply.events[0].kind else {
        panic!("a move")
    };
    assert_eq!(played.flipped, [pb::Cell { row: 3, col: 3 }]);
    assert_eq!(
        board_text(&reply.game.unwrap())[2..5],
        ["...X....", "...XX...", "...XO..."]
    );
}

#[tokio::test]
async fn in_pop_out_a_player_pops_their_own_bottom_disc_and_the_column_falls() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let pop_out = pb::RuleSet {
        kind: Some(pb::rule_set::Kind::ConnectFour(pb::ConnectFourRules {
            pop_out: true,
            ..Default::default()
        })),
    };
    create(c, "pop", pop_out).await;
    play_all(c, "pop", &[drop_in(0), drop_in(0)]).await;
    let pop = |column| pb::Move {
        kind: Some(pb::r#move::Kind::Pop(pb::Pop { column })),
    };
    assert_rejected(
        play(c, "pop", 0, pop(1)).await,
        Code::FailedPrecondition,
        "COLUMN_EMPTY",
    );
    play(c, "pop", 0, drop_in(3)).await.unwrap();
    assert_rejected(
        play(c, "pop", 1, pop(3)).await,
        Code::FailedPrecondition,
        "NOT_YOUR_DISC",
    );
    let reply = play(c, "pop", 1, pop(0)).await;
    assert_rejected(reply, Code::FailedPrecondition, "NOT_YOUR_DISC");
    play(c, "pop", 1, drop_in(6)).await.unwrap();
    let game = play(c, "pop", 0, pop(0)).await.unwrap().game.unwrap();
    // Seat 1's disc fell from row 4 to the bottom of column 0.
    assert_eq!(board_text(&game)[4..6], [".......", "O..X..O"]);
    // Plain Connect Four refuses pops.
    create(c, "plain-c4", connect_four()).await;
    assert_rejected(
        play(c, "plain-c4", 0, pop(0)).await,
        Code::InvalidArgument,
        "WRONG_MOVE_KIND",
    );
}

#[tokio::test]
async fn on_a_pop_out_board_too_big_to_scan_the_pieces_shown_follow_the_pops() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let big = pb::RuleSet {
        kind: Some(pb::rule_set::Kind::ConnectFour(pb::ConnectFourRules {
            rows: Some(100),
            cols: Some(100),
            pop_out: true,
            ..Default::default()
        })),
    };
    create(c, "big-pop", big).await;
    play_all(c, "big-pop", &[drop_in(0), drop_in(0)]).await;
    let pop = pb::Move {
        kind: Some(pb::r#move::Kind::Pop(pb::Pop { column: 0 })),
    };
    let reply = play(c, "big-pop", 0, pop).await.unwrap();
    let expected = vec![pb::Piece {
        row: 99,
        col: 0,
        seat: 1,
    }];
    let board = |game: &pb::Game| position(game).board.clone().unwrap().pieces;
    assert_eq!(board(&reply.game.unwrap()), expected);
    assert_eq!(board(&get_game(c, "big-pop").await), expected);
}

#[tokio::test]
async fn an_othello_pass_is_appended_right_after_the_move_that_causes_it() {
    // The first OpenSpiel Othello trace with a pass (tests/fixtures/openspiel).
    let fixture = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/openspiel/othello_8x8.jsonl"
    ))
    .unwrap();
    let trace: serde_json::Value = fixture
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .find(|t| t["moves"].as_array().unwrap().iter().any(|m| m == "pass"))
        .expect("a trace with a pass");
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(
        c,
        "pass",
        pb::RuleSet {
            kind: Some(pb::rule_set::Kind::Othello(pb::OthelloRules { size: None })),
        },
    )
    .await;
    let moves = trace["moves"].as_array().unwrap();
    let mut sequence = 1;
    let mut passes = 0;
    for (ply, mv) in moves.iter().enumerate() {
        if mv == "pass" {
            continue;
        }
        let seat = get_game(c, "pass")
            .await
            .position
            .unwrap()
            .seat_to_move
            .unwrap();
        let (row, col) = (
            mv[0].as_i64().unwrap() as i32,
            mv[1].as_i64().unwrap() as i32,
        );
        let reply = play(c, "pass", seat, place(row, col)).await.unwrap();
        let sequences: Vec<u64> = reply.events.iter().map(|e| e.sequence).collect();
        let passed = moves.get(ply + 1).is_some_and(|next| next == "pass");
        // The move, then the pass it forces, at the next sequences.
        let expected: Vec<u64> = (sequence + 1..=sequence + 1 + u64::from(passed)).collect();
        assert_eq!(sequences, expected, "ply {ply}");
        if passed {
            assert!(matches!(
                reply.events[1].kind,
                Some(pb::game_event::Kind::TurnPassed(_))
            ));
            passes += 1;
        }
        sequence = *sequences.last().unwrap();
    }
    assert!(passes > 0);
    let game = get_game(c, "pass").await;
    assert_eq!(game.last_sequence, sequence);
}

/// Hex on a `size` x `size` board with the swap rule.
fn hex_with_swap(size: i32) -> pb::RuleSet {
    pb::RuleSet {
        kind: Some(pb::rule_set::Kind::Hex(pb::HexRules {
            size: Some(size),
            swap: true,
        })),
    }
}

/// Hex's swap move.
fn swap() -> pb::Move {
    pb::Move {
        kind: Some(pb::r#move::Kind::Swap(pb::Swap {})),
    }
}

#[tokio::test]
async fn hex_swaps_once_wins_by_connection_and_undoes_the_swap() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let hex = hex_with_swap(3);
    create(c, "hex", hex).await;
    let swap = swap();
    play(c, "hex", 0, place(0, 1)).await.unwrap();
    let reply = play(c, "hex", 1, swap.clone()).await.unwrap();
    let Some(pb::game_event::Kind::MovePlayed(played)) = &reply.events[0].kind else {
        panic!("a move")
    };
    assert_eq!(
        (played.r#move.clone(), played.placement),
        (Some(swap.clone()), Some(pb::Cell { row: 1, col: 0 }))
    );
    assert_eq!(board_text(&reply.game.unwrap()), ["...", "O..", "..."]);
    // Seat 0 moves next; nobody may swap again.
    assert_rejected(
        play(c, "hex", 0, swap).await,
        Code::FailedPrecondition,
        "SWAP_NOT_ALLOWED",
    );
    // Seat 0 joins top to bottom along (0,2), (1,1), (2,0).
    let moves = [
        place(0, 2),
        place(0, 0),
        place(1, 1),
        place(2, 2),
        place(2, 0),
    ];
    let reply = play_all(c, "hex", &moves).await;
    let Some(pb::game_event::Kind::MovePlayed(won)) = &reply.events[0].kind else {
        panic!("a move")
    };
    let outcome = won.outcome.clone().and_then(|o| o.kind);
    assert!(
        matches!(outcome, Some(pb::outcome::Kind::Win(ref w)) if w.seat == 0),
        "{outcome:?}"
    );
    // Undo everything back to the swap, then the swap itself.
    for seat in [0, 1, 0, 1, 0, 1] {
        c.undo(pb::UndoRequest {
            game_id: "hex".into(),
            seat: Some(seat),
            ..Default::default()
        })
        .await
        .unwrap();
    }
    let game = get_game(c, "hex").await;
    assert_eq!(board_text(&game), [".X.", "...", "..."]);
    assert_eq!(position(&game).seat_to_move, Some(1));
}

#[tokio::test]
async fn on_a_hex_board_too_big_to_scan_a_swap_shows_one_stone() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let hex = hex_with_swap(70);
    create(c, "big-hex", hex).await;
    let swap = swap();
    play_all(c, "big-hex", &[place(3, 9), swap]).await;
    let game = get_game(c, "big-hex").await;
    let board = position(&game).board.clone().unwrap();
    assert_eq!(
        board.pieces,
        [pb::Piece {
            row: 9,
            col: 3,
            seat: 1
        }]
    );
}

#[tokio::test]
async fn a_write_replies_with_the_basic_view_unless_the_full_one_is_asked_for() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "views", mnk(3, 3, 3)).await;
    let first = pb::SubmitMoveRequest {
        request_id: "m1".into(),
        view: pb::GameView::Unspecified as i32,
        ..move_request("views", 0, place(1, 1))
    };
    let basic = c.submit_move(first.clone()).await.unwrap().into_inner();
    assert_eq!(basic.events.len(), 1);
    let game = basic.game.expect("a game");
    assert_eq!((game.game_id.as_str(), game.last_sequence), ("views", 2));
    assert!(game.rules.is_none() && game.seats.is_empty() && game.time_control.is_none());
    let position = game.position.expect("a position");
    assert!(position.board.is_none(), "no board in the basic view");
    assert_eq!(
        (position.sequence, position.ply, position.seat_to_move),
        (2, 1, Some(1))
    );
    assert_eq!(position.status(), pb::GameStatus::InProgress);

    // A retry that asks for the full view is still the same request: the
    // recorded move, now with the whole game, as GetGame shows it.
    let full = c
        .submit_move(pb::SubmitMoveRequest {
            view: pb::GameView::Full as i32,
            ..first
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(full.events, basic.events);
    assert_eq!(full.game.expect("a game"), get_game(c, "views").await);

    let undone = c
        .undo(pb::UndoRequest {
            game_id: "views".into(),
            seat: Some(0),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let position = undone.game.and_then(|g| g.position).expect("a position");
    assert!(position.board.is_none());
    assert_eq!((position.sequence, position.ply), (3, 0));

    let unknown = c
        .submit_move(pb::SubmitMoveRequest {
            view: 7,
            ..move_request("views", 0, place(0, 0))
        })
        .await;
    let status = assert_rejected(unknown, Code::InvalidArgument, "INVALID_REQUEST");
    assert_eq!(bad_field(&status).as_deref(), Some("view"));
}

/// A request id is text the store keeps: one with a NUL, which
/// PostgreSQL's text cannot hold (INTERNAL there before), is refused as the
/// caller's error, naming the field, and nothing is written.
#[tokio::test]
async fn a_request_id_with_a_nul_is_refused_naming_the_field() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "keyed", mnk(3, 3, 3)).await;
    for request_id in ["r\u{0}6", "\u{0}", "r6\u{0}"] {
        let refused = c
            .submit_move(pb::SubmitMoveRequest {
                request_id: request_id.into(),
                ..plain_move_request("keyed", 0, place(0, 0))
            })
            .await
            .unwrap_err();
        assert_eq!(
            (refused.code(), bad_field(&refused).as_deref()),
            (tonic::Code::InvalidArgument, Some("request_id")),
            "{request_id:?}: {refused:?}"
        );
    }
    assert_eq!(get_game(c, "keyed").await.last_sequence, 1);
}
