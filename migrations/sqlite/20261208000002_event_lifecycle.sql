-- What each event does to its game's life, for StreamAllEvents'
-- lifecycle_only: plylog.v1.Lifecycle's value (0 nothing, 1 created,
-- 2 round started, 3 seat out, 4 ended, 5 reopened). NULL: stored before
-- this migration; computed from the game's events, in sequence order,
-- when the store is next migrated or opened (src/store/reads.rs,
-- fill_lifecycles).
ALTER TABLE events ADD COLUMN lifecycle INTEGER;

-- A lifecycle-only feed reads along this: only the events that have one.
CREATE INDEX events_lifecycle ON events (position) WHERE lifecycle > 0;

-- The games whose events are still to mark.
CREATE INDEX events_unmarked ON events (game_id) WHERE lifecycle IS NULL;
