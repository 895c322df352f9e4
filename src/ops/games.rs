//! `plylog games`: the games in a database, one line each, oldest first.
//!
//! The games table gives the id, status, creation time and last activity;
//! each listed game is then replayed for its rules' name, its move count
//! and who won, so listing costs a read of each listed game's log.

use std::io::Write;

use prost::Message;

use super::{
    DatabaseArgs, Finding, Games, OpsError, UnreadableRows, is_bad_row, json, status_text,
    time_text,
};
use crate::game::{GameState, GameStatus, escape_disruptive};
use crate::proto::{self as pb, convert};
use crate::rules::Outcome;
use crate::store::{EventStore, GameRecord};

/// Which games `--status` keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum StatusFilter {
    /// Games still being played.
    InPlay,
    /// Games won, drawn or ended without a result.
    Finished,
}

/// How `plylog games` writes its list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ListFormat {
    /// An aligned table with a header line.
    Text,
    /// One JSON object a line: gameId, kind, status (in-play, won, drawn,
    /// no-result, corrupt-log or unreadable), winner (a seat index, or null), moves,
    /// sequence (of the last event), createdAt and lastActivityAt (RFC
    /// 3339, to the millisecond).
    Json,
}

/// `plylog games`: list games.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Columns: the game's id; its rules (e.g. tic-tac-toe, connect-four, \
gomoku 15x15); in play, won by a seat, drawn or no result; the moves on the board (plies \
played minus undone, in the current round); when it was created and when its last event was \
recorded (UTC). Oldest game first. A game whose log does not replay is listed as corrupt log, \
one whose rows do not read back as unreadable (plylog verify tells why); rows of the games table \
that do not read back are named on standard error and skipped, and the exit code is then 1."
)]
pub struct GamesArgs {
    #[command(flatten)]
    database: DatabaseArgs,
    /// Only games of these rules: a name as listed (`gomoku 15x15`) or its
    /// first word (`gomoku`, `connect-four`, `tic-tac-toe`).
    #[arg(long)]
    kind: Option<String>,
    /// Only games in play, or only finished ones.
    #[arg(long, value_enum)]
    status: Option<StatusFilter>,
    /// Only games with an event recorded at or after this time (RFC 3339,
    /// e.g. 2026-11-30T00:00:00Z).
    #[arg(long, value_parser = parse_time)]
    since: Option<i64>,
    /// List at most this many games.
    #[arg(long)]
    limit: Option<usize>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = ListFormat::Text)]
    format: ListFormat,
}

/// An RFC 3339 time as Unix epoch milliseconds.
fn parse_time(text: &str) -> Result<i64, String> {
    let time: prost_types::Timestamp = text
        .parse()
        .map_err(|_| format!("{text:?} is not an RFC 3339 time such as 2026-11-30T00:00:00Z"))?;
    Ok(convert::timestamp_ms(Some(&time)))
}

/// One listed game.
struct Row {
    record: GameRecord,
    kind: String,
    state: Result<GameState, Trouble>,
}

/// Why a listed game has no state to show.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trouble {
    /// Its log does not replay (`plylog verify` tells why).
    CorruptLog,
    /// Its rows do not read back, or it has no events (`plylog verify`
    /// tells which).
    Unreadable,
}

impl GamesArgs {
    /// Whether `record`, of rules named `kind`, passes the filters that the
    /// games table can answer.
    fn keeps(&self, record: &GameRecord, kind: &str) -> bool {
        let in_play = record.status == pb::GameStatus::InProgress as i32;
        let kind_fits = self.kind.as_deref().is_none_or(|wanted| {
            kind == wanted
                || kind
                    .strip_prefix(wanted)
                    .is_some_and(|rest| rest.starts_with(' '))
        });
        let status_fits = match self.status {
            None => true,
            Some(StatusFilter::InPlay) => in_play,
            Some(StatusFilter::Finished) => !in_play,
        };
        let recent = self
            .since
            .is_none_or(|since| record.last_event_at_ms.is_some_and(|at| at >= since));
        kind_fits && status_fits && recent
    }
}

/// The name of the rules a game was created with, read off its GameCreated
/// payload; `?` when it does not decode.
fn kind_of(record: &GameRecord) -> String {
    let created = pb::GameEvent::decode(record.created_payload.as_slice()).ok();
    let rules = match created.and_then(|e| e.kind) {
        Some(pb::game_event::Kind::GameCreated(created)) => created.rules,
        _ => None,
    };
    rules
        .and_then(|rules| convert::rules_from_proto(Some(&rules), u64::MAX).ok())
        .map_or_else(|| "?".to_owned(), |rules| rules.to_string())
}

/// Lists the games `args` asks for on `out`. Rows of the games table that
/// do not read back are named on standard error and skipped
/// ([`Finding::Problems`]: exit code 1); a game whose log does not replay
/// or whose rows do not read is listed as such.
///
/// # Errors
/// [`OpsError`]: the store does not open or cannot be reached, the output
/// cannot be written.
pub async fn run(args: &GamesArgs, out: &mut impl Write) -> Result<Finding, OpsError> {
    let store = args.database.open_to_read().await?;
    let rows = list(args, store.as_ref()).await;
    store.close().await;
    let (rows, skipped) = rows?;
    match args.format {
        ListFormat::Text => write_table(&rows, out)?,
        ListFormat::Json => {
            for row in &rows {
                writeln!(
                    out,
                    "{}",
                    json::escape_disruptive(json_line(row).to_string())
                )?;
            }
        }
    }
    for unreadable in &skipped {
        eprintln!("plylog: {}", escape_disruptive(&unreadable.to_string()));
    }
    Ok(if skipped.is_empty() {
        Finding::Clean
    } else {
        Finding::Problems
    })
}

/// The games listed, and the rows of the games table skipped.
async fn list(
    args: &GamesArgs,
    store: &dyn EventStore,
) -> Result<(Vec<Row>, Vec<UnreadableRows>), OpsError> {
    let limit = args.limit.unwrap_or(usize::MAX);
    let (mut rows, mut skipped) = (Vec::new(), Vec::new());
    let mut games = Games::of(store);
    while rows.len() < limit
        && let Some(read) = games.next_or_unreadable().await?
    {
        let record = match read {
            Ok(record) => record,
            Err(unreadable) => {
                skipped.push(unreadable);
                continue;
            }
        };
        let kind = kind_of(&record);
        if !args.keeps(&record, &kind) {
            continue;
        }
        let state = match super::replay(store, &record.game_id).await {
            Ok(state) => Ok(state),
            Err(OpsError::Corrupt { .. }) => Err(Trouble::CorruptLog),
            Err(OpsError::NoGame(_)) => Err(Trouble::Unreadable),
            Err(OpsError::Store(error)) if is_bad_row(&error) => Err(Trouble::Unreadable),
            Err(other) => return Err(other),
        };
        rows.push(Row {
            record,
            kind,
            state,
        });
    }
    Ok((rows, skipped))
}

/// A listed game's status and move count; a log that does not replay or
/// rows that do not read say so (`plylog verify` tells why).
fn status_and_moves(row: &Row) -> (String, String) {
    match &row.state {
        Ok(state) => (status_text(state), state.moves().len().to_string()),
        Err(Trouble::CorruptLog) => ("corrupt log".to_owned(), "?".to_owned()),
        Err(Trouble::Unreadable) => ("unreadable".to_owned(), "?".to_owned()),
    }
}

fn write_table(rows: &[Row], out: &mut impl Write) -> std::io::Result<()> {
    let header = [
        "GAME",
        "KIND",
        "STATUS",
        "MOVES",
        "CREATED",
        "LAST ACTIVITY",
    ]
    .map(String::from);
    let mut lines = vec![header];
    for row in rows {
        let (status, moves) = status_and_moves(row);
        lines.push([
            escape_disruptive(&row.record.game_id).into_owned(),
            row.kind.clone(),
            status,
            moves,
            time_text(row.record.created_at_ms),
            row.record
                .last_event_at_ms
                .map_or_else(|| "?".to_owned(), time_text),
        ]);
    }
    let mut widths = [0; 6];
    for line in &lines {
        for (width, cell) in widths.iter_mut().zip(line) {
            *width = (*width).max(cell.chars().count());
        }
    }
    for line in &lines {
        let mut text = String::new();
        for (i, (cell, width)) in line.iter().zip(widths).enumerate() {
            if i == 5 {
                text.push_str(cell);
            } else if i == 3 {
                text.push_str(&format!("{cell:>width$}  "));
            } else {
                text.push_str(&format!("{cell:<width$}  "));
            }
        }
        writeln!(out, "{}", text.trim_end())?;
    }
    Ok(())
}

fn json_line(row: &Row) -> serde_json::Value {
    let (status, winner, moves) = match &row.state {
        Ok(state) => {
            let status = match state.status() {
                GameStatus::InProgress => "in-play",
                GameStatus::Won => "won",
                GameStatus::Drawn => "drawn",
                GameStatus::NoResult => "no-result",
            };
            let winner = match state.outcome() {
                Some(Outcome::Win { seat, .. }) => Some(seat.0),
                _ => None,
            };
            (status, winner, Some(state.moves().len()))
        }
        Err(Trouble::CorruptLog) => ("corrupt-log", None, None),
        Err(Trouble::Unreadable) => ("unreadable", None, None),
    };
    let time = |ms: i64| convert::timestamp(ms).to_string();
    serde_json::json!({
        "gameId": row.record.game_id,
        "kind": row.kind,
        "status": status,
        "winner": winner,
        "moves": moves,
        "sequence": row.record.last_sequence,
        "createdAt": time(row.record.created_at_ms),
        "lastActivityAt": row.record.last_event_at_ms.map(time),
    })
}
