//! 100,000 random and malformed requests through the real server: random
//! well-formed requests (random ids, seats, moves, rules, tokens), mutated
//! encodings of them, and random bytes, to every RPC, 16 at a time. No call
//! may end INTERNAL or UNKNOWN, the server must stay up, and every game must
//! still equal its replay. The generator is seeded (the seed is printed;
//! `PLYLOG_TEST_SEED` repeats a run).

use std::collections::BTreeMap;

use futures::future::join_all;
use prost::Message;
use rand::Rng;
use rand::rngs::StdRng;
use tonic::Code;
use tonic::codegen::http::uri::PathAndQuery;

use plylog::proto as pb;
use plylog_testkit::*;

/// Requests sent in all.
const REQUESTS: usize = 100_000;
/// Requests in flight at once.
const WORKERS: usize = 16;

const RPCS: [&str; 11] = [
    "CreateGame",
    "GetGame",
    "ListGames",
    "SubmitMove",
    "Undo",
    "Redo",
    "SubmitAction",
    "Rematch",
    "GetReplay",
    "ListLegalMoves",
    "StreamEvents",
];

/// A time control: sometimes usable, sometimes out of range or malformed.
fn time_control(rng: &mut StdRng) -> pb::TimeControl {
    let mut duration = || {
        rng.random_bool(0.6).then(|| prost_types::Duration {
            seconds: [-1, 0, 1, 60, i64::MAX][rng.random_range(0..5)],
            nanos: [0, 1, 500_000_000, -1][rng.random_range(0..4)],
        })
    };
    pb::TimeControl {
        per_move: duration(),
        initial: duration(),
        increment: duration(),
        on_expiry: rng.random_range(-1..5),
        seed: rng.random_bool(0.5).then(|| rng.random()),
    }
}

/// A game id: mostly one of the games that exist, sometimes garbage.
fn game_id(rng: &mut StdRng) -> String {
    match rng.random_range(0..10) {
        0 => String::new(),
        1 => "../bad id".into(),
        2 => "x".repeat(rng.random_range(100..200)),
        3 => format!("new-{}", rng.random_range(0..50)),
        _ => format!("f{}", rng.random_range(0..6)),
    }
}

/// A number near the edges more often than not.
fn int(rng: &mut StdRng) -> i32 {
    match rng.random_range(0..8) {
        0 => i32::MIN,
        1 => i32::MAX,
        2 => -1,
        _ => rng.random_range(-3..25),
    }
}

fn optional(rng: &mut StdRng) -> Option<i32> {
    rng.random_bool(0.7).then(|| int(rng))
}

fn a_move(rng: &mut StdRng) -> Option<pb::Move> {
    use pb::r#move::Kind;
    let kind = match rng.random_range(0..7) {
        0 => return None,
        1 => Kind::Drop(pb::Drop { column: int(rng) }),
        2 => Kind::Pop(pb::Pop { column: int(rng) }),
        3 => Kind::Roll(pb::RollDice {}),
        4 => Kind::Swap(pb::Swap {}),
        _ => Kind::Place(pb::Place {
            row: int(rng),
            col: int(rng),
            mark: rng.random_bool(0.2).then(|| rng.random_range(0..4)),
        }),
    };
    Some(pb::Move {
        kind: rng.random_bool(0.95).then_some(kind),
    })
}

fn rules(rng: &mut StdRng) -> Option<pb::RuleSet> {
    use pb::rule_set::Kind;
    let kind = match rng.random_range(0..8) {
        0 => return None,
        1 => Kind::Mnk(pb::MnkRules {
            rows: int(rng),
            cols: int(rng),
            k: int(rng),
        }),
        2 => Kind::ConnectFour(pb::ConnectFourRules {
            rows: optional(rng),
            cols: optional(rng),
            k: optional(rng),
            pop_out: rng.random(),
            pop_both_lines: rng.random_range(-1..4),
        }),
        3 => Kind::Gomoku(pb::GomokuRules {
            rows: optional(rng),
            cols: optional(rng),
            k: optional(rng),
            overline: rng.random_range(-1..4),
        }),
        4 => Kind::Wild(pb::WildRules {
            rows: optional(rng),
            cols: optional(rng),
            k: optional(rng),
        }),
        5 => Kind::Othello(pb::OthelloRules {
            size: optional(rng),
        }),
        6 => Kind::Hex(pb::HexRules {
            size: optional(rng),
            swap: rng.random(),
        }),
        _ => Kind::SnakesLadders(pb::SnakesLaddersRules {
            squares: optional(rng).map(|n| n.saturating_mul(4)),
            jumps: (0..rng.random_range(0..6))
                .map(|_| pb::Jump {
                    from: int(rng).saturating_mul(3),
                    to: int(rng).saturating_mul(3),
                })
                .collect(),
            chaining: rng.random(),
            overshoot: rng.random_range(-1..5),
            dice: optional(rng),
            sides: optional(rng),
            extra_turn_on_six: rng.random(),
            three_sixes_forfeit: rng.random(),
            seed: rng.random_bool(0.5).then(|| rng.random()),
        }),
    };
    Some(pb::RuleSet { kind: Some(kind) })
}

fn seats(rng: &mut StdRng) -> Vec<pb::Seat> {
    const SYMBOLS: [&str; 8] = ["X", "O", "", ".", "X", "\u{200B}", "too long", "△"];
    (0..rng.random_range(0..5))
        .map(|i| pb::Seat {
            player_id: if rng.random_bool(0.9) {
                format!("p{i}")
            } else {
                String::new()
            },
            display_name: String::new(),
            symbol: SYMBOLS[rng.random_range(0..SYMBOLS.len())].into(),
            bot: None,
        })
        .collect()
}

fn request_id(rng: &mut StdRng) -> String {
    match rng.random_range(0..3) {
        0 => String::new(),
        1 => format!("r{}", rng.random_range(0..30)),
        _ => format!("u{}", rng.random::<u64>()),
    }
}

fn page_token(rng: &mut StdRng) -> String {
    const TOKENS: [&str; 6] = ["", "3", "+3", "03", "2.1", "99999999999999999999"];
    TOKENS[rng.random_range(0..TOKENS.len())].into()
}

/// A well-formed request of RPC `rpc`, with random field values.
fn structured(rng: &mut StdRng, rpc: &str) -> Vec<u8> {
    let seat = || [0u32, 1, 2, 255, 1000, u32::MAX];
    match rpc {
        "CreateGame" => pb::CreateGameRequest {
            request_id: request_id(rng),
            game_id: game_id(rng),
            rules: rules(rng),
            seats: seats(rng),
            undo_policy: rng.random_range(-1..6),
            time_control: rng.random_bool(0.3).then(|| time_control(rng)),
            absence: rng.random_bool(0.1).then(|| pb::AbsencePolicy {
                grace: time_control(rng).per_move,
                on_absence: rng.random_range(-1..4),
            }),
            // Anywhere from long before now to long after it.
            matched_at: rng.random_bool(0.2).then(|| prost_types::Timestamp {
                seconds: [i64::MIN, -1, 0, 1_800_000_000, 300_000_000_000, i64::MAX]
                    [rng.random_range(0..6)],
                nanos: rng.random_range(-1..1_000_000_001),
            }),
            labels: (0..[0, 1, 3, 17][rng.random_range(0..4)])
                .map(|i| {
                    let key = ["team", "Team", "", "a-b_9", "x.y", "k"][rng.random_range(0..6)];
                    let value = ["", "gold", "red\u{1b}", "ü", "v=w"][rng.random_range(0..5)];
                    (format!("{key}{i}"), value.to_owned())
                })
                .collect(),
            clocks_start_at: rng.random_bool(0.1).then(|| prost_types::Timestamp {
                seconds: [i64::MIN, 0, 1_800_000_000, 4_000_000_000, i64::MAX]
                    [rng.random_range(0..5)],
                nanos: rng.random_range(-1..1_000_000_001),
            }),
        }
        .encode_to_vec(),
        "GetGame" => pb::GetGameRequest {
            game_id: game_id(rng),
            at_sequence: rng.random_bool(0.5).then(|| rng.random_range(0..40)),
        }
        .encode_to_vec(),
        "ListGames" => pb::ListGamesRequest {
            page_size: int(rng),
            page_token: page_token(rng),
            order_by: [
                "",
                "created_at",
                "created_at desc",
                "updated_at",
                "created_at  desc",
            ][rng.random_range(0..5)]
            .into(),
            filter: [
                "",
                "status = IN_PROGRESS",
                "kind = \"mnk\" AND seats.player_id = \"a\"",
                "labels.team0 = \"gold\"",
                "created_at > \"2026-12-06T10:00:00Z\"",
                "updated_at >= \"9999-12-31T23:59:59.999999999Z\"",
                "status = ",
                "(((((((((((((((((((((((((((((((((((a)))))))))))))))))))))))))))))))))))",
                "NOT NOT NOT kind = \"hex\"",
                "labels.team = \"*\"",
                "created_at > \"0001-01-01T00:00:00Z\"",
                "a.b.c.d = x OR y:z AND -w",
            ][rng.random_range(0..12)]
            .into(),
        }
        .encode_to_vec(),
        "SubmitMove" => pb::SubmitMoveRequest {
            game_id: game_id(rng),
            seat: rng
                .random_bool(0.9)
                .then(|| seat()[rng.random_range(0..6)] % 3),
            r#move: a_move(rng),
            request_id: request_id(rng),
            expected_sequence: rng.random_bool(0.2).then(|| rng.random_range(0..40)),
            view: rng.random_range(-1..4),
        }
        .encode_to_vec(),
        "Undo" => pb::UndoRequest {
            game_id: game_id(rng),
            seat: rng
                .random_bool(0.7)
                .then(|| seat()[rng.random_range(0..6)] % 3),
            request_id: request_id(rng),
            expected_sequence: rng.random_bool(0.2).then(|| rng.random_range(0..40)),
            view: rng.random_range(-1..4),
        }
        .encode_to_vec(),
        "Redo" => pb::RedoRequest {
            game_id: game_id(rng),
            seat: rng
                .random_bool(0.7)
                .then(|| seat()[rng.random_range(0..6)] % 3),
            request_id: request_id(rng),
            expected_sequence: rng.random_bool(0.2).then(|| rng.random_range(0..40)),
            view: rng.random_range(-1..4),
        }
        .encode_to_vec(),
        "SubmitAction" => pb::SubmitActionRequest {
            game_id: game_id(rng),
            seat: rng
                .random_bool(0.7)
                .then(|| seat()[rng.random_range(0..6)] % 3),
            action: rng.random_range(-1..10),
            request_id: request_id(rng),
            expected_sequence: rng.random_bool(0.2).then(|| rng.random_range(0..40)),
            view: rng.random_range(-1..4),
        }
        .encode_to_vec(),
        "Rematch" => pb::RematchRequest {
            game_id: game_id(rng),
            seat: rng
                .random_bool(0.7)
                .then(|| seat()[rng.random_range(0..6)] % 3),
            rotate: rng.random_bool(0.5),
            request_id: request_id(rng),
            expected_sequence: rng.random_bool(0.2).then(|| rng.random_range(0..40)),
            view: rng.random_range(-1..4),
        }
        .encode_to_vec(),
        "GetReplay" => pb::GetReplayRequest {
            game_id: game_id(rng),
            page_size: int(rng),
            page_token: page_token(rng),
            round: None,
            position_every: rng.random_bool(0.5).then(|| rng.random_range(0..5)),
            position_at: (0..rng.random_range(0..4))
                .map(|_| rng.random_range(0..40))
                .collect(),
            view: rng.random_range(-1..4),
        }
        .encode_to_vec(),
        "ListLegalMoves" => pb::ListLegalMovesRequest {
            game_id: game_id(rng),
            page_size: int(rng),
            page_token: page_token(rng),
        }
        .encode_to_vec(),
        _ => pb::StreamEventsRequest {
            game_id: game_id(rng),
            from_sequence: rng.random_range(0..40),
            follow: false,
            round: rng.random_bool(0.2).then(|| rng.random_range(0..3)),
        }
        .encode_to_vec(),
    }
}

/// Some bytes for RPC `rpc`: well-formed, mutated, or random.
fn body(rng: &mut StdRng, rpc: &str) -> Vec<u8> {
    match rng.random_range(0..10) {
        0..=4 => structured(rng, rpc),
        5..=7 => {
            let mut bytes = structured(rng, rpc);
            for _ in 0..rng.random_range(1..4) {
                match rng.random_range(0..3) {
                    0 if !bytes.is_empty() => {
                        let at = rng.random_range(0..bytes.len());
                        bytes[at] = rng.random();
                    }
                    1 if !bytes.is_empty() => {
                        bytes.truncate(rng.random_range(0..bytes.len()));
                    }
                    _ => {
                        let at = rng.random_range(0..=bytes.len());
                        bytes.insert(at, rng.random());
                    }
                }
            }
            bytes
        }
        _ => (0..rng.random_range(0..64)).map(|_| rng.random()).collect(),
    }
}

/// Sends one request; its status code (OK when it succeeded).
async fn send(
    grpc: &mut tonic::client::Grpc<tonic::transport::Channel>,
    rpc: &str,
    bytes: Vec<u8>,
) -> Code {
    let path = PathAndQuery::try_from(format!("/plylog.v1.GameService/{rpc}")).unwrap();
    grpc.ready().await.expect("the server is up");
    let request = tonic::Request::new(bytes);
    if rpc == "StreamEvents" {
        match grpc.server_streaming(request, path, RawCodec).await {
            Err(status) => status.code(),
            Ok(stream) => {
                // Mutated bytes may ask to follow the game: such a stream
                // never ends by itself, so it is read for a while and
                // dropped (an OK so far).
                let mut stream = stream.into_inner();
                let read = async {
                    loop {
                        match stream.message().await {
                            Ok(Some(())) => {}
                            Ok(None) => break Code::Ok,
                            Err(status) => break status.code(),
                        }
                    }
                };
                tokio::time::timeout(std::time::Duration::from_secs(1), read)
                    .await
                    .unwrap_or(Code::Ok)
            }
        }
    } else {
        match grpc.unary(request, path, RawCodec).await {
            Ok(_) => Code::Ok,
            Err(status) => status.code(),
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_thousand_random_and_malformed_requests_crash_nothing() {
    let mut server = TestServer::start().await;
    let c = &mut server.client;
    let kinds = [
        mnk(3, 3, 3),
        connect_four(),
        pb::RuleSet {
            kind: Some(pb::rule_set::Kind::Othello(pb::OthelloRules { size: None })),
        },
        pb::RuleSet {
            kind: Some(pb::rule_set::Kind::Wild(pb::WildRules::default())),
        },
        pb::RuleSet {
            kind: Some(pb::rule_set::Kind::ConnectFour(pb::ConnectFourRules {
                pop_out: true,
                ..Default::default()
            })),
        },
        pb::RuleSet {
            kind: Some(pb::rule_set::Kind::SnakesLadders(pb::SnakesLaddersRules {
                seed: Some(1),
                ..Default::default()
            })),
        },
    ];
    for (i, rules) in kinds.into_iter().enumerate() {
        create(c, &format!("f{i}"), rules).await;
    }
    let channel = channel(server.addr).await;
    let seed = seed::seed("a_hundred_thousand_random_and_malformed_requests_crash_nothing");
    let workers = (0..WORKERS).map(|worker| {
        let mut grpc = tonic::client::Grpc::new(channel.clone());
        async move {
            let mut rng = seed::rng(seed, worker as u64);
            let mut codes: BTreeMap<String, usize> = BTreeMap::new();
            for _ in 0..REQUESTS / WORKERS {
                let rpc = RPCS[rng.random_range(0..RPCS.len())];
                let bytes = body(&mut rng, rpc);
                let code = send(&mut grpc, rpc, bytes.clone()).await;
                assert!(
                    !matches!(code, Code::Internal | Code::Unknown | Code::DataLoss),
                    "{rpc} with {bytes:?} ended {code:?}"
                );
                *codes.entry(format!("{code:?}")).or_default() += 1;
            }
            codes
        }
    });
    let mut codes: BTreeMap<String, usize> = BTreeMap::new();
    for worker in join_all(workers).await {
        for (code, n) in worker {
            *codes.entry(code).or_default() += n;
        }
    }
    println!("{REQUESTS} requests: {codes:?}");
    assert_eq!(codes.values().sum::<usize>(), REQUESTS);

    // Still up, and every game equals its replay.
    let mut checked = 0;
    let mut page_token = String::new();
    loop {
        let page = c
            .list_games(pb::ListGamesRequest {
                page_size: 1000,
                page_token: page_token.clone(),
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        for summary in &page.games {
            let replay = c
                .get_replay(pb::GetReplayRequest {
                    game_id: summary.game_id.clone(),
                    page_size: 10_000,
                    page_token: String::new(),
                    round: None,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            assert_eq!(replay.game.unwrap(), get_game(c, &summary.game_id).await);
            checked += 1;
        }
        if page.next_page_token.is_empty() {
            break;
        }
        page_token = page.next_page_token;
    }
    println!("{checked} games equal their replay");
    assert!(checked >= 6);
}
