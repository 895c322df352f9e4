-- The event log: one row per game, one row per event, one row per
-- deduplicated request. (game_id, sequence) is the optimistic lock: two
-- writers cannot both append sequence N to one game.

CREATE TABLE games (
    -- Insertion order, used for ListGames paging.
    pk INTEGER PRIMARY KEY AUTOINCREMENT,
    game_id TEXT NOT NULL UNIQUE,
    -- Unix epoch milliseconds, server clock.
    created_at_ms INTEGER NOT NULL,
    -- Sequence of the last event (dense from 1); advanced with every append.
    last_sequence INTEGER NOT NULL,
    -- plylog.v1.GameStatus after the last event, for listings.
    status INTEGER NOT NULL,
    -- Idempotency key of the CreateGame request, and the request it keyed.
    create_request_id TEXT UNIQUE,
    create_fingerprint BLOB
);

CREATE TABLE events (
    game_id TEXT NOT NULL REFERENCES games (game_id),
    sequence INTEGER NOT NULL CHECK (sequence >= 1),
    -- The GameEvent oneof case, e.g. "move_played", and its schema version.
    event_type TEXT NOT NULL,
    event_version INTEGER NOT NULL,
    -- The protobuf-encoded plylog.v1.GameEvent.
    payload BLOB NOT NULL,
    recorded_at_ms INTEGER NOT NULL,
    PRIMARY KEY (game_id, sequence)
) WITHOUT ROWID;

CREATE TABLE requests (
    game_id TEXT NOT NULL REFERENCES games (game_id),
    request_id TEXT NOT NULL,
    -- The request as received (protobuf, with request_id and
    -- expected_sequence cleared), to tell a retry from a reuse.
    fingerprint BLOB NOT NULL,
    first_sequence INTEGER NOT NULL,
    last_sequence INTEGER NOT NULL,
    PRIMARY KEY (game_id, request_id)
) WITHOUT ROWID;
