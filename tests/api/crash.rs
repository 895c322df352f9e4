//! Nothing acknowledged is lost: the real `plylog` binary runs as a child
//! process on a SQLite file (or, with `PLYLOG_TEST_BACKEND=postgres`, a fresh
//! Postgres schema) while clients play many games at once, and is
//! killed with SIGKILL at random moments ([`KILLS`] times), each time started
//! again on the same file. Clients retry every request with its request id
//! until it succeeds. At the end, every move a client got an OK for must be
//! in its game's log exactly as acknowledged, a retry of every acknowledged
//! request must return the recorded reply, and every game's replay must equal
//! GetGame. Run with `--nocapture` to see the figures.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use plylog::proto::{self as pb};
use rand::Rng;

use plylog_testkit::create_mnk;
use plylog_testkit::process;
use plylog_testkit::seed;
use plylog_testkit::{
    Client, TestDatabase, bearer, lazy_client, move_request, on_postgres, place,
    plain_move_request, timed_tic_tac_toe, wait_for, wait_until, within,
};
use process::{Server, plylog};

/// How many times the server is killed.
const KILLS: usize = 6;
/// Clients playing at once.
const CLIENTS: usize = 8;
/// Moves per game before a client starts its next game.
const MOVES_PER_GAME: u32 = 30;

/// Starts the binary on the database `db`, on `port` (0: any free one),
/// and waits until it serves.
fn start(db: &TestDatabase, port: u16) -> Server {
    start_with(db, port, &[])
}

/// [`start`] with more command-line arguments.
fn start_with(db: &TestDatabase, port: u16, args: &[&str]) -> Server {
    Server::start(
        |port| {
            let mut command = plylog();
            command
                .args(["--listen", &format!("127.0.0.1:{port}")])
                .args(["--database-url", &db.url])
                .arg("--seat-token-secret-file")
                .arg(db.secret_file())
                .args(args);
            command
        },
        port,
    )
}

fn client(port: u16) -> Client {
    lazy_client(port, Duration::from_millis(500), Duration::from_secs(5))
}

/// Calls until the server answers with something other than "unreachable":
/// the request is retried as is, with its request id.
async fn until_answered<T, F, Fut>(client: &Client, call: F) -> Result<T, tonic::Status>
where
    F: Fn(Client) -> Fut,
    Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
{
    until_answered_noting(client, call)
        .await
        .map(|(reply, _)| reply)
}

/// [`until_answered`], also telling when (Unix epoch milliseconds) the last
/// attempt that ended in an error ended, if one did.
async fn until_answered_noting<T, F, Fut>(
    client: &Client,
    call: F,
) -> Result<(T, Option<i64>), tonic::Status>
where
    F: Fn(Client) -> Fut,
    Fut: std::future::Future<Output = Result<tonic::Response<T>, tonic::Status>>,
{
    let mut failed_at = None;
    loop {
        match call(client.clone()).await {
            Ok(reply) => return Ok((reply.into_inner(), failed_at)),
            Err(status)
                if matches!(
                    status.code(),
                    tonic::Code::Unavailable
                        | tonic::Code::Unknown
                        | tonic::Code::Cancelled
                        | tonic::Code::DeadlineExceeded
                ) || lost_in_transport(&status) =>
            {
                failed_at = Some(now_ms());
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Err(status) => return Err(status),
        }
    }
}

/// Whether the client's transport failed the call (e.g. a request sent as
/// the server's GOAWAY arrived, which tonic reports as INTERNAL): the
/// server's answer, if it made one, never arrived, so the call is retried.
fn lost_in_transport(status: &tonic::Status) -> bool {
    std::error::Error::source(status).is_some_and(|cause| cause.is::<tonic::transport::Error>())
}

/// An acknowledged move.
struct Ack {
    request: pb::SubmitMoveRequest,
    /// The seat token it was sent with (from CreateGame's reply, or its
    /// retry's).
    token: String,
    /// The reply it got.
    reply: pb::SubmitMoveResponse,
    /// When the last attempt that ended in an error ended (Unix epoch
    /// milliseconds), if one did before the one answered.
    failed_at: Option<i64>,
}

/// Acknowledged moves.
type Acked = Arc<Mutex<Vec<Ack>>>;

/// Plays games one after another until `stop`, recording every OK.
async fn play(id: usize, port: u16, stop: Arc<AtomicBool>, acked: Acked) -> Vec<String> {
    let c = client(port);
    let mut games = Vec::new();
    for g in 0.. {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let game_id = format!("c{id}-g{g}");
        let create = pb::CreateGameRequest {
            request_id: format!("create-{game_id}"),
            ..create_mnk(&game_id, 20, 20, 20)
        };
        // A create cut off by a kill is retried; whichever reply arrives
        // carries the seat tokens, the same ones.
        let tokens = until_answered(&c, |mut c| {
            let create = create.clone();
            async move { c.create_game(create).await }
        })
        .await
        .expect("the game is created")
        .seat_tokens;
        assert_eq!(
            tokens.len(),
            2,
            "{game_id}: CreateGame returned no seat tokens"
        );
        games.push(game_id.clone());
        for k in 0..MOVES_PER_GAME {
            let request = pb::SubmitMoveRequest {
                request_id: format!("{game_id}-m{k}"),
                ..move_request(&game_id, k % 2, place((k / 20) as i32, (k % 20) as i32))
            };
            let token = tokens[(k % 2) as usize].clone();
            let (reply, failed_at) = until_answered_noting(&c, |mut c| {
                let request = bearer(request.clone(), &token);
                async move { c.submit_move(request).await }
            })
            .await
            .unwrap_or_else(|status| panic!("{game_id} move {k}: {status:?}"));
            acked.lock().unwrap().push(Ack {
                request,
                token,
                reply,
                failed_at,
            });
        }
    }
    games
}

/// Clients playing against the server on `port` until stopped.
struct Load {
    stop: Arc<AtomicBool>,
    acked: Acked,
    clients: Vec<tokio::task::JoinHandle<Vec<String>>>,
}

impl Load {
    fn start(port: u16) -> Load {
        let stop = Arc::new(AtomicBool::new(false));
        let acked: Acked = Arc::default();
        let clients = (0..CLIENTS)
            .map(|id| tokio::spawn(play(id, port, Arc::clone(&stop), Arc::clone(&acked))))
            .collect();
        Load {
            stop,
            acked,
            clients,
        }
    }

    /// How many moves have been acknowledged so far.
    fn acked(&self) -> usize {
        self.acked.lock().unwrap().len()
    }

    /// Waits (up to a minute) until `count` moves are acknowledged.
    async fn wait_for_acks(&self, count: usize) {
        wait_for(
            &format!("{count} moves to be acknowledged"),
            Duration::from_secs(60),
            Duration::from_millis(20),
            async || (self.acked() >= count).then_some(()),
        )
        .await;
    }

    /// Stops the clients once their current game is done; the games they
    /// played and the acknowledged moves.
    async fn finish(self) -> (Vec<String>, Vec<Ack>) {
        self.stop.store(true, Ordering::Relaxed);
        let mut games = Vec::new();
        for c in self.clients {
            games.extend(c.await.expect("a client finished"));
        }
        let acked = std::mem::take(&mut *self.acked.lock().unwrap());
        (games, acked)
    }
}

/// Checks, against the server on `port`, that every game's log is dense and
/// its replay equals GetGame, that every acknowledged move is in its log
/// exactly as acknowledged, that the feed holds every event of every log
/// exactly once, and that retrying it returns the recorded reply.
/// Returns (events checked, acknowledged events missing or changed).
async fn verify(port: u16, games: &[String], acked: &[Ack]) -> (usize, usize) {
    let c = client(port);
    let mut logs: HashMap<String, Vec<pb::GameEvent>> = HashMap::new();
    let mut events_checked = 0;
    for game_id in games {
        let request = pb::GetReplayRequest {
            game_id: game_id.clone(),
            page_size: 10_000,
            page_token: String::new(),
            round: None,
            ..Default::default()
        };
        let replay = until_answered(&c, |mut c| {
            let request = request.clone();
            async move { c.get_replay(request).await }
        })
        .await
        .unwrap();
        let request = pb::GetGameRequest {
            game_id: game_id.clone(),
            at_sequence: None,
        };
        let game = until_answered(&c, |mut c| {
            let request = request.clone();
            async move { c.get_game(request).await }
        })
        .await
        .unwrap()
        .game
        .unwrap();
        assert_eq!(replay.game.as_ref(), Some(&game), "{game_id}");
        let events: Vec<pb::GameEvent> =
            replay.steps.into_iter().map(|s| s.event.unwrap()).collect();
        let sequences: Vec<u64> = events.iter().map(|e| e.sequence).collect();
        assert_eq!(sequences, (1..=events.len() as u64).collect::<Vec<_>>());
        events_checked += events.len();
        logs.insert(game_id.clone(), events);
    }
    // The feed holds every event of every log exactly once, as the log
    // holds it, at positions dense from 1: so every acknowledged event
    // (checked in its log below) is in the feed exactly once.
    let mut feed = c
        .clone()
        .stream_all_events(pb::StreamAllEventsRequest::default())
        .await
        .expect("the feed")
        .into_inner();
    let mut positions = Vec::new();
    let mut in_feed: HashMap<(String, u64), usize> = HashMap::new();
    while let Some(message) = within(feed.message()).await.expect("the feed's messages") {
        if let Some(pb::stream_all_events_response::Kind::Event(e)) = message.kind {
            let event = e.event.expect("the event");
            assert_eq!(
                logs.get(&event.game_id)
                    .and_then(|log| log.get(event.sequence as usize - 1)),
                Some(&event),
                "feed position {}",
                e.position
            );
            positions.push(e.position);
            *in_feed.entry((event.game_id, event.sequence)).or_default() += 1;
        }
    }
    assert_eq!(positions, (1..=positions.len() as u64).collect::<Vec<_>>());
    assert_eq!(positions.len(), events_checked, "events in the feed");
    assert!(
        in_feed.values().all(|&n| n == 1),
        "an event twice in the feed"
    );
    let mut lost = 0;
    for Ack {
        request,
        token,
        reply,
        ..
    } in acked
    {
        let log = &logs[&request.game_id];
        for event in &reply.events {
            if log.get(event.sequence as usize - 1) != Some(event) {
                lost += 1;
            }
        }
        let retried = until_answered(&c, |mut c| {
            let request = bearer(request.clone(), token);
            async move { c.submit_move(request).await }
        })
        .await
        .unwrap();
        assert_eq!(&retried, reply, "retry of {}", request.request_id);
    }
    (events_checked, lost)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_acknowledged_move_survives_repeated_sigkills() {
    let mut rng = seed::rng(
        seed::seed("every_acknowledged_move_survives_repeated_sigkills"),
        0,
    );
    let db = TestDatabase::fresh().await;
    let mut server = start(&db, 0);
    let port = server.port;
    let load = Load::start(port);
    let mut acked_before_kill = Vec::new();
    for _ in 0..KILLS {
        // Let the clients play a random while, then kill mid-flight.
        let pause = rng.random_range(300..900);
        tokio::time::sleep(Duration::from_millis(pause)).await;
        acked_before_kill.push(load.acked());
        server.kill();
        server = start(&db, port);
    }
    // The clients reach the last server before they stop.
    let last_kill = load.acked();
    load.wait_for_acks(last_kill + 50).await;
    let (games, acked) = load.finish().await;
    // Kills landed while moves were being acknowledged, not on an idle server.
    assert!(
        acked_before_kill.windows(2).all(|w| w[0] < w[1]),
        "{acked_before_kill:?}"
    );
    let (events_checked, lost) = verify(port, &games, &acked).await;
    server.kill();
    println!(
        "{KILLS} SIGKILLs survived; {} games, {} acknowledged moves (acknowledged before each kill: {acked_before_kill:?}), {events_checked} events checked, {lost} lost",
        games.len(),
        acked.len(),
    );
    assert_eq!(lost, 0);
}

/// SIGTERMs rounds.
const SIGTERMS: usize = 4;

/// Milliseconds since the Unix epoch now, on the clock the server stamps
/// events with.
fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_ends_streams_clearly_finishes_in_flight_moves_and_exits_cleanly() {
    let db = TestDatabase::fresh().await;
    let mut server = start(&db, 0);
    let port = server.port;
    let load = Load::start(port);
    // Each round SIGTERMs the server under load and starts another: every
    // call the stopped server committed must have been answered OK.
    let mut in_flight_at_term = Vec::new();
    for round in 0..SIGTERMS {
        load.wait_for_acks(load.acked() + 100).await;
        // A spectator follows a game that is being played.
        let mut stream = client(port)
            .stream_events(pb::StreamEventsRequest {
                game_id: format!("c{round}-g0"),
                from_sequence: 1,
                follow: true,
                round: None,
            })
            .await
            .expect("stream opens")
            .into_inner();
        let exit = server.terminate();
        assert!(exit.success(), "exit status {exit:?}");
        // The stream ends with a status a client can act on, not a reset.
        let ended = loop {
            match stream.message().await {
                Ok(Some(_)) => continue,
                Ok(None) => panic!("the stream ended without a status"),
                Err(status) => break status,
            }
        };
        assert_eq!(ended.code(), tonic::Code::Unavailable, "{ended:?}");
        assert!(ended.message().contains("shutting down"), "{ended:?}");
        let draining = server.log_lines("draining in-flight calls");
        let in_flight: usize = draining
            .first()
            .and_then(|line| line.split("in_flight=").nth(1))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or_else(|| panic!("no in-flight count logged: {draining:?}"));
        in_flight_at_term.push(in_flight);
        assert_eq!(
            server.log_lines("every call in flight was answered").len(),
            1
        );
        server = start(&db, port);
    }
    load.wait_for_acks(load.acked() + 50).await;
    let (games, acked) = load.finish().await;
    let (events_checked, lost) = verify(port, &games, &acked).await;
    server.kill();
    // Attempts at one request run one after another, so an attempt that
    // failed after the move was committed means the attempt that committed
    // it failed: a call in flight at a SIGTERM that was not answered.
    // (An attempt refused while no server ran fails before the commit.)
    let failed_in_flight: Vec<&str> = acked
        .iter()
        .filter(|ack| {
            let committed = ack.reply.events[0].recorded_at.as_ref().unwrap();
            let committed_ms = committed.seconds * 1000 + i64::from(committed.nanos) / 1_000_000;
            ack.failed_at.is_some_and(|failed| failed > committed_ms)
        })
        .map(|ack| ack.request.request_id.as_str())
        .collect();
    println!(
        "{SIGTERMS} SIGTERMs with {in_flight_at_term:?} calls in flight: each exited 0 and answered them; {} games, {} acknowledged moves ({} retried after an error), {events_checked} events checked, {lost} lost",
        games.len(),
        acked.len(),
        acked.iter().filter(|ack| ack.failed_at.is_some()).count()
    );
    assert!(
        in_flight_at_term.iter().any(|&n| n > 0),
        "no SIGTERM landed with a call in flight"
    );
    assert_eq!(
        failed_in_flight,
        Vec::<&str>::new(),
        "committed but answered with an error"
    );
    assert_eq!(lost, 0);
}

/// A clock that runs while the server is SIGKILLed runs out while no server
/// is up; the server started after the deadline re-arms it from the log on
/// load and appends the timeout once (and a later restart adds nothing).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clock_running_at_a_sigkill_times_out_once_after_the_restart() {
    let db = TestDatabase::fresh().await;
    let server = start(&db, 0);
    let port = server.port;
    let request = timed_tic_tac_toe("killed-clock", 1);
    let created = until_answered(&client(port), |mut c| {
        let request = request.clone();
        async move { c.create_game(request).await }
    })
    .await
    .expect("created");
    let clocks = created.game.unwrap().position.unwrap().clocks.unwrap();
    let deadline = plylog::proto::convert::timestamp_ms(clocks.deadline.as_ref());
    server.kill();
    // Wait for the wall clock itself to pass the deadline: that is the
    // condition, read off the clock the server stamps events with.
    let left_ms = u64::try_from(deadline - now_ms()).unwrap_or(0);
    wait_until(
        "the wall clock to pass the deadline (does it stand still?)",
        Duration::from_millis(left_ms + 10_000),
        || now_ms() > deadline,
    )
    .await;
    let log = |c: Client| async move {
        let mut stream = c
            .clone()
            .stream_events(pb::StreamEventsRequest {
                game_id: "killed-clock".into(),
                from_sequence: 1,
                follow: false,
                round: None,
            })
            .await?
            .into_inner();
        let mut kinds = Vec::new();
        while let Some(item) = stream.message().await? {
            if let Some(pb::stream_events_response::Kind::Event(e)) = item.kind {
                kinds.push(e.kind.unwrap());
            }
        }
        Ok::<_, tonic::Status>(kinds)
    };
    let mut server = start(&db, port);
    // Read behind the server's back until the timeout is stored: a call
    // would load the game itself (and its own timer would time it out),
    // racing the timer queue this test is about.
    wait_for(
        "the timeout after the restart",
        Duration::from_secs(20),
        Duration::from_millis(20),
        async || (stored_last_sequence(&db, "killed-clock").await >= 3).then_some(()),
    )
    .await;
    let kinds = log(client(port)).await.expect("the log reads");
    assert_eq!(kinds.len(), 3, "{kinds:?}");
    let expired = |kinds: &[pb::game_event::Kind]| {
        kinds
            .iter()
            .filter(|k| matches!(k, pb::game_event::Kind::TimeExpired(_)))
            .count()
    };
    assert_eq!(expired(&kinds), 1, "{kinds:?}");
    assert!(matches!(kinds[2], pb::game_event::Kind::GameEnded(_)));
    // The restarted server's timer queue loads the timed game by itself,
    // as due at startup.
    wait_until(
        "the restarted server to load the timed game",
        Duration::from_secs(10),
        || !server.log_lines("games due at startup woken").is_empty(),
    )
    .await;
    server.kill();
    server = start(&db, port);
    let kinds = log(client(port)).await.expect("the log reads");
    assert_eq!((kinds.len(), expired(&kinds)), (3, 1));
    server.kill();
}

/// Game `game_id`'s last sequence as the database holds it, read behind
/// the server's back.
async fn stored_last_sequence(db: &TestDatabase, game_id: &str) -> i64 {
    use sqlx::Connection;
    let sql = "SELECT last_sequence FROM games WHERE game_id = $1";
    if on_postgres() {
        let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
        let last = sqlx::query_scalar(sql).bind(game_id).fetch_one(&mut conn);
        last.await.unwrap()
    } else {
        let mut conn = sqlx::SqliteConnection::connect(&db.url).await.unwrap();
        let last = sqlx::query_scalar(sql).bind(game_id).fetch_one(&mut conn);
        last.await.unwrap()
    }
}

#[tokio::test]
async fn a_bot_thinking_at_a_sigkill_moves_exactly_once_after_the_restart() {
    let db = TestDatabase::fresh().await;
    // Minimax on an empty-ish 15x15 gomoku board with 50,000 nodes a move:
    // long enough (about a second or more) to be killed while thinking.
    const THINKING: [&str; 2] = ["--bot-nodes", "50000"];
    let server = start_with(&db, 0, &THINKING);
    let port = server.port;
    let mut request = create_mnk("killed-bot", 15, 15, 5);
    request.seats[1].bot = Some(pb::Bot {
        engine: pb::Engine::Minimax as i32,
        strength: 10,
        seed: Some(5),
    });
    let created = until_answered(&client(port), |mut c| {
        let request = request.clone();
        async move { c.create_game(request).await }
    })
    .await
    .expect("created");
    let token = created.seat_tokens[0].clone();
    let mv = pb::SubmitMoveRequest {
        request_id: "first".into(),
        ..plain_move_request("killed-bot", 0, place(7, 7))
    };
    until_answered(&client(port), |mut c| {
        let mv = bearer(mv.clone(), &token);
        async move { c.submit_move(mv).await }
    })
    .await
    .expect("the player's move");
    // The bot is thinking now (its move is not in): kill the server.
    let game = |c: Client| async move {
        let request = pb::GetGameRequest {
            game_id: "killed-bot".into(),
            at_sequence: None,
        };
        until_answered(&c, |mut c| {
            let request = request.clone();
            async move { c.get_game(request).await }
        })
        .await
        .expect("the game reads")
        .game
        .unwrap()
    };
    assert_eq!(game(client(port)).await.last_sequence, 2, "still thinking");
    server.kill();
    let server = start_with(&db, port, &THINKING);
    // The restarted server's timer queue loads the game by itself, before
    // anyone asks, and its bot moves: a bot to move is due at once, or,
    // when the killed server had claimed the game (or leased it while its
    // bot thought), once that claim's lease ends (at most 30 s).
    wait_for(
        "the restarted server to load the bot's game by itself",
        Duration::from_secs(90),
        Duration::from_millis(50),
        async || (stored_last_sequence(&db, "killed-bot").await >= 3).then_some(()),
    )
    .await;
    let log = |c: Client| async move {
        let mut stream = c
            .clone()
            .stream_events(pb::StreamEventsRequest {
                game_id: "killed-bot".into(),
                from_sequence: 1,
                follow: false,
                round: None,
            })
            .await?
            .into_inner();
        let mut events = Vec::new();
        while let Some(item) = stream.message().await? {
            if let Some(pb::stream_events_response::Kind::Event(e)) = item.kind {
                events.push(e.kind.unwrap());
            }
        }
        Ok::<_, tonic::Status>(events)
    };
    let events = wait_for(
        "the bot's move after the restart",
        Duration::from_secs(120),
        Duration::from_millis(50),
        async || {
            let events = log(client(port)).await.expect("the log reads");
            (events.len() >= 3).then_some(events)
        },
    )
    .await;
    // Exactly one move of the bot's, then the player's turn: nothing more
    // comes however long one waits, since the bot is not to move.
    let game = game(client(port)).await;
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(game.last_sequence, 3);
    assert_eq!(game.position.unwrap().seat_to_move, Some(0));
    let pb::game_event::Kind::MovePlayed(reply) = &events[2] else {
        panic!("the bot's move: {events:?}");
    };
    assert_eq!(reply.seat, 1);
    assert_eq!(
        reply.chosen_by.map(|c| c.engine()),
        Some(pb::Engine::Minimax)
    );
    server.kill();
}
