//! The SQLite writer: one thread owns the store's only writer connection
//! (rusqlite, not sqlx) and commits each group of queued writes in one
//! transaction.
//!
//! sqlx runs every statement of a SQLite connection on that connection's
//! worker thread, so an append of five statements in a savepoint cost ten
//! thread switches, and under load those switches were most of the
//! server's CPU (issue 15's profile). Here a whole group runs on one thread
//! with cached prepared statements: a caller's write costs one wake-up of
//! the writer and one of the caller.

use std::path::Path;
use std::sync::Arc;

use rusqlite::{Connection, ErrorCode, params};
use tokio::sync::{mpsc, oneshot, watch};

use super::tail::FeedTail;
use crate::store::{
    Append, DueWake, FeedEvent, NewEvent, NewGame, RestoredGame, Snapshot, StoreError, Wake, clamp,
};

/// Most writes one transaction commits together.
pub(super) const MAX_GROUP: usize = 512;
/// Schema version stamped on every event row.
const EVENT_VERSION: i64 = 1;

/// A write for the writer thread.
pub(super) enum WriteOp {
    Create(NewGame),
    /// New games in one savepoint: all or none (see
    /// [`crate::store::EventStore::create_all`]).
    CreateAll(Vec<NewGame>),
    Append(Append),
    Restore(RestoredGame),
    /// Keep a snapshot (see [`crate::store::EventStore::save_snapshot`]).
    Snapshot(Snapshot),
    /// Set a game's wake (see [`crate::store::EventStore::set_wake`]).
    Wake {
        game_id: String,
        sequence: u64,
        wake: Wake,
    },
    /// Claim the due wakes (see [`crate::store::EventStore::claim_wakes`]).
    Claim {
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
    },
    /// Commit what came before, then close the connection and stop.
    Close,
}

/// What a write gives back besides success: the wakes a claim took.
pub(super) type Written = Vec<DueWake>;

/// A write and where its result goes.
pub(super) struct WriteJob {
    pub(super) op: WriteOp,
    pub(super) reply: oneshot::Sender<Result<Written, StoreError>>,
}

/// Opens the writer connection on the (migrated, existing) file at `path`:
/// `synchronous` FULL, or NORMAL when `synchronous_normal`; foreign keys on;
/// temporary storage in memory; a 10 s busy timeout. The journal mode
/// (WAL) is the file's own, set when the store first opened it. Returns
/// the connection with `journal_mode` and `synchronous` as it reports them.
///
/// # Errors
/// The file cannot be opened, or a pragma fails.
pub(super) fn open(
    path: &Path,
    synchronous_normal: bool,
) -> rusqlite::Result<(Connection, Vec<(String, String)>)> {
    let conn = super::open_connection(path)?;
    let synchronous = if synchronous_normal { "NORMAL" } else { "FULL" };
    conn.pragma_update(None, "synchronous", synchronous)?;
    conn.pragma_update(None, "foreign_keys", "ON")?;
    // Undo records for savepoints and statements (the sub-journal: every
    // page changed, as it was) SQLite keeps in memory only up to 64 KiB,
    // then spills to a temporary file that it no longer truncates as
    // savepoints end: when each write of a group ran in its own savepoint,
    // 77% of the writer's pwrite calls at G=64 went there, not to the WAL
    // (issue 42's profile). With temp_store MEMORY the sub-journal stays in
    // memory (a group that `commit_group` runs write by write still uses
    // it) and each released savepoint truncates it.
    conn.pragma_update(None, "temp_store", "MEMORY")?;
    let journal_mode: String = conn.query_row("PRAGMA journal_mode", [], |row| row.get(0))?;
    let synchronous: i64 = conn.query_row("PRAGMA synchronous", [], |row| row.get(0))?;
    Ok((conn, super::durability_settings(journal_mode, synchronous)))
}

/// The writer loop, run on its own thread until the queue closes or a
/// [`WriteOp::Close`] arrives: takes every queued write (up to
/// [`MAX_GROUP`]), runs them in one `BEGIN IMMEDIATE` transaction
/// ([`commit_group`]), commits once, then answers each caller and publishes the
/// feed's last position in `feed` (for the feed's readers: it is read
/// here, on the writer's own connection, rather than by each reader).
pub(super) fn run(
    mut conn: Connection,
    mut queue: mpsc::Receiver<WriteJob>,
    feed: &watch::Sender<u64>,
    tail: &FeedTail,
) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while queue.blocking_recv_many(&mut group, MAX_GROUP) > 0 {
        let closing = group
            .iter()
            .position(|job| matches!(job.op, WriteOp::Close))
            .map(|at| group.split_off(at));
        if !group.is_empty() {
            match commit_group(&mut conn, &group) {
                Ok(results) => {
                    // The feed's tail is kept while someone reads the feed.
                    let committed = (feed.receiver_count() > 0).then(|| {
                        group
                            .iter()
                            .zip(&results)
                            .filter(|(_, result)| result.is_ok())
                            .flat_map(|(job, _)| feed_events(&job.op))
                            .collect()
                    });
                    // Published before any caller hears of its write: a
                    // feed read from the end then starts after it. The tail
                    // ends at the published position; when a read fails,
                    // the next commit finds a gap and resets it.
                    let before = *feed.borrow();
                    publish_head(&conn, feed, |head| {
                        extend_tail(&conn, tail, before, head, committed);
                    });
                    for (job, result) in group.drain(..).zip(results) {
                        let _ = job.reply.send(result);
                    }
                }
                Err(error) => {
                    tracing::error!(error = %error, writes = group.len(), "group commit failed");
                    // Nothing of the group stands: leave no transaction open.
                    if !conn.is_autocommit() {
                        let _ = conn.execute_batch("ROLLBACK");
                    }
                    let error = Arc::new(StoreError::Sqlite(error));
                    for job in group.drain(..) {
                        let _ = job.reply.send(Err(StoreError::Commit(Arc::clone(&error))));
                    }
                }
            }
        }
        if let Some(closing) = closing {
            // Closing the last connection folds the WAL back into the file.
            close(conn);
            queue.close();
            for job in closing {
                let closed = matches!(job.op, WriteOp::Close);
                let _ = job.reply.send(if closed {
                    Ok(Written::new())
                } else {
                    Err(StoreError::Closed)
                });
            }
            return;
        }
    }
    close(conn);
}

/// The feed's last position (0: no event yet), read on `conn`.
pub(super) fn feed_head(conn: &Connection) -> rusqlite::Result<u64> {
    let head = conn
        .prepare_cached("SELECT coalesce(max(position), 0) FROM events")?
        .query_row([], |row| row.get::<_, i64>(0))?;
    Ok(u64::try_from(head).unwrap_or(0))
}

/// The feed's last position as published when it could not be read: the
/// store's readers then read it from the file themselves.
pub(super) const UNKNOWN_HEAD: u64 = u64::MAX;

/// Reads the feed's last position on `conn`, runs `before_publishing` with
/// it, then publishes it in `feed`, waking its readers when it moved. A
/// failed read publishes [`UNKNOWN_HEAD`] (and wakes the readers), so that
/// nothing committed waits for the next commit to be seen.
fn publish_head(conn: &Connection, feed: &watch::Sender<u64>, before_publishing: impl FnOnce(u64)) {
    match feed_head(conn) {
        Ok(head) => {
            before_publishing(head);
            feed.send_if_modified(|published| std::mem::replace(published, head) != head);
        }
        Err(error) => {
            tracing::warn!(error = %error, "reading the feed's last position failed");
            feed.send_replace(UNKNOWN_HEAD);
        }
    }
}

/// The events a committed write added to the feed, in the order it
/// inserted them (so at consecutive positions), each with its game's
/// GameCreated when it has a lifecycle and the write holds it (an append's
/// is filled in by [`extend_tail`]).
fn feed_events(op: &WriteOp) -> Vec<FeedEvent> {
    let event = |game_id: &str, event: &NewEvent, created: Option<&NewEvent>| FeedEvent {
        position: 0,
        game_id: game_id.to_owned(),
        sequence: event.sequence,
        event_type: event.event_type.to_owned(),
        payload: event.payload.clone(),
        lifecycle: event.lifecycle,
        created_payload: (event.lifecycle > 0)
            .then(|| created.map(|created| created.payload.clone()))
            .flatten(),
    };
    let new_game = |game: &NewGame| event(&game.game_id, &game.created, Some(&game.created));
    match op {
        WriteOp::Create(game) => vec![new_game(game)],
        WriteOp::CreateAll(games) => games.iter().map(new_game).collect(),
        WriteOp::Append(append) => append
            .events
            .iter()
            .map(|e| event(&append.game_id, e, None))
            .collect(),
        WriteOp::Restore(restored) => std::iter::once(new_game(&restored.game))
            .chain(
                restored
                    .events
                    .iter()
                    .map(|e| event(&restored.game.game_id, e, Some(&restored.game.created))),
            )
            .collect(),
        WriteOp::Snapshot(_) | WriteOp::Wake { .. } | WriteOp::Claim { .. } | WriteOp::Close => {
            Vec::new()
        }
    }
}

/// Adds a committed group's `events` (`None`: nobody reads the feed) to
/// `tail`, at the positions after `before`, the feed's last before the
/// group; resets the tail at `head` instead when they do not end there
/// (another process wrote the file too) or a lifecycle event's GameCreated
/// cannot be read.
fn extend_tail(
    conn: &Connection,
    tail: &FeedTail,
    before: u64,
    head: u64,
    events: Option<Vec<FeedEvent>>,
) {
    let follows = |e: &Vec<FeedEvent>| before.checked_add(e.len() as u64) == Some(head);
    let Some(mut events) = events.filter(|e| before != UNKNOWN_HEAD && follows(e)) else {
        tail.reset(head);
        return;
    };
    let mut created = match conn
        .prepare_cached("SELECT payload FROM events WHERE game_id = ?1 AND sequence = 1")
    {
        Ok(created) => created,
        Err(_) => {
            tail.reset(head);
            return;
        }
    };
    for (event, position) in events.iter_mut().zip(before + 1..) {
        event.position = position;
        if event.lifecycle > 0 && event.created_payload.is_none() {
            match created.query_row([&event.game_id], |row| row.get::<_, Vec<u8>>(0)) {
                Ok(payload) => event.created_payload = Some(payload.into()),
                Err(_) => {
                    tail.reset(head);
                    return;
                }
            }
        }
    }
    tail.extend(before + 1, events);
}

fn close(conn: Connection) {
    if let Err((_, error)) = conn.close() {
        tracing::warn!(error = %error, "closing the writer connection failed");
    }
}

/// Runs one cached statement that takes no parameters and returns no rows.
fn run_statement(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([])?;
    Ok(())
}

/// Runs the writes of `group` in one transaction and commits. Returns each
/// write's own result; `Err` when the transaction as a whole failed
/// (nothing was committed).
///
/// Most groups hold no write that fails, and run without a savepoint per
/// write: two statements fewer per write, and no undo records (at G=64 the
/// savepoints were a fifth of the writer's CPU, issue 42's profile). At the
/// first write that fails, the transaction is rolled back and the group
/// runs again with each write in its own savepoint, so that a write that
/// fails fails only itself.
fn commit_group(
    conn: &mut Connection,
    group: &[WriteJob],
) -> rusqlite::Result<Vec<Result<Written, StoreError>>> {
    let mut each_alone = false;
    'group: loop {
        run_statement(conn, "BEGIN IMMEDIATE")?;
        let mut results = Vec::with_capacity(group.len());
        for job in group {
            if each_alone {
                run_statement(conn, "SAVEPOINT write")?;
            }
            let result = apply(conn, &job.op);
            match (each_alone, result.is_err()) {
                (true, failed) => {
                    if failed {
                        run_statement(conn, "ROLLBACK TO write")?;
                    }
                    run_statement(conn, "RELEASE write")?;
                }
                (false, true) => {
                    run_statement(conn, "ROLLBACK")?;
                    each_alone = true;
                    continue 'group;
                }
                (false, false) => {}
            }
            results.push(result);
        }
        run_statement(conn, "COMMIT")?;
        return Ok(results);
    }
}

/// Runs one write in the open transaction; on `Err` it may have written
/// part of itself, which the caller rolls back.
fn apply(conn: &Connection, op: &WriteOp) -> Result<Written, StoreError> {
    match op {
        WriteOp::Create(game) => insert_game(conn, game).map(|()| Written::new()),
        WriteOp::CreateAll(games) => insert_games(conn, games).map(|()| Written::new()),
        WriteOp::Append(append) => insert_append(conn, append).map(|()| Written::new()),
        WriteOp::Restore(game) => insert_restored(conn, game).map(|()| Written::new()),
        WriteOp::Snapshot(snapshot) => upsert_snapshot(conn, snapshot).map(|()| Written::new()),
        WriteOp::Wake {
            game_id,
            sequence,
            wake,
        } => set_wake(conn, game_id, *sequence, *wake).map(|()| Written::new()),
        WriteOp::Claim {
            now_ms,
            lease_ms,
            limit,
        } => claim_wakes(conn, *now_ms, *lease_ms, *limit),
        WriteOp::Close => unreachable!("the writer splits a group at Close"),
    }
}

/// `on_unique` for a UNIQUE or PRIMARY KEY violation, else the error itself.
fn classify(error: rusqlite::Error, on_unique: StoreError) -> StoreError {
    match &error {
        rusqlite::Error::SqliteFailure(failure, _)
            if failure.code == ErrorCode::ConstraintViolation
                && matches!(
                    failure.extended_code,
                    rusqlite::ffi::SQLITE_CONSTRAINT_UNIQUE
                        | rusqlite::ffi::SQLITE_CONSTRAINT_PRIMARYKEY
                ) =>
        {
            on_unique
        }
        _ => StoreError::Sqlite(error),
    }
}

/// Inserts `event` at the feed's next position: the writer is the only
/// one, so the positions it takes are dense and in commit order (a write
/// rolled back to its savepoint gives its positions back).
fn insert_event(conn: &Connection, game_id: &str, event: &NewEvent) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO events (game_id, sequence, event_type, event_version, payload, recorded_at_ms, chain, position, lifecycle) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, (SELECT coalesce(max(position), 0) + 1 FROM events), ?8)",
    )?
    .execute(params![
        game_id,
        event.sequence as i64,
        event.event_type,
        EVENT_VERSION,
        &event.payload[..],
        event.recorded_at_ms,
        &event.chain[..],
        event.lifecycle
    ])?;
    Ok(())
}

fn insert_game(conn: &Connection, game: &NewGame) -> Result<(), StoreError> {
    let (request_id, fingerprint) = game.request.clone().unzip();
    conn.prepare_cached(
        "INSERT INTO games (game_id, created_at_ms, last_sequence, status, create_request_id, create_fingerprint, seat_token_hashes, wake_at_ms, absent_since_ms, updated_at_ms, tagged) \
         VALUES (?1, ?2, 1, ?3, ?4, ?5, ?6, ?7, ?8, ?2, 1)",
    )
    .and_then(|mut insert| {
        insert.execute(params![
            game.game_id,
            game.created.recorded_at_ms,
            game.status,
            request_id,
            fingerprint,
            crate::store::join_hashes(&game.seat_token_hashes),
            game.wake.at_ms,
            game.wake.absent_since_ms
        ])
    })
    .map_err(|e| classify(e, StoreError::GameExists))?;
    let pk = conn.last_insert_rowid();
    let mut tag =
        conn.prepare_cached("INSERT OR IGNORE INTO game_tags (tag, game_pk) VALUES (?1, ?2)")?;
    for each in &game.tags {
        tag.execute(params![each.encode(), pk])?;
    }
    insert_event(conn, &game.game_id, &game.created)
        .map_err(|e| classify(e, StoreError::GameExists))
}

/// Inserts each of `games` in order, stopping at the first whose id or
/// request id is taken ([`StoreError::GameExistsAt`]; the caller rolls the
/// savepoint back, so none stands).
fn insert_games(conn: &Connection, games: &[NewGame]) -> Result<(), StoreError> {
    for (at, game) in games.iter().enumerate() {
        insert_game(conn, game).map_err(|e| match e {
            StoreError::GameExists => StoreError::GameExistsAt {
                at,
                written: Vec::new(),
            },
            other => other,
        })?;
    }
    Ok(())
}

fn insert_append(conn: &Connection, append: &Append) -> Result<(), StoreError> {
    let last = append.expected + append.events.len() as u64;
    let moved = conn
        .prepare_cached(
            "UPDATE games SET last_sequence = ?1, status = ?2, wake_at_ms = ?5, absent_since_ms = ?6, \
             updated_at_ms = coalesce(?7, updated_at_ms) \
             WHERE game_id = ?3 AND last_sequence = ?4",
        )?
        .execute(params![
            last as i64,
            append.status,
            append.game_id,
            append.expected as i64,
            append.wake.at_ms,
            append.wake.absent_since_ms,
            append.events.last().map(|event| event.recorded_at_ms)
        ])?;
    if moved != 1 {
        return Err(StoreError::Conflict);
    }
    for event in &append.events {
        insert_event(conn, &append.game_id, event)
            .map_err(|e| classify(e, StoreError::Conflict))?;
    }
    if let Some(request) = &append.request {
        conn.prepare_cached(
            "INSERT INTO requests (game_id, request_id, fingerprint, first_sequence, last_sequence) \
             VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .and_then(|mut insert| {
            insert.execute(params![
                append.game_id,
                request.request_id,
                request.fingerprint,
                request.first_sequence as i64,
                request.last_sequence as i64
            ])
        })
        .map_err(|e| classify(e, StoreError::Conflict))?;
    }
    if let Some(hashes) = &append.seat_token_hashes {
        conn.prepare_cached("UPDATE games SET seat_token_hashes = ?1 WHERE game_id = ?2")?
            .execute(params![crate::store::join_hashes(hashes), append.game_id])?;
    }
    Ok(())
}

/// Keeps `snapshot` unless its game has one at the same or a later sequence.
fn upsert_snapshot(conn: &Connection, snapshot: &Snapshot) -> Result<(), StoreError> {
    // SQLite reads `$1`, `$2`, `$3` as parameters 1, 2, 3.
    conn.prepare_cached(crate::store::UPSERT_SNAPSHOT)?
        .execute(params![
            snapshot.game_id,
            crate::store::clamp(snapshot.sequence),
            snapshot.payload
        ])?;
    Ok(())
}

/// Sets a game's wake if its log still ends at `sequence`.
fn set_wake(conn: &Connection, game_id: &str, sequence: u64, wake: Wake) -> Result<(), StoreError> {
    conn.prepare_cached(
        "UPDATE games SET wake_at_ms = ?1, absent_since_ms = ?2 \
         WHERE game_id = ?3 AND last_sequence = ?4",
    )?
    .execute(params![
        wake.at_ms,
        wake.absent_since_ms,
        game_id,
        clamp(sequence)
    ])?;
    Ok(())
}

/// Claims up to `limit` due wakes, earliest first, postponing each by the
/// lease: read, then updated, in the writer's transaction (nothing else
/// writes between the two).
fn claim_wakes(
    conn: &Connection,
    now_ms: i64,
    lease_ms: i64,
    limit: u32,
) -> Result<Written, StoreError> {
    let due: Written = conn
        .prepare_cached(
            "SELECT game_id, wake_at_ms FROM games \
             WHERE wake_at_ms IS NOT NULL AND wake_at_ms <= ?1 \
             ORDER BY wake_at_ms, game_id LIMIT ?2",
        )?
        .query_map(params![now_ms, limit], |row| {
            Ok(DueWake {
                game_id: row.get(0)?,
                at_ms: row.get(1)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let mut postpone =
        conn.prepare_cached("UPDATE games SET wake_at_ms = ?1 WHERE game_id = ?2")?;
    for wake in &due {
        postpone.execute(params![now_ms.saturating_add(lease_ms), wake.game_id])?;
    }
    Ok(due)
}

/// A whole game: its row and first event, then the rest as one append.
fn insert_restored(conn: &Connection, game: &RestoredGame) -> Result<(), StoreError> {
    insert_game(conn, &game.game)?;
    if game.events.is_empty() {
        return Ok(());
    }
    let rest = Append {
        game_id: game.game.game_id.clone(),
        expected: 1,
        events: game.events.clone(),
        request: None,
        status: game.game.status,
        seat_token_hashes: None,
        wake: game.game.wake,
        // An import writes a whole game at once, under no lease.
        fence: None,
    };
    insert_append(conn, &rest)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{SqliteOptions, SqliteStore};

    fn event(sequence: u64, event_type: &'static str) -> NewEvent {
        NewEvent {
            sequence,
            event_type,
            payload: vec![sequence as u8].into(),
            recorded_at_ms: 1,
            chain: [0; 32],
            lifecycle: 0,
        }
    }

    fn create(game_id: &str) -> WriteOp {
        WriteOp::Create(NewGame {
            game_id: game_id.into(),
            created: event(1, "game_created"),
            request: None,
            status: 1,
            seat_token_hashes: Vec::new(),
            wake: Wake::default(),
            tags: Vec::new(),
        })
    }

    /// An append of one event at `sequence` to a game at `expected`.
    fn append_at(game_id: &str, expected: u64, sequence: u64) -> WriteOp {
        WriteOp::Append(Append {
            game_id: game_id.into(),
            expected,
            events: vec![event(sequence, "move_played")],
            request: None,
            status: 1,
            seat_token_hashes: None,
            wake: Wake::default(),
            fence: None,
        })
    }

    fn append(game_id: &str, expected: u64) -> WriteOp {
        append_at(game_id, expected, expected + 1)
    }

    fn jobs(ops: Vec<WriteOp>) -> Vec<WriteJob> {
        ops.into_iter()
            .map(|op| WriteJob {
                op,
                reply: oneshot::channel().0,
            })
            .collect()
    }

    /// A group whose writes all land commits on the fast path; one with
    /// writes that fail (an id taken, an append that lost its race, one
    /// that fails after moving its game's row) is run again write by write:
    /// the failed writes leave nothing behind, every other write of the
    /// group lands, and the feed's positions stay dense.
    #[tokio::test]
    async fn a_write_that_fails_fails_only_itself_and_the_rest_of_its_group_lands() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("group.db");
        SqliteStore::migrate(&SqliteOptions::new(path.display().to_string()))
            .await
            .unwrap();
        let (mut conn, _) = open(&path, false).unwrap();

        let first = commit_group(&mut conn, &jobs(vec![create("a"), append("a", 1)])).unwrap();
        assert!(first.iter().all(Result::is_ok), "{first:?}");

        let group = jobs(vec![
            create("b"),
            create("a"),
            append("a", 2),
            append("a", 2),
            create("c"),
            append_at("a", 3, 3),
            append("b", 1),
        ]);
        let results = commit_group(&mut conn, &group).unwrap();
        let outcome: Vec<_> = results
            .iter()
            .map(|r| match r {
                Ok(_) => "ok",
                Err(StoreError::GameExists) => "exists",
                Err(StoreError::Conflict) => "conflict",
                Err(_) => "other",
            })
            .collect();
        assert_eq!(
            outcome,
            ["ok", "exists", "ok", "conflict", "ok", "conflict", "ok"]
        );

        let rows: Vec<(String, i64, i64)> = conn
            .prepare("SELECT game_id, sequence, position FROM events ORDER BY position")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?, row.get(2)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let expected = [("a", 1), ("a", 2), ("b", 1), ("a", 3), ("c", 1), ("b", 2)];
        let expected: Vec<(String, i64, i64)> = expected
            .iter()
            .zip(1..)
            .map(|((game, sequence), position)| (game.to_string(), *sequence, position))
            .collect();
        assert_eq!(rows, expected);
        let last: Vec<(String, i64)> = conn
            .prepare("SELECT game_id, last_sequence FROM games ORDER BY game_id")
            .unwrap()
            .query_map([], |row| Ok((row.get(0)?, row.get(1)?)))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(
            last,
            [("a".into(), 3), ("b".into(), 2), ("c".into(), 1)].to_vec()
        );
        assert!(conn.is_autocommit(), "no transaction is left open");
    }
}
