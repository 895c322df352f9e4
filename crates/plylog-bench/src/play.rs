//! `plylog bench play`: boardgame.io's benchmark workload against a plylog
//! server, then the same closed loop against the no-op handler, served by
//! a child process.
//!
//! Each of `--slots` slots creates a 3×3 tic-tac-toe game (m,n,k 3,3,3, two
//! seats, the server picks the id) and plays it to the end, both seats
//! choosing a uniformly random empty cell (the board is tracked here, so
//! the server does CreateGame and SubmitMove and nothing else), then
//! creates the next. A slot sends its next call as soon as the last one is
//! answered (a closed loop). Moves carry each seat's token when the server
//! issues them; `--request-ids` adds a request_id and the expected_sequence
//! to every move. The figure is SubmitMove calls per second, with their
//! latency from send to reply.

use std::io::Write;
use std::time::{Duration, Instant};

use plylog::ops::count;
use plylog::proto::game_service_client::GameServiceClient;
use plylog::proto::{self as pb, game_event};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

use super::feed::{FeedRead, FeedReader};
use super::noop::{self, NoOpServer};
use super::{
    BenchError, Summary, Tally, Window, connect, connections_for, create_mnk, last_sequence,
    load_average, millis, place,
};

/// `plylog bench play`: SubmitMove calls/s against a server, and as a
/// ratio to a no-op gRPC handler measured the same way.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Prints one table: each target's calls/s inside the measured window, \
the p50 and p99 of their latency in milliseconds, and its calls/s divided by the no-op \
handler's (the ratio, comparable across machines and runs; the absolute figures are not). \
The load average is printed before and after each target. Measure a release build."
)]
pub struct PlayArgs {
    /// The server to measure (plaintext HTTP/2).
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    url: String,
    /// Games played at once, each by a closed-loop slot; slots share
    /// connections 16 to a connection.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=65_536))]
    slots: u32,
    /// Seconds measured on each target.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=3600))]
    secs: u64,
    /// Seconds each target runs before the measured window opens.
    #[arg(long, default_value_t = 1)]
    warmup_secs: u64,
    /// Send a request_id (32 random hex digits) and the expected_sequence
    /// with every move, as a client that retries safely does.
    #[arg(long)]
    request_ids: bool,
    /// Seed of the random moves (slot i draws from stream i of ChaCha8
    /// seeded with it); default: a random one. Printed either way.
    #[arg(long)]
    seed: Option<u64>,
    /// Do not measure the no-op handler (no ratio is printed).
    #[arg(long)]
    no_baseline: bool,
    /// Measure the workload a second time with a feed reader beside it (a
    /// StreamAllEvents follower in this process, from the feed's end), and
    /// say whether it kept up: how far behind the feed's end it was when
    /// the workload stopped, and how long it then took to reach it.
    #[arg(long)]
    feed_reader: bool,
    /// Print one JSON object instead of the table.
    #[arg(long)]
    json: bool,
}

/// One target's figures.
struct Measured {
    target: &'static str,
    tally: Tally,
    /// Games played to the end inside the window (plylog only).
    games: Option<u64>,
    secs: f64,
    load_before: String,
    load_after: String,
}

impl Measured {
    fn calls_per_sec(&self) -> f64 {
        self.tally.latencies.len() as f64 / self.secs
    }
}

/// Runs the workload, then the baseline unless `--no-baseline`, and writes
/// the report to `out`.
///
/// # Errors
/// [`BenchError::Connect`] and [`BenchError::BadUrl`] for the server;
/// [`BenchError::NoOp`]; [`BenchError::Failed`] when no move succeeded
/// inside the window (the errors are printed first).
pub async fn run(args: &PlayArgs, out: &mut impl Write) -> Result<(), BenchError> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let slots = args.slots as usize;
    let warmup = Duration::from_secs(args.warmup_secs);
    let length = Duration::from_secs(args.secs);
    if !args.json {
        writeln!(
            out,
            "plylog bench play: {} on {}, {} s measured after {} s warm-up, seed {seed}, \
             request ids {}",
            count(slots as u64, "slot"),
            count(connections_for(slots) as u64, "connection"),
            args.secs,
            args.warmup_secs,
            if args.request_ids { "on" } else { "off" },
        )?;
    }
    let load_before = load_average();
    let window = Window::after(warmup, length);
    let (tally, games) = workload(&args.url, slots, seed, args.request_ids, window).await?;
    let plylog = Measured {
        target: "plylog SubmitMove",
        tally,
        games: Some(games),
        secs: window.length().as_secs_f64(),
        load_before,
        load_after: load_average(),
    };
    let with_reader = if args.feed_reader {
        let channel = connect(&args.url, 1).await?.remove(0);
        let reader = FeedReader::start(channel).await?;
        let load_before = load_average();
        let window = Window::after(warmup, length);
        let (tally, games) = workload(&args.url, slots, seed, args.request_ids, window).await?;
        let read = reader.finish().await?;
        Some((
            Measured {
                target: "plylog, feed reader",
                tally,
                games: Some(games),
                secs: window.length().as_secs_f64(),
                load_before,
                load_after: load_average(),
            },
            read,
        ))
    } else {
        None
    };
    let baseline = if args.no_baseline {
        None
    } else {
        let load_before = load_average();
        let server = NoOpServer::start().await?;
        let window = Window::after(warmup, length);
        let tally = noop::measure(&server.url(), slots, window).await?;
        server.stop().await?;
        Some(Measured {
            target: "no-op Health/Check",
            tally,
            games: None,
            secs: window.length().as_secs_f64(),
            load_before,
            load_after: load_average(),
        })
    };
    let ratio = baseline
        .as_ref()
        .map(|noop| plylog.calls_per_sec() / noop.calls_per_sec())
        .filter(|ratio| ratio.is_finite());
    let targets: Vec<&Measured> = std::iter::once(&plylog)
        .chain(with_reader.as_ref().map(|(measured, _)| measured))
        .chain(&baseline)
        .collect();
    let read = with_reader.as_ref().map(|(_, read)| *read);
    if args.json {
        write_json(out, args, seed, &targets, ratio, read)?;
    } else {
        write_table(out, &targets, ratio, read)?;
    }
    if plylog.tally.latencies.is_empty() {
        return Err(BenchError::Failed(format!(
            "no move succeeded against {} inside the {} s window",
            args.url, args.secs
        )));
    }
    Ok(())
}

/// The table: one row per target, then each target's load averages,
/// games and errors, then the ratio line, and the feed reader's line.
fn write_table(
    out: &mut impl Write,
    targets: &[&Measured],
    ratio: Option<f64>,
    read: Option<FeedRead>,
) -> std::io::Result<()> {
    let baseline = targets
        .iter()
        .find(|target| target.games.is_none())
        .map(|noop| noop.calls_per_sec());
    writeln!(
        out,
        "{:<20} {:>12} {:>10} {:>10} {:>8}",
        "target", "calls/s", "p50 ms", "p99 ms", "ratio"
    )?;
    for (index, target) in targets.iter().enumerate() {
        let summary = target.tally.latencies.clone().summary();
        let ms = |pick: fn(&Summary) -> Duration| {
            summary
                .as_ref()
                .map_or_else(|| "-".to_owned(), |s| millis(pick(s)))
        };
        let ratio = match (index, ratio, baseline) {
            (0, Some(ratio), _) => format!("{ratio:.3}"),
            (_, Some(_), Some(noop)) if target.games.is_some() => {
                format!("{:.3}", target.calls_per_sec() / noop)
            }
            (_, Some(_), _) => "1".to_owned(),
            (_, None, _) => "-".to_owned(),
        };
        writeln!(
            out,
            "{:<20} {:>12.1} {:>10} {:>10} {:>8}",
            target.target,
            target.calls_per_sec(),
            ms(|s| s.p50),
            ms(|s| s.p99),
            ratio
        )?;
    }
    for target in targets {
        let games = target
            .games
            .map(|games| format!(", {games} games finished"))
            .unwrap_or_default();
        writeln!(
            out,
            "{}: {} calls{games}; load average {} before, {} after",
            target.target,
            target.tally.latencies.len(),
            target.load_before,
            target.load_after,
        )?;
        for line in target.tally.error_lines() {
            writeln!(out, "{}: error {line}", target.target)?;
        }
    }
    if let Some(ratio) = ratio {
        writeln!(out, "ratio plylog / no-op (calls/s): {ratio:.3}")?;
    }
    if let Some(read) = read {
        let [without, with] = [targets[0], targets[1]].map(Measured::calls_per_sec);
        writeln!(
            out,
            "feed reader: {} events; {} positions behind the feed's end when the workload stopped, {}; calls/s with it / without: {:.3}",
            read.events,
            read.behind,
            read.caught_up_after.map_or_else(
                || "not caught up within 30 s".to_owned(),
                |after| format!("caught up {} ms later", after.as_millis())
            ),
            with / without
        )?;
    }
    Ok(())
}

/// The report as one JSON object: the run's settings, each target's
/// figures (latencies in milliseconds) and the ratio (null without a
/// baseline).
fn write_json(
    out: &mut impl Write,
    args: &PlayArgs,
    seed: u64,
    targets: &[&Measured],
    ratio: Option<f64>,
    read: Option<FeedRead>,
) -> std::io::Result<()> {
    let ms = |duration: Duration| duration.as_secs_f64() * 1e3;
    let targets: Vec<_> = targets
        .iter()
        .map(|target| {
            let summary = target.tally.latencies.clone().summary();
            json!({
                "target": target.target,
                "calls": target.tally.latencies.len(),
                "callsPerSec": target.calls_per_sec(),
                "p50Ms": summary.map(|s| ms(s.p50)),
                "p99Ms": summary.map(|s| ms(s.p99)),
                "maxMs": summary.map(|s| ms(s.max)),
                "games": target.games,
                "errors": target.tally.errors.iter()
                    .map(|(key, (count, _))| (key.clone(), json!(count)))
                    .collect::<serde_json::Map<_, _>>(),
                "loadBefore": target.load_before,
                "loadAfter": target.load_after,
            })
        })
        .collect();
    let report = json!({
        "mode": "play",
        "url": args.url,
        "slots": args.slots,
        "connections": connections_for(args.slots as usize),
        "secs": args.secs,
        "warmupSecs": args.warmup_secs,
        "seed": seed,
        "requestIds": args.request_ids,
        "targets": targets,
        "ratio": ratio,
        "feedReader": read.map(|read| json!({
            "events": read.events,
            "behind": read.behind,
            "caughtUpAfterMs": read.caught_up_after.map(|after| after.as_secs_f64() * 1e3),
        })),
    });
    writeln!(out, "{report}")
}

/// Plays the workload on `slots` slots until `window` ends: what the
/// moves did, and how many games ended inside the window.
async fn workload(
    url: &str,
    slots: usize,
    seed: u64,
    request_ids: bool,
    window: Window,
) -> Result<(Tally, u64), BenchError> {
    let channels = connect(url, connections_for(slots)).await?;
    let players: Vec<_> = (0..slots)
        .map(|slot| {
            let client = GameServiceClient::new(channels[slot % channels.len()].clone());
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_stream(slot as u64);
            tokio::spawn(play_slot(client, rng, request_ids, window))
        })
        .collect();
    let mut total = Tally::default();
    let mut games = 0;
    for player in players {
        if let Ok((tally, finished)) = player.await {
            total.merge(tally);
            games += finished;
        }
    }
    Ok((total, games))
}

/// One slot: games one after another until `window` ends.
async fn play_slot(
    mut client: GameServiceClient<tonic::transport::Channel>,
    mut rng: ChaCha8Rng,
    request_ids: bool,
    window: Window,
) -> (Tally, u64) {
    let mut tally = Tally::default();
    let mut games = 0;
    'games: while !window.is_over() {
        let sent = Instant::now();
        let created = match client.create_game(create_mnk(String::new(), 3, 3, 3)).await {
            Ok(reply) => reply.into_inner(),
            Err(status) => {
                tally.add(&window, sent, Some(&status), "CreateGame");
                // A server refusing everything is not spun against.
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let Some(game) = created.game else {
            let status = tonic::Status::internal("CreateGame replied without the game");
            tally.add(&window, sent, Some(&status), "CreateGame");
            continue;
        };
        let token = |seat: u32| {
            created
                .seat_tokens
                .get(seat as usize)
                .map_or("", String::as_str)
        };
        let mut sequence = game.last_sequence;
        let mut empty: Vec<(i32, i32)> = (0..9).map(|cell| (cell / 3, cell % 3)).collect();
        let mut seat = 0;
        while !window.is_over() {
            if empty.is_empty() {
                let status = tonic::Status::internal("the board is full and the game goes on");
                tally.add(&window, Instant::now(), Some(&status), "SubmitMove");
                continue 'games;
            }
            let cell = empty.swap_remove(rng.random_range(0..empty.len()));
            let mut request = place(&game.game_id, seat, cell, token(seat));
            if request_ids {
                let move_request = request.get_mut();
                move_request.request_id = format!("{:032x}", rng.random::<u128>());
                move_request.expected_sequence = Some(sequence);
            }
            let sent = Instant::now();
            match client.submit_move(request).await {
                Ok(reply) => {
                    let counted = tally.add(&window, sent, None, "SubmitMove");
                    let reply = reply.into_inner();
                    sequence =
                        last_sequence(&reply.events, reply.game.as_ref()).unwrap_or(sequence + 1);
                    if ends_game(&reply.events) {
                        games += u64::from(counted);
                        continue 'games;
                    }
                    seat ^= 1;
                }
                Err(status) => {
                    tally.add(&window, sent, Some(&status), "SubmitMove");
                    continue 'games;
                }
            }
        }
    }
    (tally, games)
}

/// Whether these events end the game: a move with an outcome, or a
/// GameEnded.
fn ends_game(events: &[pb::GameEvent]) -> bool {
    events.iter().any(|event| match &event.kind {
        Some(game_event::Kind::MovePlayed(played)) => played.outcome.is_some(),
        Some(game_event::Kind::GameEnded(_)) => true,
        _ => false,
    })
}
