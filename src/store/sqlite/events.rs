//! Runs of events (GetReplay pages, past views, lagging streams, export)
//! read with rusqlite on tokio's blocking threads.
//!
//! sqlx hands each row of a SQLite query from its worker thread to the task
//! reading it, every value copied into its own allocation on one thread and
//! freed on the other: a 10,000-event GetReplay page spent about 25 ms there,
//! more than half of the whole call (issue 15's profile). Here one thread
//! steps the statement, a cached prepared one, and builds the events itself.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{Connection, params};
use tokio::sync::Semaphore;

use crate::store::reads::sequence;
use crate::store::{StoreError, StoredEvent, clamp};

/// The events of a range, in sequence order.
const RANGE: &str = "SELECT sequence, payload, chain FROM events WHERE game_id = ?1 \
                     AND sequence >= ?2 AND sequence <= ?3 ORDER BY sequence LIMIT ?4";

/// Read-only rusqlite connections to one SQLite file, opened on demand and
/// kept for the next read.
#[derive(Debug)]
pub(super) struct EventReaders {
    path: PathBuf,
    /// One permit per connection: at most that many reads at once.
    permits: Semaphore,
    /// Connections between reads; `None` once the store is closed.
    idle: Mutex<Option<Vec<Connection>>>,
}

impl EventReaders {
    /// Readers of the (existing, migrated) file at `path`, at most
    /// `connections` at a time (at least one).
    pub(super) fn new(path: &Path, connections: u32) -> Arc<Self> {
        let connections = usize::try_from(connections.max(1)).unwrap_or(1);
        Arc::new(EventReaders {
            path: path.to_owned(),
            permits: Semaphore::new(connections),
            idle: Mutex::new(Some(Vec::with_capacity(connections))),
        })
    }

    /// Up to `limit` events of `game_id` with sequences `from..=to`, in
    /// order: one statement, so one snapshot of the log.
    ///
    /// # Errors
    /// [`StoreError::Closed`] once the store is closed; a file that cannot
    /// be opened or a failed read ([`StoreError::Sqlite`]); a negative
    /// sequence ([`StoreError::Corrupt`]).
    pub(super) async fn range(
        self: &Arc<Self>,
        game_id: &str,
        from: u64,
        to: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        let permit = self
            .permits
            .acquire()
            .await
            .map_err(|_| StoreError::Closed)?;
        let readers = Arc::clone(self);
        let game_id = game_id.to_owned();
        let read = tokio::task::spawn_blocking(move || {
            let conn = readers.take()?;
            let events = read_range(&conn, &game_id, from, to, limit);
            readers.put_back(conn);
            events
        });
        let events = match read.await {
            Ok(events) => events,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            // The runtime is shutting down.
            Err(_) => Err(StoreError::Closed),
        };
        drop(permit);
        events
    }

    /// Closes the idle connections; reads after this fail as
    /// [`StoreError::Closed`], and a read under way closes its connection
    /// when done.
    pub(super) fn close(&self) {
        self.permits.close();
        drop(self.lock().take());
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Vec<Connection>>> {
        self.idle.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// An idle connection, or a new one.
    fn take(&self) -> Result<Connection, StoreError> {
        let idle = self.lock().as_mut().ok_or(StoreError::Closed)?.pop();
        match idle {
            Some(conn) => Ok(conn),
            None => Ok(open(&self.path)?),
        }
    }

    fn put_back(&self, conn: Connection) {
        if let Some(idle) = self.lock().as_mut() {
            idle.push(conn);
        }
    }
}

/// Opens a reader: `query_only`. It opens the file for writing all the
/// same, as the sqlx readers do, so that the last connection to close
/// removes the WAL files.
fn open(path: &Path) -> rusqlite::Result<Connection> {
    let conn = super::open_connection(path)?;
    conn.pragma_update(None, "query_only", "ON")?;
    Ok(conn)
}

fn read_range(
    conn: &Connection,
    game_id: &str,
    from: u64,
    to: u64,
    limit: u32,
) -> Result<Vec<StoredEvent>, StoreError> {
    let mut statement = conn.prepare_cached(RANGE)?;
    let mut rows = statement.query(params![game_id, clamp(from), clamp(to), limit])?;
    let mut events = Vec::new();
    while let Some(row) = rows.next()? {
        events.push(StoredEvent {
            sequence: sequence("events.sequence", row.get(0)?)?,
            payload: row.get(1)?,
            chain: row.get(2)?,
        });
    }
    Ok(events)
}
