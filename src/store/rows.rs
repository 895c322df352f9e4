//! Row decoding shared by the SQLite and PostgreSQL stores: both name their
//! columns alike and store integers as 64-bit and payloads as bytes.

use sqlx::{ColumnIndex, Decode, Row, Type};

use super::{CreationRecord, GameRecord, RequestRecord, StoreError, StoredEvent};

/// The column types a store's rows must decode.
pub(super) trait StoreRow: Row
where
    for<'r> &'r str: ColumnIndex<Self>,
    for<'r> i64: Decode<'r, Self::Database> + Type<Self::Database>,
    for<'r> i32: Decode<'r, Self::Database> + Type<Self::Database>,
    for<'r> String: Decode<'r, Self::Database> + Type<Self::Database>,
    for<'r> Vec<u8>: Decode<'r, Self::Database> + Type<Self::Database>,
    for<'r> Option<Vec<u8>>: Decode<'r, Self::Database> + Type<Self::Database>,
{
    /// A `sequence, payload` row.
    fn stored_event(&self) -> Result<StoredEvent, sqlx::Error> {
        Ok(StoredEvent {
            sequence: self.try_get::<i64, _>("sequence")? as u64,
            payload: self.try_get("payload")?,
        })
    }

    /// A `request_id, fingerprint, first_sequence, last_sequence` row.
    fn request_record(&self) -> Result<RequestRecord, sqlx::Error> {
        Ok(RequestRecord {
            request_id: self.try_get("request_id")?,
            fingerprint: self.try_get("fingerprint")?,
            first_sequence: self.try_get::<i64, _>("first_sequence")? as u64,
            last_sequence: self.try_get::<i64, _>("last_sequence")? as u64,
        })
    }

    /// A `pk, game_id, created_at_ms, last_sequence, status, payload` row.
    fn game_record(&self) -> Result<GameRecord, sqlx::Error> {
        Ok(GameRecord {
            cursor: self.try_get("pk")?,
            game_id: self.try_get("game_id")?,
            created_at_ms: self.try_get("created_at_ms")?,
            last_sequence: self.try_get::<i64, _>("last_sequence")? as u64,
            status: self.try_get("status")?,
            created_payload: self.try_get("payload")?,
        })
    }

    /// A `game_id, create_fingerprint, seat_token_hashes` row.
    fn creation_record(&self) -> Result<CreationRecord, StoreError> {
        Ok(CreationRecord {
            game_id: self.try_get("game_id")?,
            fingerprint: self
                .try_get::<Option<Vec<u8>>, _>("create_fingerprint")?
                .unwrap_or_default(),
            seat_token_hashes: super::split_hashes(self.try_get("seat_token_hashes")?)?,
        })
    }
}

impl StoreRow for sqlx::sqlite::SqliteRow {}
impl StoreRow for sqlx::postgres::PgRow {}
