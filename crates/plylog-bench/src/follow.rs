//! `plylog bench follow`: StreamEvents fan-out on one game.
//!
//! One big m,n,k game is created; `--followers` streams follow it
//! (StreamEvents, follow=true), spread over as few HTTP/2 connections as the
//! server's per-connection stream limit allows (`--streams-per-connection`,
//! 150 by default, under the server's 200); once every follower has caught
//! up, a writer on its own connection plays `--moves` moves one at a time,
//! one every `--interval-ms`, in an order that never makes three in a row
//! (so the game never ends). For each move and each follower, the latency is
//! from the writer receiving SubmitMove's reply to the follower receiving
//! the event (zero when the event came first, which is counted).

use std::io::Write;
use std::time::{Duration, Instant};

use plylog::ops::count;
use plylog::proto::game_service_client::GameServiceClient;
use plylog::proto::{self as pb, stream_events_response};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use tokio::sync::mpsc;
use tonic_types::StatusExt;

use super::{
    BenchError, Latencies, Summary, connect, create_game, load_average, millis, place,
    unending_moves,
};

/// How long followers may take to catch up, and to receive the last move
/// after the writer's last reply, before the run goes on without them.
const PATIENCE: Duration = Duration::from_secs(60);

/// `plylog bench follow`: fan-out latency from a writer's acknowledgement
/// to many followers of one game.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Prints the followers that caught up, the events delivered of those \
expected, the p50, p99 and max of the latency from the writer's SubmitMove reply to each \
follower's receipt of the event, in milliseconds, and the writer's own SubmitMove latency; \
the load average before and after. A server holds 1,000 streams per game and 10,000 in all \
by default (--max-streams-per-game, --max-streams)."
)]
pub struct FollowArgs {
    /// The server to measure (plaintext HTTP/2).
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    url: String,
    /// Streams following the game.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    followers: u32,
    /// Moves the writer plays (fewer than rows x cols, and at most about
    /// half of them for each seat).
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    moves: u32,
    /// Board rows.
    #[arg(long, default_value_t = 100)]
    rows: i32,
    /// Board columns.
    #[arg(long, default_value_t = 100)]
    cols: i32,
    /// Stones in a row that win (at least 3: the moves never make three).
    #[arg(long, default_value_t = 5)]
    k: i32,
    /// Milliseconds from one move's send to the next's (a move whose reply
    /// takes longer is followed at once).
    #[arg(long, default_value_t = 20)]
    interval_ms: u64,
    /// Followers per HTTP/2 connection; keep it under the server's
    /// --max-streams-per-connection (200 by default).
    #[arg(long, default_value_t = 150, value_parser = clap::value_parser!(u32).range(1..))]
    streams_per_connection: u32,
    /// Seed of the moves' order; default: a random one. Printed either way.
    #[arg(long)]
    seed: Option<u64>,
}

/// What one follower received: each move's sequence and when it arrived.
type Receipts = Vec<(u64, Instant)>;

/// How often a follower asks again when the server refuses its
/// subscription as UNAVAILABLE ("retry with backoff": a game's mailbox
/// fills while thousands of followers subscribe at once), and the first
/// wait, doubled on each retry (5 ms to 640 ms); a follower waits at least
/// the delay the refusal's `google.rpc.RetryInfo` asks for.
const RETRIES: u32 = 8;
const FIRST_BACKOFF: Duration = Duration::from_millis(5);

/// Runs the fan-out and writes the report to `out`.
///
/// # Errors
/// [`BenchError::Failed`] for a board that cannot take the moves or when no
/// follower caught up; [`BenchError::Call`] when creating the game or a
/// writer's move fails; connection errors.
pub async fn run(args: &FollowArgs, out: &mut impl Write) -> Result<(), BenchError> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let moves = args.moves as usize;
    let followers = args.followers as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cells = unending_moves(args.rows, args.cols, args.k, moves, &mut rng)?;
    let connections = followers.div_ceil(args.streams_per_connection as usize);
    writeln!(
        out,
        "plylog bench follow: {} on {} of one {}x{} k={} game, {} one every {} ms, \
         seed {seed}",
        count(followers as u64, "follower"),
        count(connections as u64, "connection"),
        args.rows,
        args.cols,
        args.k,
        count(moves as u64, "move"),
        args.interval_ms
    )?;
    writeln!(out, "load average before: {}", load_average())?;

    let mut writer = GameServiceClient::new(connect(&args.url, 1).await?.remove(0));
    let (game_id, tokens) = create_game(&mut writer, args.rows, args.cols, args.k).await?;
    // The game's creation is sequence 1; move j (from 0) is j + 2.
    let last = moves as u64 + 1;

    let channels = connect(&args.url, connections).await?;
    let (ready_tx, mut ready_rx) = mpsc::unbounded_channel();
    let opened = Instant::now();
    let tasks: Vec<_> = (0..followers)
        .map(|index| {
            let client = GameServiceClient::new(channels[index % channels.len()].clone());
            tokio::spawn(follow(client, game_id.clone(), last, ready_tx.clone()))
        })
        .collect();
    drop(ready_tx);
    let (mut ready, mut failures) = (0, Vec::new());
    let patience = tokio::time::sleep(PATIENCE);
    tokio::pin!(patience);
    while ready + failures.len() < followers {
        tokio::select! {
            signal = ready_rx.recv() => match signal {
                Some(Ok(())) => ready += 1,
                Some(Err(status)) => failures.push(status),
                None => break,
            },
            () = &mut patience => break,
        }
    }
    writeln!(
        out,
        "followers caught up: {ready} of {followers} in {:.2} s",
        opened.elapsed().as_secs_f64()
    )?;
    if let Some(status) = failures.first() {
        writeln!(
            out,
            "followers failed: {} (first: {:?} {:?})",
            failures.len(),
            status.code(),
            status.message()
        )?;
    }
    if ready == 0 {
        return Err(BenchError::Failed("no follower caught up".into()));
    }

    let token = |seat: u32| tokens.get(seat as usize).map_or("", String::as_str);
    let mut acked = vec![None; moves];
    let mut writes = Latencies::default();
    let start = Instant::now();
    for (ply, cell) in cells.into_iter().enumerate() {
        let seat = (ply % 2) as u32;
        let sent = Instant::now();
        let reply = writer
            .submit_move(place(&game_id, seat, cell, token(seat)))
            .await
            .map_err(|status| BenchError::call("SubmitMove (the writer)", status))?
            .into_inner();
        let answered = Instant::now();
        writes.record(answered - sent);
        for event in &reply.events {
            if let Some(slot) = (event.sequence as usize)
                .checked_sub(2)
                .and_then(|index| acked.get_mut(index))
            {
                *slot = Some(answered);
            }
        }
        let interval = Duration::from_millis(args.interval_ms);
        tokio::time::sleep_until((start + interval * (ply as u32 + 1)).into()).await;
    }

    let deadline = tokio::time::Instant::now() + PATIENCE;
    let mut latencies = Latencies::default();
    let (mut early, mut gaps, mut retried) = (0, 0, 0);
    for mut task in tasks {
        let Ok(Ok((receipts, retries))) = tokio::time::timeout_at(deadline, &mut task).await else {
            task.abort();
            continue;
        };
        retried += retries;
        let mut previous = 1;
        for (sequence, received) in receipts {
            gaps += u64::from(sequence != previous + 1);
            previous = sequence;
            let Some(Some(ack)) = (sequence as usize)
                .checked_sub(2)
                .and_then(|index| acked.get(index))
            else {
                continue;
            };
            early += u64::from(received < *ack);
            latencies.record(received.saturating_duration_since(*ack));
        }
    }
    writeln!(
        out,
        "events delivered: {} of {} ({early} before the writer's reply, {gaps} out of order; \
         {} retried after UNAVAILABLE)",
        latencies.len(),
        ready * moves,
        count(retried, "subscription")
    )?;
    write_quantiles(out, "follower latency after the writer's ack", latencies)?;
    write_quantiles(out, "writer's SubmitMove", writes)?;
    writeln!(out, "load average after: {}", load_average())?;
    Ok(())
}

/// `what, ms: p50 0.512, p99 3.100, max 7.000 (n samples)`.
pub(super) fn write_quantiles(
    out: &mut impl Write,
    what: &str,
    samples: Latencies,
) -> std::io::Result<()> {
    match samples.summary() {
        Some(Summary {
            count,
            p50,
            p99,
            max,
        }) => writeln!(
            out,
            "{what}, ms: p50 {}, p99 {}, max {} ({count} samples)",
            millis(p50),
            millis(p99),
            millis(max)
        ),
        None => writeln!(out, "{what}: no samples"),
    }
}

/// One follower: signals `ready` once caught up (or failed before that),
/// then records each move event until sequence `last`. Returns what it
/// received and how often it subscribed again after the server refused
/// its subscription as UNAVAILABLE (the call's status, or the stream's
/// first item) before it caught up.
async fn follow(
    mut client: GameServiceClient<tonic::transport::Channel>,
    game_id: String,
    last: u64,
    ready: mpsc::UnboundedSender<Result<(), tonic::Status>>,
) -> (Receipts, u64) {
    let mut receipts = Receipts::new();
    let request = pb::StreamEventsRequest {
        game_id,
        follow: true,
        ..pb::StreamEventsRequest::default()
    };
    let (mut retries, mut caught_up) = (0, false);
    loop {
        let ended = match client.stream_events(request.clone()).await {
            Ok(reply) => {
                let mut stream = reply.into_inner();
                loop {
                    match stream.message().await {
                        Ok(Some(item)) => match item.kind {
                            Some(stream_events_response::Kind::Event(event)) => {
                                if event.sequence > 1 {
                                    receipts.push((event.sequence, Instant::now()));
                                }
                                if event.sequence >= last {
                                    return (receipts, retries.into());
                                }
                            }
                            Some(stream_events_response::Kind::CaughtUp(_)) if !caught_up => {
                                caught_up = true;
                                let _ = ready.send(Ok(()));
                            }
                            _ => {}
                        },
                        Ok(None) => break tonic::Status::unknown("the stream ended"),
                        Err(status) => break status,
                    }
                }
            }
            Err(status) => status,
        };
        if !caught_up && ended.code() == tonic::Code::Unavailable && retries < RETRIES {
            // The history comes again from the start.
            receipts.clear();
            let asked = ended
                .get_error_details()
                .retry_info()
                .and_then(|info| info.retry_delay);
            let backoff = FIRST_BACKOFF * 2_u32.pow(retries);
            tokio::time::sleep(asked.map_or(backoff, |asked| asked.max(backoff))).await;
            retries += 1;
            continue;
        }
        if !caught_up {
            let _ = ready.send(Err(ended));
        }
        return (receipts, retries.into());
    }
}
