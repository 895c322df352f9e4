//! Several nodes, one truth: three plylog servers in this process share one
//! fresh PostgreSQL schema. Clients send every call to a random node, race
//! each other on the same games with turn tokens, and retry with their
//! request ids; a subscriber on every node follows every game. Midway, every
//! database connection of the nodes is cut (`pg_terminate_backend`): calls
//! fail with UNAVAILABLE for a moment and the nodes recover by themselves.
//! At the end every subscriber has seen every event of its game exactly once
//! in order, every node's GetGame equals a fresh replay, and every
//! acknowledged move is in the log.
//!
//! Needs PostgreSQL: runs when `DATABASE_URL` is a `postgres://` URL or
//! `PLYLOG_TEST_BACKEND=postgres`, and says it was skipped otherwise. Run
//! with `--nocapture` to see the figures.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use plylog::api::auth::AccessSettings;
use plylog::app::{Application, Settings};
use plylog::proto::game_service_client::GameServiceClient;
use plylog::proto::{self as pb};
use plylog::registry::RegistrySettings;
use rand::Rng;
use tonic::Code;
use tonic::transport::Channel;

#[path = "support/games.rs"]
mod games;
#[path = "support/postgres.rs"]
mod postgres_support;
use games::create_mnk;
use postgres_support::{fresh_postgres_schema, on_postgres, postgres_url};

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

/// Starts a node on `url`; its address.
async fn node(url: &str) -> std::net::SocketAddr {
    node_catching_up_every(url, Duration::from_millis(500)).await
}

/// Starts a node on `url` that checks its games every `interval`.
async fn node_catching_up_every(url: &str, interval: Duration) -> std::net::SocketAddr {
    let settings = Settings {
        listen: "127.0.0.1:0".parse().unwrap(),
        database_url: url.to_owned(),
        postgres_connections: 8,
        sqlite_synchronous_normal: false,
        registry: RegistrySettings {
            catch_up_interval: interval,
            heartbeat_interval: Duration::from_millis(500),
            ..RegistrySettings::default()
        },
        shutdown_grace: Duration::from_secs(1),
        access: AccessSettings::default(),
        max_request_bytes: 64 * 1024,
        max_in_flight: 4096,
        tls: None,
    };
    let app = Application::build(settings).await.expect("node builds");
    let addr = app.local_addr();
    tokio::spawn(app.run_until(std::future::pending()));
    addr
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
    /// Acknowledged requests with their replies, for retries elsewhere.
    replies: Mutex<Vec<(pb::SubmitMoveRequest, pb::SubmitMoveResponse)>>,
    /// Moves refused because another node's move won the race.
    aborted: AtomicUsize,
    /// Moves sent without a turn token that, decided again on the fresh
    /// state after losing a race, were no longer legal.
    refused: AtomicUsize,
    /// Calls answered UNAVAILABLE (and retried).
    unavailable: AtomicUsize,
}

/// Plays random legal moves on random games through random nodes until
/// `stop`.
async fn play(id: usize, nodes: Vec<Client>, stop: Arc<AtomicBool>, tally: Arc<Tally>) {
    let mut k = 0;
    while !stop.load(Ordering::Relaxed) {
        let (g, via) = {
            let mut rng = rand::rng();
            (rng.random_range(0..GAMES), rng.random_range(0..NODES))
        };
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
        let (mv, with_token) = {
            let mut rng = rand::rng();
            (
                legal.moves[rng.random_range(0..legal.moves.len())],
                rng.random_bool(0.75),
            )
        };
        k += 1;
        // Most moves carry a turn token; the others are decided again on the
        // fresh state when they lose a race.
        let request = pb::SubmitMoveRequest {
            game_id: game.clone(),
            seat: Some(seat),
            r#move: Some(mv),
            request_id: format!("c{id}-{k}"),
            expected_sequence: with_token.then_some(legal.sequence),
        };
        // Retry through any node until the outcome is known.
        loop {
            let via = rand::rng().random_range(0..NODES);
            match nodes[via].clone().submit_move(request.clone()).await {
                Ok(reply) => {
                    let reply = reply.into_inner();
                    let mut acked = tally.acked.lock().unwrap();
                    for event in &reply.events {
                        acked.push((game.clone(), event.clone(), via, Instant::now()));
                    }
                    tally.replies.lock().unwrap().push((request, reply));
                    break;
                }
                Err(status) if status.code() == Code::Unavailable => {
                    tally.unavailable.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                Err(status) if status.code() == Code::Aborted => {
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
                Err(status) => panic!("SubmitMove: {status:?}"),
            }
        }
    }
}

/// Follows `game` on one node, recording each event's sequence and arrival
/// time, until the stream ends (when the test's runtime goes).
async fn subscribe(mut client: Client, game: String, seen: Arc<Mutex<Vec<(u64, Instant)>>>) {
    let mut stream = client
        .stream_events(pb::StreamEventsRequest {
            game_id: game,
            from_sequence: 1,
            follow: true,
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

/// Cuts every database connection of the nodes (`application_name`).
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
    cut.len() as u64
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

/// Whether PostgreSQL is configured; says the test was skipped if not.
fn postgres_configured() -> bool {
    let available =
        on_postgres() || std::env::var("DATABASE_URL").is_ok_and(|url| url.starts_with("postgres"));
    if !available {
        println!(
            "skipped: set DATABASE_URL=postgres://... (or PLYLOG_TEST_BACKEND=postgres) to run the multi-node tests"
        );
    }
    available
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_that_missed_a_notification_catches_up_by_itself() {
    use prost::Message;
    use sqlx::Connection;
    if !postgres_configured() {
        return;
    }
    let url = fresh_postgres_schema().await;
    let addr = node_catching_up_every(&url, Duration::from_millis(200)).await;
    let mut c = client(addr);
    c.create_game(create_mnk("quiet", 3, 3, 3)).await.unwrap();
    let seen: Seen = Arc::default();
    tokio::spawn(subscribe(c.clone(), "quiet".into(), Arc::clone(&seen)));
    while seen.lock().unwrap().is_empty() {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Another writer appends a move without any notification, as if the
    // node's listening connection had been down at that moment.
    let event = pb::GameEvent {
        game_id: "quiet".into(),
        sequence: 2,
        recorded_at: None,
        kind: Some(pb::game_event::Kind::MovePlayed(pb::MovePlayed {
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
        })),
    };
    let mut writer = sqlx::PgConnection::connect(&url).await.unwrap();
    let mut tx = writer.begin().await.unwrap();
    sqlx::query(
        "INSERT INTO events (game_id, sequence, event_type, event_version, payload, recorded_at_ms) \
         VALUES ('quiet', 2, 'move_played', 1, $1, 0)",
    )
    .bind(event.encode_to_vec())
    .execute(&mut *tx)
    .await
    .unwrap();
    sqlx::query("UPDATE games SET last_sequence = 2 WHERE game_id = 'quiet'")
        .execute(&mut *tx)
        .await
        .unwrap();
    tx.commit().await.unwrap();
    let quiet_since = Instant::now();
    while seen.lock().unwrap().len() < 2 && quiet_since.elapsed() < Duration::from_secs(10) {
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let sequences: Vec<u64> = seen.lock().unwrap().iter().map(|(s, _)| *s).collect();
    assert_eq!(
        sequences,
        [1, 2],
        "the subscriber never got the silent append"
    );
    println!(
        "a silent append reached the subscriber after {:?} (catch-up every 200 ms)",
        quiet_since.elapsed()
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_nodes_on_one_database_agree_on_every_game() {
    if !postgres_configured() {
        return;
    }
    let application_name = format!("plylog-mn-{}", uuid::Uuid::new_v4().simple());
    let url = format!(
        "{}&application_name={application_name}",
        fresh_postgres_schema().await
    );
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
                nodes.clone(),
                Arc::clone(&stop),
                Arc::clone(&tally),
            ))
        })
        .collect();
    let acked_count = || tally.acked.lock().unwrap().len();
    let started = Instant::now();
    while acked_count() < CUT_AT && started.elapsed() < Duration::from_secs(120) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cut = cut_connections(&application_name).await;
    while acked_count() < MOVES && started.elapsed() < Duration::from_secs(240) {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    stop.store(true, Ordering::Relaxed);
    for c in clients {
        c.await.expect("a client finished");
    }
    let acked = std::mem::take(&mut *tally.acked.lock().unwrap());
    assert!(acked.len() >= MOVES, "only {} moves in time", acked.len());
    // Deduplication holds across nodes: every acknowledged request, sent
    // again through another node, gets its original reply.
    let replies = std::mem::take(&mut *tally.replies.lock().unwrap());
    for (i, (request, reply)) in replies.iter().enumerate() {
        let retried = nodes[i % NODES]
            .clone()
            .submit_move(request.clone())
            .await
            .expect("a retry is answered");
        assert_eq!(&retried.into_inner(), reply, "{}", request.request_id);
    }

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
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut events_seen = 0;
    for ((g, n), log) in &seen {
        let last = logs[&game_id(*g)].len() as u64;
        while log.lock().unwrap().len() < last as usize && Instant::now() < deadline {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        let sequences: Vec<u64> = log.lock().unwrap().iter().map(|(s, _)| *s).collect();
        assert_eq!(
            sequences,
            (1..=last).collect::<Vec<_>>(),
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
