//! `plylog export GAME... | --all`: games' logs as JSON lines on standard
//! output, one event a line, each game's events in sequence order and games
//! one after another (with `--all`, oldest first); or, with `--format pgn`,
//! chess games as PGN (see the `pgn` module).
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

use prost::Message;

use super::{DatabaseArgs, Finding, Games, OpsError, count, json, pgn};
use crate::proto as pb;
use crate::rules::chess::pgn as chess_pgn;
use crate::store::EventStore;

/// Events read from the store at a time.
const BATCH: u32 = 1000;

/// The formats `plylog export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// One `plylog.v1.GameEvent` a line, in proto3 JSON.
    Jsonl,
    /// Chess games as PGN (export format), one PGN game per round; with
    /// `--all`, the other games are left out, and named, refused.
    Pgn,
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
            if let Exported::Events(written) =
                export_game(store, &record.game_id, args.format, true, out).await?
            {
                events += written;
                games += 1;
            }
        }
    }
    for game in &args.games {
        match export_game(store, game, args.format, false, out).await? {
            Exported::Events(0) => return Err(OpsError::NoGame(game.clone())),
            Exported::Events(written) => events += written,
            Exported::Skipped => unreachable!("a named game is refused, not skipped"),
        }
        games += 1;
    }
    Ok((games, events))
}

/// What [`export_game`] wrote of a game.
enum Exported {
    /// Its events (0: no such game).
    Events(u64),
    /// Nothing: with `--all` in PGN, a game that is not chess.
    Skipped,
}

/// Writes one game in `format`. Of every game (`every`, `--all`), a game
/// PGN cannot hold is skipped; named, it is refused.
async fn export_game(
    store: &dyn EventStore,
    game_id: &str,
    format: ExportFormat,
    every: bool,
    out: &mut impl Write,
) -> Result<Exported, OpsError> {
    let (mut from, mut written) = (1, 0);
    let mut decoded = Vec::new();
    loop {
        let batch = store.read(game_id, from, u64::MAX, BATCH).await?;
        for stored in &batch {
            match format {
                ExportFormat::Jsonl => {
                    let line = json::to_line(&stored.payload).map_err(|e| {
                        OpsError::Refused(format!(
                            "game {game_id} event {}: the payload cannot be written as JSON: {e}",
                            stored.sequence
                        ))
                    })?;
                    writeln!(out, "{line}")?;
                }
                ExportFormat::Pgn => {
                    decoded.push(pb::GameEvent::decode(stored.payload.as_ref()).map_err(|e| {
                        OpsError::Refused(format!(
                            "game {game_id} event {}: the payload is not a GameEvent: {e}",
                            stored.sequence
                        ))
                    })?)
                }
            }
            written += 1;
        }
        match batch.last() {
            Some(last) if batch.len() == BATCH as usize => from = last.sequence + 1,
            _ => break,
        }
    }
    if format == ExportFormat::Pgn && written > 0 {
        match pgn::games_of(game_id, &decoded).map_err(OpsError::Refused)? {
            Some(games) => {
                for game in games {
                    write!(out, "{}", chess_pgn::write(&game))?;
                }
            }
            None if every => return Ok(Exported::Skipped),
            None => {
                return Err(OpsError::Refused(format!(
                    "game {game_id} is not chess: PGN holds chess games only (use --format jsonl)"
                )));
            }
        }
    }
    Ok(Exported::Events(written))
}
