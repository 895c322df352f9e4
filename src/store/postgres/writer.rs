//! The writer task: every write queued while a group is in flight makes
//! the next group, committed as one statement ([`WRITE_GROUP`], in
//! `sql/write_group.sql`) in one round trip; a group that fails is retried
//! one write at a time, so that one bad write fails only itself.

use std::collections::HashSet;
use std::sync::Arc;

use sqlx::pool::PoolConnection;
use sqlx::{PgConnection, PgPool, Postgres};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::time::Instant;

use super::{EVENT_VERSION, PING_AFTER_IDLE};
use crate::store::{Append, NewEvent, NewGame, StoreError, classify};

/// Most writes one statement commits together.
const MAX_GROUP: usize = 512;
/// Writes waiting for the writer before callers wait for room.
pub(super) const WRITE_QUEUE: usize = 4096;

/// A group of writes as one statement, committed on its own (no explicit
/// transaction: one round trip): new games and appends to games that exist.
///
/// Each new game (`$17..$24`, its wake `$27`, `$28` and its first chain
/// value `$30`, one array element per game) gets its row, its tags (`$34`,
/// `$35`, one element per tag) and its GameCreated event (sequence 1); a
/// game whose id or creation request id is taken is skipped (`ON CONFLICT
/// DO NOTHING`) and is not in `created`.
///
/// Each append (`$1..$10`, its wake `$25`, `$26` and its fence `$31..$33`,
/// one array element per append) moves its game row from `expected` to
/// `next` (and its last activity to `$36`, its last event's time) only
/// where the row still stands at `expected` (a row another
/// writer moved first is not in `moved`: that append conflicts, raising no
/// error) and, for an append with a fence, only while its slot's lease is
/// still held by the fence's node at the fence's epoch and has not ended by
/// the database's clock. The lease rows are read `FOR SHARE` (in slot
/// order), so a new holder's acquiring waits for this statement to commit:
/// an append lands before the next holder loads the game, or not at all (it
/// is `fenced`). Then the events of the appends that moved (`$12..$16` and
/// the chain values `$29` and lifecycles `$37`, one element per event; a
/// new game's GameCreated lifecycle is `$38`), their requests and seat
/// token hashes are written.
///
/// Every event written (the new games' first, then the appends', in order)
/// takes the feed's next position from `feed_head`, whose row lock the
/// statement holds until it commits: positions are dense and in commit
/// order (see the migration `20261207000001_feed_positions`). The lock is
/// taken last, once the games and leases are locked, and only by a
/// statement that writes an event.
///
/// The rows returned are the games written, each with `created` or
/// `moved`, and the fenced appends' games with `fenced`. Nobody is
/// notified: a game is written only by the node that holds its slot, which
/// has it in memory already.
pub(super) const WRITE_GROUP: &str = include_str!("sql/write_group.sql");

/// A write for the writer task.
pub(super) enum Write {
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
pub(super) struct WriteJob {
    pub(super) write: Write,
    pub(super) reply: oneshot::Sender<Result<(), StoreError>>,
}

/// One statement parameter: `f` of each item, as an array.
fn column<'a, T, U>(items: &'a [T], f: impl Fn(&'a T) -> U) -> Vec<U> {
    items.iter().map(f).collect()
}

/// The games a [`WRITE_GROUP`] wrote: those created, those that moved; and
/// the appends it refused for their fence.
#[derive(Debug, Default)]
pub(super) struct Wrote {
    pub(super) created: HashSet<String>,
    pub(super) moved: HashSet<String>,
    pub(super) fenced: HashSet<String>,
}

/// Runs [`WRITE_GROUP`] for `creates` and `appends` on `executor` (the ids
/// of `creates` distinct): which games it created (the
/// others existed) and which moved (the others conflicted).
pub(super) async fn write_all<'c, E>(
    executor: E,
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
    let fences: Vec<_> = appends.iter().map(|a| a.fence.as_ref()).collect();
    let tags: Vec<(&str, String)> = creates
        .iter()
        .flat_map(|g| g.tags.iter().map(|tag| (g.game_id.as_str(), tag.encode())))
        .collect();
    let rows: Vec<(String, String)> = sqlx::query_as(WRITE_GROUP)
        .bind(column(appends, |a| a.game_id.as_str()))
        .bind(column(appends, |a| a.expected as i64))
        .bind(column(appends, |a| {
            (a.expected + a.events.len() as u64) as i64
        }))
        .bind(column(appends, |a| a.status))
        .bind(column(appends, |a| a.seat_token_hashes.is_some()))
        .bind(column(appends, |a| {
            a.seat_token_hashes
                .as_deref()
                .and_then(crate::store::join_hashes)
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
        .bind(column(creates, |g| g.game_id.as_str()))
        .bind(column(creates, |g| g.created.recorded_at_ms))
        .bind(column(creates, |g| g.status))
        .bind(column(&create_requests, |r| r.map(|(id, _)| id.as_str())))
        .bind(column(&create_requests, |r| {
            r.map(|(_, fingerprint)| fingerprint.as_slice())
        }))
        .bind(column(creates, |g| {
            crate::store::join_hashes(&g.seat_token_hashes)
        }))
        .bind(column(creates, |g| g.created.event_type))
        .bind(column(creates, |g| g.created.payload.as_ref()))
        .bind(column(appends, |a| a.wake.at_ms))
        .bind(column(appends, |a| a.wake.absent_since_ms))
        .bind(column(creates, |g| g.wake.at_ms))
        .bind(column(creates, |g| g.wake.absent_since_ms))
        .bind(column(&events, |(_, e)| &e.chain[..]))
        .bind(column(creates, |g| &g.created.chain[..]))
        .bind(column(&fences, |f| f.map(|f| &*f.node)))
        .bind(column(&fences, |f| f.map(|f| f.slot)))
        .bind(column(&fences, |f| f.map(|f| f.epoch)))
        .bind(column(&tags, |(game, _)| *game))
        .bind(column(&tags, |(_, tag)| tag.as_str()))
        .bind(column(appends, |a| {
            a.events.last().map(|event| event.recorded_at_ms)
        }))
        .bind(column(&events, |(_, e)| e.lifecycle))
        .bind(column(creates, |g| g.created.lifecycle))
        .fetch_all(executor)
        .await?;
    let mut wrote = Wrote::default();
    for (game_id, outcome) in rows {
        match outcome.as_str() {
            "created" => wrote.created.insert(game_id),
            "fenced" => wrote.fenced.insert(game_id),
            _ => wrote.moved.insert(game_id),
        };
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
///
/// The writer keeps one connection of `pool` for itself, taken when the
/// first group comes: sqlx pings a connection each time it goes back to
/// its pool, one more round trip per group commit (issue 42). A group
/// that fails in any way drops it (closed, not given back), and the next
/// group takes another: a connection that broke, or that a failover left
/// on a server that no longer takes writes, is not kept. One idle for
/// [`PING_AFTER_IDLE`] is pinged first, as the pool does. Each connection
/// it takes plans its statement once ([`writer_connection`]). When the
/// pool closes, the kept connection is closed between groups.
///
/// `feed` counts the groups committed, for the feed's readers.
pub(super) async fn run_writer(
    pool: PgPool,
    mut queue: mpsc::Receiver<WriteJob>,
    feed: watch::Sender<u64>,
) {
    let mut group = Vec::with_capacity(MAX_GROUP);
    // The kept connection, and when its last group ended.
    let mut conn: Option<(PoolConnection<Postgres>, Instant)> = None;
    let mut closed = pool.close_event();
    loop {
        let received = tokio::select! {
            received = queue.recv_many(&mut group, MAX_GROUP) => received,
            // The pool closes (the store does) once every connection is
            // back or closed: the kept one is closed while no group is in
            // flight.
            () = &mut closed, if conn.is_some() => {
                close_kept(conn.take());
                continue;
            }
        };
        if received == 0 {
            break;
        }
        // Two new games with one id in a statement: the insert keeps one,
        // but both would join its row and write event 1 twice, failing the
        // whole group (then retried one write at a time). A repeated id
        // waits for a statement of its own, and finds the id taken.
        while !group.is_empty() {
            let later = take_repeated_creates(&mut group);
            let held = match conn.take() {
                Some((held, ended)) if ended.elapsed() < PING_AFTER_IDLE => Ok(held),
                Some((held, _)) => alive_or_another(held, &pool).await,
                None => writer_connection(&pool).await,
            };
            match held {
                Ok(mut held) => {
                    if commit_and_answer(&mut held, &mut group).await {
                        conn = Some((held, Instant::now()));
                    } else {
                        held.close_on_drop();
                    }
                }
                Err(error) => {
                    tracing::error!(error = %crate::api::cause_chain(&error), writes = group.len(), "no connection for a group commit");
                    let error = Arc::new(StoreError::from(error));
                    for job in group.drain(..) {
                        let _ = job.reply.send(Err(StoreError::Commit(Arc::clone(&error))));
                    }
                }
            }
            feed.send_modify(|groups| *groups += 1);
            group = later;
        }
    }
    close_kept(conn);
}

/// Takes a connection of `pool` for the writer: one that plans
/// [`WRITE_GROUP`] once and reuses that plan (`plan_cache_mode =
/// force_generic_plan`, PostgreSQL 12 and later). By default PostgreSQL
/// plans a prepared statement anew for its parameters each time it runs
/// until a generic plan looks no dearer, and for this statement it never
/// did: planning it took about half of PostgreSQL's CPU per group, 1 ms a
/// lone move on a 2-core machine (issue 42; with the setting a move at G=1
/// answered in 0.94 ms instead of 1.53, the backend's CPU per move
/// halved). A server that does not know the setting (older than 12) is
/// used as it is, with a warning.
///
/// # Errors
/// No connection could be had, or it failed on setting the mode.
async fn writer_connection(pool: &PgPool) -> Result<PoolConnection<Postgres>, sqlx::Error> {
    let mut conn = pool.acquire().await?;
    match sqlx::query("SET plan_cache_mode = force_generic_plan")
        .execute(&mut *conn)
        .await
    {
        Ok(_) => Ok(conn),
        Err(sqlx::Error::Database(error)) => {
            tracing::warn!(error = %error, "the writer's statement is planned each time it runs");
            Ok(conn)
        }
        Err(error) => {
            conn.close_on_drop();
            Err(error)
        }
    }
}

/// Closes the writer's kept connection, if any, rather than giving it back
/// to the pool with the writer's plan cache mode for another caller.
fn close_kept(conn: Option<(PoolConnection<Postgres>, Instant)>) {
    if let Some((mut conn, _)) = conn {
        conn.close_on_drop();
    }
}

/// `held` when it answers a ping, else another connection of `pool` (the
/// pool's own rule for a connection idle for [`PING_AFTER_IDLE`] or more):
/// a kept connection that a database restart or a failover cut while the
/// writer was idle costs a round trip, not a failed group.
async fn alive_or_another(
    mut held: PoolConnection<Postgres>,
    pool: &PgPool,
) -> Result<PoolConnection<Postgres>, sqlx::Error> {
    use sqlx::Connection;
    match held.ping().await {
        Ok(()) => Ok(held),
        Err(_) => {
            held.close_on_drop();
            drop(held);
            writer_connection(pool).await
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

/// Commits `group` as one statement on `conn` and answers each of its
/// callers, leaving `group` empty. Returns whether the statement ran
/// without an error (each write's own refusal, a conflict or a fence, is
/// not one), so that `conn` is worth keeping.
async fn commit_and_answer(conn: &mut PgConnection, group: &mut Vec<WriteJob>) -> bool {
    match commit_group(conn, group).await {
        Ok(results) => {
            for (job, result) in group.drain(..).zip(results) {
                let _ = job.reply.send(result);
            }
            true
        }
        // Nothing of the group was committed: each write is tried alone,
        // so that one that fails fails only itself.
        Err(GroupError::Before(error)) if group.len() > 1 => {
            tracing::warn!(error = %error, writes = group.len(), "group write failed; writing one by one");
            for job in group.drain(..) {
                let result = match commit_group(conn, std::slice::from_ref(&job)).await {
                    Ok(mut results) => results.pop().unwrap_or(Err(StoreError::Closed)),
                    Err(GroupError::Before(error) | GroupError::Commit(error)) => Err(error),
                };
                let _ = job.reply.send(result);
            }
            false
        }
        // Whether the commit landed is unknown (or the lone write failed):
        // every caller is told, and catches up from the log.
        Err(GroupError::Before(error) | GroupError::Commit(error)) => {
            tracing::error!(error = %crate::api::cause_chain(&error), writes = group.len(), "group commit failed");
            let error = Arc::new(error);
            for job in group.drain(..) {
                let _ = job.reply.send(Err(StoreError::Commit(Arc::clone(&error))));
            }
            false
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
/// taken, [`StoreError::Conflict`] for an append that lost a race,
/// [`StoreError::Fenced`] for an append whose slot lease is no longer held.
async fn commit_group(
    conn: &mut PgConnection,
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
    let wrote = match write_all(&mut *conn, &creates, &appends).await {
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
            Write::Append(_) if wrote.fenced.contains(job.write.game_id()) => {
                Err(StoreError::Fenced)
            }
            Write::Append(_) => Err(StoreError::Conflict),
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use sqlx::postgres::PgPoolOptions;
    use tokio::time::Instant;

    use super::{close_kept, writer_connection};

    /// The mode of `conn`'s plan cache.
    async fn plan_cache_mode(conn: &mut sqlx::PgConnection) -> String {
        sqlx::query_scalar("SHOW plan_cache_mode")
            .fetch_one(conn)
            .await
            .expect("SHOW plan_cache_mode")
    }

    /// A connection the writer takes plans its statement once, and once the
    /// writer is done with it, it is closed: the next caller of the pool
    /// (of one connection) gets a connection that plans as PostgreSQL's
    /// default does. Needs `DATABASE_URL` to name a PostgreSQL database
    /// (required when `PLYLOG_REQUIRE_POSTGRES` is set, skipped otherwise).
    #[tokio::test]
    async fn the_writers_connection_plans_its_statement_once_and_is_not_given_back() {
        let Some(url) = std::env::var("DATABASE_URL")
            .ok()
            .filter(|url| url.starts_with("postgres"))
        else {
            assert!(
                std::env::var_os("PLYLOG_REQUIRE_POSTGRES").is_none(),
                "PLYLOG_REQUIRE_POSTGRES is set but DATABASE_URL names no PostgreSQL database"
            );
            eprintln!("skipped: DATABASE_URL names no PostgreSQL database");
            return;
        };
        let pool = PgPoolOptions::new()
            .max_connections(1)
            .connect(&url)
            .await
            .expect("connects to DATABASE_URL");
        let mut conn = writer_connection(&pool).await.expect("a writer connection");
        assert_eq!(plan_cache_mode(&mut conn).await, "force_generic_plan");
        close_kept(Some((conn, Instant::now())));
        let mut next = pool.acquire().await.expect("the pool's next connection");
        assert_eq!(plan_cache_mode(&mut next).await, "auto");
        drop(next);
        pool.close().await;
    }
}
