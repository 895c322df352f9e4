//! `plylog export GAME... | --all`: games' logs as JSON lines on standard
//! output, one event a line, each game's events in sequence order and games
//! one after another (with `--all`, oldest first).
//!
//! A line is the stored `plylog.v1.GameEvent` (the message StreamEvents and
//! GetReplay send) in protobuf's canonical JSON mapping, e.g.
//! `{"gameId":"g1","sequence":"2","recordedAt":"2026-11-30T12:00:01.250Z",
//! "movePlayed":{"move":{"place":{"row":1,"col":1}},"placement":{"row":1,
//! "col":1},"ply":1}}`: the game id, the sequence (a string, as 64-bit
//! integers are in proto3 JSON), the time the server recorded it and what
//! happened. Events are written as stored, without replaying them: `plylog
//! verify` judges them, and `plylog import` replays them before it writes.
//! What the log does not hold is not exported: the request ids that
//! deduplicate retries and the seat token hashes.

use std::io::Write;

use super::{DatabaseArgs, Finding, Games, OpsError, count, json};
use crate::store::EventStore;

/// Events read from the store at a time.
const BATCH: u32 = 1000;

/// The formats `plylog export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// One `plylog.v1.GameEvent` a line, in proto3 JSON.
    Jsonl,
}

/// `plylog export`: write games' logs.
#[derive(Debug, Clone, clap::Args)]
pub struct ExportArgs {
    #[command(flatten)]
    database: DatabaseArgs,
    /// The games to export, in this order.
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    games: Vec<String>,
    /// Export every game, oldest first.
    #[arg(long)]
    all: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormat::Jsonl)]
    format: ExportFormat,
}

/// Writes the logs `args` names on `out`, and a count on standard error.
///
/// # Errors
/// [`OpsError::NoGame`] for a game named that does not exist;
/// [`OpsError::Refused`] for a stored payload that is not a GameEvent (or
/// holds a value JSON cannot show);
/// store and output failures.
pub async fn run(args: &ExportArgs, out: &mut impl Write) -> Result<Finding, OpsError> {
    let ExportFormat::Jsonl = args.format;
    let store = args.database.open_to_read().await?;
    let exported = export(args, store.as_ref(), out).await;
    store.close().await;
    let (games, events) = exported?;
    eprintln!(
        "exported {}, {}",
        count(games, "game"),
        count(events, "event")
    );
    Ok(Finding::Clean)
}

/// The games and events written.
async fn export(
    args: &ExportArgs,
    store: &dyn EventStore,
    out: &mut impl Write,
) -> Result<(u64, u64), OpsError> {
    let (mut games, mut events) = (0, 0);
    if args.all {
        let mut all = Games::of(store);
        while let Some(record) = all.next().await? {
            events += export_game(store, &record.game_id, out).await?;
            games += 1;
        }
    }
    for game in &args.games {
        match export_game(store, game, out).await? {
            0 => return Err(OpsError::NoGame(game.clone())),
            written => events += written,
        }
        games += 1;
    }
    Ok((games, events))
}

/// Writes one game's events; how many there were (0: no such game).
async fn export_game(
    store: &dyn EventStore,
    game_id: &str,
    out: &mut impl Write,
) -> Result<u64, OpsError> {
    let (mut from, mut written) = (1, 0);
    loop {
        let batch = store.read(game_id, from, u64::MAX, BATCH).await?;
        for stored in &batch {
            let line = json::to_line(&stored.payload).map_err(|e| {
                OpsError::Refused(format!(
                    "game {game_id} event {}: the payload cannot be written as JSON: {e}",
                    stored.sequence
                ))
            })?;
            writeln!(out, "{line}")?;
            written += 1;
        }
        match batch.last() {
            Some(last) if batch.len() == BATCH as usize => from = last.sequence + 1,
            _ => return Ok(written),
        }
    }
}
