//! The PostgreSQL event store, for several plylog nodes on one database.
//!
//! Appends are group-committed: a writer task takes every queued append
//! (up to 512) and commits them as one statement ([`APPEND`]), in one round
//! trip (up to four writers per node take turns). The statement advances
//! each game row only from its expected sequence (the row lock decides a
//! race between nodes: the loser's row is not updated, reported as
//! [`StoreError::Conflict`]) and writes the events, requests and seat token
//! hashes of the rows it moved; it calls `pg_notify` for each of them
//! (`plylog_events`, payload `<game_id>:<last_sequence>`), delivered only
//! when it commits. PostgreSQL serialises the commits of transactions that
//! notified behind one lock, so a node takes it once per group, not once
//! per move. Notifications are a wake-up call, not the data:
//! a node reads the rows from the table, and catches up periodically in
//! case a notification was lost while its listening connection was down.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use sqlx::migrate::Migrator;
use sqlx::postgres::{PgConnectOptions, PgListener, PgPoolOptions};
use sqlx::{PgConnection, PgPool, Postgres, Transaction};
use tokio::sync::{mpsc, oneshot};

use super::reads::{self, Events, Reads, Requests};
use super::{
    Append, Change, CreationRecord, EventStore, GameLog, GameRecord, ListOrder, LoadFrom, LogTail,
    Migration, NewEvent, NewGame, PRESENCE_TTL, PresenceRecord, RestoredGame, SharedPresence,
    Snapshot, StoreError, StoredEvent, classify,
};

/// The notification channel nodes wake each other on.
const CHANNEL: &str = "plylog_events";
/// Schema version stamped on every event row.
const EVENT_VERSION: i32 = 1;

/// Most appends one transaction commits together.
const MAX_GROUP: usize = 512;
/// Appends waiting for the writers before callers wait for room.
const WRITE_QUEUE: usize = 4096;
/// Writer tasks per node at most (half the pool's connections, at least
/// one).
const MAX_WRITERS: u32 = 4;

/// A group of appends as one statement, committed on its own (no explicit
/// transaction: one round trip). Each append (`$1..$10`, one array element
/// per append) moves its game row from `expected` to `next` only where the
/// row still stands at `expected` (a row another writer moved first is not
/// in `moved`: that append conflicts, raising no error); then the events of
/// the appends that moved (`$12..$16`, one element per event), their
/// requests and seat token hashes are written, and `pg_notify` tells the
/// other nodes about each game that moved (`$17`). The rows returned are
/// the games that moved.
const APPEND: &str = "WITH a AS ( \
         SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::integer[], \
             $5::boolean[], $6::bytea[], $7::text[], $8::bytea[], $9::bigint[], $10::bigint[]) \
           AS a(game_id, expected, next, status, set_hashes, hashes, request_id, fingerprint, \
             first_sequence, last_sequence)), \
     moved AS ( \
         UPDATE games g SET last_sequence = a.next, status = a.status, \
           seat_token_hashes = CASE WHEN a.set_hashes THEN a.hashes ELSE g.seat_token_hashes END \
         FROM a WHERE g.game_id = a.game_id AND g.last_sequence = a.expected \
         RETURNING g.game_id, a.next, a.request_id, a.fingerprint, a.first_sequence, \
           a.last_sequence), \
     inserted AS ( \
         INSERT INTO events (game_id, sequence, event_type, event_version, payload, recorded_at_ms) \
         SELECT e.game_id, e.sequence, e.event_type, $11, e.payload, e.recorded_at_ms \
         FROM unnest($12::text[], $13::bigint[], $14::text[], $15::bytea[], $16::bigint[]) \
           AS e(game_id, sequence, event_type, payload, recorded_at_ms) \
         JOIN moved ON moved.game_id = e.game_id), \
     requested AS ( \
         INSERT INTO requests (game_id, request_id, fingerprint, first_sequence, last_sequence) \
         SELECT game_id, request_id, fingerprint, first_sequence, last_sequence \
         FROM moved WHERE request_id IS NOT NULL) \
     SELECT moved.game_id FROM moved, \
       LATERAL (SELECT pg_notify($17, moved.game_id || ':' || moved.next)) AS notified";

/// An append waiting for the writer task, and where its result goes.
struct AppendJob {
    append: Append,
    reply: oneshot::Sender<Result<(), StoreError>>,
}

/// An [`EventStore`] on a PostgreSQL database, shared by any number of nodes.
#[derive(Debug, Clone)]
pub struct PostgresStore {
    pool: PgPool,
    /// The writer task's queue of appends.
    appends: mpsc::Sender<AppendJob>,
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
        let (appends, queue) = mpsc::channel(WRITE_QUEUE);
        let queue = Arc::new(tokio::sync::Mutex::new(queue));
        let writers = (pool.options().get_max_connections() / 2).clamp(1, MAX_WRITERS);
        for _ in 0..writers {
            tokio::spawn(run_writer(pool.clone(), Arc::clone(&queue)));
        }
        PostgresStore { pool, appends }
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
        drop(conn);
        pool.close().await;
        Ok(missing)
    }

    /// Tells the other nodes, when `tx` commits, that each game of
    /// `appended` (`<game_id>:<last_sequence>`) moved on: one statement.
    async fn notify(
        tx: &mut Transaction<'_, Postgres>,
        appended: &[String],
    ) -> Result<(), sqlx::Error> {
        sqlx::query("SELECT pg_notify($1, payload) FROM unnest($2::text[]) AS payload")
            .bind(CHANNEL)
            .bind(appended)
            .execute(&mut **tx)
            .await?;
        Ok(())
    }
}

/// A pool on `url` whose sessions wait for every commit to be flushed
/// (whatever the server's default) and, when `read_only`, start only
/// read-only transactions.
async fn connect(url: &str, max_connections: u32, read_only: bool) -> Result<PgPool, StoreError> {
    let mut settings = vec![("synchronous_commit", "on")];
    if read_only {
        settings.push(("default_transaction_read_only", "on"));
    }
    let options = PgConnectOptions::from_str(url)?.options(settings);
    Ok(PgPoolOptions::new()
        .max_connections(max_connections.max(2))
        .acquire_timeout(Duration::from_secs(5))
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
        "INSERT INTO games (game_id, created_at_ms, last_sequence, status, create_request_id, create_fingerprint, seat_token_hashes) \
         VALUES ($1, $2, 1, $3, $4, $5, $6)",
    )
    .bind(&game.game_id)
    .bind(game.created.recorded_at_ms)
    .bind(game.status)
    .bind(request_id)
    .bind(fingerprint)
    .bind(super::join_hashes(&game.seat_token_hashes))
    .execute(&mut **tx)
    .await
    .map_err(|e| classify(e, StoreError::GameExists))?;
    insert_event(tx, &game.game_id, &game.created)
        .await
        .map_err(|e| classify(e, StoreError::GameExists))
}

/// Runs [`APPEND`] for `appends` on `executor`: the ids of the games that
/// moved (the others conflicted).
async fn append_all<'c, E>(
    executor: E,
    appends: &[&Append],
) -> Result<std::collections::HashSet<String>, sqlx::Error>
where
    E: sqlx::Executor<'c, Database = Postgres>,
{
    let each = |f: &dyn Fn(&Append) -> i64| appends.iter().map(|a| f(a)).collect::<Vec<_>>();
    let requests: Vec<_> = appends.iter().map(|a| a.request.as_ref()).collect();
    let events: Vec<(&str, &NewEvent)> = appends
        .iter()
        .flat_map(|a| a.events.iter().map(|e| (a.game_id.as_str(), e)))
        .collect();
    let moved: Vec<String> = sqlx::query_scalar(APPEND)
        .bind(
            appends
                .iter()
                .map(|a| a.game_id.as_str())
                .collect::<Vec<_>>(),
        )
        .bind(each(&|a| a.expected as i64))
        .bind(each(&|a| (a.expected + a.events.len() as u64) as i64))
        .bind(appends.iter().map(|a| a.status).collect::<Vec<_>>())
        .bind(
            appends
                .iter()
                .map(|a| a.seat_token_hashes.is_some())
                .collect::<Vec<_>>(),
        )
        .bind(
            appends
                .iter()
                .map(|a| a.seat_token_hashes.as_deref().and_then(super::join_hashes))
                .collect::<Vec<_>>(),
        )
        .bind(
            requests
                .iter()
                .map(|r| r.map(|r| r.request_id.as_str()))
                .collect::<Vec<_>>(),
        )
        .bind(
            requests
                .iter()
                .map(|r| r.map(|r| r.fingerprint.as_slice()))
                .collect::<Vec<_>>(),
        )
        .bind(
            requests
                .iter()
                .map(|r| r.map(|r| r.first_sequence as i64))
                .collect::<Vec<_>>(),
        )
        .bind(
            requests
                .iter()
                .map(|r| r.map(|r| r.last_sequence as i64))
                .collect::<Vec<_>>(),
        )
        .bind(EVENT_VERSION)
        .bind(events.iter().map(|(game, _)| *game).collect::<Vec<_>>())
        .bind(
            events
                .iter()
                .map(|(_, e)| e.sequence as i64)
                .collect::<Vec<_>>(),
        )
        .bind(events.iter().map(|(_, e)| e.event_type).collect::<Vec<_>>())
        .bind(
            events
                .iter()
                .map(|(_, e)| e.payload.as_slice())
                .collect::<Vec<_>>(),
        )
        .bind(
            events
                .iter()
                .map(|(_, e)| e.recorded_at_ms)
                .collect::<Vec<_>>(),
        )
        .bind(CHANNEL)
        .fetch_all(executor)
        .await?;
    Ok(moved.into_iter().collect())
}

/// The writer loop: one group of queued appends per transaction.
///
/// Several writers share the queue: one takes what is queued while the
/// others commit theirs, so a group's round trips overlap the next group's
/// gathering (one game never has two appends in flight, so the groups of
/// different writers touch different rows).
async fn run_writer(pool: PgPool, queue: Arc<tokio::sync::Mutex<mpsc::Receiver<AppendJob>>>) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    while queue.lock().await.recv_many(&mut group, MAX_GROUP).await > 0 {
        match commit_group(&pool, &group).await {
            Ok(results) => {
                for (job, result) in group.drain(..).zip(results) {
                    let _ = job.reply.send(result);
                }
            }
            // Nothing of the group was committed: each append is tried
            // alone, so that one that fails fails only itself.
            Err(GroupError::Before(error)) if group.len() > 1 => {
                tracing::warn!(error = %error, appends = group.len(), "group append failed; appending one by one");
                for job in group.drain(..) {
                    let result = match commit_group(&pool, std::slice::from_ref(&job)).await {
                        Ok(mut results) => results.pop().unwrap_or(Err(StoreError::Closed)),
                        Err(GroupError::Before(error) | GroupError::Commit(error)) => Err(error),
                    };
                    let _ = job.reply.send(result);
                }
            }
            // Whether the COMMIT landed is unknown (or the lone append
            // failed): every caller is told, and catches up from the log.
            Err(GroupError::Before(error) | GroupError::Commit(error)) => {
                tracing::error!(error = %crate::api::cause_chain(&error), appends = group.len(), "group commit failed");
                let error = Arc::new(error);
                for job in group.drain(..) {
                    let _ = job.reply.send(Err(StoreError::Commit(Arc::clone(&error))));
                }
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

/// Runs `group` as one [`APPEND`] statement, committed on its own. Returns
/// each append's own result (`Ok`, or [`StoreError::Conflict`]).
async fn commit_group(
    pool: &PgPool,
    group: &[AppendJob],
) -> Result<Vec<Result<(), StoreError>>, GroupError> {
    let appends: Vec<&Append> = group.iter().map(|job| &job.append).collect();
    let moved = match append_all(pool, &appends).await {
        Ok(moved) => moved,
        Err(error @ sqlx::Error::Database(_)) => {
            return Err(GroupError::Before(classify(error, StoreError::Conflict)));
        }
        Err(error) => return Err(GroupError::Commit(error.into())),
    };
    Ok(appends
        .iter()
        .map(|a| {
            if moved.contains(&a.game_id) {
                Ok(())
            } else {
                Err(StoreError::Conflict)
            }
        })
        .collect())
}

async fn insert_event(
    tx: &mut Transaction<'_, Postgres>,
    game_id: &str,
    event: &NewEvent,
) -> Result<(), sqlx::Error> {
    sqlx::query(
        "INSERT INTO events (game_id, sequence, event_type, event_version, payload, recorded_at_ms) \
         VALUES ($1, $2, $3, $4, $5, $6)",
    )
    .bind(game_id)
    .bind(event.sequence as i64)
    .bind(event.event_type)
    .bind(EVENT_VERSION)
    .bind(&event.payload)
    .bind(event.recorded_at_ms)
    .execute(&mut **tx)
    .await?;
    Ok(())
}

#[async_trait]
impl EventStore for PostgresStore {
    async fn create(&self, game: NewGame) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        insert_game(&mut tx, &game).await?;
        PostgresStore::notify(&mut tx, &[format!("{}:1", game.game_id)]).await?;
        tx.commit().await?;
        Ok(())
    }

    async fn restore(&self, game: RestoredGame) -> Result<(), StoreError> {
        let mut tx = self.pool.begin().await?;
        insert_game(&mut tx, &game.game).await?;
        if game.events.is_empty() {
            PostgresStore::notify(&mut tx, &[format!("{}:1", game.game.game_id)]).await?;
        } else {
            let rest = Append {
                game_id: game.game.game_id.clone(),
                expected: 1,
                events: game.events,
                request: None,
                status: game.game.status,
                seat_token_hashes: None,
            };
            let moved = append_all(&mut *tx, &[&rest])
                .await
                .map_err(|e| classify(e, StoreError::Conflict))?;
            if moved.is_empty() {
                return Err(StoreError::Conflict);
            }
        }
        tx.commit().await?;
        Ok(())
    }

    async fn append(&self, append: Append) -> Result<(), StoreError> {
        let (reply, answer) = oneshot::channel();
        self.appends
            .send(AppendJob { append, reply })
            .await
            .map_err(|_| StoreError::Closed)?;
        answer.await.map_err(|_| StoreError::Closed)?
    }

    async fn load(&self, game_id: &str, from: LoadFrom) -> Result<Option<GameLog>, StoreError> {
        // One snapshot for the events, requests and hashes.
        let mut tx = self.pool.begin().await?;
        sqlx::query("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ READ ONLY")
            .execute(&mut *tx)
            .await?;
        let log = Reads::<sqlx::Postgres>::game(&mut tx, game_id, from).await?;
        tx.commit().await?;
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
        let seat_token_hashes = Reads::seat_token_hashes(&self.pool, game_id).await?;
        Ok(LogTail {
            events,
            requests,
            seat_token_hashes,
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

    fn shared(&self) -> bool {
        true
    }

    fn changes(&self) -> Option<mpsc::Receiver<Change>> {
        let (tx, rx) = mpsc::channel(4096);
        let pool = self.pool.clone();
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
                let change = match listener.try_recv().await {
                    Ok(Some(notification)) => match notification.payload().rsplit_once(':') {
                        Some((game_id, last)) => match last.parse() {
                            Ok(sequence) => Change::Appended {
                                game_id: game_id.to_owned(),
                                sequence,
                            },
                            Err(_) => continue,
                        },
                        None => continue,
                    },
                    // The connection dropped: it reconnects on the next call,
                    // and what was sent meanwhile is lost.
                    Ok(None) => Change::Missed,
                    // The store is closing, and Pool::close waits for every
                    // connection: the listener's goes back now, or never.
                    Err(sqlx::Error::PoolClosed) => return,
                    Err(error) => {
                        tracing::warn!(error = %error, "notification listener failed; retrying");
                        tokio::time::sleep(Duration::from_millis(500)).await;
                        Change::Missed
                    }
                };
                if tx.send(change).await.is_err() {
                    return;
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
        .bind(&record.node)
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
             FROM seat_presence WHERE game_id = $1 AND seat = $2",
        )
        .bind(game_id)
        .bind(i32::from(seat))
        .bind(PRESENCE_TTL.as_secs_f64())
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
