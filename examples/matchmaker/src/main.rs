//! matchmaker: an example matchmaking service for plylog, and a client of
//! plylog only (its protos, over gRPC).
//!
//! Players wait in a queue (here simulated: a fixed set of players, each
//! back in the queue as soon as its last game is rated); the matchmaker
//! pairs them by rating and waiting time (`pairing`), asks plylog to
//! create each game with the time the players were matched and labels
//! (the queue, and the ledger's id), follows plylog's lifecycle feed of
//! its games (by that label) from its stored checkpoint, and updates both
//! players' Glicko-2 ratings
//! (`ratings`) exactly once per finished game, even across its own
//! restarts (`ledger`). Each player's seat is played by plylog's Connect
//! Four engine at the player's hidden skill, so the games play
//! themselves and the ratings come to order the players by skill.

mod ledger;
mod pairing;
mod ratings;

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use clap::Parser;
use tokio_stream::StreamExt;

use ledger::{Finished, Ledger, Pairing};

/// plylog's API, compiled from its protos.
#[allow(missing_docs, unreachable_pub, clippy::all)]
mod pb {
    tonic::include_proto!("plylog.v1");
}

type Client = pb::game_service_client::GameServiceClient<tonic::transport::Channel>;

/// Pairs players by rating, has plylog play their games, rates each
/// finished game once.
#[derive(Debug, Parser)]
#[command(version)]
struct Args {
    /// plylog's gRPC address.
    #[arg(long, env = "PLYLOG_URL", default_value = "http://127.0.0.1:50051")]
    plylog: String,
    /// The matchmaker's ledger (players, ratings, games, feed checkpoint),
    /// a SQLite file; created when missing, resumed when it exists.
    #[arg(long, default_value = "matchmaker.db")]
    ledger: PathBuf,
    /// The queue's name: the games' `queue` label.
    #[arg(long, default_value = "ladder")]
    queue: String,
    /// Players in the queue (p01, p02, ...).
    #[arg(long, default_value_t = 8)]
    players: usize,
    /// Their hidden skills go 1, 2, ... up to this (the engine strength
    /// their seat is played at), then round again.
    #[arg(long, default_value_t = 4)]
    max_skill: u32,
    /// Games to pair in all; the matchmaker exits once each is rated.
    #[arg(long, default_value_t = 40)]
    games: u64,
    /// For tests: abort the process (as a crash would) right after the
    /// N-th game this run rates is committed, before anything else.
    #[arg(long, hide = true)]
    crash_after_rating: Option<u64>,
}

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    let args = Args::parse();
    match run(&args).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(why) => {
            eprintln!("matchmaker: {why}");
            ExitCode::from(3)
        }
    }
}

async fn run(args: &Args) -> Result<(), String> {
    let sql = |e: rusqlite::Error| format!("the ledger {}: {e}", args.ledger.display());
    let mut ledger = Ledger::open(&args.ledger).map_err(sql)?;
    ledger
        .add_players(args.players, args.max_skill.clamp(1, 10), now_ms())
        .map_err(sql)?;
    let client = Client::connect(args.plylog.clone())
        .await
        .map_err(|e| format!("cannot reach plylog at {}: {e}", args.plylog))?;
    let id = ledger.id().map_err(sql)?;
    let feed = tokio::spawn(follow_feed(
        client.clone(),
        Ledger::open(&args.ledger).map_err(sql)?,
        id.clone(),
        args.crash_after_rating,
    ));
    let mut client = client;
    loop {
        if feed.is_finished() {
            return Err("the feed stopped".into());
        }
        let (paired, rated) = (ledger.paired().map_err(sql)?, ledger.rated().map_err(sql)?);
        if paired >= args.games && rated >= paired {
            break;
        }
        if paired < args.games {
            let now = now_ms();
            let waiting = ledger.waiting().map_err(sql)?;
            let waiting = waiting
                .into_iter()
                .map(|(player_id, rating, since)| pairing::Waiting {
                    player_id,
                    rating,
                    waited_ms: now.saturating_sub(since) as u64,
                })
                .collect();
            let mut pairs = pairing::pair(waiting);
            pairs.truncate((args.games - paired) as usize);
            ledger.record_pairs(&pairs, now).map_err(sql)?;
        }
        for pairing in ledger.to_create().map_err(sql)? {
            match create(&mut client, &args.queue, &id, &pairing).await {
                Ok(game_id) => {
                    println!(
                        "paired {} with {}: game {game_id}",
                        pairing.first.0, pairing.second.0
                    );
                    ledger.created(&pairing.request_id, &game_id).map_err(sql)?;
                }
                // Tried again on the next round, with the same request id.
                Err(status) => eprintln!(
                    "creating {}: {} ({})",
                    pairing.request_id,
                    status.message(),
                    status.code()
                ),
            }
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    feed.abort();
    println!("player  skill  rating  deviation  games");
    for s in ledger.standings().map_err(sql)? {
        println!(
            "{:<7} {:>5} {:>7.1} {:>10.1} {:>6}",
            s.player_id, s.skill, s.rating.rating, s.rating.deviation, s.games
        );
    }
    Ok(())
}

/// Has plylog create the game of `pairing`: Connect Four, each seat played
/// by the engine at its player's skill, takebacks off (a result is
/// final), the queue and the ledger's id as labels, and when the players
/// were matched. Idempotent: a retry with the same request id gets the
/// same game.
async fn create(
    client: &mut Client,
    queue: &str,
    ledger_id: &str,
    pairing: &Pairing,
) -> Result<String, tonic::Status> {
    let seat = |(player_id, skill): &(String, u32), symbol: &str, seed: i64| pb::Seat {
        player_id: player_id.clone(),
        symbol: symbol.into(),
        bot: Some(pb::Bot {
            engine: pb::Engine::Connect4 as i32,
            strength: *skill,
            seed: Some(seed as u64),
        }),
        ..Default::default()
    };
    let request = pb::CreateGameRequest {
        request_id: pairing.request_id.clone(),
        rules: Some(pb::RuleSet {
            kind: Some(pb::rule_set::Kind::ConnectFour(
                pb::ConnectFourRules::default(),
            )),
        }),
        seats: vec![
            seat(&pairing.first, "X", 2 * pairing.number),
            seat(&pairing.second, "O", 2 * pairing.number + 1),
        ],
        undo_policy: pb::UndoPolicy::Disabled as i32,
        matched_at: Some(prost_types::Timestamp {
            seconds: pairing.matched_at_ms.div_euclid(1000),
            nanos: (pairing.matched_at_ms.rem_euclid(1000) * 1_000_000) as i32,
        }),
        labels: [
            ("queue".to_owned(), queue.to_owned()),
            ("matchmaker".to_owned(), ledger_id.to_owned()),
        ]
        .into(),
        ..Default::default()
    };
    let created = client.create_game(request).await?.into_inner();
    Ok(created.game.map(|g| g.game_id).unwrap_or_default())
}

/// Follows plylog's lifecycle feed of this ledger's games (their
/// `matchmaker` label) from the ledger's checkpoint, rating each game that
/// ends; reconnects after a second when the stream breaks (plylog
/// restarting, say).
async fn follow_feed(
    client: Client,
    mut ledger: Ledger,
    ledger_id: String,
    crash_after: Option<u64>,
) {
    let mut rated = 0;
    loop {
        let reading = read_feed(
            client.clone(),
            &mut ledger,
            &ledger_id,
            &mut rated,
            crash_after,
        );
        if let Err(why) = reading.await {
            eprintln!("the feed: {why}; again in a second");
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

async fn read_feed(
    mut client: Client,
    ledger: &mut Ledger,
    ledger_id: &str,
    rated: &mut u64,
    crash_after: Option<u64>,
) -> Result<(), String> {
    let mut positions = ledger.checkpoint().map_err(|e| e.to_string())?;
    let request = pb::StreamAllEventsRequest {
        after: positions.clone(),
        follow: true,
        lifecycle_only: true,
        filter: format!("labels.matchmaker = \"{ledger_id}\""),
        ..Default::default()
    };
    let mut feed = client
        .stream_all_events(request)
        .await
        .map_err(|s| s.message().to_owned())?
        .into_inner();
    while let Some(message) = feed.next().await {
        let message = message.map_err(|s| s.message().to_owned())?;
        match message.kind {
            Some(pb::stream_all_events_response::Kind::Event(event)) => {
                let cell = event.cell as usize;
                if positions.len() <= cell {
                    positions.resize(cell + 1, 0);
                }
                positions[cell] = event.position;
                if event.lifecycle() != pb::Lifecycle::Ended {
                    continue;
                }
                let Some(game) = event.event.as_ref() else {
                    continue;
                };
                let finished = Finished {
                    game_id: game.game_id.clone(),
                    round: game.round,
                    player_ids: event.player_ids.clone(),
                    result: result(event.outcome.as_ref()),
                    cell,
                    position: event.position,
                };
                if ledger
                    .rate(&finished, &positions, now_ms())
                    .map_err(|e| e.to_string())?
                {
                    println!("rated game {} ({:?})", finished.game_id, finished.result);
                    *rated += 1;
                    if crash_after == Some(*rated) {
                        std::process::abort();
                    }
                }
            }
            Some(pb::stream_all_events_response::Kind::Checkpoint(checkpoint))
                if checkpoint.positions != positions =>
            {
                positions = checkpoint.positions;
                ledger
                    .save_checkpoint(&positions)
                    .map_err(|e| e.to_string())?;
            }
            Some(pb::stream_all_events_response::Kind::Checkpoint(_)) | None => {}
        }
    }
    Err("plylog ended the stream".into())
}

/// The result of a two-seat game's outcome; `None` without one.
fn result(outcome: Option<&pb::Outcome>) -> Option<ratings::Result> {
    match outcome?.kind.as_ref()? {
        pb::outcome::Kind::Win(win) if win.seat == 0 => Some(ratings::Result::FirstWon),
        pb::outcome::Kind::Win(_) => Some(ratings::Result::SecondWon),
        pb::outcome::Kind::Draw(_) => Some(ratings::Result::Draw),
        pb::outcome::Kind::NoResult(_) => None,
    }
}
