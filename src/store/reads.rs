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
    CreationRecord, FeedEvent, FeedRange, GameLog, GameRecord, GameTag, ListFilter, ListOrder,
    LoadFrom, RequestRecord, Snapshot, StoreError, StoredEvent, TokenHash, Wake, clamp,
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
    lifecycle: Option<i32>,
    created_payload: Option<Vec<u8>>,
}

/// An `events` row whose lifecycle is to compute.
#[derive(FromRow)]
pub(super) struct MarkRow {
    sequence: i64,
    payload: Vec<u8>,
    lifecycle: Option<i32>,
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

/// A game whose tags are not stored yet, with its first event's payload.
#[derive(FromRow)]
pub(super) struct UntaggedRow {
    pk: i64,
    game_id: String,
    payload: Vec<u8>,
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

/// The SQL of [`Reads::games`] and its values: `texts` bound first, then
/// `numbers`, in the order of their `$n`.
#[derive(Debug)]
struct ListQuery {
    sql: String,
    texts: Vec<String>,
    numbers: Vec<i64>,
}

impl ListQuery {
    /// Up to `limit` games that meet `filter`, in `order`, after the game
    /// whose cursor is `cursor` (0: from the first in that order).
    ///
    /// Each condition is served from an index: with a tag, the scan runs
    /// along the first tag's rows of `game_tags` (whose key is the tag,
    /// then the cursor) and each other tag is one key lookup; a status
    /// alone runs along `games_status` (status, then the cursor); a time
    /// bound reads the games it lets through off `games_created` or
    /// `games_updated` (`pk IN (...)`, which both backends read in key
    /// order); otherwise the scan runs along `games` by cursor.
    fn new(cursor: i64, order: ListOrder, filter: &ListFilter, limit: u32) -> Self {
        let newest_first = matches!(order, ListOrder::NewestFirst);
        // Cursor 0 starts from the first in the order: newest first, the
        // highest.
        let cursor = if newest_first && cursor == 0 {
            i64::MAX
        } else {
            cursor
        };
        let texts: Vec<String> = filter.tags.iter().map(GameTag::encode).collect();
        let mut numbers = Vec::new();
        let mut n = 0;
        let mut next = || {
            n += 1;
            format!("${n}")
        };
        // A game's row and its first event (its rules and seats).
        let mut sql = String::from(
            "SELECT g.pk, g.game_id, g.created_at_ms, g.last_sequence, g.status, e.payload, \
             g.updated_at_ms AS last_event_at_ms FROM ",
        );
        let key = if texts.is_empty() {
            sql.push_str("games g");
            "g.pk"
        } else {
            let at = next();
            sql.push_str(&format!(
                "game_tags t JOIN games g ON g.pk = t.game_pk AND t.tag = {at}"
            ));
            "t.game_pk"
        };
        sql.push_str(" JOIN events e ON e.game_id = g.game_id AND e.sequence = 1");
        for _ in texts.iter().skip(1) {
            let at = next();
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM game_tags o WHERE o.tag = {at} AND o.game_pk = g.pk)"
            ));
        }
        let comparison = if newest_first { "<" } else { ">" };
        sql.push_str(&format!(" WHERE {key} {comparison} {}", next()));
        numbers.push(cursor);
        if let Some(status) = filter.status {
            sql.push_str(&format!(" AND g.status = {}", next()));
            numbers.push(i64::from(status));
        }
        for (column, from) in [
            ("created_at_ms", filter.created_from_ms),
            ("updated_at_ms", filter.updated_from_ms),
        ] {
            if let Some(from) = from {
                sql.push_str(&format!(
                    " AND g.pk IN (SELECT pk FROM games WHERE {column} >= {})",
                    next()
                ));
                numbers.push(from);
            }
        }
        let order = if newest_first { " DESC" } else { "" };
        sql.push_str(&format!(" ORDER BY {key}{order} LIMIT {}", next()));
        numbers.push(i64::from(limit));
        ListQuery {
            sql,
            texts,
            numbers,
        }
    }
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
    for<'q> bool: Encode<'q, DB> + Type<DB>,
    EventRow: for<'r> FromRow<'r, DB::Row>,
    RequestRow: for<'r> FromRow<'r, DB::Row>,
    GameRow: for<'r> FromRow<'r, DB::Row>,
    CreationRow: for<'r> FromRow<'r, DB::Row>,
    LoadRow: for<'r> FromRow<'r, DB::Row>,
    WakeRow: for<'r> FromRow<'r, DB::Row>,
    GameIdRow: for<'r> FromRow<'r, DB::Row>,
    UntaggedRow: for<'r> FromRow<'r, DB::Row>,
    MarkRow: for<'r> FromRow<'r, DB::Row>,
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
    /// the names the API accepts (`crate::proto::EVENT_TYPES`). A
    /// lifecycle-only read runs along `events_lifecycle` (the events that
    /// have one); each tag is one key lookup per event read.
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
        // The game's GameCreated (its seats) comes with each lifecycle
        // event.
        let mut sql = String::from(
            "SELECT e.position, e.game_id, e.sequence, e.event_type, e.payload, e.lifecycle, \
             c.payload AS created_payload FROM events e \
             LEFT JOIN events c ON e.lifecycle > 0 AND c.game_id = e.game_id AND c.sequence = 1 \
             WHERE e.position > $1 AND e.position <= $2 \
             AND ($3 = '' OR $3 LIKE '%,' || e.event_type || ',%')",
        );
        if range.lifecycle_only {
            sql.push_str(" AND e.lifecycle > 0");
        }
        for n in 0..range.tags.len() {
            sql.push_str(&format!(
                " AND EXISTS (SELECT 1 FROM games g JOIN game_tags t ON t.game_pk = g.pk \
                 WHERE g.game_id = e.game_id AND t.tag = ${})",
                n + 5
            ));
        }
        sql.push_str(" ORDER BY e.position LIMIT $4");
        let mut query = sqlx::query_as::<DB, FeedRow>(&sql)
            .bind(clamp(range.after))
            .bind(clamp(range.upto))
            .bind(types)
            .bind(i64::from(range.limit));
        for tag in range.tags {
            query = query.bind(tag.encode());
        }
        let rows = query.fetch_all(executor).await?;
        rows.into_iter()
            .map(|row| {
                Ok(FeedEvent {
                    position: sequence("events.position", row.position)?,
                    game_id: row.game_id,
                    sequence: sequence("events.sequence", row.sequence)?,
                    event_type: row.event_type,
                    payload: row.payload.into(),
                    lifecycle: row.lifecycle.unwrap_or_default(),
                    created_payload: row.created_payload.map(Into::into),
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

    /// Marks what each event stored before lifecycles were (see the
    /// migration `20261208000002_event_lifecycle`) does to its game's life,
    /// game by game, each game in one transaction on `conn`, reading its
    /// events in sequence order with
    /// [`crate::proto::event_format::lifecycle`]. Run after the migrations,
    /// before the store serves; a fill cut short is finished by the next,
    /// and nodes opening one database at once write the same values. Says
    /// in the log how many games it marked, if any.
    ///
    /// # Errors
    /// Store failures.
    pub(super) async fn fill_lifecycles(conn: &mut DB::Connection) -> Result<(), StoreError>
    where
        for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
        DB::Connection: sqlx::Connection<Database = DB>,
        for<'q> i32: Encode<'q, DB> + Type<DB>,
    {
        let games: Vec<GameIdRow> =
            sqlx::query_as("SELECT DISTINCT game_id FROM events WHERE lifecycle IS NULL")
                .fetch_all(&mut *conn)
                .await?;
        for game in &games {
            let mut tx = sqlx::Connection::begin(&mut *conn).await?;
            let events: Vec<MarkRow> = sqlx::query_as(
                "SELECT sequence, payload, lifecycle FROM events WHERE game_id = $1 \
                 ORDER BY sequence",
            )
            .bind(game.game_id.clone())
            .fetch_all(&mut *tx)
            .await?;
            let mut over = false;
            for event in events {
                // From an event that does not decode on, the game's events
                // stay unmarked (`plylog verify` names the game); the
                // server starts all the same.
                let decoded =
                    <crate::proto::GameEvent as prost::Message>::decode(event.payload.as_slice());
                let wire = match decoded {
                    Ok(wire) => wire,
                    Err(e) => {
                        tracing::warn!(
                            game_id = %game.game_id,
                            sequence = event.sequence,
                            error = %e,
                            "an event does not decode: it and the game's later events keep no lifecycle"
                        );
                        break;
                    }
                };
                let lifecycle;
                (lifecycle, over) = crate::proto::event_format::lifecycle(&wire, over);
                if event.lifecycle.is_none() {
                    sqlx::query(
                        "UPDATE events SET lifecycle = $1 WHERE game_id = $2 AND sequence = $3",
                    )
                    .bind(lifecycle as i32)
                    .bind(game.game_id.clone())
                    .bind(event.sequence)
                    .execute(&mut *tx)
                    .await?;
                }
            }
            tx.commit().await?;
        }
        if !games.is_empty() {
            tracing::info!(
                games_read = games.len(),
                "lifecycles marked for events stored before them (games whose events do not all decode are named above)"
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

    /// Up to `limit` games that meet `filter`, in `order`, after the game
    /// whose cursor is `cursor` (0: from the first in that order), each
    /// condition served from an index (see [`ListQuery::new`]).
    ///
    /// # Errors
    /// Store failures; [`StoreError::Corrupt`] for a negative sequence.
    pub(super) async fn games<'c, E>(
        executor: E,
        cursor: i64,
        order: ListOrder,
        filter: &ListFilter,
        limit: u32,
    ) -> Result<Vec<GameRecord>, StoreError>
    where
        E: Executor<'c, Database = DB>,
    {
        let listing = ListQuery::new(cursor, order, filter, limit);
        let mut query = sqlx::query_as::<DB, GameRow>(&listing.sql);
        for text in listing.texts {
            query = query.bind(text);
        }
        for number in listing.numbers {
            query = query.bind(number);
        }
        let rows = query.fetch_all(executor).await?;
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

    /// Writes the tags of the games stored before tags were (see the
    /// migration `20261208000001_game_listing`), a page of games per
    /// transaction on `conn`, each game's tags read from its GameCreated
    /// event ([`crate::proto::event_format::created_tags`]). Run after the
    /// migrations, before the store serves; a fill cut short is finished
    /// by the next. Nodes opening one database at once may both tag a
    /// game: they write the same rows. Says in the log how many games it
    /// tagged, if any.
    ///
    /// # Errors
    /// Store failures.
    pub(super) async fn fill_tags(conn: &mut DB::Connection) -> Result<(), StoreError>
    where
        for<'c> &'c mut DB::Connection: Executor<'c, Database = DB>,
        DB::Connection: sqlx::Connection<Database = DB>,
    {
        /// Games tagged per transaction.
        const PAGE: i64 = 500;
        let mut tagged = 0;
        let mut after = 0;
        loop {
            let games: Vec<UntaggedRow> = sqlx::query_as(
                "SELECT g.pk, g.game_id, e.payload FROM games g \
                 JOIN events e ON e.game_id = g.game_id AND e.sequence = 1 \
                 WHERE NOT g.tagged AND g.pk > $1 ORDER BY g.pk LIMIT $2",
            )
            .bind(after)
            .bind(PAGE)
            .fetch_all(&mut *conn)
            .await?;
            let Some(last) = games.last() else {
                break;
            };
            after = last.pk;
            let mut tx = sqlx::Connection::begin(&mut *conn).await?;
            for game in &games {
                // A game whose creation does not read stays untagged (and
                // unlisted by a filter): `plylog verify` names it, and the
                // server starts all the same.
                let tags = match crate::proto::event_format::created_tags(&game.payload) {
                    Ok(tags) => tags,
                    Err(why) => {
                        tracing::warn!(
                            game_id = %game.game_id,
                            %why,
                            "a game's creation does not read: not tagged"
                        );
                        continue;
                    }
                };
                tagged += 1;
                for tag in tags {
                    sqlx::query(
                        "INSERT INTO game_tags (tag, game_pk) VALUES ($1, $2) \
                         ON CONFLICT DO NOTHING",
                    )
                    .bind(tag.encode())
                    .bind(game.pk)
                    .execute(&mut *tx)
                    .await?;
                }
                sqlx::query("UPDATE games SET tagged = $1 WHERE pk = $2")
                    .bind(true)
                    .bind(game.pk)
                    .execute(&mut *tx)
                    .await?;
            }
            tx.commit().await?;
        }
        if tagged > 0 {
            tracing::info!(
                games = tagged,
                "listing tags written for games stored before them"
            );
        }
        Ok(())
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

    /// SQLite's plan for `filter`, a line per step.
    async fn plan(
        conn: &mut sqlx::SqliteConnection,
        order: ListOrder,
        filter: &ListFilter,
    ) -> Vec<String> {
        let listing = ListQuery::new(0, order, filter, 50);
        let explain = format!("EXPLAIN QUERY PLAN {}", listing.sql);
        let mut query = sqlx::query_as::<_, (i64, i64, i64, String)>(&explain);
        for text in listing.texts {
            query = query.bind(text);
        }
        for number in listing.numbers {
            query = query.bind(number);
        }
        let rows = query.fetch_all(&mut *conn).await.unwrap();
        rows.into_iter().map(|(_, _, _, detail)| detail).collect()
    }

    #[tokio::test]
    async fn every_list_filter_is_served_from_an_index_on_sqlite() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("plans.db");
        let store = SqliteStore::open(&SqliteOptions::new(path.display().to_string()))
            .await
            .unwrap();
        let mut conn = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        let kind = GameTag::Kind("mnk".into());
        let player = GameTag::Player("alice".into());
        let cases = [
            (ListFilter::default(), "USING INTEGER PRIMARY KEY (rowid"),
            (
                ListFilter {
                    status: Some(1),
                    ..ListFilter::default()
                },
                "USING INDEX games_status (status=? AND pk",
            ),
            (
                ListFilter {
                    tags: vec![kind.clone(), player],
                    status: Some(2),
                    ..ListFilter::default()
                },
                "USING PRIMARY KEY (tag=? AND game_pk",
            ),
            (
                ListFilter {
                    created_from_ms: Some(5),
                    ..ListFilter::default()
                },
                "INDEX games_created (created_at_ms>?)",
            ),
            (
                ListFilter {
                    updated_from_ms: Some(5),
                    tags: vec![kind],
                    ..ListFilter::default()
                },
                "INDEX games_updated (updated_at_ms>?)",
            ),
        ];
        for (filter, expected) in cases {
            for order in [ListOrder::OldestFirst, ListOrder::NewestFirst] {
                let steps = plan(&mut conn, order, &filter).await;
                // No step reads a whole table, nor sorts what it read.
                assert!(
                    steps
                        .iter()
                        .all(|s| !s.starts_with("SCAN") && !s.contains("TEMP B-TREE")),
                    "{filter:?} {order:?}: {steps:#?}"
                );
                assert!(
                    steps.iter().any(|s| s.contains(expected)),
                    "{filter:?} {order:?}: {steps:#?}"
                );
            }
        }
        store.close().await;
    }

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
                    lifecycle: 1,
                },
                request: None,
                status: 1,
                seat_token_hashes: Vec::new(),
                wake: Default::default(),
                tags: Vec::new(),
            })
            .await
            .unwrap();
        let every = ListFilter::default();
        let listed = store
            .list(&[0], ListOrder::OldestFirst, &every, 10)
            .await
            .unwrap();
        assert_eq!((listed.len(), listed[0].last_sequence), (1, 1));
        let mut raw = sqlx::SqliteConnection::connect(&format!("sqlite://{}", path.display()))
            .await
            .unwrap();
        sqlx::query("UPDATE games SET last_sequence = -3")
            .execute(&mut raw)
            .await
            .unwrap();
        let error = store
            .list(&[0], ListOrder::OldestFirst, &every, 10)
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
