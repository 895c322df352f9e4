//! `plylog bench forward`: the latency a call passed on to its game's owner
//! adds (the cluster's forwarding, `src/api/forward.rs` in the server).
//!
//! Two nodes of one cluster are given (`--url` and `--via`, nodes on the same
//! PostgreSQL). `--games` 3×3 games are created through the first; then, for
//! `--rounds` rounds, every game is read with GetGame through each node in
//! turn (which node goes first alternates by round), one call at a time, so
//! nothing queues. A reply that carries `plylog-owner` was passed on by the
//! node called to the game's owner; one without it was served by the node
//! called. The report gives each kind's p50 and p99 and their differences:
//! what one hop adds. Games neither node runs (a third node's) are left out.

use std::io::Write;
use std::time::Instant;

use plylog::ops::count;
use plylog::proto as pb;
use plylog::proto::game_service_client::GameServiceClient;
use tonic::transport::Channel;

use super::{BenchError, Latencies, connect, create_game, load_average, millis};

/// `plylog bench forward`: GetGame through a game's owner and through
/// another node.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Prints the p50 and p99 of GetGame answered by the node called \
(its owner) and passed on to the owner by the node called, in milliseconds, and the \
difference: the latency one hop adds; the load average before and after."
)]
pub struct ForwardArgs {
    /// One node of the cluster (plaintext HTTP/2): the games are created
    /// through it.
    #[arg(long, default_value = "http://127.0.0.1:50051")]
    url: String,
    /// Another node of the same cluster.
    #[arg(long)]
    via: String,
    /// Games read.
    #[arg(long, default_value_t = 200, value_parser = clap::value_parser!(u32).range(1..))]
    games: u32,
    /// Times each game is read through each node.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    rounds: u32,
}

/// Creates the games, reads each through both nodes and writes the report
/// to `out`.
///
/// # Errors
/// [`BenchError::Call`] when a call fails; [`BenchError::Failed`] when no
/// call was passed on or none was answered by its owner (the two URLs are
/// one node, or not nodes of one cluster); connection errors.
pub async fn run(args: &ForwardArgs, out: &mut impl Write) -> Result<(), BenchError> {
    let mut nodes = [
        GameServiceClient::new(connect(&args.url, 1).await?.remove(0)),
        GameServiceClient::new(connect(&args.via, 1).await?.remove(0)),
    ];
    let mut games = Vec::with_capacity(args.games as usize);
    for _ in 0..args.games {
        games.push(create_game(&mut nodes[0], 3, 3, 3).await?.0);
    }
    writeln!(
        out,
        "plylog bench forward: {} created through {}, each read {} through it and through {}",
        count(games.len() as u64, "game"),
        args.url,
        count(u64::from(args.rounds), "time"),
        args.via
    )?;
    writeln!(out, "load average before: {}", load_average())?;
    let (mut served, mut passed) = (Latencies::default(), Latencies::default());
    for round in 0..args.rounds as usize {
        for game_id in &games {
            let mut calls = Vec::with_capacity(2);
            for node in [round % 2, 1 - round % 2] {
                calls.push(get_game(&mut nodes[node], game_id).await?);
            }
            // One node runs the game and the other passed the call on.
            if let [(first, first_passed), (second, second_passed)] = calls[..]
                && first_passed != second_passed
            {
                let (hop, owner) = if first_passed {
                    (first, second)
                } else {
                    (second, first)
                };
                passed.record(hop);
                served.record(owner);
            }
        }
    }
    let none_passed = passed.is_empty();
    let (Some(served), Some(passed)) = (served.summary(), passed.summary()) else {
        return Err(BenchError::Failed(format!(
            "{} and {} must be two nodes of one cluster: no call was {}",
            args.url,
            args.via,
            if none_passed {
                "passed on"
            } else {
                "answered by its owner"
            }
        )));
    };
    writeln!(
        out,
        "served by the owner: {} calls, p50 {} ms, p99 {} ms",
        served.count,
        millis(served.p50),
        millis(served.p99)
    )?;
    writeln!(
        out,
        "passed on to the owner: {} calls, p50 {} ms, p99 {} ms",
        passed.count,
        millis(passed.p50),
        millis(passed.p99)
    )?;
    writeln!(
        out,
        "added by one hop: p50 {:.3} ms, p99 {:.3} ms",
        (passed.p50.as_secs_f64() - served.p50.as_secs_f64()) * 1e3,
        (passed.p99.as_secs_f64() - served.p99.as_secs_f64()) * 1e3
    )?;
    writeln!(out, "load average after: {}", load_average())?;
    Ok(())
}

/// One GetGame of `game_id` through `node`: how long it took, and whether
/// the node passed it on (its reply names the owner).
async fn get_game(
    node: &mut GameServiceClient<Channel>,
    game_id: &str,
) -> Result<(std::time::Duration, bool), BenchError> {
    let started = Instant::now();
    let reply = node
        .get_game(pb::GetGameRequest {
            game_id: game_id.to_owned(),
            ..pb::GetGameRequest::default()
        })
        .await
        .map_err(|status| BenchError::call("GetGame", status))?;
    let took = started.elapsed();
    Ok((
        took,
        reply.metadata().contains_key(plylog::api::forward::OWNER),
    ))
}
