-- The event log on PostgreSQL: one row per game, one row per event, one row
-- per deduplicated request. The primary key (game_id, sequence) is the
-- concurrency guard: when two nodes append sequence N to one game, the
-- second insert fails with a unique violation and that append is a conflict.

CREATE TABLE games (
    -- Insertion order, used for ListGames paging.
    pk BIGSERIAL PRIMARY KEY,
    game_id TEXT NOT NULL UNIQUE,
    -- Unix epoch milliseconds, server clock.
    created_at_ms BIGINT NOT NULL,
    -- Sequence of the last event (dense from 1); advanced with every append.
    last_sequence BIGINT NOT NULL,
    -- plylog.v1.GameStatus after the last event, for listings.
    status INTEGER NOT NULL,
    -- Idempotency key of the CreateGame request, and the request it keyed.
    create_request_id TEXT UNIQUE,
    create_fingerprint BYTEA,
    -- SHA-256 hashes of the seat tokens, 32 bytes per seat; NULL: none.
    seat_token_hashes BYTEA
);

CREATE TABLE events (
    game_id TEXT NOT NULL REFERENCES games (game_id),
    sequence BIGINT NOT NULL CHECK (sequence >= 1),
    -- The GameEvent oneof case, e.g. 'move_played', and its schema version.
    event_type TEXT NOT NULL,
    event_version INTEGER NOT NULL,
    -- The protobuf-encoded plylog.v1.GameEvent.
    payload BYTEA NOT NULL,
    recorded_at_ms BIGINT NOT NULL,
    PRIMARY KEY (game_id, sequence)
);

CREATE TABLE requests (
    game_id TEXT NOT NULL REFERENCES games (game_id),
    request_id TEXT NOT NULL,
    -- The request as received (protobuf, with request_id and
    -- expected_sequence cleared), to tell a retry from a reuse.
    fingerprint BYTEA NOT NULL,
    first_sequence BIGINT NOT NULL,
    last_sequence BIGINT NOT NULL,
    PRIMARY KEY (game_id, request_id)
);
