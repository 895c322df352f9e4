-- The global event feed (StreamAllEvents): every event gets a position,
-- dense from 1 across all games, in commit order. SQLite has one writer,
-- which numbers each event it inserts max(position) + 1 in its
-- transaction (src/store/sqlite/writer.rs), so positions are dense and in
-- commit order by construction.
ALTER TABLE events ADD COLUMN position INTEGER;

-- Events stored before the feed: numbered in the order they were recorded,
-- each game's in sequence order (a game's time is taken as the latest of
-- its events so far, so a clock that stepped back cannot reorder a game).
UPDATE events SET position = numbered.position
FROM (
    SELECT game_id, sequence,
        row_number() OVER (ORDER BY recorded_at, game_id, sequence) AS position
    FROM (
        SELECT game_id, sequence,
            max(recorded_at_ms) OVER (PARTITION BY game_id ORDER BY sequence) AS recorded_at
        FROM events)
) AS numbered
WHERE events.game_id = numbered.game_id AND events.sequence = numbered.sequence;

-- The feed reads by position; at most one event holds each.
CREATE UNIQUE INDEX events_position ON events (position);
