//! Durable event logs: the [`EventStore`] trait and its SQLite backend.
//!
//! A store keeps, per game, a dense sequence of opaque event payloads (the
//! protobuf `GameEvent`) keyed by `(game_id, sequence)`, plus the request ids
//! that produced them. It knows nothing of any game's rules: the registry
//! decides, the store only appends at `expected + 1` or reports a
//! [`StoreError::Conflict`].
//!
//! # Map
//! - this file: [`EventStore`], the trait every backend implements, and the
//!   helpers both backends share (migrations pending, column forms).
//! - `records`: the values the trait takes and gives ([`NewGame`],
//!   [`Append`], [`GameLog`], [`Fence`], ...); `error`: [`StoreError`].
//! - `open`: [`Database`], a database URL parsed, and the store it opens,
//!   migrated or read-only ([`StoreOptions`]).
//! - [`SqliteStore`] (`sqlite`, `sqlite/`): the embedded default; one writer
//!   thread group-commits the appends of many games in one transaction.
//! - [`PostgresStore`] (`postgres/`): one database shared by several nodes,
//!   each running the games of the slots whose leases it holds
//!   ([`EventStore::lease_round`]).
//! - [`Cells`] (`cells`): several PostgreSQL databases as one store, each
//!   game in the cell of its slot.
//! - `reads`: the read statements both backends run through sqlx.
//! - [`chain`]: the events' integrity chain.

mod cells;
pub mod chain;
mod error;
mod open;
mod postgres;
mod reads;
mod records;
mod sqlite;

pub use self::error::StoreError;
use self::error::classify;
pub use cells::{Cells, cell_of_request, cell_of_slot};
pub use open::{Database, OpenError, StoreOptions, redacted};
pub use postgres::PostgresStore;
pub use records::{
    Append, CreationRecord, DueWake, FeedEvent, FeedRange, Fence, GameLog, GameRecord, GameTag,
    LeaseRound, ListFilter, ListOrder, LoadFrom, LogTail, Migration, NewEvent, NewGame,
    PRESENCE_TTL, PresenceRecord, RequestRecord, RestoredGame, SharedPresence, SlotHolder,
    Snapshot, StoredEvent, TokenHash, Wake,
};
pub use sqlite::{SqliteOptions, SqliteStore};

use async_trait::async_trait;
use sqlx::migrate::{Migrate, Migrator};

/// Keeps a snapshot `($1 game_id, $2 sequence, $3 payload)` unless its game
/// has one at the same or a later sequence: the statement both stores run
/// for [`EventStore::save_snapshot`].
const UPSERT_SNAPSHOT: &str = "INSERT INTO snapshots (game_id, sequence, payload) \
     VALUES ($1, $2, $3) ON CONFLICT (game_id) DO UPDATE SET \
     sequence = excluded.sequence, payload = excluded.payload \
     WHERE excluded.sequence > snapshots.sequence";

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

    /// Records new games (CreateGames) in one transaction, as one group
    /// commit: every one of them, or none. On several cells
    /// ([`crate::store::Cells`]) each cell's games are one transaction,
    /// written cell after cell.
    ///
    /// # Errors
    /// [`StoreError::GameExistsAt`] naming the first game whose id or
    /// creation request id is taken, by a stored game or an earlier one of
    /// `games` (nothing of its cell written), and the games other cells
    /// wrote before it; database errors.
    async fn create_all(&self, games: Vec<NewGame>) -> Result<(), StoreError>;

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
    ///
    /// `slots`: only the games of these slots (a node claims its own
    /// slots' games); `None`, every game.
    async fn claim_wakes(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
        slots: Option<&[i32]>,
    ) -> Result<Vec<DueWake>, StoreError>;

    /// The earliest wake of any game of `slots` (`None`: of any game), due
    /// or not (Unix epoch milliseconds).
    ///
    /// # Errors
    /// Database errors.
    async fn next_wake(&self, slots: Option<&[i32]>) -> Result<Option<i64>, StoreError>;

    /// The number of slots the games are divided into, `None` for a store
    /// with no slots (only this process writes it: one node runs every
    /// game).
    ///
    /// # Errors
    /// Database errors; [`StoreError::Corrupt`] when the slots table does
    /// not match the configured count.
    async fn slot_count(&self) -> Result<Option<u32>, StoreError> {
        Ok(None)
    }

    /// How many cells (databases) the store spans: 1 but for [`Cells`].
    /// Slot `s` is in cell [`cell_of_slot`]`(s, cell_count)`, and each
    /// cell keeps its own leases ([`LeaseRound::cell`]).
    fn cell_count(&self) -> usize {
        1
    }

    /// One lease round for `round.node` (see `crate::registry::ownership`),
    /// in one statement: records the node as live until the lease's end,
    /// renews the leases it holds on the slots still placed on it (by
    /// rendezvous hashing over the live nodes), acquires with the next epoch
    /// the slots placed on it that are free, ended or held by an earlier
    /// run under its name, and answers every slot's holder.
    ///
    /// # Errors
    /// Database errors; [`StoreError::Unsupported`] on a store with no
    /// slots.
    async fn lease_round(&self, round: LeaseRound) -> Result<Vec<SlotHolder>, StoreError> {
        let _ = round;
        Err(StoreError::Unsupported("slot leases need PostgreSQL"))
    }

    /// Ends `node`'s leases on `slots` (each with the epoch it held), so
    /// another node may take them at once; with `leaving`, also ends the
    /// node's membership, so no slot is placed on it any more (a graceful
    /// stop). A lease taken meanwhile by another holder (another epoch) is
    /// left alone.
    ///
    /// # Errors
    /// Database errors.
    async fn release_leases(
        &self,
        node: &str,
        slots: &[(i32, i64)],
        leaving: bool,
    ) -> Result<(), StoreError> {
        let _ = (node, slots, leaving);
        Ok(())
    }

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

    /// Whether several nodes share this store (true for PostgreSQL): they
    /// correct their clocks toward the database's and share seat presence,
    /// and each runs only the games of the slots it holds.
    fn shared(&self) -> bool {
        false
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

    /// Lists up to `limit` games that meet `filter`, in `order`, in each
    /// cell starting after the game whose [`GameRecord::cursor`] is that
    /// cell's entry of `after` (0, or no entry: from the first in that
    /// order). A store of one cell reads `after[0]`; [`Cells`] merges its
    /// cells' lists.
    ///
    /// # Errors
    /// Database errors.
    async fn list(
        &self,
        after: &[i64],
        order: ListOrder,
        filter: &ListFilter,
        limit: u32,
    ) -> Result<Vec<GameRecord>, StoreError>;

    /// Lists up to `limit` games of cell `cell` only (see [`Cells`]) that
    /// meet `filter`, in `order`, after the game whose cursor is `cursor`
    /// (0: from the first); a store of one cell has only cell 0.
    ///
    /// # Errors
    /// Database errors.
    async fn list_cell(
        &self,
        cell: usize,
        cursor: i64,
        order: ListOrder,
        filter: &ListFilter,
        limit: u32,
    ) -> Result<Vec<GameRecord>, StoreError> {
        if cell == 0 {
            self.list(&[cursor], order, filter, limit).await
        } else {
            Ok(Vec::new())
        }
    }

    /// The last position of cell `cell`'s feed (0: no event yet; see
    /// [`EventStore::read_feed`]). `cell` is below [`EventStore::cell_count`].
    ///
    /// # Errors
    /// Database errors; [`StoreError::Corrupt`] for a negative position.
    async fn feed_head(&self, cell: usize) -> Result<u64, StoreError>;

    /// Events of cell `cell`'s feed in `range`, in position order. Every
    /// event has a position in its cell, dense from 1 and in commit order:
    /// once a position is visible, every lower one is, so a reader that
    /// goes on from the last position it read never skips an event that
    /// committed late. `cell` is below [`EventStore::cell_count`].
    ///
    /// # Errors
    /// Database errors; [`StoreError::Corrupt`] for a negative position or
    /// sequence.
    async fn read_feed(
        &self,
        cell: usize,
        range: FeedRange<'_>,
    ) -> Result<Vec<FeedEvent>, StoreError>;

    /// A value that changes (it counts up) after this process commits a
    /// group of writes to cell `cell`, for feed readers to wait on; writes
    /// of other processes sharing the store are not signalled (readers poll
    /// for those). `cell` is below [`EventStore::cell_count`]. What it
    /// counts is the store's own (SQLite: the feed's last position;
    /// PostgreSQL: the groups committed).
    fn feed_signal(&self, cell: usize) -> tokio::sync::watch::Receiver<u64>;

    /// Looks up the game a CreateGame request id created; `game_id` is the
    /// id the request named, if it named one (with [`Cells`], where to
    /// look: see [`cell_of_request`]).
    ///
    /// # Errors
    /// Database errors.
    async fn find_creation(
        &self,
        request_id: &str,
        game_id: Option<&str>,
    ) -> Result<Option<CreationRecord>, StoreError>;

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
