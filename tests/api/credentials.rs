use plylog::api::auth::AccessSettings;
use plylog::proto as pb;
use tonic::Code;

use plylog_testkit::*;

fn with_seat_tokens() -> AccessSettings {
    AccessSettings {
        seat_tokens: true,
        ..AccessSettings::default()
    }
}

/// Seat tokens, and an API key for CreateGame and ReissueSeatToken.
fn with_api_key() -> AccessSettings {
    AccessSettings {
        seat_tokens: true,
        api_key: Some("op-key".into()),
        seat_token_secret_file: None,
    }
}

fn reissue(game_id: &str, seat: u32, request_id: &str) -> pb::ReissueSeatTokenRequest {
    pb::ReissueSeatTokenRequest {
        game_id: game_id.into(),
        seat: Some(seat),
        request_id: request_id.into(),
    }
}

fn undo(game_id: &str, seat: Option<u32>) -> pb::UndoRequest {
    pb::UndoRequest {
        game_id: game_id.into(),
        seat,
        ..Default::default()
    }
}

#[tokio::test]
async fn moves_need_the_seats_own_token_and_a_refused_one_appends_nothing() {
    let mut server = TestServer::start_secured(settings(), with_seat_tokens()).await;
    let c = &mut server.client;
    let request = pb::CreateGameRequest {
        request_id: "create-tokens".into(),
        ..create_request("sec", mnk(3, 3, 3))
    };
    let created = c.create_game(request.clone()).await.unwrap().into_inner();
    let tokens = created.seat_tokens.clone();
    assert_eq!(tokens.len(), 2);
    assert_ne!(tokens[0], tokens[1]);
    // A retry (its first reply lost) gets the same game and the same tokens.
    let retried = c.create_game(request).await.unwrap().into_inner();
    assert_eq!(retried, created);

    let x = move_request("sec", 0, place(0, 0));
    assert_rejected(
        c.submit_move(x.clone()).await,
        Code::Unauthenticated,
        "SEAT_TOKEN_REQUIRED",
    );
    for wrong in [tokens[1].as_str(), "plylog_seat_00", ""] {
        assert_rejected(
            c.submit_move(bearer(x.clone(), wrong)).await,
            Code::PermissionDenied,
            "SEAT_TOKEN_INVALID",
        );
    }
    let mut basic = tonic::Request::new(x.clone());
    basic.metadata_mut().insert(
        "authorization",
        format!("Basic {}", tokens[0]).parse().unwrap(),
    );
    assert_rejected(
        c.submit_move(basic).await,
        Code::PermissionDenied,
        "SEAT_TOKEN_INVALID",
    );
    assert_eq!(get_game(c, "sec").await.last_sequence, 1);
    c.submit_move(bearer(x, &tokens[0])).await.unwrap();
    let o = move_request("sec", 1, place(1, 1));
    c.submit_move(bearer(o, &tokens[1])).await.unwrap();

    // Undo: the token says who asks; a stated seat must match it.
    assert_rejected(
        c.undo(undo("sec", Some(1))).await,
        Code::Unauthenticated,
        "SEAT_TOKEN_REQUIRED",
    );
    assert_rejected(
        c.undo(bearer(undo("sec", Some(1)), &tokens[0])).await,
        Code::PermissionDenied,
        "SEAT_TOKEN_INVALID",
    );
    assert_rejected(
        c.undo(bearer(undo("sec", None), &tokens[0])).await,
        Code::FailedPrecondition,
        "NOT_LAST_MOVER",
    );
    // A seat not at the table is refused as such, whatever the token.
    let status = assert_rejected(
        c.submit_move(bearer(move_request("sec", 5, place(2, 2)), &tokens[0]))
            .await,
        Code::InvalidArgument,
        "INVALID_REQUEST",
    );
    assert_eq!(bad_field(&status).as_deref(), Some("seat"));
    // Naming the seat the token is for is fine.
    let reply = c
        .undo(bearer(undo("sec", Some(1)), &tokens[1]))
        .await
        .unwrap()
        .into_inner();
    let Some(pb::game_event::Kind::MoveUndone(undone)) = &reply.events[0].kind else {
        panic!("a MoveUndone")
    };
    assert_eq!(undone.requested_by, Some(1));

    // Reading needs no token.
    let game = get_game(c, "sec").await;
    assert_eq!(game.last_sequence, 4);
    c.get_replay(pb::GetReplayRequest {
        game_id: "sec".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    // Four events, then the caught-up marker.
    assert_eq!(read_stream(c, "sec", 1).await.len(), 5);

    // The database holds hashes only: no token appears in its files (on
    // SQLite, where the files are at hand).
    let server = server.restart().await;
    if let Some(file) = &server.db.file {
        let mut files = Vec::new();
        for entry in std::fs::read_dir(file.parent().unwrap()).unwrap() {
            files.extend(std::fs::read(entry.unwrap().path()).unwrap());
        }
        for token in &tokens {
            let needle = token.as_bytes();
            assert!(!files.windows(needle.len()).any(|w| w == needle));
        }
    }
    // The tokens still hold after a restart, even on a server that no
    // longer issues them.
    let mut c = server.client.clone();
    assert_rejected(
        c.submit_move(move_request("sec", 1, place(2, 2))).await,
        Code::Unauthenticated,
        "SEAT_TOKEN_REQUIRED",
    );
    c.submit_move(bearer(move_request("sec", 1, place(2, 2)), &tokens[1]))
        .await
        .unwrap();
}

/// The seat a call acts for is one rule for every such call: with seat
/// tokens the token names it and `seat` may be left out; without them
/// `seat` is required (the unit-level test is moves.rs's refusals).
#[tokio::test]
async fn a_move_without_a_seat_is_played_for_the_seat_its_token_names() {
    let mut server = TestServer::start_secured(settings(), with_seat_tokens()).await;
    let c = &mut server.client;
    let created = c
        .create_game(create_request("unnamed", mnk(3, 3, 3)))
        .await
        .unwrap()
        .into_inner();
    let tokens = created.seat_tokens;
    let unnamed = |row, col| pb::SubmitMoveRequest {
        seat: None,
        ..move_request("unnamed", 0, place(row, col))
    };
    assert_rejected(
        c.submit_move(unnamed(0, 0)).await,
        Code::Unauthenticated,
        "SEAT_TOKEN_REQUIRED",
    );
    // Seat 1's token out of turn: the move is seat 1's, not to move.
    assert_rejected(
        c.submit_move(bearer(unnamed(0, 0), &tokens[1])).await,
        Code::FailedPrecondition,
        "NOT_YOUR_TURN",
    );
    let reply = c
        .submit_move(bearer(unnamed(0, 0), &tokens[0]))
        .await
        .unwrap()
        .into_inner();
    let Some(pb::game_event::Kind::MovePlayed(played)) = &reply.events[0].kind else {
        panic!("a MovePlayed")
    };
    assert_eq!(played.seat, 0);
    c.submit_move(bearer(unnamed(1, 1), &tokens[1]))
        .await
        .unwrap();
    // Naming another seat than the token's is still refused.
    assert_rejected(
        c.submit_move(bearer(move_request("unnamed", 1, place(2, 2)), &tokens[0]))
            .await,
        Code::PermissionDenied,
        "SEAT_TOKEN_INVALID",
    );
    assert_eq!(get_game(c, "unnamed").await.last_sequence, 3);
}

#[tokio::test]
async fn with_an_api_key_only_its_holder_creates_games() {
    let access = AccessSettings {
        seat_tokens: false,
        api_key: Some("s3cret-key".into()),
        seat_token_secret_file: None,
    };
    let mut server = TestServer::start_secured(settings(), access).await;
    let c = &mut server.client;
    let request = create_request("keyed", mnk(3, 3, 3));
    assert_rejected(
        c.create_game(request.clone()).await,
        Code::Unauthenticated,
        "API_KEY_REQUIRED",
    );
    assert_rejected(
        c.create_game(bearer(request.clone(), "guess")).await,
        Code::PermissionDenied,
        "API_KEY_INVALID",
    );
    let created = c
        .create_game(bearer(request, "s3cret-key"))
        .await
        .unwrap()
        .into_inner();
    assert!(created.seat_tokens.is_empty());
    // Moves of a game without seat tokens need neither.
    play(c, "keyed", 0, place(0, 0)).await.unwrap();
}

#[tokio::test]
async fn a_request_id_reused_with_another_seats_token_is_not_a_retry() {
    let mut server = TestServer::start_secured(settings(), with_seat_tokens()).await;
    let c = &mut server.client;
    let created = c
        .create_game(pb::CreateGameRequest {
            undo_policy: pb::UndoPolicy::AnySeat as i32,
            ..create_request("reuse", mnk(3, 3, 3))
        })
        .await
        .unwrap()
        .into_inner();
    let tokens = created.seat_tokens;
    for (seat, cell) in [(0, (0, 0)), (1, (1, 1))] {
        let mv = move_request("reuse", seat, place(cell.0, cell.1));
        c.submit_move(bearer(mv, &tokens[seat as usize]))
            .await
            .unwrap();
    }
    let request = pb::UndoRequest {
        request_id: "undo-once".into(),
        ..undo("reuse", None)
    };
    let first = c
        .undo(bearer(request.clone(), &tokens[1]))
        .await
        .unwrap()
        .into_inner();
    // The same seat retrying gets the same reply; the other seat is refused.
    let again = c
        .undo(bearer(request.clone(), &tokens[1]))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(first, again);
    assert_rejected(
        c.undo(bearer(request, &tokens[0])).await,
        Code::AlreadyExists,
        "REQUEST_ID_REUSED",
    );
}

#[tokio::test]
async fn a_create_retried_after_a_restart_returns_tokens_that_move() {
    let mut server = TestServer::start_secured(settings(), with_seat_tokens()).await;
    let request = pb::CreateGameRequest {
        request_id: "create-orphan".into(),
        ..create_request("orphan", mnk(3, 3, 3))
    };
    // The reply of this call is lost with the server; only a retry tells.
    let lost = server.client.create_game(request.clone()).await.unwrap();
    let server = server.restart_secured(with_seat_tokens()).await;
    if let Some(file) = &server.db.file {
        // With SQLite the secret lives beside the database file.
        let secret = format!("{}.seat-token-secret", file.display());
        assert!(std::path::Path::new(&secret).exists(), "{secret}");
    }
    let mut c = server.client.clone();
    let retried = c.create_game(request).await.unwrap().into_inner();
    assert_eq!(retried.seat_tokens, lost.into_inner().seat_tokens);
    for (seat, cell) in [(0, (0, 0)), (1, (1, 1))] {
        let mv = move_request("orphan", seat, place(cell.0, cell.1));
        c.submit_move(bearer(mv, &retried.seat_tokens[seat as usize]))
            .await
            .expect("a token from the retried CreateGame moves");
    }
}

#[tokio::test]
async fn an_operator_reissues_a_seat_token_with_the_api_key_and_the_old_one_stops_working() {
    let mut server = TestServer::start_secured(settings(), with_api_key()).await;
    let c = &mut server.client;
    let create = pb::CreateGameRequest {
        request_id: "create-lost".into(),
        ..create_request("lost", mnk(3, 3, 3))
    };
    let tokens = c
        .create_game(bearer(create.clone(), "op-key"))
        .await
        .unwrap()
        .into_inner()
        .seat_tokens;
    assert_rejected(
        c.reissue_seat_token(reissue("lost", 0, "r1")).await,
        Code::Unauthenticated,
        "API_KEY_REQUIRED",
    );
    assert_rejected(
        c.reissue_seat_token(bearer(reissue("lost", 0, "r1"), &tokens[0]))
            .await,
        Code::PermissionDenied,
        "API_KEY_INVALID",
    );
    let reply = c
        .reissue_seat_token(bearer(reissue("lost", 0, "r1"), "op-key"))
        .await
        .unwrap()
        .into_inner();
    let fresh = reply.seat_token.clone();
    assert!(fresh.starts_with("plylog_seat_") && fresh != tokens[0]);
    let [event] = reply.events.as_slice() else {
        panic!("one event")
    };
    assert_eq!(
        (event.sequence, &event.kind),
        (
            2,
            &Some(pb::game_event::Kind::SeatTokenReissued(
                pb::SeatTokenReissued { seat: 0 }
            ))
        )
    );
    // A retry returns the same new token, not a third one.
    let again = c
        .reissue_seat_token(bearer(reissue("lost", 0, "r1"), "op-key"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(again, reply);
    // The old token is refused, the new one plays; seat 1's is untouched.
    assert_rejected(
        c.submit_move(bearer(move_request("lost", 0, place(0, 0)), &tokens[0]))
            .await,
        Code::PermissionDenied,
        "SEAT_TOKEN_INVALID",
    );
    c.submit_move(bearer(move_request("lost", 0, place(0, 0)), &fresh))
        .await
        .unwrap();
    c.submit_move(bearer(move_request("lost", 1, place(1, 1)), &tokens[1]))
        .await
        .unwrap();
    // The log has the event but not the token.
    let replay = c
        .get_replay(pb::GetReplayRequest {
            game_id: "lost".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let encoded = prost::Message::encode_to_vec(&replay);
    assert!(!encoded.windows(fresh.len()).any(|w| w == fresh.as_bytes()));
    // After a restart (on every node: the hash is in the store) the new
    // token still plays, and a retried CreateGame gets seat 1's token but
    // none for seat 0, whose creation token is void.
    let server = server.restart_secured(with_api_key()).await;
    let mut c = server.client.clone();
    c.submit_move(bearer(move_request("lost", 0, place(2, 2)), &fresh))
        .await
        .unwrap();
    let retried = c
        .create_game(bearer(create, "op-key"))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(retried.seat_tokens, vec![String::new(), tokens[1].clone()]);
}

#[tokio::test]
async fn reissuing_needs_an_api_key_on_the_server_and_a_game_with_seat_tokens() {
    let mut server = TestServer::start_secured(settings(), with_seat_tokens()).await;
    let c = &mut server.client;
    create(c, "open", mnk(3, 3, 3)).await;
    let status = assert_rejected(
        c.reissue_seat_token(bearer(reissue("open", 0, ""), "anything"))
            .await,
        Code::FailedPrecondition,
        "API_KEY_NOT_CONFIGURED",
    );
    assert!(status.message().contains("--api-key"), "{status:?}");
    let mut server = TestServer::start_secured(
        settings(),
        AccessSettings {
            seat_tokens: false,
            ..with_api_key()
        },
    )
    .await;
    let c = &mut server.client;
    c.create_game(bearer(create_request("tokenless", mnk(3, 3, 3)), "op-key"))
        .await
        .unwrap();
    assert_rejected(
        c.reissue_seat_token(bearer(reissue("tokenless", 0, ""), "op-key"))
            .await,
        Code::FailedPrecondition,
        "NO_SEAT_TOKENS",
    );
    assert_rejected(
        c.reissue_seat_token(bearer(reissue("ghost", 0, ""), "op-key"))
            .await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
}

#[tokio::test]
async fn an_authorization_header_without_bearer_is_refused_saying_what_is_wrong() {
    let mut server = TestServer::start_secured(settings(), with_seat_tokens()).await;
    let c = &mut server.client;
    let tokens = c
        .create_game(create_request("hdr", mnk(3, 3, 3)))
        .await
        .unwrap()
        .into_inner()
        .seat_tokens;
    let mut bare = tonic::Request::new(move_request("hdr", 0, place(0, 0)));
    bare.metadata_mut()
        .insert("authorization", tokens[0].parse().unwrap());
    let status = assert_rejected(
        c.submit_move(bare).await,
        Code::PermissionDenied,
        "SEAT_TOKEN_INVALID",
    );
    assert!(
        status.message().contains("must be \"Bearer <seat token>\"")
            && status.message().contains("add \"Bearer \""),
        "{status:?}"
    );
}
