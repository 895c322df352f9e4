//! `plylog verify [GAME...]`: every game's log (or the named games') checked
//! as the server checks it when it loads a game: its integrity chain (see
//! [`crate::store::chain`]: any changed byte of any event or of its chain
//! value), then a replay through the rules from sequence 1 that checks
//! every field an event's predecessors determine (its game, sequence and
//! ply, where a move lands, what it flips, its outcome). Then the game's
//! snapshot, if it has one, checked whole (its checksum, its state's
//! invariants, its chain value) and resumed: the state it gives must be
//! the replay's. Last, what the games table keeps of the game against the
//! replay: its status (in play, won, drawn, no result), its last sequence
//! and its creation time. One line per problem, `game <id>: ...`, then a
//! summary; exit code 1 when any game is bad.
//!
//! Checking every game (none named), it then reads each cell's event feed
//! (see [`EventStore::read_feed`]): positions dense from 1, each game's
//! events in sequence order, and as many events in the feed as in the
//! games' logs (an event without a position is never sent to a feed
//! reader). One line per problem, `feed of cell <n>: ...`, and a line
//! counting them; exit code 1 when there is any.

use std::collections::{HashMap, HashSet};
use std::io::Write;

use super::{DatabaseArgs, Finding, Games, OpsError, count};
use crate::game::escape_disruptive;
use crate::proto::{self as pb, convert};
use crate::registry::{log, snapshot};
use crate::store::{EventStore, FeedRange, GameRecord, LoadFrom, StoreError};

/// Feed events read per query by the feed check.
const FEED_PAGE: u32 = 10_000;

/// Problems the feed check names per cell; the rest are only counted.
const FEED_PROBLEMS: u64 = 20;

/// `plylog verify`: check games' logs.
#[derive(Debug, Clone, clap::Args)]
#[command(
    after_help = "Exit code 0 when every game checked is good, 1 when any is bad, \
3 when the check could not run (a named game does not exist, the database cannot be read)."
)]
pub struct VerifyArgs {
    #[command(flatten)]
    database: DatabaseArgs,
    /// The games to check; default: every game.
    games: Vec<String>,
}

/// Checks the games `args` names and reports on `out`.
///
/// # Errors
/// [`OpsError::NoGame`] for a named game that does not exist (after the
/// others are checked); store and output failures.
pub async fn run(args: &VerifyArgs, out: &mut impl Write) -> Result<Finding, OpsError> {
    let store = args.database.open_to_read().await?;
    let result = async {
        let (checked, bad, events) = check_all(args, store.as_ref(), out).await?;
        let feed_problems = if args.games.is_empty() {
            check_feeds(store.as_ref(), &events, out).await?
        } else {
            0
        };
        Ok::<_, OpsError>((checked, bad, feed_problems))
    }
    .await;
    store.close().await;
    let (checked, bad, feed_problems) = result?;
    writeln!(out, "checked {}: {bad} bad", count(checked, "game"))?;
    if feed_problems > 0 {
        writeln!(out, "the event feed: {}", count(feed_problems, "problem"))?;
    }
    Ok(if bad > 0 || feed_problems > 0 {
        Finding::Problems
    } else {
        Finding::Clean
    })
}

/// The games checked, the bad ones among them, and the events read of
/// them in each cell.
async fn check_all(
    args: &VerifyArgs,
    store: &dyn EventStore,
    out: &mut impl Write,
) -> Result<(u64, u64, HashMap<usize, u64>), OpsError> {
    let mut events = HashMap::new();
    let mut unseen: HashSet<&str> = args.games.iter().map(String::as_str).collect();
    let (mut checked, mut bad) = (0, 0);
    let mut games = Games::of(store);
    while let Some(record) = games.next().await? {
        if !args.games.is_empty() && !unseen.remove(record.game_id.as_str()) {
            continue;
        }
        checked += 1;
        let (problems, read) = check(store, &record).await?;
        *events.entry(record.cell).or_default() += read;
        for problem in &problems {
            writeln!(
                out,
                "game {}: {problem}",
                escape_disruptive(&record.game_id)
            )?;
        }
        bad += u64::from(!problems.is_empty());
    }
    match args
        .games
        .iter()
        .find(|game| unseen.contains(game.as_str()))
    {
        Some(missing) => Err(OpsError::NoGame(missing.clone())),
        None => Ok((checked, bad, events)),
    }
}

/// What is wrong with one game, in words (empty when it is good), and
/// how many of its events it read.
async fn check(
    store: &dyn EventStore,
    record: &GameRecord,
) -> Result<(Vec<String>, u64), OpsError> {
    let stored = match store.load(&record.game_id, LoadFrom::Start).await {
        Ok(Some(stored)) => stored,
        Ok(None) => {
            return Ok((
                vec!["the games table lists it, but no event of it is stored".into()],
                0,
            ));
        }
        Err(StoreError::Corrupt(why)) => {
            return Ok((vec![format!("a row does not read back: {why}")], 0));
        }
        Err(other) => return Err(other.into()),
    };
    let mut problems = Vec::new();
    match log::rebuild(&record.game_id, &stored.events) {
        Err(error) => problems.push(format!(
            "event {} does not replay: {}",
            error.sequence, error.why
        )),
        Ok((state, created_at_ms)) => {
            let snapshot = match store.snapshot(&record.game_id).await {
                Ok(snapshot) => snapshot,
                Err(StoreError::Corrupt(why)) => {
                    problems.push(format!("its snapshot row does not read back: {why}"));
                    None
                }
                Err(other) => return Err(other.into()),
            };
            if let Some(problem) = snapshot
                .as_ref()
                .and_then(|s| check_snapshot(record, s, &stored.events, &state, created_at_ms))
            {
                problems.push(problem);
            }
            let replayed = convert::status_to_proto(state.status());
            if record.status != replayed as i32 {
                let kept = pb::GameStatus::try_from(record.status)
                    .map_or_else(|_| record.status.to_string(), |s| s.as_str_name().into());
                problems.push(format!(
                    "the games table says {kept}, the replay {}",
                    replayed.as_str_name()
                ));
            }
            if record.created_at_ms != created_at_ms {
                problems.push(format!(
                    "the games table says created at {} ms, event 1 was recorded at {created_at_ms} ms",
                    record.created_at_ms
                ));
            }
        }
    }
    let last = stored.events.last().map_or(0, |event| event.sequence);
    if record.last_sequence != last {
        problems.push(format!(
            "the games table says the last event is {}, the log ends at {last}",
            record.last_sequence
        ));
    }
    Ok((problems, stored.events.len() as u64))
}

/// Checks each cell's event feed against `events`, the events read of the
/// games of each cell, writing a line per problem (up to
/// [`FEED_PROBLEMS`] a cell) on `out`; returns how many it found.
///
/// # Errors
/// Store and output failures.
async fn check_feeds(
    store: &dyn EventStore,
    events: &HashMap<usize, u64>,
    out: &mut impl Write,
) -> Result<u64, OpsError> {
    let mut problems = 0;
    for cell in 0..store.cell_count() {
        let mut found = Vec::new();
        let head = store.feed_head(cell).await?;
        let mut last = 0;
        let mut in_feed = 0_u64;
        // Each game's last sequence seen in the feed.
        let mut games: HashMap<String, u64> = HashMap::new();
        loop {
            let range = FeedRange {
                after: last,
                upto: head,
                event_types: None,
                lifecycle_only: false,
                tags: &[],
                limit: FEED_PAGE,
            };
            let page = match store.read_feed(cell, range).await {
                Ok(page) => page,
                Err(StoreError::Corrupt(why)) => {
                    found.push(format!("a row does not read back: {why}"));
                    break;
                }
                Err(other) => return Err(other.into()),
            };
            let Some(end) = page.last().map(|event| event.position) else {
                break;
            };
            for event in page {
                if event.position != last + 1 {
                    found.push(format!(
                        "positions {} to {} are missing",
                        last + 1,
                        event.position - 1
                    ));
                }
                last = event.position;
                in_feed += 1;
                let before = games.insert(event.game_id.clone(), event.sequence);
                if let Some(before) = before.filter(|&before| before >= event.sequence) {
                    found.push(format!(
                        "game {}: sequence {} at position {} comes after sequence {before}",
                        escape_disruptive(&event.game_id),
                        event.sequence,
                        event.position
                    ));
                }
            }
            last = end;
        }
        let logged = events.get(&cell).copied().unwrap_or(0);
        if in_feed != logged {
            found.push(format!(
                "the games' logs hold {logged} events, the feed {in_feed} (an event without a position is never sent)"
            ));
        }
        for problem in found.iter().take(FEED_PROBLEMS as usize) {
            writeln!(out, "feed of cell {cell}: {problem}")?;
        }
        problems += found.len() as u64;
    }
    Ok(problems)
}

/// What is wrong with a game's snapshot, given its log's replay (`state`,
/// created at `created_at_ms`): `None` when it resumes to the replay's
/// state, or was written by a build with another format (the server
/// replays past it; that is no fault).
fn check_snapshot(
    record: &GameRecord,
    stored: &crate::store::Snapshot,
    events: &[crate::store::StoredEvent],
    state: &crate::game::GameState,
    created_at_ms: i64,
) -> Option<String> {
    let from = usize::try_from(stored.sequence.saturating_sub(1)).unwrap_or(usize::MAX);
    let sequence = stored.sequence;
    match snapshot::resume(
        &record.game_id,
        stored,
        events.get(from..).unwrap_or_default(),
    ) {
        Err(snapshot::Unusable::Format { .. }) => None,
        Err(why) => Some(format!(
            "the snapshot at sequence {sequence} is unusable: {why}"
        )),
        Ok((resumed, created)) if (&resumed, created) != (state, created_at_ms) => Some(format!(
            "the snapshot at sequence {sequence} resumes to another state than the log's replay"
        )),
        Ok(_) => None,
    }
}
