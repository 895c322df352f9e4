-- The global event feed (StreamAllEvents): every event gets a position,
-- dense from 1 across all games of this database (this cell), in commit
-- order. A write takes its positions from feed_head's one row, whose lock
-- it holds until it commits (src/store/postgres/sql/write_group.sql): the
-- next write's positions are taken only once this one is visible, so a
-- reader that has seen position p has seen every position below it, and
-- no transaction that took a lower position can commit later.
CREATE TABLE feed_head (
    -- Always true: the table has one row.
    only_row BOOLEAN PRIMARY KEY DEFAULT true CHECK (only_row),
    -- The last position taken (0: none yet).
    position BIGINT NOT NULL
);

ALTER TABLE events ADD COLUMN position BIGINT;

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
        FROM events) AS timed
) AS numbered
WHERE events.game_id = numbered.game_id AND events.sequence = numbered.sequence;

INSERT INTO feed_head (position) SELECT count(*) FROM events;

ALTER TABLE events ALTER COLUMN position SET NOT NULL;
-- The feed reads by position; at most one event holds each.
CREATE UNIQUE INDEX events_position ON events (position);
