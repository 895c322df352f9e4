use plylog::proto as pb;
use tonic::Code;

use plylog_testkit::*;

/// The Milton Bradley board (the same jumps as tests/fixtures/snakes-ladders).
const MILTON_BRADLEY: [(i32, i32); 19] = [
    (1, 38),
    (4, 14),
    (9, 31),
    (21, 42),
    (28, 84),
    (36, 44),
    (51, 67),
    (71, 91),
    (80, 100),
    (16, 6),
    (47, 26),
    (49, 11),
    (56, 53),
    (62, 19),
    (64, 60),
    (87, 24),
    (93, 73),
    (95, 75),
    (98, 78),
];

fn snakes_ladders(seed: Option<u64>) -> pb::RuleSet {
    pb::RuleSet {
        kind: Some(pb::rule_set::Kind::SnakesLadders(pb::SnakesLaddersRules {
            jumps: MILTON_BRADLEY
                .iter()
                .map(|&(from, to)| pb::Jump { from, to })
                .collect(),
            seed,
            ..Default::default()
        })),
    }
}

fn roll() -> pb::Move {
    pb::Move {
        kind: Some(pb::r#move::Kind::Roll(pb::RollDice {})),
    }
}

/// Rolls for whichever seat is to move until the game ends; the rolls.
async fn play_out(client: &mut Client, game_id: &str) -> Vec<pb::RollResult> {
    let mut rolls = Vec::new();
    let mut game = get_game(client, game_id).await;
    while let Some(seat) = position(&game).seat_to_move {
        let reply = play(client, game_id, seat, roll()).await.expect("a roll");
        let Some(pb::game_event::Kind::MovePlayed(played)) = reply.events[0].kind.clone() else {
            panic!("a MovePlayed")
        };
        let result = played.roll.expect("the roll is recorded");
        assert_eq!(played.placement.unwrap().col as u32, result.to);
        rolls.push(result);
        game = reply.game.unwrap();
        assert!(rolls.len() < 10_000, "a game that never ends");
    }
    rolls
}

#[tokio::test]
async fn a_seeded_game_is_played_to_the_end_and_the_same_seed_plays_it_again() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let game = create(c, "snl-1", snakes_ladders(Some(42))).await;
    assert_eq!(position(&game).squares, [0, 0]);
    let Some(pb::rule_set::Kind::SnakesLadders(rules)) = game.rules.unwrap().kind else {
        panic!("snakes and ladders")
    };
    assert_eq!(
        (rules.squares, rules.dice, rules.sides, rules.seed),
        (Some(100), Some(1), Some(6), Some(42))
    );
    assert_eq!(rules.overshoot(), pb::Overshoot::ExactLanding);

    let rolls = play_out(c, "snl-1").await;
    let end = get_game(c, "snl-1").await;
    let pos = position(&end);
    assert_eq!(pos.status(), pb::GameStatus::Won);
    let Some(pb::outcome::Kind::Win(win)) = pos.outcome.clone().unwrap().kind else {
        panic!("a win")
    };
    assert_eq!(pos.squares[win.seat as usize], 100);
    // Each roll starts where that seat's previous one ended, and a jump is
    // taken whenever the token lands on a jump's start.
    let mut squares = [0u32; 2];
    for (i, r) in rolls.iter().enumerate() {
        let seat = i % 2;
        assert_eq!(r.from, squares[seat], "roll {i}");
        assert!(r.dice.iter().all(|d| (1..=6).contains(d)));
        if let Some(&landed) = r.passed.last() {
            let jump = MILTON_BRADLEY.iter().find(|j| j.0 as u32 == landed);
            assert_eq!(r.jumps.first().map(|j| (j.from, j.to)), jump.copied());
        }
        squares[seat] = r.to;
    }

    create(c, "snl-2", snakes_ladders(Some(42))).await;
    assert_eq!(play_out(c, "snl-2").await, rolls);

    // The replay shows each seat's square and never draws again: it equals
    // the game as played.
    let replay = c
        .get_replay(pb::GetReplayRequest {
            game_id: "snl-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let last = replay.steps.last().unwrap().position.clone().unwrap();
    assert_eq!(last.squares, pos.squares);
    assert_eq!(replay.game.unwrap(), end);
    let server = server.restart().await;
    let mut client = server.client.clone();
    assert_eq!(get_game(&mut client, "snl-1").await, end);
}

#[tokio::test]
async fn the_only_legal_move_is_a_roll_and_other_moves_are_refused() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    create(c, "snl-moves", snakes_ladders(Some(1))).await;
    let legal = c
        .list_legal_moves(pb::ListLegalMovesRequest {
            game_id: "snl-moves".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!((legal.moves, legal.total), (vec![roll()], 1));
    assert_rejected(
        play(c, "snl-moves", 0, place(0, 0)).await,
        Code::InvalidArgument,
        "WRONG_MOVE_KIND",
    );
    assert_rejected(
        play(c, "snl-moves", 1, roll()).await,
        Code::FailedPrecondition,
        "NOT_YOUR_TURN",
    );
}

#[tokio::test]
async fn a_bad_board_is_refused_naming_the_jump() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let mut rules = snakes_ladders(Some(1));
    if let Some(pb::rule_set::Kind::SnakesLadders(r)) = rules.kind.as_mut() {
        r.jumps.push(pb::Jump { from: 38, to: 2 });
    }
    let status = assert_rejected(
        c.create_game(create_request("snl-bad", rules)).await,
        Code::InvalidArgument,
        "INVALID_RULES",
    );
    assert_eq!(
        bad_field(&status).as_deref(),
        Some("rules.snakes_ladders.jumps")
    );
    assert!(
        status
            .message()
            .contains("jumps[0] 1->38 ends where jumps[19] 38->2 starts, and chaining is off"),
        "{status:?}"
    );
}

#[tokio::test]
async fn without_a_seed_the_server_draws_one_and_a_retry_is_the_same_request() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let request = pb::CreateGameRequest {
        request_id: "snl-create-1".into(),
        seats: vec![seat("solo", "S")],
        ..create_request("snl-solo", snakes_ladders(None))
    };
    let first = create_from(c, request.clone()).await;
    let again = create_from(c, request).await;
    assert_eq!(first, again);
    let Some(pb::rule_set::Kind::SnakesLadders(rules)) = first.rules.unwrap().kind else {
        panic!("snakes and ladders")
    };
    assert!(rules.seed.is_some());
    // One seat plays alone until it reaches the last square.
    let rolls = play_out(c, "snl-solo").await;
    assert_eq!(rolls.last().unwrap().to, 100);
}
