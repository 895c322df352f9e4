//! The matchmaker's own state, in a SQLite file: the players and their
//! ratings, the games it paired, the games it rated, and how far it has
//! read plylog's feed. Rating a game, marking it rated and moving the
//! feed checkpoint past it are one transaction, so a game is rated once
//! whenever the process is killed: either all of it is stored, and the
//! feed resumes after the game's end, or none of it, and the feed
//! delivers the end again.

use rusqlite::{Connection, OptionalExtension, params};

use crate::ratings::{self, Rating};

/// The ledger's schema (idempotent).
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS players (
    player_id TEXT PRIMARY KEY,
    -- The engine strength its bot plays at (1 to 10): its hidden skill.
    skill INTEGER NOT NULL,
    rating REAL NOT NULL,
    deviation REAL NOT NULL,
    volatility REAL NOT NULL,
    -- Games rated.
    games INTEGER NOT NULL DEFAULT 0,
    -- Unix epoch milliseconds since when it has waited for a game.
    waiting_since_ms INTEGER NOT NULL
);
-- The games paired: 'creating' until plylog has answered CreateGame (a
-- restart creates it again with the same request id, which plylog
-- answers with the same game), then 'playing', then 'rated'.
CREATE TABLE IF NOT EXISTS games (
    number INTEGER PRIMARY KEY,
    request_id TEXT NOT NULL UNIQUE,
    game_id TEXT,
    first TEXT NOT NULL REFERENCES players (player_id),
    second TEXT NOT NULL REFERENCES players (player_id),
    matched_at_ms INTEGER NOT NULL,
    state TEXT NOT NULL
);
-- Each finished game (round) rated, once.
CREATE TABLE IF NOT EXISTS rated (
    game_id TEXT NOT NULL,
    round INTEGER NOT NULL,
    position INTEGER NOT NULL,
    PRIMARY KEY (game_id, round)
);
-- This ledger's id, made when it was created: its games' request ids
-- and their `matchmaker` label start with it, so that another ledger's
-- games (an earlier run's, another matchmaker's) are neither rated here
-- nor mistaken for retries.
CREATE TABLE IF NOT EXISTS meta (
    only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
    ledger_id TEXT NOT NULL
);
-- The feed's checkpoint: one position per cell, comma-separated.
CREATE TABLE IF NOT EXISTS checkpoint (
    only_row INTEGER PRIMARY KEY CHECK (only_row = 1),
    positions TEXT NOT NULL
);
";

/// A game paired, for plylog to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pairing {
    /// The CreateGame request id: the same on every retry.
    pub(crate) request_id: String,
    /// Its number, from 1 (seeds its bots).
    pub(crate) number: i64,
    /// Seat 0's player and its skill.
    pub(crate) first: (String, u32),
    /// Seat 1's player and its skill.
    pub(crate) second: (String, u32),
    /// When the players were matched (Unix epoch milliseconds).
    pub(crate) matched_at_ms: i64,
}

/// A finished game, as the feed tells it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Finished {
    /// The game.
    pub(crate) game_id: String,
    /// Its round (a rematch's next round is another result).
    pub(crate) round: u32,
    /// The players by seat.
    pub(crate) player_ids: Vec<String>,
    /// The result; `None` for a game without one (aborted).
    pub(crate) result: Option<ratings::Result>,
    /// The cell and position of its end in the feed.
    pub(crate) cell: usize,
    /// See `cell`.
    pub(crate) position: u64,
}

/// A row of the leaderboard.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Standing {
    /// The player.
    pub(crate) player_id: String,
    /// Its hidden skill.
    pub(crate) skill: u32,
    /// Its rating now.
    pub(crate) rating: Rating,
    /// Games rated.
    pub(crate) games: u32,
}

/// The ledger.
pub(crate) struct Ledger {
    conn: Connection,
}

type Sql<T> = rusqlite::Result<T>;

impl Ledger {
    /// Opens (creating) the ledger at `path`.
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn open(path: &std::path::Path) -> Sql<Self> {
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        conn.execute_batch(SCHEMA)?;
        let made = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let id = format!("mm{:x}{:x}", made, std::process::id());
        conn.execute(
            "INSERT OR IGNORE INTO meta (only_row, ledger_id) VALUES (1, ?1)",
            params![id],
        )?;
        Ok(Ledger { conn })
    }

    /// This ledger's id (see the `meta` table).
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn id(&self) -> Sql<String> {
        self.conn
            .query_row("SELECT ledger_id FROM meta", [], |r| r.get(0))
    }

    /// Adds `count` players `p01`, `p02`, ... that do not exist yet, with
    /// skills 1, 2, ... up to `max_skill` and round again.
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn add_players(&self, count: usize, max_skill: u32, now_ms: i64) -> Sql<()> {
        let fresh = Rating::default();
        for i in 0..count {
            self.conn.execute(
                "INSERT OR IGNORE INTO players \
                 (player_id, skill, rating, deviation, volatility, waiting_since_ms) \
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    format!("p{:02}", i + 1),
                    (i as u32 % max_skill) + 1,
                    fresh.rating,
                    fresh.deviation,
                    fresh.volatility,
                    now_ms
                ],
            )?;
        }
        Ok(())
    }

    /// The players in no game being created or played, with their rating
    /// and since when they wait.
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn waiting(&self) -> Sql<Vec<(String, f64, i64)>> {
        let mut query = self.conn.prepare(
            "SELECT player_id, rating, waiting_since_ms FROM players p WHERE NOT EXISTS \
             (SELECT 1 FROM games g WHERE g.state <> 'rated' \
              AND (g.first = p.player_id OR g.second = p.player_id))",
        )?;
        let rows = query.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect()
    }

    /// Records the games `pairs` make (each `(first, second)` by player
    /// id), to be created: their request ids are `<ledger id>-<number>`.
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn record_pairs(&mut self, pairs: &[(String, String)], now_ms: i64) -> Sql<()> {
        let id = self.id()?;
        let tx = self.conn.transaction()?;
        for (first, second) in pairs {
            let number: i64 =
                tx.query_row("SELECT coalesce(max(number), 0) + 1 FROM games", [], |r| {
                    r.get(0)
                })?;
            tx.execute(
                "INSERT INTO games (number, request_id, first, second, matched_at_ms, state) \
                 VALUES (?1, ?2, ?3, ?4, ?5, 'creating')",
                params![number, format!("{id}-{number}"), first, second, now_ms],
            )?;
        }
        tx.commit()
    }

    /// The games paired and not yet created.
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn to_create(&self) -> Sql<Vec<Pairing>> {
        let mut query = self.conn.prepare(
            "SELECT g.request_id, g.number, g.first, a.skill, g.second, b.skill, \
             g.matched_at_ms FROM games g \
             JOIN players a ON a.player_id = g.first JOIN players b ON b.player_id = g.second \
             WHERE g.state = 'creating' ORDER BY g.number",
        )?;
        let rows = query.query_map([], |r| {
            Ok(Pairing {
                request_id: r.get(0)?,
                number: r.get(1)?,
                first: (r.get(2)?, r.get(3)?),
                second: (r.get(4)?, r.get(5)?),
                matched_at_ms: r.get(6)?,
            })
        })?;
        rows.collect()
    }

    /// plylog created the game of `request_id` as `game_id`: playing, or
    /// rated already when the feed told its end first (a restart between
    /// the creation and this).
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn created(&self, request_id: &str, game_id: &str) -> Sql<()> {
        self.conn.execute(
            "UPDATE games SET game_id = ?2, state = CASE WHEN EXISTS \
             (SELECT 1 FROM rated WHERE rated.game_id = ?2) THEN 'rated' ELSE 'playing' END \
             WHERE request_id = ?1",
            params![request_id, game_id],
        )?;
        Ok(())
    }

    /// How many games were paired.
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn paired(&self) -> Sql<u64> {
        self.conn
            .query_row("SELECT count(*) FROM games", [], |r| r.get(0))
    }

    /// How many games were rated.
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn rated(&self) -> Sql<u64> {
        self.conn
            .query_row("SELECT count(*) FROM rated", [], |r| r.get(0))
    }

    /// The feed's checkpoint (empty: from the beginning).
    ///
    /// # Errors
    /// SQLite errors; a stored checkpoint that is not numbers.
    pub(crate) fn checkpoint(&self) -> Sql<Vec<u64>> {
        let text: Option<String> = self
            .conn
            .query_row("SELECT positions FROM checkpoint", [], |r| r.get(0))
            .optional()?;
        Ok(text
            .filter(|t| !t.is_empty())
            .map(|t| t.split(',').filter_map(|n| n.parse().ok()).collect())
            .unwrap_or_default())
    }

    /// Stores the feed's checkpoint.
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn save_checkpoint(&self, positions: &[u64]) -> Sql<()> {
        save_checkpoint(&self.conn, positions)
    }

    /// Rates `game` once: in one transaction, unless it was rated before,
    /// both players' ratings move (a game without a result moves none),
    /// the game is marked rated, and the checkpoint moves past its end.
    /// Returns whether it was rated now.
    ///
    /// # Errors
    /// SQLite errors; a player the ledger does not know.
    pub(crate) fn rate(&mut self, game: &Finished, checkpoint: &[u64], now_ms: i64) -> Sql<bool> {
        let tx = self.conn.transaction()?;
        let fresh = tx.execute(
            "INSERT OR IGNORE INTO rated (game_id, round, position) VALUES (?1, ?2, ?3)",
            params![game.game_id, game.round, game.position as i64],
        )? == 1;
        if fresh && let ([first, second], Some(result)) = (game.player_ids.as_slice(), game.result)
        {
            let (a, b) = ratings::rate(rating(&tx, first)?, rating(&tx, second)?, result);
            for (player, after) in [(first, a), (second, b)] {
                tx.execute(
                    "UPDATE players SET rating = ?2, deviation = ?3, volatility = ?4, \
                     games = games + 1, waiting_since_ms = ?5 WHERE player_id = ?1",
                    params![
                        player,
                        after.rating,
                        after.deviation,
                        after.volatility,
                        now_ms
                    ],
                )?;
            }
        }
        tx.execute(
            "UPDATE games SET state = 'rated' WHERE game_id = ?1",
            params![game.game_id],
        )?;
        save_checkpoint(&tx, checkpoint)?;
        tx.commit()?;
        Ok(fresh)
    }

    /// Every player, best rated first.
    ///
    /// # Errors
    /// SQLite errors.
    pub(crate) fn standings(&self) -> Sql<Vec<Standing>> {
        let mut query = self.conn.prepare(
            "SELECT player_id, skill, rating, deviation, volatility, games FROM players \
             ORDER BY rating DESC, player_id",
        )?;
        let rows = query.query_map([], |r| {
            Ok(Standing {
                player_id: r.get(0)?,
                skill: r.get(1)?,
                rating: Rating {
                    rating: r.get(2)?,
                    deviation: r.get(3)?,
                    volatility: r.get(4)?,
                },
                games: r.get(5)?,
            })
        })?;
        rows.collect()
    }
}

fn save_checkpoint(conn: &Connection, positions: &[u64]) -> Sql<()> {
    let text: Vec<String> = positions.iter().map(u64::to_string).collect();
    conn.execute(
        "INSERT INTO checkpoint (only_row, positions) VALUES (1, ?1) \
         ON CONFLICT (only_row) DO UPDATE SET positions = excluded.positions",
        params![text.join(",")],
    )?;
    Ok(())
}

fn rating(conn: &Connection, player_id: &str) -> Sql<Rating> {
    conn.query_row(
        "SELECT rating, deviation, volatility FROM players WHERE player_id = ?1",
        params![player_id],
        |r| {
            Ok(Rating {
                rating: r.get(0)?,
                deviation: r.get(1)?,
                volatility: r.get(2)?,
            })
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_game_is_rated_once_however_often_its_end_is_told() {
        let dir = tempfile::tempdir().unwrap();
        let mut ledger = Ledger::open(&dir.path().join("ledger.db")).unwrap();
        ledger.add_players(2, 5, 0).unwrap();
        let end = Finished {
            game_id: "g".into(),
            round: 0,
            player_ids: vec!["p01".into(), "p02".into()],
            result: Some(ratings::Result::FirstWon),
            cell: 0,
            position: 7,
        };
        assert!(ledger.rate(&end, &[7], 1).unwrap());
        let once = ledger.standings().unwrap();
        assert!(!ledger.rate(&end, &[7], 2).unwrap());
        assert_eq!(ledger.standings().unwrap(), once);
        assert_eq!(once[0].player_id, "p01");
        assert_eq!((once[0].games, once[1].games), (1, 1));
        assert_eq!(ledger.checkpoint().unwrap(), [7]);
        // The next round of the same game is another result.
        assert!(ledger.rate(&Finished { round: 1, ..end }, &[9], 3).unwrap());
        assert_eq!(ledger.rated().unwrap(), 2);
    }
}
