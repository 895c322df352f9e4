//! Durable event logs: the [`EventStore`] trait and its SQLite backend.
//!
//! A store keeps, per game, a dense sequence of opaque event payloads (the
//! protobuf `GameEvent`) keyed by `(game_id, sequence)`, plus the request ids
//! that produced them. It knows nothing of any game's rules: the registry
//! decides, the store only appends at `expected + 1` or reports a
//! [`StoreError::Conflict`].
//!
//! - [`EventStore`]: the trait every backend implements.
//! - [`SqliteStore`]: the embedded default; one writer task group-commits the
//!   appends of many games in one transaction.
//! - [`PostgresStore`]: one database shared by several nodes, which wake each
//!   other with LISTEN/NOTIFY ([`EventStore::changes`]).

pub mod chain;
mod postgres;
mod reads;
mod sqlite;

pub use postgres::PostgresStore;
pub use sqlite::{SqliteOptions, SqliteStore};

use std::sync::Arc;

use async_trait::async_trait;
use sqlx::migrate::{Migrate, Migrator};
use tokio::sync::mpsc;

/// An event ready to be appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewEvent {
    /// Its sequence: the game's current sequence + 1, + 2, ...
    pub sequence: u64,
    /// The GameEvent oneof case, e.g. `"move_played"`.
    pub event_type: &'static str,
    /// The encoded `plylog.v1.GameEvent`, shared (not copied) with the
    /// game's live subscribers once appended.
    pub payload: bytes::Bytes,
    /// Unix epoch milliseconds when the server recorded it.
    pub recorded_at_ms: i64,
    /// Its integrity chain value (see [`chain`]).
    pub chain: chain::Chain,
}

impl NewEvent {
    /// The event at `sequence` of game `game_id`, after the event whose
    /// chain value is `previous` ([`chain::GENESIS`] for sequence 1), with
    /// its chain value computed.
    pub fn chained(
        previous: &chain::Chain,
        game_id: &str,
        sequence: u64,
        event_type: &'static str,
        payload: bytes::Bytes,
        recorded_at_ms: i64,
    ) -> Self {
        NewEvent {
            sequence,
            event_type,
            chain: chain::link(previous, game_id, sequence, &payload),
            payload,
            recorded_at_ms,
        }
    }
}

/// An event read back from the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredEvent {
    /// Its sequence (1-based).
    pub sequence: u64,
    /// The encoded `plylog.v1.GameEvent`.
    pub payload: Vec<u8>,
    /// Its integrity chain value as stored: 32 bytes when intact (see
    /// [`chain`]; the readers check it, the store does not).
    pub chain: Vec<u8>,
}

impl StoredEvent {
    /// Its stored chain value, `None` when it is not 32 bytes.
    pub fn chain_value(&self) -> Option<chain::Chain> {
        self.chain.as_slice().try_into().ok()
    }
}

/// A deduplicated request: its id, what it asked, and the events it appended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRecord {
    /// The caller's idempotency key.
    pub request_id: String,
    /// The request as received, with its id and turn token cleared.
    pub fingerprint: Vec<u8>,
    /// The first sequence it appended.
    pub first_sequence: u64,
    /// The last sequence it appended.
    pub last_sequence: u64,
}

/// A new game: its id, its GameCreated event (sequence 1) and, when the
/// request had one, its idempotency key and fingerprint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewGame {
    /// The game's id.
    pub game_id: String,
    /// The GameCreated event, sequence 1.
    pub created: NewEvent,
    /// `(request_id, fingerprint)` of the CreateGame request.
    pub request: Option<(String, Vec<u8>)>,
    /// `plylog.v1.GameStatus` of the new game.
    pub status: i32,
    /// The SHA-256 hash of each seat's token, in seat order; empty when the
    /// game takes moves without seat tokens.
    pub seat_token_hashes: Vec<TokenHash>,
    /// When the new game is next due (its first turn's deadline, a bot to
    /// move first, ...).
    pub wake: Wake,
}

/// When a game next needs the server with no client asking: what the
/// store's timer queue keeps per game (see [`EventStore::claim_wakes`]), in
/// the game's row, indexed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Wake {
    /// Unix epoch milliseconds (on the server's clock) when the game is due:
    /// the end of the turn's time, of the absent seat's grace period, or at
    /// once for a bot to move. `None`: not until a client acts.
    pub at_ms: Option<i64>,
    /// Since when the seat to move has had no followed stream, as the node
    /// that wrote this last knew it (Unix epoch milliseconds; games with an
    /// absence policy only): where its grace period counts from when the
    /// game is loaded again.
    pub absent_since_ms: Option<i64>,
}

/// The SHA-256 hash of a seat token: all a store keeps of it.
pub type TokenHash = [u8; 32];

/// Events to append to one game, all or nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Append {
    /// The game's id.
    pub game_id: String,
    /// The game's sequence before the append; the events take
    /// `expected + 1 ..`.
    pub expected: u64,
    /// The events, in sequence order.
    pub events: Vec<NewEvent>,
    /// The request that produced them, when it carried an id.
    pub request: Option<RequestRecord>,
    /// `plylog.v1.GameStatus` after the events.
    pub status: i32,
    /// The game's seat token hashes after the events, when they change (a
    /// seat's token was re-issued); written in the same transaction.
    pub seat_token_hashes: Option<Vec<TokenHash>>,
    /// When the game is next due after the events; written in the same
    /// transaction.
    pub wake: Wake,
}

/// This node's presence count for a seat of a game (see
/// [`EventStore::record_presence`]; the store names the node).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PresenceRecord {
    /// The game.
    pub game_id: String,
    /// The seat.
    pub seat: u8,
    /// The seat's streams open on this node.
    pub streams: u32,
    /// When its last stream here closed (Unix epoch milliseconds).
    pub absent_since_ms: Option<i64>,
    /// The server's clock now (Unix epoch milliseconds).
    pub now_ms: i64,
}

/// A seat's presence over every node of a shared store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SharedPresence {
    /// Whether some live node serves it a stream.
    pub present: bool,
    /// The latest time it went absent on any node (a node that stopped
    /// refreshing its count: its last refresh); `None` when never recorded.
    pub absent_since_ms: Option<i64>,
}

/// How long a node's presence count counts without a refresh.
pub const PRESENCE_TTL: std::time::Duration = std::time::Duration::from_secs(15);

/// What a game's log gained after a sequence the reader already holds: one
/// page of events, every request whose events overlap that page, and the
/// seat token hashes as they stand. A catch-up applies all of it or none,
/// so a node never holds an event whose request record it has not read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LogTail {
    /// Events after the sequence asked for, in sequence order; empty when
    /// the reader is up to date.
    pub events: Vec<StoredEvent>,
    /// The requests that appended any of `events` (a request whose events
    /// run past the page is included with the page its first event is in).
    pub requests: Vec<RequestRecord>,
    /// The seat token hashes now (empty: the game takes no seat tokens).
    /// Read only when `events` is not empty.
    pub seat_token_hashes: Vec<TokenHash>,
    /// The game's wake now (read only when `events` is not empty).
    pub wake: Wake,
}

/// A game's state cached after one of its events (see [`EventStore::load`]):
/// opaque bytes to the store, which keeps the latest per game.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    /// The game.
    pub game_id: String,
    /// The sequence of the last event the state includes (1 or more).
    pub sequence: u64,
    /// The encoded snapshot (see `registry::snapshot`).
    pub payload: Vec<u8>,
}

/// Keeps a snapshot `($1 game_id, $2 sequence, $3 payload)` unless its game
/// has one at the same or a later sequence: the statement both stores run
/// for [`EventStore::save_snapshot`].
const UPSERT_SNAPSHOT: &str = "INSERT INTO snapshots (game_id, sequence, payload) \
     VALUES ($1, $2, $3) ON CONFLICT (game_id) DO UPDATE SET \
     sequence = excluded.sequence, payload = excluded.payload \
     WHERE excluded.sequence > snapshots.sequence";

/// Where [`EventStore::load`] starts reading a game's events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoadFrom {
    /// From sequence 1: the whole log, and no snapshot.
    Start,
    /// From the game's latest snapshot, when it has one (its events from
    /// the snapshot's own sequence on); from sequence 1 when it has none.
    Snapshot,
}

/// A whole game as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameLog {
    /// The snapshot the events start at, when loaded from one.
    pub snapshot: Option<Snapshot>,
    /// Every event in sequence order: from 1, or from the snapshot's
    /// sequence (inclusive, so its chain value can be checked against the
    /// snapshot's) when `snapshot` is set.
    pub events: Vec<StoredEvent>,
    /// Every deduplicated request of the game.
    pub requests: Vec<RequestRecord>,
    /// The seat token hashes given at creation (empty: none required).
    pub seat_token_hashes: Vec<TokenHash>,
    /// The game's wake as stored (see [`Wake`]).
    pub wake: Wake,
}

/// A game whose wake came due, as [`EventStore::claim_wakes`] claims it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DueWake {
    /// The game.
    pub game_id: String,
    /// The wake time it had before the claim postponed it (Unix epoch
    /// milliseconds).
    pub at_ms: i64,
}

/// A whole game written at once, as `plylog import` restores it: its
/// creation and every later event, in one transaction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestoredGame {
    /// The game row and its GameCreated event; `status` is the status after
    /// the last event.
    pub game: NewGame,
    /// The events after the first, in sequence order from 2.
    pub events: Vec<NewEvent>,
}

/// A schema migration: its version and what it does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Migration {
    /// The version (the file name's leading number).
    pub version: i64,
    /// What it does (the rest of the file name).
    pub description: String,
}

/// A line of the game list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GameRecord {
    /// Position in creation order, the paging cursor.
    pub cursor: i64,
    /// The game's id.
    pub game_id: String,
    /// Unix epoch milliseconds of creation.
    pub created_at_ms: i64,
    /// The sequence of the last event.
    pub last_sequence: u64,
    /// `plylog.v1.GameStatus` after the last event.
    pub status: i32,
    /// The encoded GameCreated event (sequence 1).
    pub created_payload: Vec<u8>,
    /// Unix epoch milliseconds at which the last event (at
    /// `last_sequence`) was recorded; `None` when no event is stored there.
    pub last_event_at_ms: Option<i64>,
}

/// The order of [`EventStore::list`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListOrder {
    /// Creation order, oldest first.
    OldestFirst,
    /// Newest first.
    NewestFirst,
}

/// What a CreateGame idempotency key maps to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CreationRecord {
    /// The game it created.
    pub game_id: String,
    /// The request it keyed.
    pub fingerprint: Vec<u8>,
    /// The game's seat token hashes now (empty: none), from which the
    /// tokens CreateGame returned are derived again.
    pub seat_token_hashes: Vec<TokenHash>,
}

/// Why a store operation failed. Causes are kept as typed sources for the
/// logs ([`crate::api::cause_chain`]); clients see only the reason.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another writer appended first: the expected sequence is taken (or the
    /// request id was recorded meanwhile). Reload and decide again.
    #[error("the game's log moved on (append conflict)")]
    Conflict,
    /// The game id, or the creation request id, is already used.
    #[error("a game with this id or creation request id exists")]
    GameExists,
    /// A stored row cannot be read back.
    #[error("corrupt row: {0}")]
    Corrupt(String),
    /// The transaction holding this write failed as a whole, for the cause
    /// given: nothing of it was committed, or (when it failed at its
    /// COMMIT) whether it was is unknown. Shared by every write of the
    /// group.
    #[error("the group commit failed")]
    Commit(#[source] Arc<StoreError>),
    /// The SQLite writer connection failed.
    #[error("the database failed")]
    Sqlite(#[source] rusqlite::Error),
    /// The store cannot be opened on this kind of database, in words.
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// The store is closed (the server is stopping).
    #[error("the store is closed")]
    Closed,
    /// The database cannot be reached now (connection lost or refused, pool
    /// exhausted). A write that failed this way may or may not have
    /// committed; retry it with its request id.
    #[error("the database cannot be reached")]
    Unavailable(#[source] sqlx::Error),
    /// The database failed.
    #[error("the database failed")]
    Database(#[source] sqlx::Error),
    /// A migration failed.
    #[error("migrating the database failed")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// A write to a store opened read-only.
    #[error("the store is open read-only")]
    ReadOnly,
    /// A store opened read-only lacks migrations this build has (`plylog
    /// migrate` applies them).
    #[error("the database lacks migrations {0}: run plylog migrate")]
    NotMigrated(String),
}

impl From<rusqlite::Error> for StoreError {
    fn from(error: rusqlite::Error) -> Self {
        StoreError::Sqlite(error)
    }
}

impl From<sqlx::Error> for StoreError {
    fn from(error: sqlx::Error) -> Self {
        match error {
            sqlx::Error::Io(_)
            | sqlx::Error::Tls(_)
            | sqlx::Error::Protocol(_)
            | sqlx::Error::PoolTimedOut
            | sqlx::Error::PoolClosed
            | sqlx::Error::WorkerCrashed => StoreError::Unavailable(error),
            // Postgres: the server is shutting down or terminated the
            // connection (class 57, operator intervention; 08, connection).
            sqlx::Error::Database(ref db)
                if db
                    .code()
                    .is_some_and(|c| c.starts_with("57") || c.starts_with("08")) =>
            {
                StoreError::Unavailable(error)
            }
            other => StoreError::Database(other),
        }
    }
}

/// Maps a database error: a unique violation is `on_unique`; a lost or
/// unreachable connection is [`StoreError::Unavailable`]; anything else is
/// [`StoreError::Database`].
fn classify(error: sqlx::Error, on_unique: StoreError) -> StoreError {
    match &error {
        sqlx::Error::Database(db) if db.is_unique_violation() => on_unique,
        _ => StoreError::from(error),
    }
}

/// Something another node did to the shared log, as a store reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    /// The game's log now reaches `sequence`.
    Appended {
        /// The game.
        game_id: String,
        /// Its last sequence.
        sequence: u64,
    },
    /// Changes may have been missed (the listening connection was lost):
    /// every cached game should catch up from the store.
    Missed,
}

/// A durable, append-only store of game logs.
///
/// Appends are atomic per game and durable before the future resolves; a
/// unique violation on `(game_id, sequence)` or `(game_id, request_id)` is a
/// [`StoreError::Conflict`], never a silent skip.
#[async_trait]
pub trait EventStore: Send + Sync + 'static {
    /// Records a new game and its GameCreated event.
    ///
    /// # Errors
    /// [`StoreError::GameExists`] when the game id or creation request id is
    /// taken; database errors.
    async fn create(&self, game: NewGame) -> Result<(), StoreError>;

    /// Records a whole game at once: its row, its GameCreated event and
    /// every later event, in one transaction, so that either all of it is
    /// stored or nothing. The caller has replayed the events.
    ///
    /// # Errors
    /// [`StoreError::GameExists`] when the game id is taken; database
    /// errors.
    async fn restore(&self, game: RestoredGame) -> Result<(), StoreError>;

    /// Appends events at `append.expected + 1 ..`.
    ///
    /// # Errors
    /// [`StoreError::Conflict`] when the game's sequence is not
    /// `append.expected` or the request id is recorded; database errors.
    ///
    /// # Cancellation safety
    /// Dropping the future does not cancel the append: it was handed to the
    /// writer and either commits or not, whether or not anyone waits.
    async fn append(&self, append: Append) -> Result<(), StoreError>;

    /// Reads a whole game, `None` when it does not exist: its events from
    /// where `from` says, every request record and the seat token hashes,
    /// all as of one moment.
    ///
    /// # Errors
    /// Database errors.
    async fn load(&self, game_id: &str, from: LoadFrom) -> Result<Option<GameLog>, StoreError>;

    /// The game's latest snapshot, `None` when it has none.
    ///
    /// # Errors
    /// Database errors.
    async fn snapshot(&self, game_id: &str) -> Result<Option<Snapshot>, StoreError>;

    /// Keeps `snapshot` as its game's latest, unless the game already has
    /// one at the same or a later sequence (two nodes may both take one).
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`]; database errors (a game that does not
    /// exist breaks the foreign key).
    async fn save_snapshot(&self, snapshot: Snapshot) -> Result<(), StoreError>;

    /// Sets the game's wake, if its log still ends at `sequence` (a wake
    /// computed on an older position is not written: the append that moved
    /// the game on wrote its own).
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`]; database errors.
    async fn set_wake(&self, game_id: &str, sequence: u64, wake: Wake) -> Result<(), StoreError>;

    /// The timer queue's claim: up to `limit` games whose wake is at or
    /// before `now_ms`, earliest first, each postponed to `now_ms +
    /// lease_ms` in the same statement, so that no other node (or later
    /// claim) takes it again before the lease runs out. The node that
    /// claimed a game loads it, does what is due, and writes the wake that
    /// follows (see [`EventStore::set_wake`]); if it dies first, the game
    /// comes due again when the lease ends. On PostgreSQL, rows another
    /// node is claiming are skipped, not waited for.
    ///
    /// # Errors
    /// [`StoreError::ReadOnly`]; database errors.
    async fn claim_wakes(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
    ) -> Result<Vec<DueWake>, StoreError>;

    /// The earliest wake of any game, due or not (Unix epoch milliseconds).
    ///
    /// # Errors
    /// Database errors.
    async fn next_wake(&self) -> Result<Option<i64>, StoreError>;

    /// Reads events `from ..= to` of a game (fewer when the log is shorter),
    /// at most `limit`, in sequence order.
    ///
    /// # Errors
    /// Database errors.
    async fn read(
        &self,
        game_id: &str,
        from: u64,
        to: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError>;

    /// Up to `limit` events of a game after sequence `after`, with the
    /// requests that appended them and the current seat token hashes: what a
    /// cached game needs to catch up. The requests are read after the events
    /// (a request row commits with its events, so every request of the
    /// events read is found).
    ///
    /// # Errors
    /// Database errors; on any error nothing was read and nothing is to be
    /// applied.
    async fn read_since(
        &self,
        game_id: &str,
        after: u64,
        limit: u32,
    ) -> Result<LogTail, StoreError>;

    /// The last sequence of each of `game_ids` that exists, for a shared
    /// store's periodic catch-up (one query for all the games a node holds).
    /// A store only this process writes answers nothing.
    ///
    /// # Errors
    /// Database errors.
    async fn last_sequences(&self, game_ids: &[String]) -> Result<Vec<(String, u64)>, StoreError> {
        let _ = game_ids;
        Ok(Vec::new())
    }

    /// The database's clock now, Unix epoch milliseconds, for the nodes of
    /// a shared store to correct their clocks toward (see
    /// [`crate::registry::Clock::correct`]); `None` for a store only this
    /// process writes (its own clock is the only one).
    ///
    /// # Errors
    /// Database errors.
    async fn clock_ms(&self) -> Result<Option<i64>, StoreError> {
        Ok(None)
    }

    /// Whether other processes may append to this store's games, so a cached
    /// game must catch up before it decides or answers (true for Postgres).
    fn shared(&self) -> bool {
        false
    }

    /// A feed of appends made by any node, when the store has one: each
    /// [`Change::Appended`] tells that a game moved on, [`Change::Missed`]
    /// that some may have gone unreported. `None` for a store only this
    /// process writes. Call once.
    fn changes(&self) -> Option<mpsc::Receiver<Change>> {
        None
    }

    /// Records this node's presence count for a seat, under the store's
    /// own name for this node (a shared store; a store only this process
    /// writes keeps presence in memory and records nothing).
    ///
    /// # Errors
    /// Database errors.
    async fn record_presence(&self, record: PresenceRecord) -> Result<(), StoreError> {
        let _ = record;
        Ok(())
    }

    /// A seat's presence over every node but this one (which knows its own
    /// count better than its row, whose write may still be queued); `None`
    /// for a store only this process writes (its own count is all there
    /// is). A node's count is live for [`PRESENCE_TTL`] after its last
    /// refresh.
    ///
    /// # Errors
    /// Database errors.
    async fn presence(
        &self,
        game_id: &str,
        seat: u8,
    ) -> Result<Option<SharedPresence>, StoreError> {
        let _ = (game_id, seat);
        Ok(None)
    }

    /// Lists up to `limit` games in `order`, starting after the game whose
    /// [`GameRecord::cursor`] is `cursor` (0 = from the first in that order).
    ///
    /// # Errors
    /// Database errors.
    async fn list(
        &self,
        cursor: i64,
        order: ListOrder,
        limit: u32,
    ) -> Result<Vec<GameRecord>, StoreError>;

    /// Looks up the game a CreateGame request id created.
    ///
    /// # Errors
    /// Database errors.
    async fn find_creation(&self, request_id: &str) -> Result<Option<CreationRecord>, StoreError>;

    /// Checks that the database answers now (one trivial query).
    ///
    /// # Errors
    /// [`StoreError::Unavailable`] when it cannot be reached.
    async fn ping(&self) -> Result<(), StoreError>;

    /// The durability settings in force, read back from the database as
    /// `(name, value)` pairs (SQLite: `journal_mode`, `synchronous`;
    /// PostgreSQL: `synchronous_commit`, `fsync`, `full_page_writes`), for
    /// the startup log and for tests that prove an acknowledged write is on
    /// disk.
    ///
    /// # Errors
    /// Database errors.
    async fn durability(&self) -> Result<Vec<(String, String)>, StoreError>;

    /// Commits the writes already queued, then closes every connection;
    /// later calls fail with [`StoreError::Closed`]. Called once the server
    /// has stopped serving.
    async fn close(&self);
}

/// The migrations of `migrator` that `conn` has not applied, oldest first;
/// all of them when the migrations table does not exist (`has_table`
/// false). Reads only.
///
/// # Errors
/// Database errors.
async fn pending<C: Migrate>(
    conn: &mut C,
    migrator: &Migrator,
    has_table: bool,
) -> Result<Vec<Migration>, StoreError> {
    let applied: Vec<i64> = if has_table {
        conn.list_applied_migrations()
            .await?
            .into_iter()
            .map(|m| m.version)
            .collect()
    } else {
        Vec::new()
    };
    Ok(migrator
        .iter()
        .filter(|m| m.migration_type.is_up_migration() && !applied.contains(&m.version))
        .map(|m| Migration {
            version: m.version,
            description: m.description.to_string(),
        })
        .collect())
}

/// Checks that `conn` has every migration of `migrator`, for a store
/// opened read-only.
///
/// # Errors
/// [`StoreError::NotMigrated`] naming the missing versions; database errors.
async fn check_migrated<C: Migrate>(
    conn: &mut C,
    migrator: &Migrator,
    has_table: bool,
) -> Result<(), StoreError> {
    let missing = pending(conn, migrator, has_table).await?;
    if missing.is_empty() {
        return Ok(());
    }
    Err(StoreError::NotMigrated(
        missing
            .iter()
            .map(|m| format!("{} ({})", m.version, m.description))
            .collect::<Vec<_>>()
            .join(", "),
    ))
}

/// A sequence as the stores' signed 64-bit columns hold it, clamped to
/// `i64::MAX` (no log reaches that far).
fn clamp(sequence: u64) -> i64 {
    i64::try_from(sequence).unwrap_or(i64::MAX)
}

/// The column form of seat token hashes: concatenated, `None` for none.
fn join_hashes(hashes: &[TokenHash]) -> Option<Vec<u8>> {
    (!hashes.is_empty()).then(|| hashes.concat())
}

/// Reads seat token hashes back from their column form.
///
/// # Errors
/// [`StoreError::Corrupt`] when the length is not a multiple of 32.
fn split_hashes(column: Option<Vec<u8>>) -> Result<Vec<TokenHash>, StoreError> {
    let bytes = column.unwrap_or_default();
    if !bytes.len().is_multiple_of(32) {
        return Err(StoreError::Corrupt(format!(
            "seat_token_hashes holds {} bytes, not a multiple of 32",
            bytes.len()
        )));
    }
    Ok(bytes
        .chunks_exact(32)
        .map(|c| c.try_into().expect("32 bytes"))
        .collect())
}
