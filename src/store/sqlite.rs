//! The SQLite event store: WAL, `synchronous=FULL` by default, one writer
//! connection owned by a task that group-commits, and a pool of readers.

use std::str::FromStr;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Acquire, Connection, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot};

use super::reads::{Events, Reads, Requests};
use super::{
    Append, CreationRecord, EventStore, GameLog, GameRecord, ListOrder, LogTail, Migration,
    NewEvent, NewGame, RestoredGame, StoreError, StoredEvent, classify,
};

/// Most writes one transaction commits together.
const MAX_GROUP: usize = 512;
/// Writes waiting for the writer before callers wait for room.
const WRITE_QUEUE: usize = 4096;
/// Schema version stamped on every event row.
const EVENT_VERSION: i64 = 1;

/// The migrations under `migrations/sqlite/`, built into the binary.
static MIGRATOR: Migrator = sqlx::migrate!("migrations/sqlite");

/// How to open a SQLite store.
#[derive(Debug, Clone)]
pub struct SqliteOptions {
    /// A `sqlite:` URL or a plain file path; the file is created if missing
    /// (unless `read_only`).
    pub url: String,
    /// `synchronous=NORMAL` instead of FULL: faster commits, but in WAL mode
    /// the last transactions before a power loss (not a process crash) may be
    /// lost. Off by default.
    pub synchronous_normal: bool,
    /// Reader connections.
    pub readers: u32,
    /// Open an existing, fully migrated file for reading only: nothing is
    /// created, migrated or written (every write fails with
    /// [`StoreError::ReadOnly`], and SQL that writes fails in SQLite). Off
    /// by default.
    pub read_only: bool,
}

impl SqliteOptions {
    /// Options for `url` with the durable defaults.
    pub fn new(url: impl Into<String>) -> Self {
        SqliteOptions {
            url: url.into(),
            synchronous_normal: false,
            readers: 4,
            read_only: false,
        }
    }

    /// The connection options: WAL, the synchronous setting, foreign keys,
    /// a 10 s busy timeout, and the file created if missing. Read-only
    /// connections create nothing, set no journal mode and are
    /// `query_only`; they open the file for writing all the same, so that
    /// the last one to close removes the WAL files as the server does (a
    /// connection opened read-only would leave them behind).
    fn connect(&self) -> Result<SqliteConnectOptions, StoreError> {
        let url = if self.url.starts_with("sqlite:") {
            self.url.clone()
        } else {
            format!("sqlite://{}", self.url)
        };
        let connect = SqliteConnectOptions::from_str(&url)?
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(10));
        if self.read_only {
            return Ok(connect.create_if_missing(false).pragma("query_only", "ON"));
        }
        Ok(connect
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            .synchronous(if self.synchronous_normal {
                SqliteSynchronous::Normal
            } else {
                SqliteSynchronous::Full
            }))
    }
}

enum WriteOp {
    Create(NewGame),
    Append(Append),
    Restore(RestoredGame),
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
    /// The writer task's queue; `None` when the store is read-only.
    writes: Option<mpsc::Sender<WriteJob>>,
    readers: SqlitePool,
    /// `journal_mode` and `synchronous` as the first connection reported
    /// them when it opened.
    durability: Vec<(String, String)>,
}

impl SqliteStore {
    /// Opens (creating if needed) the database, runs the migrations in
    /// `migrations/sqlite/`, and starts the writer task. With
    /// [`SqliteOptions::read_only`], opens an existing file's readers only,
    /// after checking that it has every migration.
    ///
    /// # Errors
    /// A URL that does not parse, a file that cannot be opened, a failed
    /// migration; read-only, [`StoreError::NotMigrated`].
    pub async fn open(options: &SqliteOptions) -> Result<Self, StoreError> {
        let connect = options.connect()?;
        let readers = SqlitePoolOptions::new().max_connections(options.readers.max(1));
        if options.read_only {
            // One reader: a read-only store serves one command at a time,
            // and close() can then take it back and close it itself.
            let readers = readers.max_connections(1).connect_with(connect).await?;
            let mut conn = readers.acquire().await?;
            let has_table = has_migrations_table(&mut conn).await?;
            super::check_migrated(&mut *conn, &MIGRATOR, has_table).await?;
            let durability = durability(&mut conn).await?;
            drop(conn);
            return Ok(SqliteStore {
                writes: None,
                readers,
                durability,
            });
        }
        let mut writer = SqliteConnection::connect_with(&connect).await?;
        MIGRATOR.run(&mut writer).await?;
        let durability = durability(&mut writer).await?;
        let readers = readers.connect_with(connect.read_only(true)).await?;
        let (writes, queue) = mpsc::channel(WRITE_QUEUE);
        tokio::spawn(run_writer(writer, queue));
        Ok(SqliteStore {
            writes: Some(writes),
            readers,
            durability,
        })
    }

    /// Applies the migrations the database lacks, creating the file if it
    /// is missing, and says which they were (none when it was up to date).
    ///
    /// # Errors
    /// A URL that does not parse, a file that cannot be opened or created,
    /// a failed migration.
    pub async fn migrate(options: &SqliteOptions) -> Result<Vec<Migration>, StoreError> {
        let options = SqliteOptions {
            read_only: false,
            ..options.clone()
        };
        let mut conn = SqliteConnection::connect_with(&options.connect()?).await?;
        let has_table = has_migrations_table(&mut conn).await?;
        let missing = super::pending(&mut conn, &MIGRATOR, has_table).await?;
        MIGRATOR.run(&mut conn).await?;
        conn.close().await?;
        Ok(missing)
    }

    async fn write(&self, op: WriteOp) -> Result<(), StoreError> {
        let writes = self.writes.as_ref().ok_or(StoreError::ReadOnly)?;
        let (reply, answer) = oneshot::channel();
        writes
            .send(WriteJob { op, reply })
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

/// Whether the database has sqlx's migrations table.
async fn has_migrations_table(conn: &mut SqliteConnection) -> Result<bool, StoreError> {
    let tables: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_sqlx_migrations'",
    )
    .fetch_one(conn)
    .await?;
    Ok(tables > 0)
}

/// `journal_mode` and `synchronous` as `conn` reports them.
async fn durability(conn: &mut SqliteConnection) -> Result<Vec<(String, String)>, StoreError> {
    let journal_mode: String = sqlx::query_scalar("PRAGMA journal_mode")
        .fetch_one(&mut *conn)
        .await?;
    let synchronous: i64 = sqlx::query_scalar("PRAGMA synchronous")
        .fetch_one(&mut *conn)
        .await?;
    let synchronous = match synchronous {
        0 => "OFF",
        1 => "NORMAL",
        2 => "FULL",
        3 => "EXTRA",
        _ => "unknown",
    };
    Ok(vec![
        ("journal_mode".to_owned(), journal_mode),
        ("synchronous".to_owned(), synchronous.to_owned()),
    ])
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
            WriteOp::Restore(game) => insert_restored(&mut savepoint, game).await,
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

/// A whole game: its row and first event, then the rest as one append.
async fn insert_restored(
    conn: &mut SqliteConnection,
    game: &RestoredGame,
) -> Result<(), StoreError> {
    insert_game(conn, &game.game).await?;
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
    };
    insert_append(conn, &rest).await
}

#[async_trait]
impl EventStore for SqliteStore {
    async fn create(&self, game: NewGame) -> Result<(), StoreError> {
        self.write(WriteOp::Create(game)).await
    }

    async fn restore(&self, game: RestoredGame) -> Result<(), StoreError> {
        self.write(WriteOp::Restore(game)).await
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

    async fn list(
        &self,
        cursor: i64,
        order: ListOrder,
        limit: u32,
    ) -> Result<Vec<GameRecord>, StoreError> {
        Reads::games(&self.readers, cursor, order, limit).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.readers).await?;
        Ok(())
    }

    async fn durability(&self) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self.durability.clone())
    }

    async fn close(&self) {
        if self.writes.is_none() {
            // The last connection to close removes the WAL files, so the
            // only reader is closed here, not left to Pool::close, which
            // misses a connection on its way back to the pool (and the
            // process may exit with it open, leaving the files behind).
            if let Ok(reader) = self.readers.acquire().await {
                let _ = reader.detach().close().await;
            }
            self.readers.close().await;
            return;
        }
        self.readers.close().await;
        if let Err(error) = self.write(WriteOp::Close).await {
            tracing::debug!(error = %error, "store already closed");
        }
    }

    async fn find_creation(&self, request_id: &str) -> Result<Option<CreationRecord>, StoreError> {
        Reads::creation(&self.readers, request_id).await
    }
}
