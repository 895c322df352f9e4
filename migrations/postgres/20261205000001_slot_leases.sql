-- Slots and their leases: every game belongs to one of a fixed number of
-- slots (by a hash of its id that never changes), and each slot is run by
-- one node at a time, the holder of its lease. Expiry is judged by the
-- database's clock (now()), so no node's clock can make two holders; each
-- new holder takes the next epoch, and every append carries the epoch it
-- was decided under and is refused in its own statement when that is no
-- longer the slot's (see sql/write_group.sql).

-- The number of slots, fixed here for the life of the database.
CREATE TABLE cluster_config (
    id BOOLEAN PRIMARY KEY DEFAULT TRUE CHECK (id),
    slots INTEGER NOT NULL CHECK (slots > 0)
);
INSERT INTO cluster_config (slots) VALUES (1024);

-- A game's slot: the first four bytes of the SHA-256 of its id (UTF-8),
-- read as an unsigned big-endian number, modulo the slot count. The server
-- computes the same (crate::registry::ownership::slot_of).
CREATE FUNCTION plylog_slot(game_id TEXT, slots INTEGER) RETURNS INTEGER
LANGUAGE SQL IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT (('x' || encode(substring(sha256(convert_to(game_id, 'UTF8')) FROM 1 FOR 4), 'hex'))
    ::bit(32)::bigint % slots)::integer
$$;

-- One row per slot: its holder (NULL: none yet or released), the address
-- other nodes forward its games' calls to, the epoch of the holder's
-- lease, and when the lease ends (database clock).
CREATE TABLE slot_leases (
    slot INTEGER PRIMARY KEY,
    node TEXT,
    address TEXT,
    epoch BIGINT NOT NULL DEFAULT 0,
    expires_at TIMESTAMPTZ NOT NULL DEFAULT '-infinity'
);
INSERT INTO slot_leases (slot) SELECT generate_series(0, 1023);

-- The nodes alive now: each renews its row as it renews its leases. The
-- live rows decide where each slot should be (rendezvous hashing).
CREATE TABLE cluster_nodes (
    node TEXT PRIMARY KEY,
    address TEXT NOT NULL,
    expires_at TIMESTAMPTZ NOT NULL
);

ALTER TABLE games ADD COLUMN slot INTEGER;
UPDATE games SET slot = plylog_slot(game_id, 1024);

-- Every new game gets its slot from its id, whoever inserts it.
CREATE FUNCTION plylog_games_slot() RETURNS TRIGGER LANGUAGE plpgsql AS $$
BEGIN
  NEW.slot := plylog_slot(NEW.game_id, (SELECT slots FROM cluster_config));
  RETURN NEW;
END
$$;
CREATE TRIGGER games_slot BEFORE INSERT ON games
  FOR EACH ROW EXECUTE FUNCTION plylog_games_slot();
ALTER TABLE games ALTER COLUMN slot SET NOT NULL;

-- The timer queue of a node claims only its slots' games.
CREATE INDEX games_slot_wake ON games (slot, wake_at_ms) WHERE wake_at_ms IS NOT NULL;
