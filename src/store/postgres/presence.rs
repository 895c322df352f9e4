//! Seats' presence over the nodes of a shared database: each node keeps a
//! row per seat it serves streams to (its count, refreshed), and reads the
//! other nodes' rows (live for [`PRESENCE_TTL`] after their last refresh).

use super::PostgresStore;
use crate::store::{PRESENCE_TTL, PresenceRecord, SharedPresence, StoreError};

/// Upserts this node's row for a seat (`$1` game, `$2` seat, `$3` node,
/// `$4` streams, `$5` absent since, `$6` now on the server's clock).
const RECORD_PRESENCE: &str = include_str!("sql/record_presence.sql");
/// A seat's presence over every node but `$4`: whether one with a live
/// row serves it a stream, and the latest time it went absent (`$1` game,
/// `$2` seat, `$3` the rows' time to live in seconds).
const PRESENCE: &str = include_str!("sql/presence.sql");

impl PostgresStore {
    /// [`crate::store::EventStore::record_presence`]: this node's row for the
    /// seat, written.
    pub(super) async fn record_presence_row(
        &self,
        record: PresenceRecord,
    ) -> Result<(), StoreError> {
        sqlx::query(RECORD_PRESENCE)
            .bind(&record.game_id)
            .bind(i32::from(record.seat))
            .bind(&*self.node)
            .bind(i32::try_from(record.streams).unwrap_or(i32::MAX))
            .bind(record.absent_since_ms)
            .bind(record.now_ms)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    /// [`crate::store::EventStore::presence`]: the other nodes' rows for the
    /// seat, read.
    pub(super) async fn shared_presence(
        &self,
        game_id: &str,
        seat: u8,
    ) -> Result<Option<SharedPresence>, StoreError> {
        let (present, absent_since_ms): (Option<bool>, Option<i64>) = sqlx::query_as(PRESENCE)
            .bind(game_id)
            .bind(i32::from(seat))
            .bind(PRESENCE_TTL.as_secs_f64())
            .bind(&*self.node)
            .fetch_one(&self.pool)
            .await?;
        Ok(Some(SharedPresence {
            present: present.unwrap_or(false),
            absent_since_ms,
        }))
    }
}
