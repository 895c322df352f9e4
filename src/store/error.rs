//! [`StoreError`], and how a database error maps to it.

use std::sync::Arc;

/// Why a store operation failed. Causes are kept as typed sources for the
/// logs ([`crate::api::cause_chain`]); clients see only the reason.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// Another writer appended first: the expected sequence is taken (or the
    /// request id was recorded meanwhile). Reload and decide again.
    #[error("the game's log moved on (append conflict)")]
    Conflict,
    /// The append was decided under a slot lease that is no longer the
    /// slot's (its epoch moved on, or it ended): nothing was written. The
    /// caller retries through the slot's new holder, with the same request
    /// id.
    #[error("the append's slot lease is no longer held (fenced)")]
    Fenced,
    /// The game id, or the creation request id, is already used.
    #[error("a game with this id or creation request id exists")]
    GameExists,
    /// The new game at index `at` of a
    /// [`crate::store::EventStore::create_all`] has an id or creation
    /// request id already used (by a stored game or an earlier game of the
    /// same call): nothing of its cell's games was written. `written`: the
    /// indexes of the call's games other cells, written before it, did
    /// write (always empty with one cell).
    #[error("the new game at index {at} has an id or creation request id that exists")]
    GameExistsAt {
        /// The index of the game refused.
        at: usize,
        /// The indexes of the games written, in other cells.
        written: Vec<usize>,
    },
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
    /// The database did not answer `what` in the time it was given (the
    /// statement may still run).
    #[error("{0} took too long")]
    TimedOut(&'static str),
    /// The database was opened as another cell than the one it is (see
    /// `crate::store::Cells`), in words.
    #[error("{0}")]
    WrongCell(String),
    /// The store cannot be opened on this kind of database, in words.
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// The store is closed (the server is stopping).
    #[error("the store is closed")]
    Closed,
    /// The database cannot be reached now (connection lost or refused, pool
    /// exhausted, a standby reached instead of the primary). A write that
    /// failed this way may or may not have committed; retry it with its
    /// request id.
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

/// PostgreSQL's SQLSTATE for a write in a read-only transaction, which is
/// what every write on a standby gets (PostgreSQL's Appendix A, class 25).
const READ_ONLY_SQL_TRANSACTION: &str = "25006";

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
            // connection (class 57, operator intervention; 08, connection),
            // or it is a standby (25006, read_only_sql_transaction): during
            // a failover a proxy may send a new connection to the member
            // being promoted while it is still in recovery. Nothing was
            // written, and the member takes writes once promoted.
            sqlx::Error::Database(ref db)
                if db.code().is_some_and(|c| {
                    c.starts_with("57") || c.starts_with("08") || c == READ_ONLY_SQL_TRANSACTION
                }) =>
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
pub(super) fn classify(error: sqlx::Error, on_unique: StoreError) -> StoreError {
    match &error {
        sqlx::Error::Database(db) if db.is_unique_violation() => on_unique,
        _ => StoreError::from(error),
    }
}
