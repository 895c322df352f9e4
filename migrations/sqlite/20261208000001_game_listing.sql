-- What ListGames filters on, each served from an index: the status (with
-- the paging cursor pk), the creation time, the last activity, and the
-- tags of a game's GameCreated event: its kind, its players and its
-- labels (game_tags, one row per tag).

-- When the game's last event was recorded (Unix epoch milliseconds,
-- server clock), advanced with last_sequence.
ALTER TABLE games ADD COLUMN updated_at_ms INTEGER;
UPDATE games SET updated_at_ms = (
    SELECT recorded_at_ms FROM events e
    WHERE e.game_id = games.game_id AND e.sequence = games.last_sequence);

-- 1 once the game's tags are written. A server writes them with the game;
-- the games stored before this migration are tagged when a server starts
-- (their GameCreated event must be decoded: src/registry/listing.rs).
ALTER TABLE games ADD COLUMN tagged INTEGER NOT NULL DEFAULT 0;

-- A tag is `kind:<RuleSet field>`, `player:<player id>` or
-- `label:<key>=<value>` (src/store/records.rs, GameTag).
CREATE TABLE game_tags (
    tag TEXT NOT NULL,
    game_pk INTEGER NOT NULL REFERENCES games (pk),
    PRIMARY KEY (tag, game_pk)
) WITHOUT ROWID;

CREATE INDEX games_status ON games (status, pk);
CREATE INDEX games_created ON games (created_at_ms);
CREATE INDEX games_updated ON games (updated_at_ms);
CREATE INDEX games_untagged ON games (pk) WHERE NOT tagged;
