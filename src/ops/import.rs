//! `plylog import FILE|-`: JSON lines as `plylog export` writes them, read
//! back into a database (the same backend or the other); or, with
//! `--format pgn`, chess games in PGN (see the `pgn` module).
//!
//! A game's events must be on consecutive lines, in sequence order from its
//! GameCreated at sequence 1. The file is read twice. First every line is
//! checked, and nothing is written unless all pass: each decodes; each game
//! passes what CreateGame checks of a new game (its id, rules and seats,
//! against `--max-cells` and `--max-seats` as `plylog serve` takes them:
//! [`crate::api::check_new_game`]); each event was recorded after 1970 and
//! no later than the import's own clock reading plus
//! [`CLOCK_ALLOWANCE_MS`]; each game is new to the database (or skipped,
//! with `--skip-existing`), and each game's log replays through the rules
//! exactly as the server replays a log when it loads a game. A refusal
//! names the line and the game. Then each game is written in one
//! transaction, the whole game or nothing.
//! Standard input is held in memory for the second reading; a file is read
//! again.
//!
//! The log holds no seat tokens, so an imported game gets those that the
//! seat token secret derives for it (the secret file as `serve` finds it):
//! with the secret of the server the game came from, the tokens its players
//! hold keep working. `--no-seat-tokens` imports games that take moves
//! without tokens. Request ids, which deduplicate retries, are not in the
//! log either: a retry of a request made before the export is a new
//! request.

use std::collections::HashSet;
use std::io::{BufRead, Read, Write};
use std::path::PathBuf;

use prost::Message;

use super::{DatabaseArgs, Finding, OpsError, count, json, pgn, time_text};
use crate::api::auth::{AccessSettings, seat_token_keys};
use crate::api::{check_game_id, check_new_game};
use crate::game::Event;
use crate::proto::{self as pb, convert};
use crate::registry::{GameLimitArgs, log};
use crate::store::{EventStore, NewEvent, NewGame, RestoredGame, StoreError, StoredEvent, Wake};
use crate::tokens::{self, SeatTokenKeys};

/// `plylog import`: read exported games into a database.
#[derive(Debug, Clone, clap::Args)]
pub struct ImportArgs {
    #[command(flatten)]
    database: DatabaseArgs,
    /// The JSON lines to read (as `plylog export` writes them), or `-` for
    /// standard input.
    file: String,
    /// Skip the games whose id the database already has, instead of
    /// stopping at the first.
    #[arg(long)]
    skip_existing: bool,
    /// Import the games without seat tokens: any caller may then move for
    /// any seat. Only for a server that nothing but your own backend can
    /// reach.
    #[arg(long, env = "PLYLOG_NO_SEAT_TOKENS")]
    no_seat_tokens: bool,
    /// File of secrets the imported games' seat tokens are derived from,
    /// as for `plylog serve`. Default with SQLite: the database file
    /// with .seat-token-secret added to its name, created if missing. Required with
    /// PostgreSQL unless --no-seat-tokens.
    #[arg(long, env = "PLYLOG_SEAT_TOKEN_SECRET_FILE")]
    seat_token_secret_file: Option<PathBuf>,
    /// The limits each game is checked against, as `plylog serve` checks
    /// CreateGame.
    #[command(flatten)]
    limits: GameLimitArgs,
    /// What the file holds.
    #[arg(long, value_enum, default_value_t = ImportFormat::Jsonl)]
    format: ImportFormat,
}

/// The formats `plylog import` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ImportFormat {
    /// JSON lines as `plylog export` writes them.
    Jsonl,
    /// Chess games in PGN, each played through the rules into a new game
    /// (see the `pgn` module for ids, seats and results).
    Pgn,
}

/// How far past the import's clock reading an event may have been
/// recorded: one hour, for clocks that disagree. A later time is not a
/// clock's: the game would look active for years, and time controls would
/// count from it.
pub const CLOCK_ALLOWANCE_MS: i64 = 60 * 60 * 1000;

/// What an import did.
#[derive(Debug, Default)]
struct Counts {
    games: u64,
    events: u64,
    skipped: u64,
}

/// One game's lines, as read so far.
struct Pending {
    game_id: String,
    /// The line number of each event.
    lines: Vec<usize>,
    events: Vec<pb::GameEvent>,
}

impl Pending {
    /// The line of the event at `sequence` (its position in the game, so
    /// the line where a sequence goes wrong), or the game's last line.
    fn line_of(&self, sequence: u64) -> usize {
        let index = usize::try_from(sequence.saturating_sub(1)).unwrap_or(usize::MAX);
        self.lines
            .get(index)
            .or(self.lines.last())
            .copied()
            .unwrap_or(0)
    }
}

/// Where the lines come from: a file, read again for the second pass, or
/// standard input, held in memory.
enum Source {
    File(String),
    Memory(Vec<u8>),
}

impl Source {
    fn open(file: &str) -> Result<Source, OpsError> {
        if file != "-" {
            return Ok(Source::File(file.to_owned()));
        }
        let mut bytes = Vec::new();
        std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut bytes)?;
        Ok(Source::Memory(bytes))
    }

    fn lines(&self) -> Result<Box<dyn BufRead + '_>, OpsError> {
        Ok(match self {
            Source::File(path) => Box::new(std::io::BufReader::new(
                std::fs::File::open(path)
                    .map_err(|e| OpsError::Refused(format!("reading {path}: {e}")))?,
            )),
            Source::Memory(bytes) => Box::new(bytes.as_slice()),
        })
    }
}

/// What a pass over the lines does with each game.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// Check it, write nothing.
    Check,
    /// Check it again and write it.
    Write,
}

/// Imports the file `args` names, and writes what it did on `out`.
///
/// # Errors
/// [`OpsError::Refused`] naming the line and the game for a line that does
/// not decode, a game that does not replay or exists already (nothing is
/// written then); the store does not open or fails; the file cannot be
/// read.
pub async fn run(args: &ImportArgs, out: &mut impl Write) -> Result<Finding, OpsError> {
    let source = Source::open(&args.file)?;
    let store = args.database.open_to_write().await?;
    let now_ms = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| {
            i64::try_from(since.as_millis()).unwrap_or(i64::MAX)
        });
    let mut import = Import {
        args,
        store: store.as_ref(),
        keys: None,
        latest_ms: now_ms.saturating_add(CLOCK_ALLOWANCE_MS),
        counts: Counts::default(),
    };
    if let Err(refused) = import.check(&source).await {
        store.close().await;
        return Err(refused);
    }
    let written = import.pass(&source, Pass::Write).await;
    store.close().await;
    let counts = &import.counts;
    let skipped = if counts.skipped > 0 {
        format!(", skipped {} that exist already", counts.skipped)
    } else {
        String::new()
    };
    let before = if written.is_err() {
        " before the error"
    } else {
        ""
    };
    writeln!(
        out,
        "imported {} ({}){skipped}{before}",
        count(counts.games, "game"),
        count(counts.events, "event"),
    )?;
    written.map(|()| Finding::Clean)
}

/// An import under way: where it writes and what it did.
struct Import<'a> {
    args: &'a ImportArgs,
    store: &'a dyn EventStore,
    /// The secrets seat tokens are derived from; `None` without tokens.
    keys: Option<SeatTokenKeys>,
    /// The latest time an event may have been recorded at, Unix epoch
    /// milliseconds: the import's clock reading plus
    /// [`CLOCK_ALLOWANCE_MS`].
    latest_ms: i64,
    counts: Counts,
}

impl Import<'_> {
    /// The first pass: finds the seat token secret, then checks every line
    /// and every game, writing nothing.
    async fn check(&mut self, source: &Source) -> Result<(), OpsError> {
        if !self.args.no_seat_tokens {
            let access = AccessSettings {
                seat_tokens: true,
                api_key: None,
                seat_token_secret_file: self.args.seat_token_secret_file.clone(),
            };
            let databases = self.args.database.databases()?;
            let database = databases
                .first()
                .ok_or_else(|| OpsError::Refused("no --database-url given".to_owned()))?;
            self.keys = seat_token_keys(&access, database)?;
        }
        self.pass(source, Pass::Check).await?;
        self.counts = Counts::default();
        Ok(())
    }

    /// Reads the lines a game at a time, and checks (and in the second
    /// pass writes) each game.
    async fn pass(&mut self, source: &Source, pass: Pass) -> Result<(), OpsError> {
        if self.args.format == ImportFormat::Pgn {
            return self.pgn_pass(source, pass).await;
        }
        let mut done = HashSet::new();
        let mut pending: Option<Pending> = None;
        for (index, line) in source.lines()?.lines().enumerate() {
            let number = index + 1;
            let line = line?;
            if line.trim().is_empty() {
                continue;
            }
            let event = json::from_line(&line)
                .map_err(|why| OpsError::Refused(format!("line {number}: {why}")))?;
            if event.game_id.is_empty() {
                return Err(OpsError::Refused(format!(
                    "line {number}: the event names no game (gameId)"
                )));
            }
            if let Some(game) = pending.take_if(|p| p.game_id != event.game_id) {
                done.insert(game.game_id.clone());
                self.game(game, pass).await?;
            }
            if done.contains(&event.game_id) {
                return Err(OpsError::Refused(format!(
                    "line {number}: game {} again, after other games' events: a game's \
                     events must be on consecutive lines",
                    event.game_id
                )));
            }
            let game = pending.get_or_insert_with(|| Pending {
                game_id: event.game_id.clone(),
                lines: Vec::new(),
                events: Vec::new(),
            });
            game.lines.push(number);
            game.events.push(event);
        }
        if let Some(game) = pending {
            self.game(game, pass).await?;
        }
        Ok(())
    }

    /// [`Import::pass`] over a PGN text: each game's log, built by playing
    /// its moves, is checked (and written) as a JSON game's is. A game's
    /// "line" in a refusal is its number in the text.
    async fn pgn_pass(&mut self, source: &Source, pass: Pass) -> Result<(), OpsError> {
        let mut text = String::new();
        source.lines()?.read_to_string(&mut text)?;
        let logs =
            pgn::logs_of(&text, self.latest_ms - CLOCK_ALLOWANCE_MS).map_err(OpsError::Refused)?;
        let mut seen = HashSet::new();
        for (at, (game_id, events)) in logs.into_iter().enumerate() {
            if !seen.insert(game_id.clone()) {
                return Err(OpsError::Refused(format!(
                    "game {}: game id {game_id} again (from its Site tag)",
                    at + 1
                )));
            }
            let game = Pending {
                game_id,
                lines: vec![at + 1; events.len()],
                events,
            };
            self.game(game, pass).await?;
        }
        Ok(())
    }

    /// Checks what CreateGame checks of a new game (its id; the rules and
    /// seats of its GameCreated, when it starts with one: the replay
    /// refuses a log that does not), and the time each event was recorded
    /// at.
    fn check_as_new(&self, game: &Pending) -> Result<(), OpsError> {
        let refused = |line: usize, why: String| {
            OpsError::Refused(format!("line {line}: game {}: {why}", game.game_id))
        };
        let created = match game.events.first().and_then(|e| e.kind.as_ref()) {
            Some(pb::game_event::Kind::GameCreated(created)) => Some(created),
            _ => None,
        };
        let limits = &self.args.limits;
        match created {
            Some(created) => check_new_game(
                Some(&game.game_id),
                convert::WireConfig {
                    rules: created.rules.as_ref(),
                    seats: &created.seats,
                    undo_policy: created.undo_policy,
                    time_control: created.time_control.as_ref(),
                    absence: created.absence.as_ref(),
                    matched_at: created.matched_at.as_ref(),
                    labels: &created.labels,
                    clocks_start_at: created.clocks_start_at.as_ref(),
                },
                limits.max_cells,
                limits.seat_limits(),
            )
            .map(drop),
            None => check_game_id(&game.game_id),
        }
        .map_err(|error| refused(game.lines[0], error.to_string()))?;
        for (event, line) in game.events.iter().zip(&game.lines) {
            let at = log::recorded_at(event);
            let when = if at < 0 {
                "before 1970".to_owned()
            } else if at > self.latest_ms {
                format!(
                    "over {} minutes after this import's clock reading",
                    CLOCK_ALLOWANCE_MS / 60_000
                )
            } else {
                continue;
            };
            return Err(refused(
                *line,
                format!(
                    "event {} was recorded at {}, {when}",
                    event.sequence,
                    time_text(at)
                ),
            ));
        }
        Ok(())
    }

    /// Checks one game (see [`Import::check_as_new`]) and replays it and, in
    /// the second pass, writes it whole.
    async fn game(&mut self, game: Pending, pass: Pass) -> Result<(), OpsError> {
        self.check_as_new(&game)?;
        let exists = || {
            OpsError::Refused(format!(
                "line {}: game {} exists already in the database (--skip-existing skips it)",
                game.lines[0], game.game_id
            ))
        };
        if !self.store.read(&game.game_id, 1, 1, 1).await?.is_empty() {
            if self.args.skip_existing {
                self.counts.skipped += 1;
                return Ok(());
            }
            return Err(exists());
        }
        // Chained afresh: the chain is the store's, not the export's.
        let mut chain = crate::store::chain::GENESIS;
        let stored: Vec<StoredEvent> = game
            .events
            .iter()
            .map(|event| {
                let payload = event.encode_to_vec();
                chain = crate::store::chain::link(&chain, &game.game_id, event.sequence, &payload);
                StoredEvent {
                    sequence: event.sequence,
                    payload,
                    chain: chain.to_vec(),
                }
            })
            .collect();
        let refused = |error: crate::game::ReplayError| {
            OpsError::Refused(format!(
                "line {}: game {} does not replay: {error}",
                game.line_of(error.sequence),
                game.game_id
            ))
        };
        let (state, _) = log::rebuild(&game.game_id, &stored).map_err(refused)?;
        if pass == Pass::Check {
            return Ok(());
        }
        let mut events = Vec::with_capacity(stored.len());
        let mut issued = vec![1; state.config().seats().len()];
        let mut over = false;
        for s in stored {
            let (wire, event) = log::decode(&game.game_id, &s).map_err(refused)?;
            let lifecycle;
            (lifecycle, over) = crate::proto::event_format::lifecycle(&wire, over);
            if let Event::SeatTokenReissued { seat } = event
                && let Some(generation) = issued.get_mut(seat.index())
            {
                *generation = s.sequence;
            }
            events.push(NewEvent {
                sequence: s.sequence,
                event_type: convert::event_type(&event),
                payload: s.payload.into(),
                recorded_at_ms: log::recorded_at(&wire),
                chain: s.chain.try_into().expect("32 bytes, linked above"),
                lifecycle: lifecycle as i32,
            });
        }
        let seat_token_hashes = self.keys.as_ref().map_or_else(Vec::new, |keys| {
            (0..)
                .zip(&issued)
                .map(|(seat, generation)| {
                    tokens::hash(&keys.issue(&game.game_id, seat, *generation))
                })
                .collect()
        });
        let mut events = events.into_iter();
        let created = events.next().expect("a replayed log has its GameCreated");
        let written = 1 + events.len() as u64;
        let restored = RestoredGame {
            game: NewGame {
                game_id: game.game_id.clone(),
                created,
                request: None,
                status: convert::status_to_proto(state.status()) as i32,
                seat_token_hashes,
                // A game still in progress is due at once: the server's
                // timer queue loads it and works out its real wake.
                wake: Wake {
                    at_ms: state.to_move().map(|_| 0),
                    absent_since_ms: None,
                },
                tags: crate::proto::event_format::game_tags(state.config()),
            },
            events: events.collect(),
        };
        match self.store.restore(restored).await {
            Ok(()) => {
                self.counts.games += 1;
                self.counts.events += written;
                Ok(())
            }
            Err(StoreError::GameExists) if self.args.skip_existing => {
                self.counts.skipped += 1;
                Ok(())
            }
            Err(StoreError::GameExists) => Err(exists()),
            Err(other) => Err(other.into()),
        }
    }
}
