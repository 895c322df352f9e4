-- The timer queue: when each game next needs the server with no client
-- asking (the end of the turn's time, of an absent seat's grace period, or
-- at once for a bot to move), so that a game waiting on a deadline need not
-- stay in memory: the server claims the games that come due from this
-- index, loads them, and does what is due. Written with every append (in
-- its transaction), and when the node holding the game sees it change
-- otherwise (a seat leaving); a claim postpones it by a lease.

-- Unix epoch milliseconds (server clock) when the game is due; NULL: not
-- until a client acts.
ALTER TABLE games ADD COLUMN wake_at_ms BIGINT;
-- Since when the seat to move has had no followed stream, as the node that
-- wrote this last knew it (games with an absence policy): where its grace
-- period counts from when the game is loaded again.
ALTER TABLE games ADD COLUMN absent_since_ms BIGINT;

-- Games in progress before this migration are due once: the server loads
-- each, works out its real wake (NULL for an untimed game) and writes it.
-- 1 is plylog.v1.GameStatus GAME_STATUS_IN_PROGRESS.
UPDATE games SET wake_at_ms = 0 WHERE status = 1;

CREATE INDEX games_wake ON games (wake_at_ms, game_id) WHERE wake_at_ms IS NOT NULL;
