//! The operator's commands: `plylog games`, `show`, `export`, `import`,
//! `verify` and `migrate`, which work on a database URL (SQLite or
//! PostgreSQL) with no server running, through the same store, log
//! decoding and replay the server uses; and `plylog feed`, a client of a
//! running server's event feed.
//!
//! # Map
//! - [`Command`]: the subcommands, as clap parses them; [`run`] runs one
//!   and turns its result into the exit code.
//! - [`DatabaseArgs`]: `--database-url`, shared by every command, and how a
//!   command opens its store: read-only (nothing created, migrated or
//!   written) or for writing.
//! - One file per command: [`games`], [`show`], [`export`], [`import`],
//!   [`verify`], [`migrate`], [`feed`]; `json` holds the one JSON form of an event
//!   that export writes and import reads.
//!
//! Exit codes: 0 done, 1 `verify` found a bad log, 2 a usage error (clap),
//! 3 anything else, with one line on standard error.
//!
//! Text from the database (game ids, player ids, symbols) is written with
//! every character that acts on a terminal escaped
//! ([`crate::game::escape_disruptive`]: `\u{1b}`), whatever the games
//! hold: new games cannot have them, but older rows and imports from before
//! the check may.

pub mod export;
pub mod feed;
pub mod games;
pub mod import;
mod json;
pub mod migrate;
pub mod pgn;
pub mod show;
pub mod verify;

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use crate::game::{GameState, GameStatus, ReplayError, escape_disruptive};
use crate::proto::convert;
use crate::registry::log;
use crate::rules::{Outcome, Seat};
use crate::store::{
    Database, EventStore, GameRecord, ListFilter, ListOrder, LoadFrom, OpenError, StoreError,
    StoreOptions,
};

/// Games read from the store per page.
const PAGE: u32 = 500;

/// The operator's commands.
#[derive(Debug, clap::Subcommand)]
pub enum Command {
    /// List the games in the database: id, rules, status, moves, creation
    /// and last activity.
    Games(games::GamesArgs),
    /// Draw a game's board at a sequence (default: the latest), with whose
    /// turn it is or how it ended.
    Show(show::ShowArgs),
    /// Write games' logs as JSON lines, one event a line.
    Export(export::ExportArgs),
    /// Read JSON lines written by `plylog export` into a database, each
    /// game replayed through the rules first.
    Import(import::ImportArgs),
    /// Replay every game (or the games named) through the rules and check
    /// what the games table says of them; exit code 1 if any is bad.
    Verify(verify::VerifyArgs),
    /// Apply the database migrations this build has and exit.
    Migrate(migrate::MigrateArgs),
    /// Print every game's events from a running server's feed
    /// (StreamAllEvents) as JSON lines, from after a checkpoint, optionally
    /// following it; resumable with a checkpoint file.
    Feed(feed::FeedArgs),
}

/// What a command found, when it could do its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Finding {
    /// Nothing wrong (exit code 0).
    Clean,
    /// Problems in the data, reported on standard output (exit code 1).
    Problems,
}

/// Why a command could not do its work (exit code 3).
#[derive(Debug, thiserror::Error)]
pub enum OpsError {
    /// The database URL is not supported, or the store does not open.
    #[error(transparent)]
    Open(#[from] OpenError),
    /// The seat token secret file cannot be used.
    #[error(transparent)]
    SecretFile(#[from] crate::tokens::SecretFileError),
    /// The store failed while reading or writing.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// No game has this id.
    #[error("no game {0} in the database")]
    NoGame(String),
    /// A game's log does not replay.
    #[error("game {game}: {error}")]
    Corrupt {
        /// The game.
        game: String,
        /// The first event that does not fit.
        error: ReplayError,
    },
    /// What the command was asked cannot be done, in words.
    #[error("{0}")]
    Refused(String),
    /// Reading the input or writing the output failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// The server refused or ended a call (`plylog feed`): its code and
    /// message.
    #[error("the server answered {code:?}: {message}")]
    Server {
        /// The gRPC status code.
        code: tonic::Code,
        /// The status message.
        message: String,
    },
}

impl From<tonic::Status> for OpsError {
    fn from(status: tonic::Status) -> Self {
        OpsError::Server {
            code: status.code(),
            message: status.message().to_owned(),
        }
    }
}

/// `--database-url`, which every command takes.
#[derive(Debug, Clone, clap::Args)]
pub struct DatabaseArgs {
    /// Event store: sqlite://PATH, a file path, or
    /// postgres://USER@HOST:PORT/DATABASE. Repeated (or several in the
    /// variable, separated by spaces): the PostgreSQL cells, in the order
    /// the servers are given them.
    #[arg(
        long,
        env = "DATABASE_URL",
        default_value = "sqlite://plylog.db",
        value_delimiter = ' ',
        num_args = 1
    )]
    pub database_url: Vec<String>,
}

impl DatabaseArgs {
    /// The store, opened to read: a SQLite file that does not exist is an
    /// error, nothing is migrated, and nothing can be written.
    ///
    /// # Errors
    /// [`OpsError::Open`]: an unsupported URL, a missing file, a database
    /// that cannot be reached or lacks migrations.
    pub async fn open_to_read(&self) -> Result<Arc<dyn EventStore>, OpsError> {
        self.open(true).await
    }

    /// The store, opened to write: a SQLite file is created if missing, and
    /// the migrations are applied.
    ///
    /// # Errors
    /// [`OpsError::Open`]: an unsupported URL, a database that cannot be
    /// opened or migrated.
    pub async fn open_to_write(&self) -> Result<Arc<dyn EventStore>, OpsError> {
        self.open(false).await
    }

    async fn open(&self, read_only: bool) -> Result<Arc<dyn EventStore>, OpsError> {
        let store = Database::open_all(
            &self.databases()?,
            StoreOptions {
                postgres_connections: 2,
                sqlite_synchronous_normal: false,
                read_only,
            },
        )
        .await?;
        Ok(store)
    }

    /// The databases given, cell 0 first.
    ///
    /// # Errors
    /// [`OpsError::Open`] for an unsupported URL.
    pub fn databases(&self) -> Result<Vec<Database>, OpsError> {
        Ok(self
            .database_url
            .iter()
            .map(|url| Database::parse(url))
            .collect::<Result<_, _>>()?)
    }
}

/// Runs `command`, writing its report to standard output, and gives the
/// exit code: 0 done, 1 problems found, 3 failed (the reason on standard
/// error, one line). A closed standard output (`| head`) is not a failure.
pub async fn run(command: Command) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    let result = match command {
        Command::Games(args) => games::run(&args, &mut out).await,
        Command::Show(args) => show::run(&args, &mut out).await,
        Command::Export(args) => export::run(&args, &mut out).await,
        Command::Import(args) => import::run(&args, &mut out).await,
        Command::Verify(args) => verify::run(&args, &mut out).await,
        Command::Migrate(args) => migrate::run(&args, &mut out).await,
        Command::Feed(args) => feed::run(&args, &mut out).await,
    }
    .and_then(|finding| {
        out.flush()?;
        Ok(finding)
    });
    match result {
        Ok(Finding::Clean) => ExitCode::SUCCESS,
        Ok(Finding::Problems) => ExitCode::from(1),
        Err(OpsError::Io(error)) if error.kind() == std::io::ErrorKind::BrokenPipe => {
            ExitCode::SUCCESS
        }
        Err(error) => {
            // The message may quote stored data or the input (a game id,
            // an import's line).
            eprintln!("plylog: {}", escape_disruptive(&one_line(&error)));
            ExitCode::from(3)
        }
    }
}

/// An error and its causes on one line, each cause once (a message that
/// already ends with its cause's text does not repeat it).
pub fn one_line(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text.replace('\n', " ")
}

/// Every game in the store, in creation order, read a page at a time (with
/// several cells, one cell after the other).
struct Games<'a> {
    store: &'a dyn EventStore,
    /// The cell being read.
    cell: usize,
    cursor: i64,
    page: std::vec::IntoIter<GameRecord>,
    done: bool,
    /// Games still to read one at a time, after a page that did not read.
    careful: usize,
}

/// Rows of the games table that do not read back (a column out of range or
/// of the wrong type), skipped: those after position `after` up to and
/// including position `through` (positions count the table's rows in
/// creation order).
#[derive(Debug)]
struct UnreadableRows {
    /// The cell (0 for a store of one database).
    cell: usize,
    after: i64,
    through: i64,
    error: StoreError,
}

impl std::fmt::Display for UnreadableRows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let table = if self.cell > 0 {
            format!("cell {}'s games table", self.cell)
        } else {
            "the games table".to_owned()
        };
        let rows = if self.through == self.after + 1 {
            format!("{table}'s row at position {}", self.through)
        } else {
            format!(
                "{table}'s rows at positions {} to {}",
                self.after + 1,
                self.through
            )
        };
        write!(f, "{rows} does not read back: {}", one_line(&self.error))
    }
}

/// Whether `error` is about what a row holds (a corrupt value, a column
/// that does not decode), not about reaching the database.
fn is_bad_row(error: &StoreError) -> bool {
    matches!(
        error,
        StoreError::Corrupt(_)
            | StoreError::Database(sqlx::Error::ColumnDecode { .. } | sqlx::Error::Decode(_))
    )
}

impl<'a> Games<'a> {
    fn of(store: &'a dyn EventStore) -> Self {
        Games {
            store,
            cell: 0,
            cursor: 0,
            page: Vec::new().into_iter(),
            done: false,
            careful: 0,
        }
    }

    /// The next game; `None` once every game was read.
    ///
    /// # Errors
    /// Store failures, a games row that does not read back among them.
    async fn next(&mut self) -> Result<Option<GameRecord>, OpsError> {
        match self.next_or_unreadable().await? {
            None => Ok(None),
            Some(Ok(game)) => Ok(Some(game)),
            Some(Err(unreadable)) => Err(unreadable.error.into()),
        }
    }

    /// The next game, or the next rows of the games table that do not read
    /// back ([`is_bad_row`]), which are then skipped; `None` once every
    /// game was read. A page that does not read is read again one row at a
    /// time; the rows that do not read are found by reading one row at a
    /// time after each position until one does.
    ///
    /// # Errors
    /// Store failures other than rows that do not read back.
    async fn next_or_unreadable(
        &mut self,
    ) -> Result<Option<Result<GameRecord, UnreadableRows>>, OpsError> {
        while self.page.as_slice().is_empty() && !self.done {
            let size = if self.careful > 0 { 1 } else { PAGE };
            match self
                .store
                .list_cell(
                    self.cell,
                    self.cursor,
                    ListOrder::OldestFirst,
                    &ListFilter::default(),
                    size,
                )
                .await
            {
                Ok(page) => {
                    self.careful = self.careful.saturating_sub(page.len());
                    if page.len() < size as usize {
                        // This cell is read; the next one from its start.
                        self.cell += 1;
                        self.cursor = 0;
                        self.done = self.cell >= self.store.cell_count();
                    } else if let Some(last) = page.last() {
                        self.cursor = last.cursor;
                    }
                    self.page = page.into_iter();
                }
                Err(error) if is_bad_row(&error) && size > 1 => self.careful = PAGE as usize,
                Err(error) if is_bad_row(&error) => {
                    let after = self.cursor;
                    let mut through = after;
                    loop {
                        through += 1;
                        match self
                            .store
                            .list_cell(
                                self.cell,
                                through,
                                ListOrder::OldestFirst,
                                &ListFilter::default(),
                                1,
                            )
                            .await
                        {
                            Ok(_) => break,
                            Err(again) if is_bad_row(&again) => {}
                            Err(other) => return Err(other.into()),
                        }
                    }
                    self.cursor = through;
                    return Ok(Some(Err(UnreadableRows {
                        cell: self.cell,
                        after,
                        through,
                        error,
                    })));
                }
                Err(error) => return Err(error.into()),
            }
        }
        Ok(self.page.next().map(Ok))
    }
}

/// A game's whole log replayed: its state after the last event.
///
/// # Errors
/// [`OpsError::NoGame`]; [`OpsError::Corrupt`] when the log does not
/// replay; store failures.
async fn replay(store: &dyn EventStore, game_id: &str) -> Result<GameState, OpsError> {
    let log = store
        .load(game_id, LoadFrom::Start)
        .await?
        .ok_or_else(|| OpsError::NoGame(game_id.to_owned()))?;
    log::rebuild(game_id, &log.events)
        .map(|(state, _)| state)
        .map_err(|error| OpsError::Corrupt {
            game: game_id.to_owned(),
            error,
        })
}

/// A seat as reports name it: `seat 0 (X)` (the symbol escaped:
/// [`escape_disruptive`]).
fn seat_name(state: &GameState, seat: Seat) -> String {
    match state.config().seats().get(seat.index()) {
        Some(info) => format!("{seat} ({})", escape_disruptive(&info.symbol)),
        None => seat.to_string(),
    }
}

/// Where a game stands, in words: `in play`, `won by seat 0 (X)`,
/// `drawn`, `no result`.
fn status_text(state: &GameState) -> String {
    match (state.status(), state.outcome()) {
        (GameStatus::InProgress, _) => "in play".to_owned(),
        (_, Some(Outcome::Win { seat, .. })) => format!("won by {}", seat_name(state, *seat)),
        (GameStatus::Drawn, _) => "drawn".to_owned(),
        _ => "no result".to_owned(),
    }
}

/// Why a finished game ended, in words (`line completed`, `resignation`):
/// the proto's reason name, lowercased.
fn end_reason_text(state: &GameState) -> Option<String> {
    let reason = convert::end_reason_to_proto(state.end_reason()?);
    let name = reason.as_str_name().trim_start_matches("END_REASON_");
    Some(name.to_lowercase().replace('_', " "))
}

/// `n` and the noun, plural unless `n` is 1: `1 game`, `3 events`.
pub fn count(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

/// Unix epoch milliseconds as RFC 3339 (UTC), to the second.
fn time_text(ms: i64) -> String {
    convert::timestamp(ms.div_euclid(1000) * 1000).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::AppError;

    #[test]
    fn an_error_is_one_line_that_names_each_cause_once() {
        let inner = std::io::Error::other("disk full");
        let error = AppError::TlsFile {
            what: "key",
            path: "k.pem".into(),
            source: inner,
        };
        assert_eq!(one_line(&error), "reading TLS key k.pem: disk full");
    }

    #[test]
    fn times_are_shown_in_utc_to_the_second() {
        assert_eq!(time_text(1_700_000_000_999), "2023-11-14T22:13:20Z");
    }
}
