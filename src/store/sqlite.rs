//! The SQLite event store: WAL, `synchronous=FULL` by default, one writer
//! connection owned by a task that group-commits, and a pool of readers.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Acquire, Connection, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};

use super::reads::{Events, Reads, Requests};
use super::{
    Append, CreationRecord, EventStore, GameLog, GameRecord, LogTail, NewEvent, NewGame,
    StoreError, StoredEvent, classify,
};

/// Most writes one transaction commits together.
const MAX_GROUP: usize = 512;
/// Writes waiting for the writer before callers wait for room.
const WRITE_QUEUE: usize = 4096;
/// Schema version stamped on every event row.
const EVENT_VERSION: i64 = 1;

/// How to open a SQLite store.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// A `sqlite:` URL or a plain file path; the file is created if missing.
    pub url: String,
    /// `synchronous=NORMAL` instead of FULL: faster commits, but in WAL mode
    /// the last transactions before a power loss (not a process crash) may be
    /// lost. Off by default.
    pub synchronous_normal: bool,
    /// Reader connections.
    pub readers: u32,
}

impl SqliteOptions {
    /// Options for `url` with the durable defaults.
    pub fn new(url: impl Into<String>) -> Self {
        SqliteOptions {
            url: url.into(),
            synchronous_normal: false,
            readers: 4,
        }
    }
}

enum WriteOp {
    Create(NewGame),
    Append(Append),
    /// Commit what came before, then close the connection and stop.
    Close,
}

struct WriteJob {
    op: WriteOp,
    reply: oneshot::Sender<Result<(), StoreError>>,
}

/// An [`EventStore`] on one SQLite file.
///
/// All writes go through one task owning the only writer connection: it takes
/// every queued write (up to 512), runs each in its own savepoint inside one
/// `BEGIN IMMEDIATE` transaction, commits once, then answers each caller. One
/// fsync thus covers many games' moves, and a conflict in one write leaves
/// the others untouched.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    writes: mpsc::Sender<WriteJob>,
    readers: SqlitePool,
    /// `journal_mode` and `synchronous` as the writer connection reported
    /// them when it opened.
    durability: Vec<(String, String)>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database, runs the migrations in
    /// `migrations/sqlite/`, and starts the writer task.
    ///
    /// # Errors
    /// A URL that does not parse, a file that cannot be opened, a failed
    /// migration.
    pub async fn open(options: &SqliteOptions) -> Result<Self, StoreError> {
        let url = if options.url.starts_with("sqlite:") {
            options.url.clone()
        } else {
            format!("sqlite://{}", options.url)
        };
        let connect = SqliteConnectOptions::from_str(&url)?
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(if options.synchronous_normal {
                SqliteSynchronous::Normal
            } else {
                SqliteSynchronous::Full
            })
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        let mut writer = SqliteConnection::connect_with(&connect).await?;
        sqlx::migrate!("migrations/sqlite").run(&mut writer).await?;
        let journal_mode: String = sqlx::query_scalar("PRAGMA journal_mode")
            .fetch_one(&mut writer)
            .await?;
        let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
            .fetch_one(&mut writer)
            .await?;
        let synchronous = match synchronous {
            0 => "OFF",
            1 => "NORMAL",
            2 => "FULL",
            3 => "EXTRA",
            _ => "unknown",
        };
        let durability = vec![
            ("journal_mode".to_owned(), journal_mode),
            ("synchronous".to_owned(), synchronous.to_owned()),
        ];
        let readers = SqlitePoolOptions::new()
            .max_connections(options.readers.max(1))
            .connect_with(connect.read_only(true))
            .await?;
        let (writes, queue) = mpsc::channel(WRITE_QUEUE);
        tokio::spawn(run_writer(writer, queue));
        Ok(SqliteStore {
            writes,
            readers,
            durability,
        })
    }

    async fn write(&self, op: WriteOp) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        self.writes
            .send(WriteJob { op, reply })
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

/// The writer loop: one group of queued writes per transaction.
async fn run_writer(mut conn: SqliteConnection, mut queue: mpsc::Receiver<WriteJob>) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while queue.recv_many(&mut group, MAX_GROUP).await > 0 {
        let closing = group
            .iter()
            .position(|job| matches!(job.op, WriteOp::Close))
            .map(|at| group.split_off(at));
        if !group.is_empty() {
            match commit_group(&mut conn, &group).await {
                Ok(results) => {
                    for (job, result) in group.drain(..).zip(results) {
                        let _ = job.reply.send(result);
                    }
                }
                Err(error) => {
                    tracing::error!(error = %crate::api::cause_chain(&error), writes = group.len(), "group commit failed");
                    let error = std::sync::Arc::new(error);
                    for job in group.drain(..) {
                        let cause = std::sync::Arc::clone(&error);
                        let _ = job.reply.send(Err(StoreError::Commit(cause)));
                    }
                }
            }
        }
        if let Some(closing) = closing {
            // Closing the last connection folds the WAL back into the file.
            let _ = conn.close().await;
            queue.close();
            for job in closing {
                let closed = matches!(job.op, WriteOp::Close);
                let _ = job.reply.send(if closed {
                    Ok(())
                } else {
                    Err(StoreError::Closed)
                });
            }
            return;
        }
    }
    let _ = conn.close().await;
}

/// Runs each write of `group` in its own savepoint of one transaction and
/// commits. Returns each write's own result; `Err` when the transaction as a
/// whole failed (nothing was committed).
async fn commit_group(
    conn: &mut SqliteConnection,
    group: &[WriteJob],
) -> Result<Vec<Result<(), StoreError>>, sqlx::Error> {
    let mut tx = conn.begin_with("BEGIN IMMEDIATE").await?;
    let mut results = Vec::with_capacity(group.len());
    for job in group {
        let mut savepoint = tx.begin().await?;
        let result = match &job.op {
            WriteOp::Create(game) => insert_game(&mut savepoint, game).await,
            WriteOp::Append(append) => insert_append(&mut savepoint, append).await,
            WriteOp::Close => unreachable!("the writer splits a group at Close"),
        };
        match result {
            Ok(()) => savepoint.commit().await?,
            Err(_) => savepoint.rollback().await?,
        }
        results.push(result);
    }
    tx.commit().await?;
    Ok(results)
}

async fn insert_event(
    conn: &mut SqliteConnection,
    game_id: &str,
    event: &NewEvent,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO events (game_id, sequence, event_type, event_version, payload, recorded_at_ms) \
         VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(game_id)
    .bind(event.sequence as i64)
    .bind(event.event_type)
    .bind(EVENT_VERSION)
    .bind(&event.payload)
    .bind(event.recorded_at_ms)
    .execute(conn)
    .await?;
    Ok(())
}

async fn insert_game(conn: &mut SqliteConnection, game: &NewGame) -> Result<(), StoreError> {
    let (request_id, fingerprint) = game.request.clone().unzip();
    sqlx::query(
        "INSERT INTO games (game_id, created_at_ms, last_sequence, status, create_request_id, create_fingerprint, seat_token_hashes) \
         VALUES (?, ?, 1, ?, ?, ?, ?)",
    )
    .bind(&game.game_id)
    .bind(game.created.recorded_at_ms)
    .bind(game.status)
    .bind(request_id)
    .bind(fingerprint)
    .bind(super::join_hashes(&game.seat_token_hashes))
    .execute(&mut *conn)
    .await
    .map_err(|e| classify(e, StoreError::GameExists))?;
    insert_event(conn, &game.game_id, &game.created)
        .await
        .map_err(|e| classify(e, StoreError::GameExists))
}

async fn insert_append(conn: &mut SqliteConnection, append: &Append) -> Result<(), StoreError> {
    let last = append.expected + append.events.len() as u64;
    let moved = sqlx::query(
        "UPDATE games SET last_sequence = ?, status = ? WHERE game_id = ? AND last_sequence = ?",
    )
    .bind(last as i64)
    .bind(append.status)
    .bind(&append.game_id)
    .bind(append.expected as i64)
    .execute(&mut *conn)
    .await?;
    if moved.rows_affected() != 1 {
        return Err(StoreError::Conflict);
    }
    for event in &append.events {
        insert_event(conn, &append.game_id, event)
            .await
            .map_err(|e| classify(e, StoreError::Conflict))?;
    }
    if let Some(request) = &append.request {
        sqlx::query(
            "INSERT INTO requests (game_id, request_id, fingerprint, first_sequence, last_sequence) \
             VALUES (?, ?, ?, ?, ?)",
        )
        .bind(&append.game_id)
        .bind(&request.request_id)
        .bind(&request.fingerprint)
        .bind(request.first_sequence as i64)
        .bind(request.last_sequence as i64)
        .execute(&mut *conn)
        .await
        .map_err(|e| classify(e, StoreError::Conflict))?;
    }
    if let Some(hashes) = &append.seat_token_hashes {
        sqlx::query("UPDATE games SET seat_token_hashes = ? WHERE game_id = ?")
            .bind(super::join_hashes(hashes))
            .bind(&append.game_id)
            .execute(&mut *conn)
            .await?;
    }
    Ok(())
}

#[async_trait]
impl EventStore for SqliteStore {
    async fn create(&self, game: NewGame) -> Result<(), StoreError> {
        self.write(WriteOp::Create(game)).await
    }

    async fn append(&self, append: Append) -> Result<(), StoreError> {
        self.write(WriteOp::Append(append)).await
    }

    async fn load(&self, game_id: &str) -> Result<Option<GameLog>, StoreError> {
        let mut conn = self.readers.acquire().await?;
        // One read transaction, so the events and requests are one snapshot.
        let mut tx = conn.begin().await?;
        let events = Reads::events(&mut *tx, game_id, Events::All).await?;
        if events.is_empty() {
            return Ok(None);
        }
        let requests = Reads::requests(&mut *tx, game_id, Requests::All).await?;
        let seat_token_hashes = Reads::seat_token_hashes(&mut *tx, game_id).await?;
        tx.commit().await?;
        Ok(Some(GameLog {
            events,
            requests,
            seat_token_hashes,
        }))
    }

    async fn read(
        &self,
        game_id: &str,
        from: u64,
        to: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        Reads::events(&self.readers, game_id, Events::Range { from, to, limit }).await
    }

    async fn read_since(
        &self,
        game_id: &str,
        after: u64,
        limit: u32,
    ) -> Result<LogTail, StoreError> {
        let mut conn = self.readers.acquire().await?;
        // One read transaction: the events, requests and hashes are one
        // snapshot.
        let mut tx = conn.begin().await?;
        let events = Reads::events(&mut *tx, game_id, Events::After { after, limit }).await?;
        let Some(last) = events.last().map(|e| e.sequence) else {
            return Ok(LogTail::default());
        };
        let requests =
            Reads::requests(&mut *tx, game_id, Requests::Overlapping { after, last }).await?;
        let seat_token_hashes = Reads::seat_token_hashes(&mut *tx, game_id).await?;
        tx.commit().await?;
        Ok(LogTail {
            events,
            requests,
            seat_token_hashes,
        })
    }

    async fn list(&self, cursor: i64, limit: u32) -> Result<Vec<GameRecord>, StoreError> {
        Reads::games(&self.readers, cursor, limit).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.readers).await?;
        Ok(())
    }

    async fn durability(&self) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self.durability.clone())
    }

    async fn close(&self) {
        self.readers.close().await;
        if let Err(error) = self.write(WriteOp::Close).await {
            tracing::debug!(error = %error, "store already closed");
        }
    }

    async fn find_creation(&self, request_id: &str) -> Result<Option<CreationRecord>, StoreError> {
        Reads::creation(&self.readers, request_id).await
    }
}
