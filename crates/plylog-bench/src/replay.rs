//! `plylog bench replay`: GetReplay of one long game, with every step's
//! position and with the events alone.
//!
//! One m,n,k game of `--moves` placements (10,000 on 200x200 by default, in
//! an order that never makes three in a row) is played through the server;
//! then its whole replay is read `--rounds` times each way, every page
//! (`page_size` 10,000) one after the other: with every step's position
//! (`position_every` absent, the default) and with the events only
//! (`position_every: 0`), the latter with the default view (the game's
//! board on the first page) and with its basic view. For each way: the
//! steps, pages and encoded bytes of one whole replay, the median time its
//! calls took, and steps per second.

use std::io::Write;
use std::time::{Duration, Instant};

use plylog::ops::count;
use plylog::proto as pb;
use plylog::proto::game_service_client::GameServiceClient;
use prost::Message;
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::{
    BenchError, Latencies, connect, create_game, load_average, millis, place, unending_moves,
};

/// `plylog bench replay`: whole GetReplay reads of one long game.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Prints, for GetReplay with every step's position and with the events \
only: the steps, pages and bytes of one whole replay, the median time of a whole replay in \
milliseconds and the steps per second it makes; the load average before and after."
)]
pub struct ReplayArgs {
    /// The server to measure (plaintext HTTP/2).
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    url: String,
    /// Placements the game is played to (fewer than rows x cols).
    #[arg(long, default_value_t = 10_000, value_parser = clap::value_parser!(u32).range(1..))]
    moves: u32,
    /// Board rows.
    #[arg(long, default_value_t = 200)]
    rows: i32,
    /// Board columns.
    #[arg(long, default_value_t = 200)]
    cols: i32,
    /// Stones in a row that win (at least 3: the moves never make three).
    #[arg(long, default_value_t = 5)]
    k: i32,
    /// Whole replays read each way.
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
    /// Seed of the moves' order; default: a random one. Printed either way.
    #[arg(long)]
    seed: Option<u64>,
    /// Read the replay with the events only (both views), not with every
    /// step's position: a whole replay then takes milliseconds, not
    /// seconds, so many rounds suit a profiler.
    #[arg(long)]
    events_only: bool,
}

/// Plays the game, reads its replay both ways and writes the report to
/// `out`.
///
/// # Errors
/// [`BenchError::Failed`] for a board that cannot take the moves;
/// [`BenchError::Call`] when a call fails; connection errors.
pub async fn run(args: &ReplayArgs, out: &mut impl Write) -> Result<(), BenchError> {
    let seed = args.seed.unwrap_or_else(rand::random);
    let moves = args.moves as usize;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let cells = unending_moves(args.rows, args.cols, args.k, moves, &mut rng)?;
    writeln!(
        out,
        "plylog bench replay: one {}x{} k={} game of {}, seed {seed}",
        args.rows,
        args.cols,
        args.k,
        count(moves as u64, "move")
    )?;
    let mut client = GameServiceClient::new(connect(&args.url, 1).await?.remove(0))
        .max_decoding_message_size(64 * 1024 * 1024);
    let (game_id, tokens) = create_game(&mut client, args.rows, args.cols, args.k).await?;
    let filling = Instant::now();
    for (ply, cell) in cells.into_iter().enumerate() {
        let seat = (ply % 2) as u32;
        let token = tokens.get(ply % 2).map_or("", String::as_str);
        client
            .submit_move(place(&game_id, seat, cell, token))
            .await
            .map_err(|status| BenchError::call("SubmitMove", status))?;
    }
    writeln!(out, "played in {:.2} s", filling.elapsed().as_secs_f64())?;
    writeln!(out, "load average before: {}", load_average())?;
    let basic = pb::GameView::Basic as i32;
    for (label, every, view) in [
        ("every position", None, 0),
        ("events only", Some(0), 0),
        ("events only, basic view", Some(0), basic),
    ]
    .into_iter()
    .filter(|(_, every, _)| !args.events_only || every.is_some())
    {
        let mut times = Latencies::default();
        let (mut steps, mut pages, mut bytes) = (0, 0, 0);
        for _ in 0..args.rounds {
            // The calls alone: counting a page's bytes is the bench's work,
            // not the replay's.
            let mut took = Duration::ZERO;
            (steps, pages, bytes) = (0, 0, 0);
            let mut page_token = String::new();
            loop {
                let start = Instant::now();
                let page = client
                    .get_replay(pb::GetReplayRequest {
                        game_id: game_id.clone(),
                        page_size: 10_000,
                        page_token,
                        position_every: every,
                        view,
                        ..pb::GetReplayRequest::default()
                    })
                    .await
                    .map_err(|status| BenchError::call("GetReplay", status))?
                    .into_inner();
                took += start.elapsed();
                steps += page.steps.len();
                pages += 1;
                bytes += page.encoded_len();
                if page.next_page_token.is_empty() {
                    break;
                }
                page_token = page.next_page_token;
            }
            times.record(took);
        }
        let median = times.summary().map_or(Duration::ZERO, |s| s.p50);
        writeln!(
            out,
            "{label}: {steps} steps in {} of {bytes} bytes; a whole replay in {} ms (median of {}), {:.0} steps/s",
            count(pages, "page"),
            millis(median),
            args.rounds,
            steps as f64 / median.as_secs_f64().max(f64::EPSILON)
        )?;
    }
    writeln!(out, "load average after: {}", load_average())?;
    Ok(())
}
