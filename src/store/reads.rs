//! The read side of both stores, written once: each query is one SQL text
//! with `$1`, `$2`, ... parameters, which PostgreSQL and sqlx's SQLite driver
//! both read; its rows decode with `#[derive(sqlx::FromRow)]`; and every
//! stored integer is converted with a check (a negative sequence is a
//! [`StoreError::Corrupt`] row, never a huge `u64`). Values are bound owned:
//! generic code cannot shorten SQLite's argument lifetime to the call's.
//! The stores choose the transaction or pool each read runs on, which is
//! where they differ on purpose (see [`super::sqlite`] and
//! [`super::postgres`]).

use sqlx::{Database, Encode, Executor, FromRow, IntoArguments, Type};

use super::{
    CreationRecord, FeedEvent, FeedRange, GameLog, GameRecord, ListOrder, LoadFrom, RequestRecord,
    Snapshot, StoreError, StoredEvent, TokenHash, Wake, clamp,
};

/// Which events of a game to read.
#[derive(Debug, Clone, Copy)]
pub(super) enum Events {
    /// Sequences `from..=to`, at most `limit` of them.
    Range { from: u64, to: u64, limit: u32 },
    /// Sequences after `after`, at most `limit` of them.
    After { after: u64, limit: u32 },
}

impl Events {
    /// Every event from sequence `from` on.
    pub(super) fn starting_at(from: u64) -> Self {
        Events::Range {
            from,
            to: u64::MAX,
            limit: u32::MAX,
        }
    }
}

/// Which of a game's request records to read.
#[derive(Debug, Clone, Copy)]
pub(super) enum Requests {
    /// Every one.
    All,
    /// Those that appended any sequence in `after + 1..=last`.
    Overlapping { after: u64, last: u64 },
}

/// An `events` row.
#[derive(FromRow)]
pub(super) struct EventRow {
    sequence: i64,
    payload: Vec<u8>,
    chain: Vec<u8>,
}

/// An `events` row as the feed reads it.
#[derive(FromRow)]
pub(super) struct FeedRow {
    position: i64,
    game_id: String,
    sequence: i64,
    event_type: String,
    payload: Vec<u8>,
}

/// The feed's last position.
#[derive(FromRow)]
pub(super) struct HeadRow {
    head: i64,
}

/// A `requests` row.
#[derive(FromRow)]
pub(super) struct RequestRow {
    request_id: String,
    fingerprint: Vec<u8>,
    first_sequence: i64,
    last_sequence: i64,
}

/// A `games` row joined with its first event's payload.
#[derive(FromRow)]
pub(super) struct GameRow {
    pk: i64,
    game_id: String,
    created_at_ms: i64,
    last_sequence: i64,
    status: i32,
    payload: Vec<u8>,
    last_event_at_ms: Option<i64>,
}

/// What a `games` row keeps of the request that created it.
#[derive(FromRow)]
pub(super) struct CreationRow {
    game_id: String,
    create_fingerprint: Option<Vec<u8>>,
    seat_token_hashes: Option<Vec<u8>>,
}

/// A `snapshots` row.
#[derive(FromRow)]
pub(super) struct SnapshotRow {
    sequence: i64,
    payload: Vec<u8>,
}

/// What a load or catch-up reads of a `games` row: its seat token hashes
/// and wake.
#[derive(FromRow)]
pub(super) struct LoadRow {
    seat_token_hashes: Option<Vec<u8>>,
    wake_at_ms: Option<i64>,
    absent_since_ms: Option<i64>,
}

/// A game id.
#[derive(FromRow)]
pub(super) struct GameIdRow {
    game_id: String,
}

/// The earliest wake of any game.
#[derive(FromRow)]
pub(super) struct WakeRow {
    wake_at_ms: Option<i64>,
}

/// A stored sequence as a `u64`.
///
/// # Errors
/// [`StoreError::Corrupt`] when it is negative.
pub(super) fn sequence(column: &str, value: i64) -> Result<u64, StoreError> {
    u64::try_from(value)
        .map_err(|_| StoreError::Corrupt(format!("{column} is {value}, not a sequence")))
}

/// The reads, for any database `DB` that binds text and 64-bit integers and
/// decodes the rows above (SQLite and PostgreSQL). Each runs on the
/// executor it is given (a pool, or a transaction's connection), whose
/// database decides `DB`.
pub(super) struct Reads<DB>(std::marker::PhantomData<DB>);

impl<DB> Reads<DB>
where
    DB: Database,
    for<'a> DB::Arguments<'a>: IntoArguments<'a, DB>,
    for<'q> String: Encode<'q, DB> + Type<DB>,
    for<'q> i64: Encode<'q, DB> + Type<DB>,
    EventRow: for<'r> FromRow<'r, DB::Row>,
    RequestRow: for<'r> FromRow<'r, DB::Row>,
    GameRow: for<'r> FromRow<'r, DB::Row>,
    CreationRow: for<'r> FromRow<'r, DB::Row>,
    LoadRow: for<'r> FromRow<'r, DB::Row>,
    WakeRow: for<'r> FromRow<'r, DB::Row>,
    GameIdRow: for<'r> FromRow<'r, DB::Row>,
    SnapshotRow: for<'r> FromRow<'r, DB::Row>,
    FeedRow: for<'r> FromRow<'r, DB::Row>,
    HeadRow: for<'r> FromRow<'r, DB::Row>,
{
    /// The feed's last position (0: no event yet): on both backends the
    /// highest position committed, since positions commit in order (see
    /// the migrations `*_feed_positions.sql`).
    ///
    /// # Errors
    /// Store failures; [`StoreError::Corrupt`] for a negative position.
    pub(super) async fn feed_head<'c, E>(executor: E) -> Result<u64, StoreError>
    where
        E: Executor<'c, Database = DB>,
    {
        let head: HeadRow = sqlx::query_as("SELECT coalesce(max(position), 0) AS head FROM events")
            .fetch_one(executor)
            .await?;
        sequence("events.position", head.head)
    }

    /// The feed's events in `range`, in position order.
    ///
    /// The event type filter is one text of names between commas, matched
    /// with `LIKE`, which both backends read the same way (they share no
    /// array type); a name is lower case letters and underscores, and `_`
    /// (any one character to `LIKE`) cannot make one name match another of
    /// the names the API accepts (`crate::proto::EVENT_TYPES`).
    ///
    /// # Errors
    /// Store failures; [`StoreError::Corrupt`] for a negative position or
    /// sequence.
    pub(super) async fn feed<'c, E>(
        executor: E,
        range: FeedRange<'_>,
    ) -> Result<Vec<FeedEvent>, StoreError>
    where
        E: Executor<'c, Database = DB>,
    {
        let types = range
            .event_types
            .map(|types| format!(",{},", types.join(",")))
            .unwrap_or_default();
        let rows: Vec<FeedRow> = sqlx::query_as(
            "SELECT position, game_id, sequence, event_type, payload FROM events \
             WHERE position > $1 AND position <= $2 \
             AND ($3 = '' OR $3 LIKE '%,' || event_type || ',%') \
             ORDER BY position LIMIT $4",
        )
        .bind(clamp(range.after))
        .bind(clamp(range.upto))
        .bind(types)
        .bind(i64::from(range.limit))
        .fetch_all(executor)
        .await?;
        rows.into_iter()
            .map(|row| {
                Ok(FeedEvent {
                    position: sequence("events.position", row.position)?,
                    game_id: row.game_id,
                    sequence: sequence("events.sequence", row.sequence)?,
                    event_type: row.event_type,
                    payload: row.payload,
                })
            })
            .collect()
    }

    /// A game's events, in sequence order.
    ///
    /// # Errors
    /// Store failures; [`StoreError::Corrupt`] for a negative sequence.
    pub(super) async fn events<'c, E>(
        executor: E,
        game_id: &str,
        which: Events,
    ) -> Result<Vec<StoredEvent>, StoreError>
    where
        E: Executor<'c, Database = DB>,
    {
        let game_id = game_id.to_owned();
        let rows: Vec<EventRow> = match which {
            Events::Range { from, to, limit } => {
                sqlx::query_as(
                    "SELECT sequence, payload, chain FROM events WHERE game_id = $1 \
                 AND sequence >= $2 AND sequence <= $3 ORDER BY sequence LIMIT $4",
                )
                .bind(game_id)
                .bind(clamp(from))
                .bind(clamp(to))
                .bind(i64::from(limit))
                .fetch_all(executor)
                .await?
            }
            Events::After { after, limit } => {
                sqlx::query_as(
                    "SELECT sequence, payload, chain FROM events WHERE game_id = $1 \
                 AND sequence > $2 ORDER BY sequence LIMIT $3",
                )
                .bind(game_id)
                .bind(clamp(after))
                .bind(i64::from(limit))
                .fetch_all(executor)
                .await?
            }
        };
        rows.into_iter()
            .map(|row| {
                Ok(StoredEvent {
                    sequence: sequence("events.sequence", row.sequence)?,
                    payload: row.payload,
                    chain: row.chain,
                })
            })
            .collect()
    }

    /// A game's latest snapshot, if it has one.
    ///
    /// # Errors
    /// Store failures; [`StoreError::Corrupt`] for a sequence below 1.
    pub(super) async fn snapshot<'c, E>(
        executor: E,
        game_id: &str,
    ) -> Result<Option<Snapshot>, StoreError>
    where
        E: Executor<'c, Database = DB>,
    {
        let row: Option<SnapshotRow> =
            sqlx::query_as("SELECT sequence, payload FROM snapshots WHERE game_id = $1")
                .bind(game_id.to_owned())
                .fetch_optional(executor)
                .await?;
        row.map(|row| {
            Ok(Snapshot {
                game_id: game_id.to_owned(),
                sequence: sequence("snapshots.sequence", row.sequence)?,
                payload: row.payload,
            })
        })
        .transpose()
    }

    /// A whole game (see [`super::EventStore::load`]), read on one
    /// connection `conn` that the caller has put in a read transaction, so
    /// every part is of one moment.
    ///
    /// # Errors
    /// Store failures; corrupt rows.
    pub(super) async fn game(
        conn: &mut DB::Connection,
        game_id: &str,
        from: LoadFrom,
    ) -> Result<Option<GameLog>, StoreError>
    where
        for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
    {
        let snapshot = match from {
            LoadFrom::Start => None,
            LoadFrom::Snapshot => Self::snapshot(&mut *conn, game_id).await?,
        };
        let first = snapshot.as_ref().map_or(1, |s| s.sequence);
        let events = Self::events(&mut *conn, game_id, Events::starting_at(first)).await?;
        if events.is_empty() {
            return Ok(None);
        }
        let requests = Self::requests(&mut *conn, game_id, Requests::All).await?;
        let (seat_token_hashes, wake) = Self::hashes_and_wake(&mut *conn, game_id).await?;
        Ok(Some(GameLog {
            snapshot,
            events,
            requests,
            seat_token_hashes,
            wake,
        }))
    }

    /// Computes the chain values (see [`super::chain`]) that events stored
    /// before the chain came lack (an empty `chain`), game by game, each
    /// game in one transaction on `conn`; returns how many games it filled.
    /// Run after the migrations, before the store serves: a game is filled
    /// whole, from its first event, so a fill cut short is finished by the
    /// next. A stored value that is not empty is kept as it is (`plylog
    /// verify` judges it). Says in the log how many games it filled, if
    /// any. Nodes opening one database at once may both fill a game: they
    /// write the same values.
    ///
    /// # Errors
    /// Store failures.
    pub(super) async fn fill_chains(conn: &mut DB::Connection) -> Result<(), StoreError>
    where
        for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
        DB::Connection: sqlx::Connection<Database = DB>,
        for<'q> Vec<u8>: Encode<'q, DB> + Type<DB>,
    {
        let games: Vec<GameIdRow> =
            sqlx::query_as("SELECT DISTINCT game_id FROM events WHERE length(chain) = 0")
                .fetch_all(&mut *conn)
                .await?;
        for game in &games {
            let mut tx = sqlx::Connection::begin(&mut *conn).await?;
            let events = Self::events(&mut *tx, &game.game_id, Events::starting_at(1)).await?;
            let mut previous = super::chain::GENESIS;
            for event in events {
                let chain =
                    super::chain::link(&previous, &game.game_id, event.sequence, &event.payload);
                if event.chain.is_empty() {
                    sqlx::query(
                        "UPDATE events SET chain = $1 WHERE game_id = $2 AND sequence = $3",
                    )
                    .bind(chain.to_vec())
                    .bind(game.game_id.clone())
                    .bind(clamp(event.sequence))
                    .execute(&mut *tx)
                    .await?;
                }
                previous = chain;
            }
            tx.commit().await?;
        }
        if !games.is_empty() {
            tracing::info!(
                games = games.len(),
                "integrity chain computed for events stored before it"
            );
        }
        Ok(())
    }

    /// The earliest wake of any game, due or not.
    ///
    /// # Errors
    /// Store failures.
    pub(super) async fn next_wake<'c, E>(executor: E) -> Result<Option<i64>, StoreError>
    where
        E: Executor<'c, Database = DB>,
    {
        let row: Option<WakeRow> = sqlx::query_as(
            "SELECT wake_at_ms FROM games WHERE wake_at_ms IS NOT NULL \
             ORDER BY wake_at_ms LIMIT 1",
        )
        .fetch_optional(executor)
        .await?;
        Ok(row.and_then(|row| row.wake_at_ms))
    }

    /// A game's request records.
    ///
    /// # Errors
    /// Store failures; [`StoreError::Corrupt`] for a negative sequence.
    pub(super) async fn requests<'c, E>(
        executor: E,
        game_id: &str,
        which: Requests,
    ) -> Result<Vec<RequestRecord>, StoreError>
    where
        E: Executor<'c, Database = DB>,
    {
        let game_id = game_id.to_owned();
        let rows: Vec<RequestRow> =
            match which {
                Requests::All => sqlx::query_as(
                    "SELECT request_id, fingerprint, first_sequence, last_sequence FROM requests \
                 WHERE game_id = $1",
                )
                .bind(game_id)
                .fetch_all(executor)
                .await?,
                Requests::Overlapping { after, last } => sqlx::query_as(
                    "SELECT request_id, fingerprint, first_sequence, last_sequence FROM requests \
                 WHERE game_id = $1 AND last_sequence > $2 AND first_sequence <= $3",
                )
                .bind(game_id)
                .bind(clamp(after))
                .bind(clamp(last))
                .fetch_all(executor)
                .await?,
            };
        rows.into_iter()
            .map(|row| {
                Ok(RequestRecord {
                    request_id: row.request_id,
                    fingerprint: row.fingerprint,
                    first_sequence: sequence("requests.first_sequence", row.first_sequence)?,
                    last_sequence: sequence("requests.last_sequence", row.last_sequence)?,
                })
            })
            .collect()
    }

    /// A game's seat token hashes now (empty: the game takes no seat tokens)
    /// and its wake.
    ///
    /// # Errors
    /// Store failures (`RowNotFound` for a missing game);
    /// [`StoreError::Corrupt`] for a column that is not whole hashes.
    pub(super) async fn hashes_and_wake<'c, E>(
        executor: E,
        game_id: &str,
    ) -> Result<(Vec<TokenHash>, Wake), StoreError>
    where
        E: Executor<'c, Database = DB>,
    {
        let row: LoadRow = sqlx::query_as(
            "SELECT seat_token_hashes, wake_at_ms, absent_since_ms FROM games WHERE game_id = $1",
        )
        .bind(game_id.to_owned())
        .fetch_one(executor)
        .await?;
        let wake = Wake {
            at_ms: row.wake_at_ms,
            absent_since_ms: row.absent_since_ms,
        };
        Ok((super::split_hashes(row.seat_token_hashes)?, wake))
    }

    /// Up to `limit` games created after `cursor`, in creation order.
    ///
    /// # Errors
    /// Store failures; [`StoreError::Corrupt`] for a negative sequence.
    pub(super) async fn games<'c, E>(
        executor: E,
        cursor: i64,
        order: ListOrder,
        limit: u32,
    ) -> Result<Vec<GameRecord>, StoreError>
    where
        E: Executor<'c, Database = DB>,
    {
        // A game's first event (its rules and seats) and its last (when it
        // was last active).
        macro_rules! select {
            () => {
                "SELECT g.pk, g.game_id, g.created_at_ms, g.last_sequence, g.status, e.payload, \
                 l.recorded_at_ms AS last_event_at_ms \
                 FROM games g JOIN events e ON e.game_id = g.game_id AND e.sequence = 1 \
                 LEFT JOIN events l ON l.game_id = g.game_id AND l.sequence = g.last_sequence"
            };
        }
        let (query, cursor) = match order {
            ListOrder::OldestFirst => (
                concat!(select!(), " WHERE g.pk > $1 ORDER BY g.pk LIMIT $2"),
                cursor,
            ),
            // Cursor 0 starts from the newest.
            ListOrder::NewestFirst => (
                concat!(select!(), " WHERE g.pk < $1 ORDER BY g.pk DESC LIMIT $2"),
                if cursor == 0 { i64::MAX } else { cursor },
            ),
        };
        let rows: Vec<GameRow> = sqlx::query_as(query)
            .bind(cursor)
            .bind(i64::from(limit))
            .fetch_all(executor)
            .await?;
        rows.into_iter()
            .map(|row| {
                Ok(GameRecord {
                    cursor: row.pk,
                    cell: 0,
                    game_id: row.game_id,
                    created_at_ms: row.created_at_ms,
                    last_sequence: sequence("games.last_sequence", row.last_sequence)?,
                    status: row.status,
                    created_payload: row.payload,
                    last_event_at_ms: row.last_event_at_ms,
                })
            })
            .collect()
    }

    /// The game a CreateGame request id created, if any.
    ///
    /// # Errors
    /// Store failures; [`StoreError::Corrupt`] for a hash column that is not
    /// whole hashes.
    pub(super) async fn creation<'c, E>(
        executor: E,
        request_id: &str,
    ) -> Result<Option<CreationRecord>, StoreError>
    where
        E: Executor<'c, Database = DB>,
    {
        let row: Option<CreationRow> = sqlx::query_as(
            "SELECT game_id, create_fingerprint, seat_token_hashes FROM games \
         WHERE create_request_id = $1",
        )
        .bind(request_id.to_owned())
        .fetch_optional(executor)
        .await?;
        row.map(|row| {
            Ok(CreationRecord {
                game_id: row.game_id,
                fingerprint: row.create_fingerprint.unwrap_or_default(),
                seat_token_hashes: super::split_hashes(row.seat_token_hashes)?,
            })
        })
        .transpose()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::{EventStore, NewEvent, NewGame, SqliteOptions, SqliteStore};
    use sqlx::Connection;

    #[tokio::test]
    async fn a_negative_sequence_in_a_real_file_reads_back_as_a_corrupt_row() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("corrupt.db");
        let store = SqliteStore::open(&SqliteOptions::new(path.display().to_string()))
            .await
            .unwrap();
        store
            .create(NewGame {
                game_id: "g".into(),
                created: NewEvent {
                    sequence: 1,
                    event_type: "game_created",
                    payload: vec![1, 2, 3].into(),
                    recorded_at_ms: 0,
                    chain: [0; 32],
                },
                request: None,
                status: 1,
                seat_token_hashes: Vec::new(),
                wake: Default::default(),
            })
            .await
            .unwrap();
        let listed = store.list(&[0], ListOrder::OldestFirst, 10).await.unwrap();
        assert_eq!((listed.len(), listed[0].last_sequence), (1, 1));
        let mut raw = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        sqlx::query("UPDATE games SET last_sequence = -3")
            .execute(&mut raw)
            .await
            .unwrap();
        let error = store
            .list(&[0], ListOrder::OldestFirst, 10)
            .await
            .unwrap_err();
        assert_eq!(
            error.to_string(),
            "corrupt row: games.last_sequence is -3, not a sequence"
        );
        store.close().await;
    }

    #[test]
    fn a_negative_sequence_is_a_corrupt_row_not_a_huge_number() {
        assert_eq!(sequence("events.sequence", 7).unwrap(), 7);
        let error = sequence("events.sequence", -1).unwrap_err();
        assert_eq!(
            error.to_string(),
            "corrupt row: events.sequence is -1, not a sequence"
        );
    }
}
