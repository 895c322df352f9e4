-- Snapshots: a cache of a game's state after some event, so a long log is
-- not replayed from sequence 1 to load the game. Only the latest is kept
-- per game. A snapshot is never the truth: the server checks its format
-- version and its guard (the SHA-256 of the payload of the event it was
-- taken after) and replays the log instead when either does not match, so
-- deleting every row changes no answer, only how long a cold load takes.

CREATE TABLE snapshots (
    game_id TEXT PRIMARY KEY REFERENCES games (game_id),
    -- The sequence of the last event the state includes.
    sequence BIGINT NOT NULL CHECK (sequence >= 1),
    -- The encoded snapshot (format version, guard, creation time, state).
    payload BYTEA NOT NULL
);
