-- Presence across nodes: which seats follow a game with their seat token,
-- per node that serves the streams. One row per (game, seat, node), written
-- by that node when its count changes and refreshed while it is above 0, so
-- a node that died stops counting once its rows are stale. Only the node
-- holding a game reads it, when a seat's grace period may have run out.

CREATE TABLE seat_presence (
    game_id TEXT NOT NULL,
    seat INTEGER NOT NULL,
    -- The serving node's id (random per process).
    node TEXT NOT NULL,
    -- Streams of the seat open on that node.
    streams INTEGER NOT NULL,
    -- Unix epoch milliseconds (server clock) when its last stream there
    -- closed; NULL while streams > 0 or before any closed.
    absent_since_ms BIGINT,
    -- The node's last word, on the database's clock (for staleness) and on
    -- the server's (to date the absence of a node that died).
    refreshed_at TIMESTAMPTZ NOT NULL,
    refreshed_at_ms BIGINT NOT NULL,
    PRIMARY KEY (game_id, seat, node)
);
