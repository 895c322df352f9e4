use plylog::proto as pb;
use tonic::Code;

use plylog_testkit::*;

fn undo_request(game_id: &str, seat: Option<u32>) -> pb::UndoRequest {
    pb::UndoRequest {
        game_id: game_id.into(),
        seat,
        request_id: String::new(),
        expected_sequence: None,
        view: pb::GameView::Full as i32,
    }
}

#[tokio::test]
async fn undoing_a_winning_move_puts_the_game_back_in_play_as_a_new_event() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "u", mnk(3, 3, 3)).await;
    play_all(c, "u", &x_wins_top_row()).await;
    let reply = c
        .undo(undo_request("u", Some(0)))
        .await
        .unwrap()
        .into_inner();
    let [event] = reply.events.as_slice() else {
        panic!("one event")
    };
    assert_eq!(event.sequence, 7);
    let Some(pb::game_event::Kind::MoveUndone(undone)) = &event.kind else {
        panic!("move undone")
    };
    assert_eq!(
        (undone.seat, undone.undone_sequence, undone.requested_by),
        (0, 6, Some(0))
    );
    assert_eq!(undone.placement, Some(pb::Cell { row: 0, col: 2 }));
    let game = reply.game.unwrap();
    let pos = position(&game);
    assert_eq!(
        (
            pos.status(),
            pos.seat_to_move,
            pos.ply,
            pos.outcome.is_none()
        ),
        (pb::GameStatus::InProgress, Some(0), 4, true)
    );
    assert_eq!(board_text(&game), vec!["XX.", "OO.", "..."]);
    // X may now play elsewhere; O then wins on its row.
    play(c, "u", 0, place(2, 2)).await.unwrap();
    let won = play(c, "u", 1, place(1, 2)).await.unwrap().game.unwrap();
    let Some(pb::outcome::Kind::Win(win)) = position(&won).outcome.clone().unwrap().kind else {
        panic!("win")
    };
    assert_eq!(win.seat, 1);
}

#[tokio::test]
async fn undo_steps_back_through_several_moves_until_nothing_is_left() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "u2", connect_four()).await;
    play_all(c, "u2", &[drop_in(3), drop_in(3)]).await;
    c.undo(undo_request("u2", Some(1))).await.unwrap();
    let game = c
        .undo(undo_request("u2", Some(0)))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    assert_eq!(
        (
            position(&game).ply,
            position(&game).seat_to_move,
            game.last_sequence
        ),
        (0, Some(0), 5)
    );
    assert_rejected(
        c.undo(undo_request("u2", None)).await,
        Code::FailedPrecondition,
        "NOTHING_TO_UNDO",
    );
    assert_rejected(
        c.undo(undo_request("nope", None)).await,
        Code::NotFound,
        "GAME_NOT_FOUND",
    );
    let stale = pb::UndoRequest {
        expected_sequence: Some(2),
        ..undo_request("u2", None)
    };
    assert_rejected(c.undo(stale).await, Code::Aborted, "SEQUENCE_MISMATCH");
    assert_eq!(get_game(c, "u2").await.last_sequence, 5);
}

#[tokio::test]
async fn a_retried_undo_undoes_once() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "u3", mnk(3, 3, 3)).await;
    play_all(c, "u3", &[place(0, 0), place(1, 1)]).await;
    let request = pb::UndoRequest {
        request_id: "undo-1".into(),
        ..undo_request("u3", Some(1))
    };
    let first = c.undo(request.clone()).await.unwrap().into_inner();
    let again = c.undo(request).await.unwrap().into_inner();
    assert_eq!(first, again);
    let game = get_game(c, "u3").await;
    assert_eq!((game.last_sequence, position(&game).ply), (4, 1));
}

#[tokio::test]
async fn the_undo_policy_chosen_at_creation_decides_who_may_undo() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    for (game_id, policy) in [
        ("last", pb::UndoPolicy::Unspecified),
        ("any", pb::UndoPolicy::AnySeat),
        ("none", pb::UndoPolicy::Disabled),
    ] {
        let game = create_from(
            c,
            pb::CreateGameRequest {
                undo_policy: policy as i32,
                ..create_request(game_id, mnk(3, 3, 3))
            },
        )
        .await;
        let shown = if policy == pb::UndoPolicy::Unspecified {
            pb::UndoPolicy::LastMover
        } else {
            policy
        };
        assert_eq!(game.undo_policy(), shown);
        play_all(c, game_id, &[place(0, 0), place(1, 1)]).await;
    }
    // Last mover (the default): only seat 1, which played last, and it must
    // say so.
    for seat in [Some(0), None] {
        let status = assert_rejected(
            c.undo(undo_request("last", seat)).await,
            Code::FailedPrecondition,
            "NOT_LAST_MOVER",
        );
        assert_eq!(metadata(&status, "last_mover").as_deref(), Some("1"));
    }
    c.undo(undo_request("last", Some(1))).await.unwrap();
    // Any seat, even unstated: each takes back the last move on the board.
    let first = c
        .undo(undo_request("any", Some(0)))
        .await
        .unwrap()
        .into_inner();
    let second = c
        .undo(undo_request("any", None))
        .await
        .unwrap()
        .into_inner();
    let undone = |reply: &pb::UndoResponse| match &reply.events[0].kind {
        Some(pb::game_event::Kind::MoveUndone(u)) => (u.seat, u.undone_sequence, u.requested_by),
        other => panic!("a MoveUndone, not {other:?}"),
    };
    assert_eq!(
        (undone(&first), undone(&second)),
        ((1, 3, Some(0)), (0, 2, None))
    );
    assert_eq!(position(&second.game.unwrap()).ply, 0);
    // Disabled: refused whoever asks, named or not; nothing appended.
    for seat in [Some(1), Some(0), None] {
        assert_rejected(
            c.undo(undo_request("none", seat)).await,
            Code::FailedPrecondition,
            "UNDO_DISABLED",
        );
    }
    assert_eq!(get_game(c, "none").await.last_sequence, 3);
    assert_rejected(
        c.create_game(pb::CreateGameRequest {
            undo_policy: 9,
            ..create_request("bad-policy", mnk(3, 3, 3))
        })
        .await,
        Code::InvalidArgument,
        "INVALID_REQUEST",
    );
}

/// A snakes-and-ladders game with an extra roll on a six.
fn snakes_with_extra_turns(seed: u64) -> pb::RuleSet {
    pb::RuleSet {
        kind: Some(pb::rule_set::Kind::SnakesLadders(pb::SnakesLaddersRules {
            extra_turn_on_six: true,
            seed: Some(seed),
            ..Default::default()
        })),
    }
}

#[tokio::test]
async fn the_last_mover_is_the_seat_that_played_last_even_when_it_is_to_move_again() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let roll = pb::Move {
        kind: Some(pb::r#move::Kind::Roll(pb::RollDice {})),
    };
    // The first fixed seed whose first roll is a six: seat 0 rolls again,
    // so the seat before the one to move (seat 1) is not the last mover.
    let mut found = None;
    for seed in 0..200 {
        let game_id = format!("six-{seed}");
        create(c, &game_id, snakes_with_extra_turns(seed)).await;
        let reply = play(c, &game_id, 0, roll.clone()).await.unwrap();
        if position(reply.game.as_ref().unwrap()).seat_to_move == Some(0) {
            found = Some(game_id);
            break;
        }
    }
    let game_id = found.expect("a six within 200 seeds");
    let status = assert_rejected(
        c.undo(undo_request(&game_id, Some(1))).await,
        Code::FailedPrecondition,
        "NOT_LAST_MOVER",
    );
    assert_eq!(metadata(&status, "last_mover").as_deref(), Some("0"));
    let game = c
        .undo(undo_request(&game_id, Some(0)))
        .await
        .unwrap()
        .into_inner()
        .game
        .unwrap();
    assert_eq!(
        (position(&game).ply, position(&game).seat_to_move),
        (0, Some(0))
    );
}
