//! Several nodes, one truth: plylog servers in this process share one fresh
//! PostgreSQL schema. In the main test clients send every call to a random
//! node, race each other on the same games with turn tokens, and retry with
//! their request ids; a subscriber on every node follows every game. Midway,
//! every database connection of the nodes is cut (`pg_terminate_backend`):
//! calls fail with UNAVAILABLE for a moment and the nodes recover by
//! themselves. At the end every subscriber has seen every event of its game
//! exactly once in order, every node's GetGame equals a fresh replay, and
//! every acknowledged move is in the log. Another test cuts one node's
//! connections again and again while it catches up on moves played through
//! another node, then retries every acknowledged request through it.
//!
//! Needs PostgreSQL: runs when `DATABASE_URL` is a `postgres://` URL or
//! `PLYLOG_TEST_BACKEND=postgres`; otherwise every test is listed as
//! ignored, with the reason printed above them. With
//! `PLYLOG_REQUIRE_POSTGRES=1` (as in `.ci/run`) a missing PostgreSQL fails
//! them instead. Run with `--nocapture` to see the figures. Randomness is
//! seeded (`PLYLOG_TEST_SEED` repeats a run). `TEST_LOG=1` shows the
//! nodes' logs.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use libtest_mimic::Trial;
use plylog::api::auth::AccessSettings;
use plylog::app::Settings;
use plylog::proto::game_service_client::GameServiceClient;
use plylog::proto::{self as pb};
use plylog::registry::{Clock, RegistrySettings};
use rand::Rng;
use rand::rngs::StdRng;
use tonic::Code;
use tonic::transport::Channel;

use optional::trial;
use plylog_testkit::optional;
use plylog_testkit::postgres::{fresh_postgres_schema, postgres_configured, postgres_url};
use plylog_testkit::seed;
use plylog_testkit::wait;
use plylog_testkit::{
    bearer, create_mnk, get_game, move_request, place, plain_move_request, spawn_app,
    stored_events, timed_tic_tac_toe, wait_for,
};
use wait::wait_until;

type Client = GameServiceClient<Channel>;

/// The sequences a subscriber received, with when each arrived.
type Seen = Arc<Mutex<Vec<(u64, Instant)>>>;

const NODES: usize = 3;
const GAMES: usize = 16;
const CLIENTS: usize = 6;
/// Moves to acknowledge before the load stops (the boards hold 4,096).
const MOVES: usize = 2000;
/// Moves acknowledged when the connections are cut.
const CUT_AT: usize = 800;

/// The multi-node tests, named `multinode::<test>`: ignored (or failed, with
/// `PLYLOG_REQUIRE_POSTGRES=1`) without PostgreSQL.
pub(crate) fn trials() -> Vec<Trial> {
    let postgres = optional::availability(
        "multinode",
        postgres_configured(),
        "PLYLOG_REQUIRE_POSTGRES",
        "no PostgreSQL is configured: set DATABASE_URL=postgres://... (or PLYLOG_TEST_BACKEND=postgres) to run these tests",
    );
    vec![
        trial(
            "multinode::a_write_behind_the_owners_back_is_caught_by_the_sequence_check",
            &postgres,
            a_write_behind_the_owners_back_is_caught_by_the_sequence_check,
        ),
        trial(
            "multinode::writes_queued_together_commit_in_one_group",
            &postgres,
            writes_queued_together_commit_in_one_group,
        ),
        trial(
            "multinode::a_writer_whose_connection_was_cut_while_idle_writes_on_another",
            &postgres,
            a_writer_whose_connection_was_cut_while_idle_writes_on_another,
        ),
        trial(
            "multinode::a_clock_that_runs_out_on_two_nodes_times_out_once",
            &postgres,
            a_clock_that_runs_out_on_two_nodes_times_out_once,
        ),
        trial(
            "multinode::a_seat_that_follows_through_another_node_is_present_until_it_leaves",
            &postgres,
            a_seat_that_follows_through_another_node_is_present_until_it_leaves,
        ),
        trial(
            "multinode::a_node_asking_for_a_seats_presence_counts_only_the_other_nodes_rows",
            &postgres,
            a_node_asking_for_a_seats_presence_counts_only_the_other_nodes_rows,
        ),
        trial(
            "multinode::a_token_reissued_through_another_node_stops_acting_even_before_this_node_hears_of_it",
            &postgres,
            a_token_reissued_through_another_node_stops_acting_even_before_this_node_hears_of_it,
        ),
        trial(
            "multinode::contention_on_one_game_through_two_nodes_is_retryable_never_internal",
            &postgres,
            contention_on_one_game_through_two_nodes_is_retryable_never_internal,
        ),
        trial(
            "multinode::time_in_a_game_never_goes_backwards_whichever_node_records_it",
            &postgres,
            time_in_a_game_never_goes_backwards_whichever_node_records_it,
        ),
        trial(
            "multinode::a_node_whose_clock_is_off_judges_deadlines_by_the_databases_clock",
            &postgres,
            a_node_whose_clock_is_off_judges_deadlines_by_the_databases_clock,
        ),
        trial(
            "multinode::three_nodes_on_one_database_agree_on_every_game",
            &postgres,
            three_nodes_on_one_database_agree_on_every_game,
        ),
        trial(
            "multinode::while_the_database_is_unreachable_health_says_not_serving_and_calls_say_retry_later",
            &postgres,
            while_the_database_is_unreachable_health_says_not_serving_and_calls_say_retry_later,
        ),
        trial(
            "multinode::a_feed_reader_waits_for_a_position_an_open_transaction_holds_and_never_skips_it",
            &postgres,
            a_feed_reader_waits_for_a_position_an_open_transaction_holds_and_never_skips_it,
        ),
        trial(
            "multinode::a_database_that_turns_read_only_answers_retry_later_never_internal",
            &postgres,
            a_database_that_turns_read_only_answers_retry_later_never_internal,
        ),
        trial(
            "multinode::a_node_whose_connections_are_cut_answers_every_retry_with_its_original_reply",
            &postgres,
            a_node_whose_connections_are_cut_answers_every_retry_with_its_original_reply,
        ),
    ]
}

/// Starts a node on `url`; its address.
async fn node(url: &str) -> std::net::SocketAddr {
    node_on(url, Clock::System).await
}

/// Starts a node on `url` that reads the time off `clock`.
async fn node_on(url: &str, clock: Clock) -> std::net::SocketAddr {
    node_with(url, clock, AccessSettings::default()).await
}

/// Starts a node on `url` as [`node_on`] with `access` settings.
async fn node_with(url: &str, clock: Clock, access: AccessSettings) -> std::net::SocketAddr {
    let settings = Settings {
        postgres_connections: 8,
        registry: RegistrySettings {
            heartbeat_interval: Duration::from_millis(500),
            clock,
            ..RegistrySettings::default()
        },
        shutdown_grace: Duration::from_secs(1),
        access,
        ..Settings::new("127.0.0.1:0".parse().unwrap(), url)
    };
    spawn_app(settings).await.detach()
}

fn client(addr: std::net::SocketAddr) -> Client {
    GameServiceClient::new(
        Channel::from_shared(format!("http://{addr}"))
            .unwrap()
            .connect_lazy(),
    )
}

fn game_id(g: usize) -> String {
    format!("mn-{g}")
}

/// What the clients saw.
#[derive(Default)]
struct Tally {
    /// Acknowledged moves: (game, event, node, when the reply arrived).
    acked: Mutex<Vec<(String, pb::GameEvent, usize, Instant)>>,
    /// Acknowledged requests with their replies and the node that answered,
    /// for retries through another node.
    replies: Mutex<Vec<(pb::SubmitMoveRequest, pb::SubmitMoveResponse, usize)>>,
    /// Moves with a turn token refused because another node's move won the
    /// race.
    aborted: AtomicUsize,
    /// Moves sent without a turn token that, decided again on the fresh
    /// state after losing a race, were no longer legal.
    refused: AtomicUsize,
    /// Calls answered UNAVAILABLE (and retried).
    unavailable: AtomicUsize,
}

impl Tally {
    fn acked(&self) -> usize {
        self.acked.lock().unwrap().len()
    }
}

/// Plays random legal moves on random games through random nodes of
/// `nodes` (numbered from `first_node`) until `stop`, choosing with `rng`.
async fn play(
    id: usize,
    mut rng: StdRng,
    nodes: Vec<Client>,
    stop: Arc<AtomicBool>,
    tally: Arc<Tally>,
) {
    let mut k = 0;
    while !stop.load(Ordering::Relaxed) {
        let (g, via) = (rng.random_range(0..GAMES), rng.random_range(0..nodes.len()));
        let game = game_id(g);
        let legal = match nodes[via]
            .clone()
            .list_legal_moves(pb::ListLegalMovesRequest {
                game_id: game.clone(),
                page_size: 1000,
                page_token: String::new(),
            })
            .await
        {
            Ok(reply) => reply.into_inner(),
            Err(status) if status.code() == Code::Unavailable => {
                tally.unavailable.fetch_add(1, Ordering::Relaxed);
                tokio::time::sleep(Duration::from_millis(20)).await;
                continue;
            }
            Err(status) => panic!("ListLegalMoves: {status:?}"),
        };
        let Some(seat) = legal.seat_to_move else {
            continue;
        };
        let mv = legal.moves[rng.random_range(0..legal.moves.len())].clone();
        k += 1;
        // Most moves carry a turn token; the others are decided again on the
        // fresh state when they lose a race.
        let request = pb::SubmitMoveRequest {
            request_id: format!("c{id}-{k}"),
            expected_sequence: rng.random_bool(0.75).then_some(legal.sequence),
            ..move_request(&game, seat, mv)
        };
        // Retry through any node until the outcome is known.
        loop {
            let via = rng.random_range(0..nodes.len());
            match nodes[via].clone().submit_move(request.clone()).await {
                Ok(reply) => {
                    let reply = reply.into_inner();
                    let mut acked = tally.acked.lock().unwrap();
                    for event in &reply.events {
                        acked.push((game.clone(), event.clone(), via, Instant::now()));
                    }
                    tally.replies.lock().unwrap().push((request, reply, via));
                    break;
                }
                Err(status) if status.code() == Code::Unavailable => {
                    tally.unavailable.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                // Only a turn token can be stale; a move without one is
                // decided again on the fresh state instead.
                Err(status)
                    if status.code() == Code::Aborted && request.expected_sequence.is_some() =>
                {
                    tally.aborted.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                Err(status)
                    if status.code() == Code::FailedPrecondition
                        && request.expected_sequence.is_none() =>
                {
                    tally.refused.fetch_add(1, Ordering::Relaxed);
                    break;
                }
                Err(status) => panic!("SubmitMove {}: {status:?}", request.request_id),
            }
        }
    }
}

/// Follows `game` on one node, recording each event's sequence and arrival
/// time, until the stream ends (when the test's runtime goes).
async fn subscribe(mut client: Client, game: String, seen: Seen) {
    let mut stream = client
        .stream_events(pb::StreamEventsRequest {
            game_id: game,
            from_sequence: 1,
            follow: true,
            round: None,
        })
        .await
        .expect("stream opens")
        .into_inner();
    while let Ok(Some(item)) = stream.message().await {
        if let Some(pb::stream_events_response::Kind::Event(event)) = item.kind {
            seen.lock().unwrap().push((event.sequence, Instant::now()));
        }
    }
}

/// Cuts every database connection of the nodes started with
/// `application_name`; how many were cut.
async fn cut_connections(application_name: &str) -> u64 {
    use sqlx::Connection;
    let mut admin = sqlx::PgConnection::connect(&postgres_url()).await.unwrap();
    let cut: Vec<bool> = sqlx::query_scalar(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
    )
    .bind(application_name)
    .fetch_all(&mut admin)
    .await
    .unwrap();
    let _ = admin.close().await;
    cut.len() as u64
}

/// A unique `application_name`, so one test cuts only its own nodes.
fn application_name(role: &str) -> String {
    format!("plylog-mn-{role}-{}", uuid::Uuid::new_v4().simple())
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Retries every acknowledged request through `node_for(original node)`
/// (retrying UNAVAILABLE) and asserts each gets its original reply.
async fn retry_all(
    replies: &[(pb::SubmitMoveRequest, pb::SubmitMoveResponse, usize)],
    node_for: impl Fn(usize) -> Client,
) {
    for (request, reply, via) in replies {
        let retried = wait_for(
            &format!("the retry of {} to be answered", request.request_id),
            Duration::from_secs(30),
            Duration::from_millis(20),
            async || match node_for(*via).submit_move(request.clone()).await {
                Err(status) if status.code() == Code::Unavailable => None,
                answered => Some(answered),
            },
        )
        .await;
        let retried = retried.unwrap_or_else(|status| {
            panic!(
                "the retry of {} is answered: {status:?}",
                request.request_id
            )
        });
        assert_eq!(&retried.into_inner(), reply, "{}", request.request_id);
    }
}

/// Appends seat 0's placement at (1,1) as sequence 2 of the 3x3 game
/// `game_id` straight into the database, without the notification a node
/// sends: the nodes learn of it only by reading the log.
async fn silent_append(url: &str, game_id: &str) {
    let placed = pb::game_event::Kind::MovePlayed(pb::MovePlayed {
        seat: 0,
        r#move: Some(pb::Move {
            kind: Some(pb::r#move::Kind::Place(pb::Place {
                row: 1,
                col: 1,
                mark: None,
            })),
        }),
        placement: Some(pb::Cell { row: 1, col: 1 }),
        ply: 1,
        ..Default::default()
    });
    append_behind_the_nodes(url, game_id, placed, None).await;
}

/// Writes `kind` as sequence 2 of game `game_id` straight into the
/// database, as another node's append would (linked onto event 1's chain
/// value, the games row moved on, and seat `seat`'s token hash replaced by
/// `hash` where `reissue` says so), all in one transaction, but without the
/// notification a node sends.
async fn append_behind_the_nodes(
    url: &str,
    game_id: &str,
    kind: pb::game_event::Kind,
    reissue: Option<(usize, [u8; 32])>,
) {
    use prost::Message;
    use sqlx::Connection;
    let event_type = match &kind {
        pb::game_event::Kind::MovePlayed(_) => "move_played",
        pb::game_event::Kind::SeatTokenReissued(_) => "seat_token_reissued",
        other => panic!("not written behind the nodes here: {other:?}"),
    };
    let payload = pb::GameEvent {
        game_id: game_id.into(),
        sequence: 2,
        recorded_at: None,
        round: 0,
        kind: Some(kind),
    }
    .encode_to_vec();
    let mut writer = sqlx::PgConnection::connect(url).await.unwrap();
    let mut tx = writer.begin().await.unwrap();
    let (previous, hashes): (Vec<u8>, Option<Vec<u8>>) = sqlx::query_as(
        "SELECT e.chain, g.seat_token_hashes FROM events e JOIN games g USING (game_id) \
         WHERE game_id = $1 AND e.sequence = 1",
    )
    .bind(game_id)
    .fetch_one(&mut *tx)
    .await
    .unwrap();
    let mut hashes = hashes;
    if let Some((seat, hash)) = reissue {
        let hashes = hashes.as_mut().expect("a game with seat tokens");
        hashes[seat * 32..(seat + 1) * 32].copy_from_slice(&hash);
    }
    let chain = plylog::store::chain::link(
        &previous.try_into().expect("a chain value"),
        game_id,
        2,
        &payload,
    );
    sqlx::query(
        "WITH head AS (UPDATE feed_head SET position = position + 1 RETURNING position) \
         INSERT INTO events \
         (game_id, sequence, event_type, event_version, payload, recorded_at_ms, chain, position) \
         SELECT $1, 2, $2, 1, $3, 0, $4, position FROM head",
    )
    .bind(game_id)
    .bind(event_type)
    .bind(payload)
    .bind(chain.to_vec())
    .execute(&mut *tx)
    .await
    .unwrap();
    sqlx::query("UPDATE games SET last_sequence = 2, seat_token_hashes = $2 WHERE game_id = $1")
        .bind(game_id)
        .bind(hashes)
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let _ = writer.close().await;
}

/// Eight clients play one game through two nodes with request ids and no
/// turn token, so each node decides on whatever it holds and loses append
/// races to the other. A command whose appends keep losing is contention,
/// not a server fault: it must be answered UNAVAILABLE / APPEND_CONTENDED
/// with RetryInfo (retried here with the same request id through either
/// node), never INTERNAL (issue 35: 489 of 11,707 such calls were INTERNAL).
/// Every acknowledged move is in the log exactly once.
async fn contention_on_one_game_through_two_nodes_is_retryable_never_internal() {
    use tonic_types::StatusExt;
    const CALLS: usize = 150;
    let seed = seed::seed("contention");
    let schema = fresh_postgres_schema().await;
    let nodes = vec![
        client(node(&schema.url).await),
        client(node(&schema.url).await),
    ];
    nodes[0]
        .clone()
        .create_game(create_mnk("contended", 40, 40, 5))
        .await
        .unwrap();
    let contended = Arc::new(AtomicUsize::new(0));
    let acked = Arc::new(Mutex::new(Vec::<pb::GameEvent>::new()));
    let mut clients = Vec::new();
    for id in 0..8 {
        let (nodes, contended, acked) = (nodes.clone(), Arc::clone(&contended), Arc::clone(&acked));
        let mut rng = seed::rng(seed, id);
        clients.push(tokio::spawn(async move {
            for k in 0..CALLS {
                let seat = rng.random_range(0..2);
                let (row, col) = (rng.random_range(0..40), rng.random_range(0..40));
                let request = pb::SubmitMoveRequest {
                    request_id: format!("c{id}-{k}"),
                    ..plain_move_request("contended", seat, place(row, col))
                };
                loop {
                    let via = rng.random_range(0..nodes.len());
                    match nodes[via].clone().submit_move(request.clone()).await {
                        Ok(reply) => {
                            acked.lock().unwrap().extend(reply.into_inner().events);
                            break;
                        }
                        Err(status) if status.code() == Code::Unavailable => {
                            let details = status.get_error_details();
                            let reason = details.error_info().map(|i| i.reason.clone());
                            if reason.as_deref() == Some("APPEND_CONTENDED") {
                                contended.fetch_add(1, Ordering::Relaxed);
                                assert!(details.retry_info().is_some(), "{status:?}");
                            }
                            tokio::time::sleep(Duration::from_millis(5)).await;
                        }
                        // Not this seat's turn, or the cell is taken, on the
                        // game as it stands.
                        Err(status) if status.code() == Code::FailedPrecondition => break,
                        Err(status) => panic!("SubmitMove {}: {status:?}", request.request_id),
                    }
                }
            }
        }));
    }
    for c in clients {
        tokio::time::timeout(Duration::from_secs(120), c)
            .await
            .expect("the clients finish")
            .unwrap();
    }
    let log = stored_events(&nodes[1], "contended").await;
    let acked = acked.lock().unwrap();
    for event in acked.iter() {
        let stored = log.iter().filter(|e| e.sequence == event.sequence).count();
        assert_eq!(
            stored, 1,
            "acknowledged event {} is stored once",
            event.sequence
        );
        assert_eq!(&log[event.sequence as usize - 1], event);
    }
    println!(
        "{} moves acknowledged, {} calls answered APPEND_CONTENDED and retried, log of {} events",
        acked.len(),
        contended.load(Ordering::Relaxed),
        log.len()
    );
}

/// Every event's time of a game, in sequence order, by a replay through
/// `client`.
async fn recorded_times(client: &mut Client, game_id: &str) -> Vec<i64> {
    client
        .get_replay(pb::GetReplayRequest {
            game_id: game_id.into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner()
        .steps
        .iter()
        .map(|step| {
            let event = step.event.as_ref().unwrap();
            plylog::proto::convert::timestamp_ms(event.recorded_at.as_ref())
        })
        .collect()
}

/// Two nodes whose clocks disagree by ten seconds (manual clocks, so no
/// correction applies) record events of one game in turn: each event's time
/// is at least its predecessor's, whichever node recorded it (issue 35:
/// `recorded_at` went backwards up to 129 times in a run with one node's
/// clock 5 s off).
async fn time_in_a_game_never_goes_backwards_whichever_node_records_it() {
    const T: i64 = 1_800_000_000_000;
    let schema = fresh_postgres_schema().await;
    let ahead = client(node_on(&schema.url, Clock::manual(T + 10_000)).await);
    let behind = client(node_on(&schema.url, Clock::manual(T)).await);
    ahead
        .clone()
        .create_game(create_mnk("monotonic", 3, 3, 3))
        .await
        .unwrap();
    for (seat, (row, col), node) in [
        (0, (0, 0), &behind),
        (1, (1, 1), &ahead),
        (0, (0, 1), &behind),
    ] {
        node.clone()
            .submit_move(plain_move_request("monotonic", seat, place(row, col)))
            .await
            .unwrap();
    }
    let times = recorded_times(&mut behind.clone(), "monotonic").await;
    assert_eq!(times.len(), 4);
    assert!(
        times.windows(2).all(|w| w[0] <= w[1]),
        "time went backwards: {times:?}"
    );
    assert_eq!(times[0], T + 10_000);
}

/// A node whose own clock runs 30 s fast corrects it toward the database's
/// clock before it serves, so it judges another node's deadlines as that
/// node would: a move sent through it right after a game with 20 s a move
/// was created through the other node is played, not refused as out of
/// time (issue 35: with one node's clock 5 s off, turns timed out up to
/// 4.995 s early and moves were refused up to 4.84 s early), and it is
/// recorded within the turn. The shortening a skew can still cause is the
/// nodes' correction errors, each at most half the round trip of a query
/// to the database.
async fn a_node_whose_clock_is_off_judges_deadlines_by_the_databases_clock() {
    let schema = fresh_postgres_schema().await;
    let true_node = client(node(&schema.url).await);
    let fast_node = client(node_on(&schema.url, Clock::skewed(30_000)).await);
    let request = timed_tic_tac_toe("skewed", 20);
    true_node.clone().create_game(request).await.unwrap();
    let played = fast_node
        .clone()
        .submit_move(plain_move_request("skewed", 0, place(1, 1)))
        .await
        .expect("the move is played within its turn");
    assert_eq!(played.into_inner().events[0].sequence, 2);
    let times = recorded_times(&mut true_node.clone(), "skewed").await;
    assert!(
        times[1] - times[0] < 20_000,
        "the move was recorded {} ms into a 20 s turn: {times:?}",
        times[1] - times[0]
    );
}

/// Re-issues seat `seat`'s token of game `game_id` (at sequence 1) straight
/// in the database, as another node's ReissueSeatToken would, but without
/// the notification: the SeatTokenReissued event as sequence 2 and the
/// game's seat token hashes with `new_hash` for the seat, in one
/// transaction.
async fn silent_reissue(url: &str, game_id: &str, seat: usize, new_hash: [u8; 32]) {
    let reissued =
        pb::game_event::Kind::SeatTokenReissued(pb::SeatTokenReissued { seat: seat as u32 });
    append_behind_the_nodes(url, game_id, reissued, Some((seat, new_hash))).await;
}

/// ReissueSeatToken promises that the old token stops working at once,
/// through every node. A node that holds the game and has not heard of a
/// re-issue another node appended (no notification, no periodic catch-up
/// within the test) gets a move with the old token: its first append
/// conflicts with the re-issue, it catches up, and it must authorize the
/// move again against the game as it now stands, refusing it, rather than
/// play the move it had authorized on the stale state (issue 35: 24 of 30
/// such races landed a move after the re-issue). Nothing lands after the
/// SeatTokenReissued event.
async fn a_token_reissued_through_another_node_stops_acting_even_before_this_node_hears_of_it() {
    let schema = fresh_postgres_schema().await;
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, format!("{}\n", "7".repeat(64))).unwrap();
    let access = AccessSettings {
        seat_tokens: true,
        seat_token_secret_file: Some(secret),
        ..AccessSettings::default()
    };
    let node = node_with(&schema.url, Clock::System, access).await;
    let mut c = client(node);
    let created = c
        .create_game(create_mnk("revoked", 3, 3, 3))
        .await
        .unwrap()
        .into_inner();
    // The node holds the game, at sequence 1, with seat 0's first token.
    c.get_game(pb::GetGameRequest {
        game_id: "revoked".into(),
        at_sequence: None,
    })
    .await
    .unwrap();
    silent_reissue(
        &schema.url,
        "revoked",
        0,
        plylog::tokens::hash("a new token"),
    )
    .await;
    let request = bearer(
        plain_move_request("revoked", 0, place(0, 0)),
        &created.seat_tokens[0],
    );
    let refused = c.submit_move(request).await.unwrap_err();
    assert_eq!(refused.code(), Code::PermissionDenied, "{refused:?}");
    let game = get_game(&mut c, "revoked").await;
    assert_eq!(
        game.last_sequence, 2,
        "a move by the re-issued token landed after the re-issue"
    );
}

/// Only the holder of a game's slot writes the game, so it decides on the
/// game as it holds it, reading nothing first. A write behind its back (an
/// operator's, or a node that lost its slot without a fence, which the
/// lease check stops) is still caught by the second guard, the store's
/// sequence check: a move decided on the stale game conflicts, the node
/// catches up, decides it again on the log as it stands (here refusing
/// it: it was seat 0's turn only before the unseen move), and the game it
/// shows from then on has the unseen move.
async fn a_write_behind_the_owners_back_is_caught_by_the_sequence_check() {
    let schema = fresh_postgres_schema().await;
    let url = &schema.url;
    let mut c = client(node(url).await);
    c.create_game(create_mnk("behind", 3, 3, 3)).await.unwrap();
    // The node holds the game at sequence 1.
    c.get_game(pb::GetGameRequest {
        game_id: "behind".into(),
        at_sequence: None,
    })
    .await
    .unwrap();
    silent_append(url, "behind").await;
    let refused = c
        .submit_move(plain_move_request("behind", 0, place(0, 0)))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), Code::FailedPrecondition, "{refused:?}");
    let game = get_game(&mut c, "behind").await;
    assert_eq!(game.last_sequence, 2, "GetGame shows the unseen move");
    let reply = c
        .submit_move(plain_move_request("behind", 1, place(0, 0)))
        .await
        .unwrap()
        .into_inner();
    assert_eq!(
        reply.events.iter().map(|e| e.sequence).collect::<Vec<_>>(),
        [3],
        "seat 1's move lands after the unseen one"
    );
}

/// Both nodes hold every game (each has answered a GetGame) when the
/// shared test clock passes the games' deadlines at once: both timers fire,
/// both decide the timeout, and the (game, sequence) uniqueness lets one
/// append land; the other node catches up and decides nothing more. Each
/// game's log holds exactly one TimeExpired, and both nodes agree.
async fn a_clock_that_runs_out_on_two_nodes_times_out_once() {
    const GAMES: usize = 10;
    let schema = fresh_postgres_schema().await;
    let clock = Clock::manual(1_800_000_000_000);
    let a = client(node_on(&schema.url, clock.clone()).await);
    let b = client(node_on(&schema.url, clock.clone()).await);
    for g in 0..GAMES {
        let id = format!("clock-{g}");
        let request = timed_tic_tac_toe(&id, 5);
        a.clone().create_game(request).await.unwrap();
        for node in [&a, &b] {
            let game = node
                .clone()
                .get_game(pb::GetGameRequest {
                    game_id: id.clone(),
                    at_sequence: None,
                })
                .await
                .unwrap();
            assert_eq!(game.into_inner().game.unwrap().last_sequence, 1);
        }
    }
    clock.advance(5_000);
    for g in 0..GAMES {
        let id = format!("clock-{g}");
        for node in [&a, &b] {
            let game = wait_for(
                &format!("{id} to time out"),
                Duration::from_secs(20),
                Duration::from_millis(20),
                async || {
                    let game = node
                        .clone()
                        .get_game(pb::GetGameRequest {
                            game_id: id.clone(),
                            at_sequence: None,
                        })
                        .await
                        .unwrap()
                        .into_inner()
                        .game
                        .unwrap();
                    let status = game.position.as_ref().unwrap().status;
                    (status == pb::GameStatus::Won as i32).then_some(game)
                },
            )
            .await;
            assert_eq!(
                game.last_sequence, 3,
                "{id}: one TimeExpired, one GameEnded"
            );
        }
        let expired = stored_events(&a, &id)
            .await
            .into_iter()
            .filter(|e| matches!(e.kind, Some(pb::game_event::Kind::TimeExpired(_))))
            .count();
        assert_eq!(expired, 1, "{id}: exactly one timeout");
    }
    println!("{GAMES} games timed out once each with two nodes holding them");
}

/// The streams of seat 0 of `game_id` the nodes have on record.
async fn streams_on_record(db: &mut sqlx::PgConnection, game_id: &str) -> i64 {
    sqlx::query_scalar::<_, i64>(
        "SELECT coalesce(sum(streams), 0)::bigint FROM seat_presence WHERE game_id = $1 AND seat = 0",
    )
    .bind(game_id)
    .fetch_one(db)
    .await
    .unwrap()
}

/// Presence across nodes: node A holds the game (it created it and armed
/// the grace timer), seat 0 follows it through node B. While it does, time
/// well past the grace period changes nothing; once it leaves B, one of the
/// nodes reports it absent a grace period later, exactly once.
async fn a_seat_that_follows_through_another_node_is_present_until_it_leaves() {
    use sqlx::Connection;
    const GRACE_MS: i64 = 10_000;
    let schema = fresh_postgres_schema().await;
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret");
    std::fs::write(&secret, format!("{}\n", "7".repeat(64))).unwrap();
    let access = || AccessSettings {
        seat_tokens: true,
        seat_token_secret_file: Some(secret.clone()),
        ..AccessSettings::default()
    };
    let clock = Clock::manual(1_800_000_000_000);
    let a = client(node_with(&schema.url, clock.clone(), access()).await);
    let b = client(node_with(&schema.url, clock.clone(), access()).await);
    let request = pb::CreateGameRequest {
        absence: Some(pb::AbsencePolicy {
            grace: Some(prost_types::Duration {
                seconds: GRACE_MS / 1000,
                nanos: 0,
            }),
            on_absence: pb::AbsenceAction::Expire as i32,
        }),
        ..create_mnk("away", 3, 3, 3)
    };
    let created = a.clone().create_game(request).await.unwrap().into_inner();
    let follow = bearer(
        pb::StreamEventsRequest {
            game_id: "away".into(),
            from_sequence: 0,
            follow: true,
            round: None,
        },
        &created.seat_tokens[0],
    );
    let mut stream = b.clone().stream_events(follow).await.unwrap().into_inner();
    stream.message().await.unwrap().unwrap();
    let mut db = sqlx::PgConnection::connect(&schema.url).await.unwrap();
    wait_for(
        "node B to record seat 0",
        Duration::from_secs(10),
        Duration::from_millis(10),
        async || (streams_on_record(&mut db, "away").await == 1).then_some(()),
    )
    .await;
    // Node A sees no stream of seat 0 itself: its timer fires, and the
    // store says seat 0 is present on B.
    clock.advance(3 * GRACE_MS);
    let left_at = clock.now_ms();
    drop(stream);
    wait_for(
        "node B to record seat 0 leaving",
        Duration::from_secs(10),
        Duration::from_millis(10),
        async || (streams_on_record(&mut db, "away").await == 0).then_some(()),
    )
    .await;
    clock.advance(GRACE_MS);
    let events = wait_for(
        "seat 0 to be reported absent",
        Duration::from_secs(20),
        Duration::from_millis(20),
        async || {
            let events = stored_events(&a, "away").await;
            if events.len() >= 3 {
                return Some(events);
            }
            // The recheck after "present elsewhere" waits on the test clock.
            clock.advance(1_000);
            None
        },
    )
    .await;
    let absent: Vec<_> = events
        .iter()
        .filter(|e| matches!(e.kind, Some(pb::game_event::Kind::SeatAbsent(_))))
        .collect();
    assert_eq!(absent.len(), 1, "{events:?}");
    let at = plylog::proto::convert::timestamp_ms(absent[0].recorded_at.as_ref());
    assert!(
        at >= left_at + GRACE_MS,
        "reported absent at {at}, before the grace period after it left ({left_at})"
    );
    let Some(pb::game_event::Kind::GameEnded(ended)) = &events[2].kind else {
        panic!("{events:?}")
    };
    assert_eq!(
        ended.outcome.as_ref().unwrap().reason,
        pb::EndReason::Abandoned as i32
    );
    let _ = db.close().await;
    println!(
        "seat 0 was present through node B for {} s of test time, then reported absent once",
        3 * GRACE_MS / 1000
    );
}

/// The node holding a game knows its own count of a seat's streams
/// exactly; its row in the store may still say 1 while the write of 0 is
/// queued. Asked for the seat's presence, a node's store counts only the
/// other nodes' rows, so that lagging row cannot hold the seat present (it
/// did: the grace timer then waited for a recheck that a busy machine's
/// test clock never reached).
async fn a_node_asking_for_a_seats_presence_counts_only_the_other_nodes_rows() {
    use plylog::store::{EventStore, PostgresStore, PresenceRecord, SharedPresence};
    const NOW: i64 = 1_800_000_000_000;
    let schema = fresh_postgres_schema().await;
    // Two nodes' stores on one database: each names its own rows.
    let holder = PostgresStore::open(&schema.url, 2).await.unwrap();
    let other = PostgresStore::open(&schema.url, 2).await.unwrap();
    let record = |streams: u32, absent_since_ms: Option<i64>| PresenceRecord {
        game_id: "away".into(),
        seat: 0,
        streams,
        absent_since_ms,
        now_ms: NOW,
    };
    // The holder's row still counts a stream; the other node's seat left
    // it a second ago.
    holder.record_presence(record(1, None)).await.unwrap();
    other
        .record_presence(record(0, Some(NOW - 1_000)))
        .await
        .unwrap();
    assert_eq!(
        holder.presence("away", 0).await.unwrap(),
        Some(SharedPresence {
            present: false,
            absent_since_ms: Some(NOW - 1_000),
        }),
        "the holder's own row does not count"
    );
    assert_eq!(
        other.presence("away", 0).await.unwrap(),
        Some(SharedPresence {
            present: true,
            absent_since_ms: Some(NOW),
        }),
        "to the other node, the holder's stream counts"
    );
    assert_eq!(
        holder.presence("away", 1).await.unwrap(),
        Some(SharedPresence {
            present: false,
            absent_since_ms: None,
        }),
        "a seat never recorded"
    );
    holder.close().await;
    other.close().await;
}

/// An event as a store takes it: `sequence`, a one-byte payload, time 1.
fn stored_event(sequence: u64, event_type: &'static str) -> plylog::store::NewEvent {
    plylog::store::NewEvent {
        sequence,
        event_type,
        payload: vec![sequence as u8].into(),
        recorded_at_ms: 1,
        chain: [0; 32],
        lifecycle: 0,
    }
}

/// A new game as a store takes it, with no request, seats or tags.
fn stored_game(game_id: &str) -> plylog::store::NewGame {
    plylog::store::NewGame {
        game_id: game_id.into(),
        created: stored_event(1, "game_created"),
        request: None,
        status: 1,
        seat_token_hashes: Vec::new(),
        wake: Default::default(),
        tags: Vec::new(),
    }
}

/// The append of one `move_played` event at `sequence` to `game_id`, with
/// no request, seats, wake or fence.
fn stored_move(game_id: &str, sequence: u64) -> plylog::store::Append {
    plylog::store::Append {
        game_id: game_id.into(),
        expected: sequence - 1,
        events: vec![stored_event(sequence, "move_played")],
        request: None,
        status: 1,
        seat_token_hashes: None,
        wake: Default::default(),
        fence: None,
    }
}

/// A store is given, all at once (so they queue for its writer together), a
/// new game for each of 20 ids twice over and an append to a game it made
/// before: each id is created once, by the first of its two writes (the
/// second finds it taken), and the append lands.
async fn writes_queued_together_commit_in_one_group() {
    use plylog::store::{EventStore, PostgresStore, StoreError};
    let schema = fresh_postgres_schema().await;
    let a = PostgresStore::open(&schema.url, 4).await.unwrap();
    a.create(stored_game("grouped-before")).await.unwrap();
    let ids: Vec<String> = (0..20).map(|g| format!("grouped-{g}")).collect();
    let creates = ids.iter().chain(&ids).map(|id| a.create(stored_game(id)));
    let append = a.append(stored_move("grouped-before", 2));
    let (created, appended) = tokio::join!(futures::future::join_all(creates), append);
    appended.expect("the append lands");
    let (first, again) = created.split_at(ids.len());
    for (id, (first, again)) in ids.iter().zip(first.iter().zip(again)) {
        assert!(first.is_ok(), "{id}: {first:?}");
        assert!(
            matches!(again, Err(StoreError::GameExists)),
            "{id} again: {again:?}"
        );
    }
    let mut db = {
        use sqlx::Connection;
        sqlx::PgConnection::connect(&schema.url).await.unwrap()
    };
    let games: i64 = sqlx::query_scalar("SELECT count(*) FROM games")
        .fetch_one(&mut db)
        .await
        .unwrap();
    assert_eq!(games, 21);

    a.close().await;
}

/// The store's writer keeps one connection between writes. Cut while the
/// writer is idle (a database restart, a failover), it is found dead by a
/// ping before the next write, which lands on another connection instead
/// of failing. The idle time is the input here: past the 500 ms after which
/// a kept connection is pinged.
async fn a_writer_whose_connection_was_cut_while_idle_writes_on_another() {
    use plylog::store::{EventStore, PostgresStore};
    let schema = fresh_postgres_schema().await;
    let application_name = application_name("idle-writer");
    let url = format!("{}&application_name={application_name}", schema.url);
    let store = PostgresStore::open(&url, 4).await.unwrap();
    store
        .create(stored_game("idle"))
        .await
        .expect("the game is created");
    let cut = cut_connections(&application_name).await;
    assert!(cut >= 1, "the writer's connection is among those cut");
    tokio::time::sleep(Duration::from_millis(600)).await;
    for sequence in 2..=3 {
        store
            .append(stored_move("idle", sequence))
            .await
            .unwrap_or_else(|e| panic!("append {sequence} after the cut: {e}"));
    }
    store.close().await;
}

async fn three_nodes_on_one_database_agree_on_every_game() {
    let seed = seed::seed("three_nodes_on_one_database_agree_on_every_game");
    let application_name = application_name("all");
    let schema = fresh_postgres_schema().await;
    let url = format!("{}&application_name={application_name}", schema.url);
    let mut addrs = Vec::new();
    for _ in 0..NODES {
        addrs.push(node(&url).await);
    }
    let nodes: Vec<Client> = addrs.iter().map(|a| client(*a)).collect();
    for g in 0..GAMES {
        let via = g % NODES;
        nodes[via]
            .clone()
            .create_game(create_mnk(&game_id(g), 16, 16, 8))
            .await
            .expect("game created");
    }
    // A subscriber on every node for every game.
    let mut seen: HashMap<(usize, usize), Seen> = HashMap::new();
    for g in 0..GAMES {
        for (n, node) in nodes.iter().enumerate() {
            let log = Arc::default();
            tokio::spawn(subscribe(node.clone(), game_id(g), Arc::clone(&log)));
            seen.insert((g, n), log);
        }
    }

    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let clients: Vec<_> = (0..CLIENTS)
        .map(|id| {
            tokio::spawn(play(
                id,
                seed::rng(seed, id as u64),
                nodes.clone(),
                Arc::clone(&stop),
                Arc::clone(&tally),
            ))
        })
        .collect();
    wait_until("moves before the cut", Duration::from_secs(120), || {
        tally.acked() >= CUT_AT
    })
    .await;
    let cut = cut_connections(&application_name).await;
    wait_until("moves after the cut", Duration::from_secs(240), || {
        tally.acked() >= MOVES
    })
    .await;
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.await.expect("a client finished");
    }
    let acked = std::mem::take(&mut *tally.acked.lock().unwrap());
    // Deduplication holds across nodes: every acknowledged request, sent
    // again through another node, gets its original reply.
    let replies = std::mem::take(&mut *tally.replies.lock().unwrap());
    retry_all(&replies, |via| nodes[(via + 1) % NODES].clone()).await;

    // Every node agrees with a fresh replay; every acknowledged move is in
    // the log; every subscriber saw its game's events once, in order.
    let mut logs: HashMap<String, Vec<pb::GameEvent>> = HashMap::new();
    for g in 0..GAMES {
        let replay = nodes[0]
            .clone()
            .get_replay(pb::GetReplayRequest {
                game_id: game_id(g),
                page_size: 10_000,
                page_token: String::new(),
                round: None,
                ..Default::default()
            })
            .await
            .unwrap()
            .into_inner();
        for node in &nodes {
            let game = node
                .clone()
                .get_game(pb::GetGameRequest {
                    game_id: game_id(g),
                    at_sequence: None,
                })
                .await
                .unwrap()
                .into_inner()
                .game;
            assert_eq!(game, replay.game, "game {g}");
        }
        let events: Vec<pb::GameEvent> =
            replay.steps.into_iter().map(|s| s.event.unwrap()).collect();
        logs.insert(game_id(g), events);
    }
    let lost = acked
        .iter()
        .filter(|(game, event, _, _)| logs[game].get(event.sequence as usize - 1) != Some(event))
        .count();
    let mut events_seen = 0;
    for ((g, n), log) in &seen {
        let last = logs[&game_id(*g)].len();
        wait_until(
            &format!("every event at the subscriber on node {n} for game {g}"),
            Duration::from_secs(20),
            || log.lock().unwrap().len() >= last,
        )
        .await;
        let sequences: Vec<u64> = log.lock().unwrap().iter().map(|(s, _)| *s).collect();
        assert_eq!(
            sequences,
            (1..=last as u64).collect::<Vec<_>>(),
            "subscriber on node {n} for game {g}"
        );
        events_seen += sequences.len();
    }
    // Cross-node delivery: from the reply on one node to the event's
    // arrival at a subscriber on each other node.
    let mut delays: Vec<Duration> = Vec::new();
    for (game, event, via, at) in &acked {
        let g: usize = game.trim_start_matches("mn-").parse().unwrap();
        for n in (0..NODES).filter(|n| n != via) {
            let log = seen[&(g, n)].lock().unwrap();
            let (_, arrived) = log[event.sequence as usize - 1];
            delays.push(arrived.saturating_duration_since(*at));
        }
    }
    delays.sort();
    println!(
        "{NODES} nodes, {GAMES} games, {} moves acknowledged and retried through another node, {} subscribers, {events_seen} events seen by subscribers, {} races lost (ABORTED), {} moves without a turn token refused after losing one, {} UNAVAILABLE answers retried after cutting {cut} connections, cross-node delivery after the reply: median {:?}, p99 {:?}, max {:?}; {lost} lost",
        acked.len(),
        seen.len(),
        tally.aborted.load(Ordering::Relaxed),
        tally.refused.load(Ordering::Relaxed),
        tally.unavailable.load(Ordering::Relaxed),
        percentile(&delays, 0.5),
        percentile(&delays, 0.99),
        delays.last().unwrap(),
    );
    assert_eq!(lost, 0);
    assert!(cut > 0, "no connection was cut");
}

/// Moves acknowledged through node A while node B's connections are cut.
const CUT_STORM_MOVES: usize = 3000;

async fn a_node_whose_connections_are_cut_answers_every_retry_with_its_original_reply() {
    let seed = seed::seed("a_node_whose_connections_are_cut");
    let schema = fresh_postgres_schema().await;
    let b_name = application_name("b");
    let a = client(node(&schema.url).await);
    let b = client(node(&format!("{}&application_name={b_name}", schema.url)).await);
    for g in 0..GAMES {
        a.clone()
            .create_game(create_mnk(&game_id(g), 64, 64, 64))
            .await
            .expect("game created");
    }
    // Subscribers on B follow every game, through A for the games A runs.
    let followed: Vec<Seen> = (0..GAMES).map(|_| Seen::default()).collect();
    for (g, seen) in followed.iter().enumerate() {
        tokio::spawn(subscribe(b.clone(), game_id(g), Arc::clone(seen)));
    }
    let stop = Arc::new(AtomicBool::new(false));
    let tally = Arc::new(Tally::default());
    let clients: Vec<_> = (0..CLIENTS)
        .map(|id| {
            tokio::spawn(play(
                id,
                seed::rng(seed, id as u64),
                vec![a.clone()],
                Arc::clone(&stop),
                Arc::clone(&tally),
            ))
        })
        .collect();
    // Cut B's connections every 20 to 200 ms while the moves go on.
    let cutting = Arc::new(AtomicBool::new(true));
    let cutter = {
        let cutting = Arc::clone(&cutting);
        let mut rng = seed::rng(seed, 1000);
        tokio::spawn(async move {
            let (mut cuts, mut connections) = (0, 0);
            while cutting.load(Ordering::Relaxed) {
                tokio::time::sleep(Duration::from_millis(rng.random_range(20..200))).await;
                connections += cut_connections(&b_name).await;
                cuts += 1;
            }
            (cuts, connections)
        })
    };
    wait_until(
        "moves while B's connections are cut",
        Duration::from_secs(240),
        || tally.acked() >= CUT_STORM_MOVES,
    )
    .await;
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.await.expect("a client finished");
    }
    cutting.store(false, Ordering::Relaxed);
    let (cuts, connections) = cutter.await.unwrap();
    // Every acknowledged request, retried through B, gets its original reply.
    let replies = std::mem::take(&mut *tally.replies.lock().unwrap());
    retry_all(&replies, |_| b.clone()).await;
    println!(
        "{} moves acknowledged through node A while node B's connections were cut {cuts} times ({connections} connections); every one retried through B got its original reply",
        replies.len()
    );
    assert!(connections > 0, "no connection of B was cut");
}

/// A TCP proxy to the PostgreSQL server that the test can take down (every
/// connection through it cut, new ones refused) and bring back.
struct Proxy {
    port: u16,
    up: Arc<AtomicBool>,
    /// Bumped on every take-down; each piped connection ends when it moves.
    cuts: tokio::sync::watch::Sender<u64>,
}

impl Proxy {
    async fn start() -> Proxy {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let up = Arc::new(AtomicBool::new(true));
        let (cuts, _) = tokio::sync::watch::channel(0);
        let target = postgres_url_authority();
        let (accepting, watch) = (Arc::clone(&up), cuts.clone());
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if !accepting.load(Ordering::Acquire) {
                    continue;
                }
                let target = target.clone();
                let mut cut = watch.subscribe();
                tokio::spawn(async move {
                    let Ok(mut outbound) = tokio::net::TcpStream::connect(&target).await else {
                        return;
                    };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = cut.changed() => {}
                    }
                });
            }
        });
        Proxy { port, up, cuts }
    }

    fn down(&self) {
        self.up.store(false, Ordering::Release);
        self.cuts.send_modify(|n| *n += 1);
    }

    fn restore(&self) {
        self.up.store(true, Ordering::Release);
    }
}

/// The health status of the whole server ("").
async fn health(addr: std::net::SocketAddr) -> i32 {
    use tonic_health::pb::{HealthCheckRequest, health_client::HealthClient};
    let channel = Channel::from_shared(format!("http://{addr}"))
        .unwrap()
        .connect_lazy();
    HealthClient::new(channel)
        .check(HealthCheckRequest {
            service: String::new(),
        })
        .await
        .map_or(-1, |r| r.into_inner().status)
}

/// While the node cannot reach PostgreSQL, health says NOT_SERVING and
/// calls are UNAVAILABLE / STORE_UNAVAILABLE: a move on a game in memory,
/// and a call on a game that must first be loaded (the failed load answers
/// every call queued on it alike, never INTERNAL). Once the database is
/// back, the move's retry is played once.
async fn while_the_database_is_unreachable_health_says_not_serving_and_calls_say_retry_later() {
    use tonic_types::StatusExt;
    const SERVING: i32 = 1;
    const NOT_SERVING: i32 = 2;
    let schema = fresh_postgres_schema().await;
    let proxy = Proxy::start().await;
    let url = schema.url.replacen(
        &postgres_url_authority(),
        &format!("127.0.0.1:{}", proxy.port),
        1,
    );
    let settings = Settings {
        postgres_connections: 4,
        access: AccessSettings::default(),
        store_check_interval: Duration::from_millis(200),
        ..Settings::new("127.0.0.1:0".parse().unwrap(), url)
    };
    let addr = spawn_app(settings).await.detach();
    let mut c = client(addr);
    c.create_game(create_mnk("outage", 3, 3, 3)).await.unwrap();
    assert_eq!(health(addr).await, SERVING);

    proxy.down();
    wait_for(
        "health to say NOT_SERVING",
        Duration::from_secs(20),
        Duration::from_millis(50),
        async || (health(addr).await == NOT_SERVING).then_some(()),
    )
    .await;
    let request = pb::SubmitMoveRequest {
        request_id: "during-outage".into(),
        ..move_request("outage", 0, place(1, 1))
    };
    let refused = c
        .submit_move(request.clone())
        .await
        .expect_err("no database, no move");
    let details = refused.get_error_details();
    assert_eq!(
        (
            refused.code(),
            refused.message(),
            details.error_info().map(|i| i.reason.as_str())
        ),
        (
            Code::Unavailable,
            "the event store is unavailable; retry with backoff",
            Some("STORE_UNAVAILABLE")
        ),
        "a fixed message and the reason, never the driver's text"
    );
    assert!(
        details.retry_info().and_then(|r| r.retry_delay).is_some(),
        "UNAVAILABLE carries RetryInfo: {refused:?}"
    );
    // Calls on a game not in memory wait for its load, which fails.
    let loads: Vec<_> = (0..3)
        .map(|_| {
            let mut c = c.clone();
            tokio::spawn(async move {
                c.get_game(pb::GetGameRequest {
                    game_id: "not-in-memory".into(),
                    at_sequence: None,
                })
                .await
            })
        })
        .collect();
    for load in loads {
        let refused = load.await.unwrap().expect_err("no database, no load");
        assert_eq!(
            (
                refused.code(),
                refused
                    .get_error_details()
                    .error_info()
                    .map(|i| i.reason.clone())
            ),
            (Code::Unavailable, Some("STORE_UNAVAILABLE".to_owned())),
            "a failed load is retried later: {refused:?}"
        );
    }

    proxy.restore();
    wait_for(
        "health to say SERVING again",
        Duration::from_secs(20),
        Duration::from_millis(50),
        async || (health(addr).await == SERVING).then_some(()),
    )
    .await;
    // The same request, retried, is played once.
    let reply = c.submit_move(request.clone()).await.unwrap().into_inner();
    assert_eq!(reply.events[0].sequence, 2);
    let again = c.submit_move(request).await.unwrap().into_inner();
    assert_eq!(again, reply);
}

/// A database that turns read-only under a node, as a standby does (during
/// a failover a proxy may send a new connection to a member that is still
/// in recovery while it is promoted: the HA test met it), answers
/// UNAVAILABLE with a retryable reason, never INTERNAL; once it takes
/// writes again, so does the node. On a database of its own (made read-only
/// for new sessions with `ALTER DATABASE`), dropped at the end.
async fn a_database_that_turns_read_only_answers_retry_later_never_internal() {
    use sqlx::{ConnectOptions, Connection};
    use tonic_types::StatusExt;
    let name = format!("plylog_ro_{}", uuid::Uuid::new_v4().simple());
    let base = postgres_url();
    let url = base
        .parse::<sqlx::postgres::PgConnectOptions>()
        .unwrap()
        .database(&name)
        .to_url_lossy()
        .to_string();
    let mut admin = sqlx::PgConnection::connect(&base).await.unwrap();
    let admin_sql = async |admin: &mut sqlx::PgConnection, sql: String| {
        sqlx::query(&sql).execute(admin).await.unwrap();
    };
    admin_sql(&mut admin, format!("CREATE DATABASE {name}")).await;
    let settings = Settings {
        postgres_connections: 4,
        access: AccessSettings {
            seat_tokens: false,
            ..AccessSettings::default()
        },
        ..Settings::new("127.0.0.1:0".parse().unwrap(), url)
    };
    let app = spawn_app(settings).await;
    let mut c = client(app.addr);
    c.create_game(create_mnk("ro", 3, 3, 3)).await.unwrap();
    // New sessions are read-only, and the node's sessions are ended: its
    // pool connects again, into read-only sessions.
    let sessions = |name: &str| {
        format!(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '{name}' AND pid <> pg_backend_pid()"
        )
    };
    admin_sql(
        &mut admin,
        format!("ALTER DATABASE {name} SET default_transaction_read_only = on"),
    )
    .await;
    admin_sql(&mut admin, sessions(&name)).await;
    // The same move each time, under its own request id.
    let centre = |request_id: String| pb::SubmitMoveRequest {
        request_id,
        ..move_request("ro", 0, place(1, 1))
    };
    let mut reasons = Vec::new();
    for attempt in 0..6 {
        let refused = c
            .submit_move(centre(format!("read-only-{attempt}")))
            .await
            .expect_err("a read-only database takes no move");
        let reason = refused
            .get_error_details()
            .error_info()
            .map(|i| i.reason.clone())
            .unwrap_or_default();
        assert_eq!(
            refused.code(),
            Code::Unavailable,
            "retry later, never INTERNAL: {refused:?}"
        );
        reasons.push(reason);
    }
    assert!(
        reasons.iter().all(|r| r == "STORE_UNAVAILABLE"),
        "{reasons:?}"
    );
    admin_sql(
        &mut admin,
        format!("ALTER DATABASE {name} RESET default_transaction_read_only"),
    )
    .await;
    admin_sql(&mut admin, sessions(&name)).await;
    let reply = wait_for(
        "the move to be played once the database takes writes",
        Duration::from_secs(30),
        Duration::from_millis(100),
        async || {
            c.clone()
                .submit_move(centre("read-only-after".into()))
                .await
                .ok()
        },
    )
    .await
    .into_inner();
    assert_eq!(reply.events[0].sequence, 2);
    app.stop().await;
    admin_sql(&mut admin, format!("DROP DATABASE {name} WITH (FORCE)")).await;
}

/// The `host:port` of the PostgreSQL test database's URL.
fn postgres_url_authority() -> String {
    let url = postgres_url();
    let authority = url.split("://").nth(1).unwrap().split('/').next().unwrap();
    authority.rsplit('@').next().unwrap().to_owned()
}

/// The late commit that makes a reader following a sequence skip events
/// (Marten #1629, #4964): a transaction takes position 3 and stays open
/// while the node appends. Positions come from `feed_head`'s row lock, so
/// the node's append cannot take position 4 before position 3 commits, and
/// a reader following the feed sees 3, then 4, never 4 alone.
async fn a_feed_reader_waits_for_a_position_an_open_transaction_holds_and_never_skips_it() {
    use prost::Message;
    use sqlx::Connection;
    use tokio_stream::StreamExt;
    let schema = fresh_postgres_schema().await;
    let c = client(node(&schema.url).await);
    c.clone()
        .create_game(create_mnk("held", 3, 3, 3))
        .await
        .unwrap();
    c.clone()
        .create_game(create_mnk("other", 3, 3, 3))
        .await
        .unwrap();
    let mut feed = c
        .clone()
        .stream_all_events(pb::StreamAllEventsRequest {
            follow: true,
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    // Each message of the feed as text, up to a checkpoint at `upto`.
    let read_until = async |feed: &mut tonic::Streaming<pb::StreamAllEventsResponse>, upto: u64| {
        let mut seen = Vec::new();
        loop {
            let message = tokio::time::timeout(Duration::from_secs(30), feed.next())
                .await
                .expect("a feed message within 30 s")
                .expect("the feed open")
                .unwrap();
            match message.kind.unwrap() {
                pb::stream_all_events_response::Kind::Event(e) => {
                    let event = e.event.unwrap();
                    seen.push(format!(
                        "{} {} {}",
                        e.position, event.game_id, event.sequence
                    ));
                }
                pb::stream_all_events_response::Kind::Checkpoint(c) => {
                    if c.positions == [upto] {
                        return seen;
                    }
                }
            }
        }
    };
    assert_eq!(read_until(&mut feed, 2).await, ["1 held 1", "2 other 1"]);
    // Our transaction takes position 3 for an event of "held" (sequence
    // 2), written as the node writes one, and stays open.
    let mut conn = sqlx::PgConnection::connect(&schema.url).await.unwrap();
    let mut tx = conn.begin().await.unwrap();
    let position: i64 =
        sqlx::query_scalar("UPDATE feed_head SET position = position + 1 RETURNING position")
            .fetch_one(&mut *tx)
            .await
            .unwrap();
    assert_eq!(position, 3);
    let holder: i32 = sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(&mut *tx)
        .await
        .unwrap();
    let payload = pb::GameEvent {
        game_id: "held".into(),
        sequence: 2,
        kind: Some(pb::game_event::Kind::SeatTokenReissued(
            pb::SeatTokenReissued { seat: 0 },
        )),
        ..Default::default()
    }
    .encode_to_vec();
    sqlx::query(
        "INSERT INTO events (game_id, sequence, event_type, event_version, payload, recorded_at_ms, position) \
         VALUES ('held', 2, 'seat_token_reissued', 1, $1, 0, 3)",
    )
    .bind(payload)
    .execute(&mut *tx)
    .await
    .unwrap();
    // The node appends a move to "other": its write waits for our lock.
    let mut mover = c.clone();
    let moving = tokio::spawn(async move {
        mover
            .submit_move(move_request("other", 0, place(1, 1)))
            .await
    });
    let mut watcher = sqlx::PgConnection::connect(&schema.url).await.unwrap();
    wait_for(
        "the node's write to wait for our transaction",
        Duration::from_secs(30),
        Duration::from_millis(20),
        async || {
            let waiting: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))",
            )
            .bind(holder)
            .fetch_one(&mut watcher)
            .await
            .unwrap();
            (waiting > 0).then_some(())
        },
    )
    .await;
    // Meanwhile the reader has nothing past 2: its next checkpoint (a
    // heartbeat) is still at 2, with no event before it.
    assert_eq!(read_until(&mut feed, 2).await, Vec::<String>::new());
    assert!(
        !moving.is_finished(),
        "the move was acknowledged before position 3 committed"
    );
    tx.commit().await.unwrap();
    moving
        .await
        .unwrap()
        .expect("the move, once position 3 committed");
    assert_eq!(read_until(&mut feed, 4).await, ["3 held 2", "4 other 2"]);
}
