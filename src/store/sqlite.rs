//! The SQLite event store: WAL, `synchronous=FULL` by default, one writer
//! connection owned by a thread that group-commits ([`writer`]), and a pool
//! of sqlx readers.

mod events;
mod tail;
mod writer;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::migrate::Migrator;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Acquire, Connection, SqliteConnection, SqlitePool};
use tokio::sync::{mpsc, oneshot, watch};

use self::events::EventReaders;
use self::tail::FeedTail;
use self::writer::{WriteJob, WriteOp};

use super::reads::{Events, Reads, Requests};
use super::{
    Append, CreationRecord, DueWake, EventStore, FeedEvent, FeedRange, GameLog, GameRecord,
    ListFilter, ListOrder, LoadFrom, LogTail, Migration, NewGame, RestoredGame, Snapshot,
    StoreError, StoredEvent, Wake,
};

/// Writes waiting for the writer before callers wait for room.
const WRITE_QUEUE: usize = 4096;
/// How long a connection waits for a lock held by another before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens a rusqlite connection (the writer's, or an event reader's) on the
/// existing file at `path`, read-write and without SQLite's own mutex (one
/// thread uses it at a time), with a [`BUSY_TIMEOUT`].
///
/// # Errors
/// The file cannot be opened.
fn open_connection(path: &std::path::Path) -> rusqlite::Result<rusqlite::Connection> {
    let conn = rusqlite::Connection::open_with_flags(
        path,
        rusqlite::OpenFlags::SQLITE_OPEN_READ_WRITE | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    conn.busy_timeout(BUSY_TIMEOUT)?;
    Ok(conn)
}

/// Rows a reader's worker thread may run ahead of the task reading them
/// (sqlx's default, 50, makes a long log's read a thread switch every few
/// rows).
const READ_ROW_BUFFER: usize = 1024;

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
            .busy_timeout(BUSY_TIMEOUT);
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

/// An [`EventStore`] on one SQLite file.
///
/// All writes go through one thread owning the only writer connection: it
/// takes every queued write (up to 512), runs them in one `BEGIN IMMEDIATE`
/// transaction, commits once, then answers each caller. One fsync thus
/// covers many games' moves. A group in which a write fails is rolled back
/// and run again with each write in its own savepoint, so a conflict in one
/// write leaves the others untouched. Reads go through a pool of sqlx
/// connections.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    /// The writer task's queue; `None` when the store is read-only.
    writes: Option<mpsc::Sender<WriteJob>>,
    readers: SqlitePool,
    /// Runs of events (see [`EventReaders`]), as many connections as
    /// `readers`.
    events: Arc<EventReaders>,
    /// `journal_mode` and `synchronous` as the first connection reported
    /// them when it opened.
    durability: Vec<(String, String)>,
    /// The feed's last position, published by the writer after each
    /// commit (see [`EventStore::feed_signal`]); 0 in a read-only store.
    feed: watch::Sender<u64>,
    /// The feed's last events, kept by the writer while the feed has
    /// readers; `None` in a read-only store.
    tail: Option<Arc<FeedTail>>,
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
            let events = EventReaders::new(connect.get_filename(), 1);
            let readers = readers
                .max_connections(1)
                .connect_with(connect.row_buffer_size(READ_ROW_BUFFER))
                .await?;
            let mut conn = readers.acquire().await?;
            let has_table = has_migrations_table(&mut conn).await?;
            super::check_migrated(&mut *conn, &MIGRATOR, has_table).await?;
            let durability = durability(&mut conn).await?;
            drop(conn);
            return Ok(SqliteStore {
                writes: None,
                readers,
                events,
                durability,
                feed: watch::Sender::new(0),
                tail: None,
            });
        }
        let mut migrating = SqliteConnection::connect_with(&connect).await?;
        MIGRATOR.run(&mut migrating).await?;
        Reads::<sqlx::Sqlite>::fill_chains(&mut migrating).await?;
        Reads::<sqlx::Sqlite>::fill_tags(&mut migrating).await?;
        Reads::<sqlx::Sqlite>::fill_lifecycles(&mut migrating).await?;
        let path = connect.get_filename().to_owned();
        if path.to_str().is_some_and(|p| p.starts_with("file:")) {
            return Err(StoreError::Unsupported(
                "an in-memory SQLite database: give a file",
            ));
        }
        let (conn, durability) = writer::open(&path, options.synchronous_normal)?;
        // The writer's connection holds the file open from here on.
        migrating.close().await?;
        let readers = readers
            .connect_with(connect.read_only(true).row_buffer_size(READ_ROW_BUFFER))
            .await?;
        let (writes, queue) = mpsc::channel(WRITE_QUEUE);
        let head = writer::feed_head(&conn).map_err(StoreError::Sqlite)?;
        let feed = watch::Sender::new(head);
        let tail = Arc::new(FeedTail::new(head, tail::CAPACITY));
        let committed = feed.clone();
        let written = Arc::clone(&tail);
        std::thread::Builder::new()
            .name("plylog-sqlite-writer".to_owned())
            .spawn(move || writer::run(conn, queue, &committed, &written))
            .map_err(|e| StoreError::from(sqlx::Error::Io(e)))?;
        Ok(SqliteStore {
            writes: Some(writes),
            readers,
            events: EventReaders::new(&path, options.readers),
            durability,
            feed,
            tail: Some(tail),
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
        Reads::<sqlx::Sqlite>::fill_chains(&mut conn).await?;
        Reads::<sqlx::Sqlite>::fill_tags(&mut conn).await?;
        Reads::<sqlx::Sqlite>::fill_lifecycles(&mut conn).await?;
        conn.close().await?;
        Ok(missing)
    }

    async fn write(&self, op: WriteOp) -> Result<writer::Written, StoreError> {
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
    Ok(durability_settings(journal_mode, synchronous))
}

/// The durability settings a store reports: `journal_mode`, and
/// `synchronous` by name (`PRAGMA synchronous` gives a number).
fn durability_settings(journal_mode: String, synchronous: i64) -> Vec<(String, String)> {
    let synchronous = match synchronous {
        0 => "OFF",
        1 => "NORMAL",
        2 => "FULL",
        3 => "EXTRA",
        _ => "unknown",
    };
    vec![
        ("journal_mode".to_owned(), journal_mode),
        ("synchronous".to_owned(), synchronous.to_owned()),
    ]
}

#[async_trait]
impl EventStore for SqliteStore {
    async fn create(&self, game: NewGame) -> Result<(), StoreError> {
        self.write(WriteOp::Create(game)).await.map(drop)
    }

    async fn create_all(&self, games: Vec<NewGame>) -> Result<(), StoreError> {
        self.write(WriteOp::CreateAll(games)).await.map(drop)
    }

    async fn restore(&self, game: RestoredGame) -> Result<(), StoreError> {
        self.write(WriteOp::Restore(game)).await.map(drop)
    }

    async fn append(&self, append: Append) -> Result<(), StoreError> {
        self.write(WriteOp::Append(append)).await.map(drop)
    }

    async fn set_wake(&self, game_id: &str, sequence: u64, wake: Wake) -> Result<(), StoreError> {
        let game_id = game_id.to_owned();
        self.write(WriteOp::Wake {
            game_id,
            sequence,
            wake,
        })
        .await
        .map(drop)
    }

    async fn claim_wakes(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
        slots: Option<&[i32]>,
    ) -> Result<Vec<DueWake>, StoreError> {
        // Only this process writes the file: it has no slots.
        let _ = slots;
        self.write(WriteOp::Claim {
            now_ms,
            lease_ms,
            limit,
        })
        .await
    }

    async fn next_wake(&self, slots: Option<&[i32]>) -> Result<Option<i64>, StoreError> {
        let _ = slots;
        Reads::next_wake(&self.readers).await
    }

    async fn load(&self, game_id: &str, from: LoadFrom) -> Result<Option<GameLog>, StoreError> {
        let mut conn = self.readers.acquire().await?;
        // One read transaction, so the events and requests are one snapshot.
        let mut tx = conn.begin().await?;
        let log = Reads::<sqlx::Sqlite>::game(&mut tx, game_id, from).await?;
        tx.commit().await?;
        Ok(log)
    }

    async fn snapshot(&self, game_id: &str) -> Result<Option<Snapshot>, StoreError> {
        Reads::snapshot(&self.readers, game_id).await
    }

    async fn save_snapshot(&self, snapshot: Snapshot) -> Result<(), StoreError> {
        self.write(WriteOp::Snapshot(snapshot)).await.map(drop)
    }

    async fn read(
        &self,
        game_id: &str,
        from: u64,
        to: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        self.events.range(game_id, from, to, limit).await
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
        let (seat_token_hashes, wake) = Reads::hashes_and_wake(&mut *tx, game_id).await?;
        tx.commit().await?;
        Ok(LogTail {
            events,
            requests,
            seat_token_hashes,
            wake,
        })
    }

    async fn list(
        &self,
        after: &[i64],
        order: ListOrder,
        filter: &ListFilter,
        limit: u32,
    ) -> Result<Vec<GameRecord>, StoreError> {
        let cursor = after.first().copied().unwrap_or(0);
        Reads::games(&self.readers, cursor, order, filter, limit).await
    }

    // One cell: `cell` is 0.
    /// As the writer last published it after its last commit: only it
    /// writes the file. A read-only store, or a writer that could not read
    /// it, reads it from the file.
    async fn feed_head(&self, _cell: usize) -> Result<u64, StoreError> {
        let published = *self.feed.borrow();
        if self.writes.is_some() && published != writer::UNKNOWN_HEAD {
            return Ok(published);
        }
        Reads::feed_head(&self.readers).await
    }

    async fn read_feed(
        &self,
        _cell: usize,
        range: FeedRange<'_>,
    ) -> Result<Vec<FeedEvent>, StoreError> {
        if let Some(events) = self.tail.as_ref().and_then(|tail| tail.read(&range)) {
            return Ok(events);
        }
        Reads::feed(&self.readers, range).await
    }

    fn feed_signal(&self, _cell: usize) -> watch::Receiver<u64> {
        self.feed.subscribe()
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.readers).await?;
        Ok(())
    }

    async fn durability(&self) -> Result<Vec<(String, String)>, StoreError> {
        Ok(self.durability.clone())
    }

    async fn close(&self) {
        self.events.close();
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
        if let Err(error) = self.write(WriteOp::Close).await.map(drop) {
            tracing::debug!(error = %error, "store already closed");
        }
    }

    async fn find_creation(
        &self,
        request_id: &str,
        _game_id: Option<&str>,
    ) -> Result<Option<CreationRecord>, StoreError> {
        Reads::creation(&self.readers, request_id).await
    }
}
