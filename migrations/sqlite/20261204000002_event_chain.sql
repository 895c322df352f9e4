-- The log's integrity chain: each event's chain value is the SHA-256 of
-- the previous event's chain value, the game id, the sequence and the
-- payload (see src/store/chain.rs), so a change to any stored byte of a
-- log is found by the next load or `plylog verify`, and a snapshot records
-- the chain value at its sequence.
--
-- Events stored before this migration get theirs from the server right
-- after it (SQL cannot compute the hash portably): empty here means not
-- yet computed, and every open (server or `plylog migrate`) computes what
-- is missing before anything reads or appends.
ALTER TABLE events ADD COLUMN chain BLOB NOT NULL DEFAULT x'';

-- What is left to compute, found without reading the log: the fill's query
-- (WHERE length(chain) = 0) reads this index, empty once every event has
-- its chain value, so a server's start costs nothing here after the first.
CREATE INDEX events_unchained ON events (game_id) WHERE length(chain) = 0;
