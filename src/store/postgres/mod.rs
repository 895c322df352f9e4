//! The PostgreSQL event store, for several plylog nodes on one database.
//!
//! New games and appends are group-committed: the node's writer task takes
//! every queued write (up to 512) and commits them as one statement
//! ([`writer::WRITE_GROUP`]), in one round trip. The statement inserts the new games
//! whose ids are free, and advances each appended game's row only from its
//! expected sequence (the row lock decides a race between nodes: the
//! loser's row is not updated, reported as [`StoreError::Conflict`]) and
//! writes the events, requests and seat token hashes of the rows it moved.
//! Each append also carries its slot lease's epoch, checked in the same
//! statement (see `crate::registry::ownership`): only the node that holds a
//! game's slot writes the game, so no node needs telling of another's
//! writes (the nodes once woke each other with LISTEN/NOTIFY, which
//! PostgreSQL serialises behind one instance-wide lock at commit).
//!
//! # Map
//! - this file: [`PostgresStore`], its pool and migrations, and the
//!   [`EventStore`] implementation (reads go through `super::reads`).
//! - `writer`: the writer task and its group-commit statement.
//! - `presence`: the seat presence rows of every node.
//! - `leases`: the slot leases (see `crate::registry::ownership`).
//! - `sql/`: the statements longer than a line, as `.sql` files loaded with
//!   `include_str!` by the file that runs them.

mod leases;
mod presence;
mod writer;

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use sqlx::{Connection, PgConnection, PgPool, Postgres};
use tokio::sync::{mpsc, oneshot, watch};

use self::writer::{WRITE_QUEUE, Write, WriteJob, run_writer, write_all};
use super::reads::{Events, Reads, Requests};
use super::{
    Append, CreationRecord, DueWake, EventStore, FeedEvent, FeedRange, GameLog, GameRecord,
    LeaseRound, ListFilter, ListOrder, LoadFrom, LogTail, Migration, NewGame, PresenceRecord,
    RestoredGame, SharedPresence, SlotHolder, Snapshot, StoreError, StoredEvent, Wake, classify,
};

/// Schema version stamped on every event row.
const EVENT_VERSION: i32 = 1;

/// Claims the due wakes (`$1` now, `$2` the lease's end, `$3` the most
/// games, `$4` only the games of these slots, or NULL for every game),
/// skipping rows another node is claiming.
const CLAIM_WAKES: &str = include_str!("sql/claim_wakes.sql");

/// The earliest wake of the games of slots `$1`.
const NEXT_WAKE_OF_SLOTS: &str = "SELECT min(w.wake_at_ms) FROM unnest($1::integer[]) s(slot), \
     LATERAL (SELECT wake_at_ms FROM games WHERE games.slot = s.slot \
     AND wake_at_ms IS NOT NULL ORDER BY wake_at_ms LIMIT 1) w";

/// How long a connection may sit in the pool and still be handed out
/// without a ping first.
const PING_AFTER_IDLE: Duration = Duration::from_millis(500);

/// An [`EventStore`] on a PostgreSQL database, shared by any number of nodes.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    /// This node's name in the presence rows it writes (random).
    node: Arc<str>,
    /// The writer task's queue of new games and appends.
    writes: mpsc::Sender<WriteJob>,
    /// Counts the writer's committed groups (see
    /// [`EventStore::feed_signal`]).
    feed: watch::Sender<u64>,
}

/// The migrations under `migrations/postgres/`, built into the binary.
static MIGRATOR: Migrator = sqlx::migrate!("migrations/postgres");

impl PostgresStore {
    /// Connects to `url` (`postgres://` or `postgresql://`; connection
    /// parameters such as `options[search_path]=<schema>` or
    /// `application_name` are honoured) and runs the migrations in
    /// `migrations/postgres/`.
    ///
    /// # Errors
    /// A URL that does not parse, a database that cannot be reached, a
    /// failed migration.
    pub async fn open(url: &str, max_connections: u32) -> Result<Self, StoreError> {
        let pool = connect(url, max_connections, false).await?;
        MIGRATOR.run(&pool).await?;
        let mut conn = pool.acquire().await?;
        Reads::<Postgres>::fill_chains(&mut conn).await?;
        Reads::<Postgres>::fill_tags(&mut conn).await?;
        Reads::<Postgres>::fill_lifecycles(&mut conn).await?;
        drop(conn);
        Ok(PostgresStore::with_writer(pool))
    }

    /// Connects to `url` for reading only, after checking that the database
    /// has every migration: every session's transactions are read-only, so
    /// writes fail in the database (and [`EventStore::restore`] and the
    /// other writes with a database error).
    ///
    /// # Errors
    /// As for [`PostgresStore::open`]; [`StoreError::NotMigrated`].
    pub async fn open_read_only(url: &str, max_connections: u32) -> Result<Self, StoreError> {
        let pool = connect(url, max_connections, true).await?;
        let mut conn = pool.acquire().await?;
        let has_table = has_migrations_table(&mut conn).await?;
        super::check_migrated(&mut *conn, &MIGRATOR, has_table).await?;
        drop(conn);
        Ok(PostgresStore::with_writer(pool))
    }

    /// Records this database as cell `cell` of `cells` when no server has
    /// said yet (not when `read_only`), and checks that it is.
    ///
    /// # Errors
    /// [`StoreError::WrongCell`] when the database is another cell, or a
    /// cell of another number; database errors.
    pub(crate) async fn take_cell(
        &self,
        cell: usize,
        cells: usize,
        read_only: bool,
    ) -> Result<(), StoreError> {
        if !read_only {
            sqlx::query("UPDATE cluster_config SET cells = $1, cell = $2 WHERE cells IS NULL")
                .bind(cells as i32)
                .bind(cell as i32)
                .execute(&self.pool)
                .await?;
        }
        let (was_cells, was_cell): (Option<i32>, Option<i32>) =
            sqlx::query_as("SELECT cells, cell FROM cluster_config")
                .fetch_one(&self.pool)
                .await?;
        match (was_cells, was_cell) {
            (None, _) => Ok(()),
            (Some(n), Some(c)) if n as usize == cells && c as usize == cell => Ok(()),
            (n, c) => Err(StoreError::WrongCell(format!(
                "this database is cell {} of {} (--database-url number {} of {}), \
                 but was given as number {} of {}: a game's cell follows from its slot, \
                 so the databases must be given in the same order and number as when first served",
                c.unwrap_or(0),
                n.unwrap_or(1),
                c.unwrap_or(0) + 1,
                n.unwrap_or(1),
                cell + 1,
                cells
            ))),
        }
    }

    /// The store on `pool`, with its writer task started.
    fn with_writer(pool: PgPool) -> Self {
        let (writes, queue) = mpsc::channel(WRITE_QUEUE);
        let node: Arc<str> = uuid::Uuid::new_v4().simple().to_string().into();
        let feed = watch::Sender::new(0);
        tokio::spawn(run_writer(pool.clone(), queue, feed.clone()));
        PostgresStore {
            pool,
            node,
            writes,
            feed,
        }
    }

    /// Applies the migrations the database lacks and says which they were
    /// (none when it was up to date).
    ///
    /// # Errors
    /// A URL that does not parse, a database that cannot be reached, a
    /// failed migration.
    pub async fn migrate(url: &str) -> Result<Vec<Migration>, StoreError> {
        let pool = connect(url, 2, false).await?;
        let mut conn = pool.acquire().await?;
        let has_table = has_migrations_table(&mut conn).await?;
        let missing = super::pending(&mut *conn, &MIGRATOR, has_table).await?;
        MIGRATOR.run(&mut *conn).await?;
        Reads::<Postgres>::fill_chains(&mut conn).await?;
        Reads::<Postgres>::fill_tags(&mut conn).await?;
        Reads::<Postgres>::fill_lifecycles(&mut conn).await?;
        drop(conn);
        pool.close().await;
        Ok(missing)
    }

    /// Queues `write` for the writer task and waits for its result (after
    /// the commit).
    async fn write(&self, write: Write) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        self.writes
            .send(WriteJob { write, reply })
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }
}

/// A pool on `url` whose sessions wait for every commit to be flushed
/// (whatever the server's default), plan no sequential scan where an index
/// serves, and, when `read_only`, start only read-only transactions.
async fn connect(url: &str, max_connections: u32, read_only: bool) -> Result<PgPool, StoreError> {
    // Every statement here looks rows up by a key. While a table is small
    // by its statistics (a new database, which fills faster than
    // autovacuum analyses it), the planner would rather scan it whole and
    // hash-join: a group append then read every game, comparing ids, and
    // PostgreSQL spent about 240 µs of CPU per move instead of 160 (issue
    // 15's profile of the G=64 workload). Sequential scans are left for
    // statements that have no index to use.
    //
    // With sequential scans priced out, a statement that must scan (the
    // lease round reads every slot) looks a billion times dearer than it
    // is, and PostgreSQL compiled it with JIT first: 350 ms a lease round
    // instead of a few. No statement here is long enough for JIT to pay.
    let mut settings = vec![
        ("synchronous_commit", "on"),
        ("enable_seqscan", "off"),
        ("jit", "off"),
    ];
    if read_only {
        settings.push(("default_transaction_read_only", "on"));
    }
    let options = PgConnectOptions::from_str(url)?.options(settings);
    Ok(PgPoolOptions::new()
        .max_connections(max_connections.max(2))
        .acquire_timeout(Duration::from_secs(5))
        // sqlx pings every connection it hands out by default: a round trip,
        // and a wake-up of its backend, before each statement (each group
        // commit included). A connection back in the pool for less than
        // PING_AFTER_IDLE is taken as alive, as HikariCP's
        // aliveBypassWindowMs does (500 ms); one that fails anyway fails its
        // statement, as a connection lost mid-statement does.
        .test_before_acquire(false)
        .before_acquire(|conn, meta| {
            Box::pin(async move {
                if meta.idle_for >= PING_AFTER_IDLE {
                    conn.ping().await?;
                }
                Ok(true)
            })
        })
        .connect_with(options)
        .await?)
}

/// Whether the schema in the search path has sqlx's migrations table.
async fn has_migrations_table(conn: &mut PgConnection) -> Result<bool, StoreError> {
    Ok(
        sqlx::query_scalar("SELECT to_regclass('_sqlx_migrations') IS NOT NULL")
            .fetch_one(conn)
            .await?,
    )
}

#[async_trait]
impl EventStore for PostgresStore {
    async fn create(&self, game: NewGame) -> Result<(), StoreError> {
        self.write(Write::Create(game)).await
    }

    /// One transaction of one `WRITE_GROUP` statement for every game
    /// (not through the writer task: its groups are written one write at a
    /// time when one fails), rolled back unless it created them all. The
    /// games go in in order of request id, then game id: two calls with the
    /// same requests then wait on each other's rows in one order, never in
    /// a cycle (a deadlock).
    async fn create_all(&self, games: Vec<NewGame>) -> Result<(), StoreError> {
        let taken = |at| StoreError::GameExistsAt {
            at,
            written: Vec::new(),
        };
        // The statement would keep the first of two games with one id and
        // then fail on its second GameCreated.
        let mut ids = std::collections::HashSet::new();
        if let Some(at) = games.iter().position(|g| !ids.insert(g.game_id.as_str())) {
            return Err(taken(at));
        }
        let mut creates: Vec<&NewGame> = games.iter().collect();
        creates.sort_by(|a, b| {
            let key = |g: &NewGame| {
                (
                    g.request.as_ref().map(|(id, _)| id.clone()),
                    g.game_id.clone(),
                )
            };
            key(a).cmp(&key(b))
        });
        let mut tx = self.pool.begin().await?;
        let wrote = write_all(&mut *tx, &creates, &[])
            .await
            .map_err(|e| classify(e, StoreError::GameExists))?;
        if let Some(at) = games
            .iter()
            .position(|g| !wrote.created.contains(&g.game_id))
        {
            // Dropping the transaction rolls it back.
            return Err(taken(at));
        }
        tx.commit().await?;
        self.feed.send_modify(|groups| *groups += 1);
        Ok(())
    }

    async fn restore(&self, game: RestoredGame) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        let created = write_all(&mut *tx, &[&game.game], &[])
            .await
            .map_err(|e| classify(e, StoreError::GameExists))?;
        if created.created.is_empty() {
            return Err(StoreError::GameExists);
        }
        if !game.events.is_empty() {
            let rest = Append {
                game_id: game.game.game_id.clone(),
                expected: 1,
                events: game.events,
                request: None,
                status: game.game.status,
                seat_token_hashes: None,
                wake: game.game.wake,
                // An import writes a whole game at once, under no lease.
                fence: None,
            };
            let wrote = write_all(&mut *tx, &[], &[&rest])
                .await
                .map_err(|e| classify(e, StoreError::Conflict))?;
            if wrote.moved.is_empty() {
                return Err(StoreError::Conflict);
            }
        }
        tx.commit().await?;
        Ok(())
    }

    async fn append(&self, append: Append) -> Result<(), StoreError> {
        self.write(Write::Append(append)).await
    }

    async fn set_wake(&self, game_id: &str, sequence: u64, wake: Wake) -> Result<(), StoreError> {
        sqlx::query(
            "UPDATE games SET wake_at_ms = $3, absent_since_ms = $4 \
             WHERE game_id = $1 AND last_sequence = $2",
        )
        .bind(game_id)
        .bind(super::clamp(sequence))
        .bind(wake.at_ms)
        .bind(wake.absent_since_ms)
        .execute(&self.pool)
        .await?;
        Ok(())
    }

    async fn claim_wakes(
        &self,
        now_ms: i64,
        lease_ms: i64,
        limit: u32,
        slots: Option<&[i32]>,
    ) -> Result<Vec<DueWake>, StoreError> {
        // The rows another node is claiming right now are skipped, not
        // waited for: each due game goes to one node.
        let rows: Vec<(String, i64)> = sqlx::query_as(CLAIM_WAKES)
            .bind(now_ms)
            .bind(now_ms.saturating_add(lease_ms))
            .bind(i64::from(limit))
            .bind(slots)
            .fetch_all(&self.pool)
            .await?;
        Ok(rows
            .into_iter()
            .map(|(game_id, at_ms)| DueWake { game_id, at_ms })
            .collect())
    }

    async fn next_wake(&self, slots: Option<&[i32]>) -> Result<Option<i64>, StoreError> {
        match slots {
            None => Reads::next_wake(&self.pool).await,
            // One probe of the slot's wake index per slot held.
            Some(slots) => Ok(sqlx::query_scalar(NEXT_WAKE_OF_SLOTS)
                .bind(slots)
                .fetch_one(&self.pool)
                .await?),
        }
    }

    async fn slot_count(&self) -> Result<Option<u32>, StoreError> {
        leases::slot_count(&self.pool).await.map(Some)
    }

    async fn lease_round(&self, round: LeaseRound) -> Result<Vec<SlotHolder>, StoreError> {
        leases::lease_round(&self.pool, &round).await
    }

    async fn release_leases(
        &self,
        node: &str,
        slots: &[(i32, i64)],
        leaving: bool,
    ) -> Result<(), StoreError> {
        leases::release(&self.pool, node, slots, leaving).await
    }

    async fn load(&self, game_id: &str, from: LoadFrom) -> Result<Option<GameLog>, StoreError> {
        // One snapshot for the snapshot row, events, requests and hashes,
        // set in the BEGIN itself (a SET TRANSACTION after it was one more
        // round trip on every cold load).
        let mut tx = self
            .pool
            .begin_with("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .await?;
        let log = Reads::<sqlx::Postgres>::game(&mut tx, game_id, from).await?;
        // Read only, so nothing to commit: dropped, the transaction is
        // rolled back when the pool takes its connection back, off this
        // call's path (a COMMIT was a round trip the caller waited for).
        drop(tx);
        Ok(log)
    }

    async fn snapshot(&self, game_id: &str) -> Result<Option<Snapshot>, StoreError> {
        Reads::snapshot(&self.pool, game_id).await
    }

    async fn save_snapshot(&self, snapshot: Snapshot) -> Result<(), StoreError> {
        sqlx::query(super::UPSERT_SNAPSHOT)
            .bind(snapshot.game_id)
            .bind(super::clamp(snapshot.sequence))
            .bind(snapshot.payload)
            .execute(&self.pool)
            .await?;
        Ok(())
    }

    async fn read(
        &self,
        game_id: &str,
        from: u64,
        to: u64,
        limit: u32,
    ) -> Result<Vec<StoredEvent>, StoreError> {
        Reads::events(&self.pool, game_id, Events::Range { from, to, limit }).await
    }

    async fn read_since(
        &self,
        game_id: &str,
        after: u64,
        limit: u32,
    ) -> Result<LogTail, StoreError> {
        // Separate statements, each on its own snapshot: the requests and
        // hashes are read after the events, so they include every commit the
        // events read saw (a request row commits with its events).
        let events = Reads::events(&self.pool, game_id, Events::After { after, limit }).await?;
        let Some(last) = events.last().map(|e| e.sequence) else {
            return Ok(LogTail::default());
        };
        let requests =
            Reads::requests(&self.pool, game_id, Requests::Overlapping { after, last }).await?;
        let (seat_token_hashes, wake) = Reads::hashes_and_wake(&self.pool, game_id).await?;
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
        Reads::games(&self.pool, cursor, order, filter, limit).await
    }

    // One cell: `cell` is 0.
    async fn feed_head(&self, _cell: usize) -> Result<u64, StoreError> {
        Reads::feed_head(&self.pool).await
    }

    async fn read_feed(
        &self,
        _cell: usize,
        range: FeedRange<'_>,
    ) -> Result<Vec<FeedEvent>, StoreError> {
        Reads::feed(&self.pool, range).await
    }

    fn feed_signal(&self, _cell: usize) -> watch::Receiver<u64> {
        self.feed.subscribe()
    }

    async fn find_creation(
        &self,
        request_id: &str,
        _game_id: Option<&str>,
    ) -> Result<Option<CreationRecord>, StoreError> {
        Reads::creation(&self.pool, request_id).await
    }

    async fn clock_ms(&self) -> Result<Option<i64>, StoreError> {
        // clock_timestamp(), not now(): the time of the reading, not of the
        // transaction's start.
        let ms: i64 =
            sqlx::query_scalar("SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint")
                .fetch_one(&self.pool)
                .await?;
        Ok(Some(ms))
    }

    fn shared(&self) -> bool {
        true
    }

    async fn record_presence(&self, record: PresenceRecord) -> Result<(), StoreError> {
        self.record_presence_row(record).await
    }

    async fn presence(
        &self,
        game_id: &str,
        seat: u8,
    ) -> Result<Option<SharedPresence>, StoreError> {
        self.shared_presence(game_id, seat).await
    }

    async fn ping(&self) -> Result<(), StoreError> {
        sqlx::query("SELECT 1").execute(&self.pool).await?;
        Ok(())
    }

    async fn durability(&self) -> Result<Vec<(String, String)>, StoreError> {
        let mut settings = Vec::new();
        let mut conn = self.pool.acquire().await?;
        for name in ["synchronous_commit", "fsync", "full_page_writes"] {
            let value: String = sqlx::query_scalar(&format!("SHOW {name}"))
                .fetch_one(&mut *conn)
                .await?;
            settings.push((name.to_owned(), value));
        }
        Ok(settings)
    }

    async fn close(&self) {
        self.pool.close().await;
    }
}
