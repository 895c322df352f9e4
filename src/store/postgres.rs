//! The PostgreSQL event store, for several plylog nodes on one database.
//!
//! New games and appends are group-committed: the node's writer task takes
//! every queued write (up to 512) and commits them as one statement
//! ([`WRITE_GROUP`]), in one round trip. The statement inserts the new games
//! whose ids are free, and advances each appended game's row only from its
//! expected sequence (the row lock decides a race between nodes: the
//! loser's row is not updated, reported as [`StoreError::Conflict`]) and
//! writes the events, requests and seat token hashes of the rows it moved.
//! It notifies channel `plylog_events` of the games it wrote, 50 to a
//! notification ([`notice_changes`] gives the payload), delivered only when
//! it commits. PostgreSQL serialises the commits of transactions that
//! notified behind one lock, so a node takes it once per group, not once
//! per move or per new game. Notifications are a wake-up call, not the
//! data: another node reads the rows from the table, and catches up
//! periodically in case a notification was lost while its listening
//! connection was down.

use std::collections::HashSet;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use sqlx::{Connection, PgConnection, PgPool, Postgres, Transaction};
use tokio::sync::{mpsc, oneshot};

use super::reads::{self, Events, Reads, Requests};
use super::{
    Append, Change, CreationRecord, DueWake, EventStore, GameLog, GameRecord, ListOrder, LoadFrom,
    LogTail, Migration, NewEvent, NewGame, PRESENCE_TTL, PresenceRecord, RestoredGame,
    SharedPresence, Snapshot, StoreError, StoredEvent, Wake, classify,
};

/// The notification channel nodes wake each other on.
const CHANNEL: &str = "plylog_events";
/// Most games one notification names: with ids of up to
/// [`crate::api::MAX_ID_CHARS`] characters and 20-digit sequences, 50 stay
/// under PostgreSQL's 8,000-byte payload.
const GAMES_PER_NOTICE: i64 = 50;
/// Schema version stamped on every event row.
const EVENT_VERSION: i32 = 1;

/// How long a connection may sit in the pool and still be handed out
/// without a ping first.
const PING_AFTER_IDLE: Duration = Duration::from_millis(500);

/// Most writes one statement commits together.
const MAX_GROUP: usize = 512;
/// Writes waiting for the writer before callers wait for room.
const WRITE_QUEUE: usize = 4096;

/// A group of writes as one statement, committed on its own (no explicit
/// transaction: one round trip): new games and appends to games that exist.
///
/// Each new game (`$18..$25`, its wake `$30`, `$31` and its first chain value `$33`, one array element
/// per game) gets its row and
/// its GameCreated event (sequence 1); a game whose id or creation request
/// id is taken is skipped (`ON CONFLICT DO NOTHING`) and is not in
/// `created`.
///
/// Each append (`$1..$10` and its wake `$28`, `$29`, one array element per
/// append) moves its game row
/// from `expected` to `next` only where the row still stands at `expected`
/// (a row another writer moved first is not in `moved`: that append
/// conflicts, raising no error). Then the events of the appends that moved
/// (`$12..$16` and the chain values `$32`, one element per event), their requests and seat token
/// hashes are written.
///
/// `pg_notify` tells the other nodes about the games created or moved: one
/// notification on channel `$17` for up to `$27` games, from node `$26`
/// (see [`notice_changes`]). The rows returned are those games, each with whether it
/// was created (else it moved).
const WRITE_GROUP: &str = "WITH c AS ( \
         SELECT * FROM unnest($18::text[], $19::bigint[], $20::integer[], $21::text[], \
             $22::bytea[], $23::bytea[], $24::text[], $25::bytea[], $30::bigint[], \
             $31::bigint[], $33::bytea[]) \
           AS c(game_id, created_at_ms, status, request_id, fingerprint, hashes, event_type, \
             payload, wake_at_ms, absent_since_ms, chain)), \
     created AS ( \
         INSERT INTO games (game_id, created_at_ms, last_sequence, status, create_request_id, \
           create_fingerprint, seat_token_hashes, wake_at_ms, absent_since_ms) \
         SELECT game_id, created_at_ms, 1, status, request_id, fingerprint, hashes, wake_at_ms, \
           absent_since_ms FROM c \
         ON CONFLICT DO NOTHING \
         RETURNING game_id), \
     created_events AS ( \
         INSERT INTO events (game_id, sequence, event_type, event_version, payload, recorded_at_ms, \
           chain) \
         SELECT c.game_id, 1, c.event_type, $11, c.payload, c.created_at_ms, c.chain \
         FROM c JOIN created ON created.game_id = c.game_id), \
     a AS ( \
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::integer[], \
             $5::boolean[], $6::bytea[], $7::text[], $8::bytea[], $9::bigint[], $10::bigint[], \
             $28::bigint[], $29::bigint[]) \
           AS a(game_id, expected, next, status, set_hashes, hashes, request_id, fingerprint, \
             first_sequence, last_sequence, wake_at_ms, absent_since_ms)), \
     moved AS ( \
         UPDATE games g SET last_sequence = a.next, status = a.status, \
           wake_at_ms = a.wake_at_ms, absent_since_ms = a.absent_since_ms, \
           seat_token_hashes = CASE WHEN a.set_hashes THEN a.hashes ELSE g.seat_token_hashes END \
         FROM a WHERE g.game_id = a.game_id AND g.last_sequence = a.expected \
         RETURNING g.game_id, a.next, a.request_id, a.fingerprint, a.first_sequence, \
           a.last_sequence), \
     inserted AS ( \
         INSERT INTO events (game_id, sequence, event_type, event_version, payload, recorded_at_ms, \
           chain) \
         SELECT e.game_id, e.sequence, e.event_type, $11, e.payload, e.recorded_at_ms, e.chain \
         FROM unnest($12::text[], $13::bigint[], $14::text[], $15::bytea[], $16::bigint[], \
             $32::bytea[]) \
           AS e(game_id, sequence, event_type, payload, recorded_at_ms, chain) \
         JOIN moved ON moved.game_id = e.game_id), \
     requested AS ( \
         INSERT INTO requests (game_id, request_id, fingerprint, first_sequence, last_sequence) \
         SELECT game_id, request_id, fingerprint, first_sequence, last_sequence \
         FROM moved WHERE request_id IS NOT NULL), \
     wrote AS ( \
         SELECT game_id, next, false AS created FROM moved \
         UNION ALL SELECT game_id, 1, true FROM created), \
     notified AS ( \
         SELECT count(pg_notify($17, $26 || ';' || changes)) FROM ( \
           SELECT string_agg(game_id || ':' || next, ',') AS changes \
           FROM (SELECT game_id, next, (row_number() OVER ()) / $27 AS chunk FROM wrote) w \
           GROUP BY chunk) c) \
     SELECT wrote.game_id, wrote.created FROM wrote, notified";

/// A write for the writer task.
enum Write {
    /// A new game ([`EventStore::create`]).
    Create(NewGame),
    /// An append to a game that exists ([`EventStore::append`]).
    Append(Append),
}

impl Write {
    fn game_id(&self) -> &str {
        match self {
            Write::Create(game) => &game.game_id,
            Write::Append(append) => &append.game_id,
        }
    }
}

/// A write waiting for the writer task, and where its result goes.
struct WriteJob {
    write: Write,
    reply: oneshot::Sender<Result<(), StoreError>>,
}

/// An [`EventStore`] on a PostgreSQL database, shared by any number of nodes.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    /// This store's tag in the notifications it sends (random), so that
    /// its listener skips them: this node's games are current already; and
    /// this node's name in the presence rows it writes.
    node: Arc<str>,
    /// The writer task's queue of new games and appends.
    writes: mpsc::Sender<WriteJob>,
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
        Reads::<Postgres>::fill_chains(&mut *pool.acquire().await?).await?;
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

    /// The store on `pool`, with its writer task started.
    fn with_writer(pool: PgPool) -> Self {
        let (writes, queue) = mpsc::channel(WRITE_QUEUE);
        let node: Arc<str> = uuid::Uuid::new_v4().simple().to_string().into();
        tokio::spawn(run_writer(pool.clone(), Arc::clone(&node), queue));
        PostgresStore { pool, node, writes }
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

    /// Tells the other nodes, when `tx` commits, that game `game_id` was
    /// created (its log reaches sequence 1).
    async fn notify_created(
        &self,
        tx: &mut Transaction<'_, Postgres>,
        game_id: &str,
    ) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_notify($1, $2 || ';' || $3 || ':1')")
            .bind(CHANNEL)
            .bind(&*self.node)
            .bind(game_id)
            .execute(&mut **tx)
            .await?;
        Ok(())
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
    let mut settings = vec![("synchronous_commit", "on"), ("enable_seqscan", "off")];
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

/// Inserts a game's row and its GameCreated event.
async fn insert_game(tx: &mut Transaction<'_, Postgres>, game: &NewGame) -> Result<(), StoreError> {
    let (request_id, fingerprint) = game.request.clone().unzip();
    sqlx::query(
        "INSERT INTO games (game_id, created_at_ms, last_sequence, status, create_request_id, create_fingerprint, seat_token_hashes, wake_at_ms, absent_since_ms) \
         VALUES ($1, $2, 1, $3, $4, $5, $6, $7, $8)",
    )
    .bind(&game.game_id)
    .bind(game.created.recorded_at_ms)
    .bind(game.status)
    .bind(request_id)
    .bind(fingerprint)
    .bind(super::join_hashes(&game.seat_token_hashes))
    .bind(game.wake.at_ms)
    .bind(game.wake.absent_since_ms)
    .execute(&mut **tx)
    .await
    .map_err(|e| classify(e, StoreError::GameExists))?;
    insert_event(tx, &game.game_id, &game.created)
        .await
        .map_err(|e| classify(e, StoreError::GameExists))
}

/// One statement parameter: `f` of each item, as an array.
fn column<'a, T, U>(items: &'a [T], f: impl Fn(&'a T) -> U) -> Vec<U> {
    items.iter().map(f).collect()
}

/// The games a [`WRITE_GROUP`] wrote: those created, those that moved.
#[derive(Debug, Default)]
struct Wrote {
    created: HashSet<String>,
    moved: HashSet<String>,
}

/// Runs [`WRITE_GROUP`] for `creates` and `appends` on `executor` (the ids
/// of `creates` distinct), notifying as `node`: which games it created (the
/// others existed) and which moved (the others conflicted).
async fn write_all<'c, E>(
    executor: E,
    node: &str,
    creates: &[&NewGame],
    appends: &[&Append],
) -> Result<Wrote, sqlx::Error>
where
    E: sqlx::Executor<'c, Database = Postgres>,
{
    let requests: Vec<_> = appends.iter().map(|a| a.request.as_ref()).collect();
    let events: Vec<(&str, &NewEvent)> = appends
        .iter()
        .flat_map(|a| a.events.iter().map(|e| (a.game_id.as_str(), e)))
        .collect();
    let create_requests: Vec<_> = creates.iter().map(|g| g.request.as_ref()).collect();
    let rows: Vec<(String, bool)> = sqlx::query_as(WRITE_GROUP)
        .bind(column(appends, |a| a.game_id.as_str()))
        .bind(column(appends, |a| a.expected as i64))
        .bind(column(appends, |a| {
            (a.expected + a.events.len() as u64) as i64
        }))
        .bind(column(appends, |a| a.status))
        .bind(column(appends, |a| a.seat_token_hashes.is_some()))
        .bind(column(appends, |a| {
            a.seat_token_hashes.as_deref().and_then(super::join_hashes)
        }))
        .bind(column(&requests, |r| r.map(|r| r.request_id.as_str())))
        .bind(column(&requests, |r| r.map(|r| r.fingerprint.as_slice())))
        .bind(column(&requests, |r| r.map(|r| r.first_sequence as i64)))
        .bind(column(&requests, |r| r.map(|r| r.last_sequence as i64)))
        .bind(EVENT_VERSION)
        .bind(column(&events, |(game, _)| *game))
        .bind(column(&events, |(_, e)| e.sequence as i64))
        .bind(column(&events, |(_, e)| e.event_type))
        .bind(column(&events, |(_, e)| e.payload.as_ref()))
        .bind(column(&events, |(_, e)| e.recorded_at_ms))
        .bind(CHANNEL)
        .bind(column(creates, |g| g.game_id.as_str()))
        .bind(column(creates, |g| g.created.recorded_at_ms))
        .bind(column(creates, |g| g.status))
        .bind(column(&create_requests, |r| r.map(|(id, _)| id.as_str())))
        .bind(column(&create_requests, |r| {
            r.map(|(_, fingerprint)| fingerprint.as_slice())
        }))
        .bind(column(creates, |g| {
            super::join_hashes(&g.seat_token_hashes)
        }))
        .bind(column(creates, |g| g.created.event_type))
        .bind(column(creates, |g| g.created.payload.as_ref()))
        .bind(node)
        .bind(GAMES_PER_NOTICE)
        .bind(column(appends, |a| a.wake.at_ms))
        .bind(column(appends, |a| a.wake.absent_since_ms))
        .bind(column(creates, |g| g.wake.at_ms))
        .bind(column(creates, |g| g.wake.absent_since_ms))
        .bind(column(&events, |(_, e)| &e.chain[..]))
        .bind(column(creates, |g| &g.created.chain[..]))
        .fetch_all(executor)
        .await?;
    let mut wrote = Wrote::default();
    for (game_id, created) in rows {
        if created {
            wrote.created.insert(game_id);
        } else {
            wrote.moved.insert(game_id);
        }
    }
    Ok(wrote)
}

/// The writer loop: one group of queued writes per statement.
///
/// One writer per node: what queues while a group is in flight makes the
/// next group. Four writers taking turns (each group's round trip overlapping
/// the next one's gathering) made groups a quarter the size and cost more
/// than they saved: at G=64 on a 2-core machine shared with PostgreSQL, 4,011
/// to 4,675 moves/s against 5,977 to 6,196 with one writer (0.17–0.20 of
/// the no-op handler against 0.26, measured alternately in one session),
/// since PostgreSQL's CPU per statement is mostly fixed.
async fn run_writer(pool: PgPool, node: Arc<str>, mut queue: mpsc::Receiver<WriteJob>) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while queue.recv_many(&mut group, MAX_GROUP).await > 0 {
        // Two new games with one id in a statement: the insert keeps one,
        // but both would join its row and write event 1 twice, failing the
        // whole group (then retried one write at a time). A repeated id
        // waits for a statement of its own, and finds the id taken.
        while !group.is_empty() {
            let later = take_repeated_creates(&mut group);
            commit_and_answer(&pool, &node, &mut group).await;
            group = later;
        }
    }
}

/// Takes out of `group` each new game whose id an earlier new game of the
/// group has, in order.
fn take_repeated_creates(group: &mut Vec<WriteJob>) -> Vec<WriteJob> {
    let mut ids = HashSet::new();
    let (now, later) = group.drain(..).partition(|job| match &job.write {
        Write::Create(game) => ids.insert(game.game_id.clone()),
        Write::Append(_) => true,
    });
    *group = now;
    later
}

/// Commits `group` as one statement and answers each of its callers,
/// leaving `group` empty.
async fn commit_and_answer(pool: &PgPool, node: &str, group: &mut Vec<WriteJob>) {
    match commit_group(pool, node, group).await {
        Ok(results) => {
            for (job, result) in group.drain(..).zip(results) {
                let _ = job.reply.send(result);
            }
        }
        // Nothing of the group was committed: each write is tried alone,
        // so that one that fails fails only itself.
        Err(GroupError::Before(error)) if group.len() > 1 => {
            tracing::warn!(error = %error, writes = group.len(), "group write failed; writing one by one");
            for job in group.drain(..) {
                let result = match commit_group(pool, node, std::slice::from_ref(&job)).await {
                    Ok(mut results) => results.pop().unwrap_or(Err(StoreError::Closed)),
                    Err(GroupError::Before(error) | GroupError::Commit(error)) => Err(error),
                };
                let _ = job.reply.send(result);
            }
        }
        // Whether the commit landed is unknown (or the lone write failed):
        // every caller is told, and catches up from the log.
        Err(GroupError::Before(error) | GroupError::Commit(error)) => {
            tracing::error!(error = %crate::api::cause_chain(&error), writes = group.len(), "group commit failed");
            let error = Arc::new(error);
            for job in group.drain(..) {
                let _ = job.reply.send(Err(StoreError::Commit(Arc::clone(&error))));
            }
        }
    }
}

/// Why a group's statement failed.
enum GroupError {
    /// PostgreSQL refused it (an SQL error): nothing of it was committed.
    Before(StoreError),
    /// The connection failed: it may or may not have been committed.
    Commit(StoreError),
}

/// Runs `group` (no two new games with one id) as one [`WRITE_GROUP`]
/// statement, committed on its own. Returns each write's own result: `Ok`,
/// [`StoreError::GameExists`] for a new game whose id or request id was
/// taken, [`StoreError::Conflict`] for an append that lost a race.
async fn commit_group(
    pool: &PgPool,
    node: &str,
    group: &[WriteJob],
) -> Result<Vec<Result<(), StoreError>>, GroupError> {
    let mut creates = Vec::new();
    let mut appends = Vec::new();
    for job in group {
        match &job.write {
            Write::Create(game) => creates.push(game),
            Write::Append(append) => appends.push(append),
        }
    }
    let wrote = match write_all(pool, node, &creates, &appends).await {
        Ok(wrote) => wrote,
        Err(error @ sqlx::Error::Database(_)) => {
            // A unique violation of a lone new game means it exists.
            let on_unique = match group {
                [
                    WriteJob {
                        write: Write::Create(_),
                        ..
                    },
                ] => StoreError::GameExists,
                _ => StoreError::Conflict,
            };
            return Err(GroupError::Before(classify(error, on_unique)));
        }
        Err(error) => return Err(GroupError::Commit(error.into())),
    };
    Ok(group
        .iter()
        .map(|job| match &job.write {
            Write::Create(_) if wrote.created.contains(job.write.game_id()) => Ok(()),
            Write::Create(_) => Err(StoreError::GameExists),
            Write::Append(_) if wrote.moved.contains(job.write.game_id()) => Ok(()),
            Write::Append(_) => Err(StoreError::Conflict),
        })
        .collect())
}

async fn insert_event(
    tx: &mut Transaction<'_, Postgres>,
    game_id: &str,
    event: &NewEvent,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO events (game_id, sequence, event_type, event_version, payload, recorded_at_ms, chain) \
         VALUES ($1, $2, $3, $4, $5, $6, $7)",
    )
    .bind(game_id)
    .bind(event.sequence as i64)
    .bind(event.event_type)
    .bind(EVENT_VERSION)
    .bind(event.payload.as_ref())
    .bind(event.recorded_at_ms)
    .bind(&event.chain[..])
    .execute(&mut **tx)
    .await?;
    Ok(())
}

/// The changes a notification on [`CHANNEL`] tells of, unless node `own`
/// sent it (none then: this node's games are current already).
///
/// A payload is `<node>;<game_id>:<sequence>,<game_id>:<sequence>...`: the
/// sending store's tag, then each game it wrote with its last sequence
/// (game ids hold no `;`, `,` or `:`; see [`crate::api::MAX_ID_CHARS`]). A
/// payload without a tag (`<game_id>:<sequence>`, as nodes before the tag
/// sent) comes from another node. An entry that does not parse is skipped.
fn notice_changes(payload: &str, own: &str) -> Vec<Change> {
    let entries = match payload.split_once(';') {
        Some((node, _)) if node == own => return Vec::new(),
        Some((_, entries)) => entries,
        None => payload,
    };
    entries
        .split(',')
        .filter_map(|entry| {
            let (game_id, last) = entry.rsplit_once(':')?;
            Some(Change::Appended {
                game_id: game_id.to_owned(),
                sequence: last.parse().ok()?,
            })
        })
        .collect()
}

#[async_trait]
impl EventStore for PostgresStore {
    async fn create(&self, game: NewGame) -> Result<(), StoreError> {
        self.write(Write::Create(game)).await
    }

    async fn restore(&self, game: RestoredGame) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        insert_game(&mut tx, &game.game).await?;
        if game.events.is_empty() {
            self.notify_created(&mut tx, &game.game.game_id).await?;
        } else {
            let rest = Append {
                game_id: game.game.game_id.clone(),
                expected: 1,
                events: game.events,
                request: None,
                status: game.game.status,
                seat_token_hashes: None,
                wake: game.game.wake,
            };
            let wrote = write_all(&mut *tx, &self.node, &[], &[&rest])
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
    ) -> Result<Vec<DueWake>, StoreError> {
        // The rows another node is claiming right now are skipped, not
        // waited for: each due game goes to one node.
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "UPDATE games g SET wake_at_ms = $2 FROM ( \
               SELECT game_id, wake_at_ms AS due FROM games \
               WHERE wake_at_ms IS NOT NULL AND wake_at_ms <= $1 \
               ORDER BY wake_at_ms, game_id LIMIT $3 FOR UPDATE SKIP LOCKED) d \
             WHERE g.game_id = d.game_id RETURNING g.game_id, d.due",
        )
        .bind(now_ms)
        .bind(now_ms.saturating_add(lease_ms))
        .bind(i64::from(limit))
        .fetch_all(&self.pool)
        .await?;
        Ok(rows
            .into_iter()
            .map(|(game_id, at_ms)| DueWake { game_id, at_ms })
            .collect())
    }

    async fn next_wake(&self) -> Result<Option<i64>, StoreError> {
        Reads::next_wake(&self.pool).await
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
        cursor: i64,
        order: ListOrder,
        limit: u32,
    ) -> Result<Vec<GameRecord>, StoreError> {
        Reads::games(&self.pool, cursor, order, limit).await
    }

    async fn find_creation(&self, request_id: &str) -> Result<Option<CreationRecord>, StoreError> {
        Reads::creation(&self.pool, request_id).await
    }

    async fn last_sequences(&self, game_ids: &[String]) -> Result<Vec<(String, u64)>, StoreError> {
        let rows: Vec<(String, i64)> =
            sqlx::query_as("SELECT game_id, last_sequence FROM games WHERE game_id = ANY($1)")
                .bind(game_ids)
                .fetch_all(&self.pool)
                .await?;
        Ok(rows
            .into_iter()
            .map(|(game_id, last)| Ok((game_id, reads::sequence("games.last_sequence", last)?)))
            .collect::<Result<_, StoreError>>()?)
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

    fn changes(&self) -> Option<mpsc::Receiver<Change>> {
        let (tx, rx) = mpsc::channel(4096);
        let pool = self.pool.clone();
        let node = Arc::clone(&self.node);
        tokio::spawn(async move {
            let mut listener = loop {
                match PgListener::connect_with(&pool).await {
                    Ok(mut listener) => match listener.listen(CHANNEL).await {
                        Ok(()) => break listener,
                        // The store is closing: let go of the connection.
                        Err(sqlx::Error::PoolClosed) => return,
                        Err(error) => tracing::warn!(error = %error, "LISTEN failed; retrying"),
                    },
                    Err(sqlx::Error::PoolClosed) => return,
                    Err(error) if tx.is_closed() => {
                        tracing::debug!(error = %error, "listener no longer needed");
                        return;
                    }
                    Err(error) => {
                        tracing::warn!(error = %error, "listener connect failed; retrying")
                    }
                }
                tokio::time::sleep(Duration::from_millis(500)).await;
            };
            loop {
                let changes = match listener.try_recv().await {
                    Ok(Some(notification)) => notice_changes(notification.payload(), &node),
                    // The connection dropped: it reconnects on the next call,
                    // and what was sent meanwhile is lost.
                    Ok(None) => vec![Change::Missed],
                    // The store is closing, and Pool::close waits for every
                    // connection: the listener's goes back now, or never.
                    Err(sqlx::Error::PoolClosed) => return,
                    Err(error) => {
                        tracing::warn!(error = %error, "notification listener failed; retrying");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        vec![Change::Missed]
                    }
                };
                for change in changes {
                    if tx.send(change).await.is_err() {
                        return;
                    }
                }
            }
        });
        Some(rx)
    }

    async fn record_presence(&self, record: PresenceRecord) -> Result<(), StoreError> {
        sqlx::query(
            "INSERT INTO seat_presence \
             (game_id, seat, node, streams, absent_since_ms, refreshed_at, refreshed_at_ms) \
             VALUES ($1, $2, $3, $4, $5, now(), $6) \
             ON CONFLICT (game_id, seat, node) DO UPDATE SET \
             streams = EXCLUDED.streams, absent_since_ms = EXCLUDED.absent_since_ms, \
             refreshed_at = now(), refreshed_at_ms = EXCLUDED.refreshed_at_ms",
        )
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

    async fn presence(
        &self,
        game_id: &str,
        seat: u8,
    ) -> Result<Option<SharedPresence>, StoreError> {
        let (present, absent_since_ms): (Option<bool>, Option<i64>) = sqlx::query_as(
            "SELECT \
             bool_or(streams > 0 AND refreshed_at > now() - make_interval(secs => $3)), \
             max(CASE WHEN streams > 0 THEN refreshed_at_ms ELSE absent_since_ms END) \
             FROM seat_presence WHERE game_id = $1 AND seat = $2 AND node <> $4",
        )
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

#[cfg(test)]
mod tests {
    use super::*;

    fn appended(game_id: &str, sequence: u64) -> Change {
        Change::Appended {
            game_id: game_id.to_owned(),
            sequence,
        }
    }

    /// A notice names every game it lists, with its last sequence; a
    /// node's own notices name none; an untagged payload (as nodes sent
    /// before the tag) is another node's; a bad entry is skipped alone.
    #[test]
    fn notices_name_their_games_unless_this_node_sent_them() {
        assert_eq!(
            notice_changes("n2;g-1:7,g.2:1", "n1"),
            vec![appended("g-1", 7), appended("g.2", 1)]
        );
        assert_eq!(notice_changes("n1;g-1:7,g.2:1", "n1"), vec![]);
        assert_eq!(notice_changes("g-1:7", "n1"), vec![appended("g-1", 7)]);
        assert_eq!(
            notice_changes("n2;g-1:x,g2,g3:4", "n1"),
            vec![appended("g3", 4)]
        );
    }

    /// The longest notice a group sends fits PostgreSQL's payload limit
    /// (under 8,000 bytes).
    #[test]
    fn a_full_notice_fits_the_payload_limit() {
        let node = uuid::Uuid::new_v4().simple().to_string();
        let entry = format!("{}:{}", "g".repeat(crate::api::MAX_ID_CHARS), u64::MAX);
        let entries = vec![entry; GAMES_PER_NOTICE as usize];
        let payload = format!("{node};{}", entries.join(","));
        assert!(payload.len() < 8_000, "{} bytes", payload.len());
    }
}
