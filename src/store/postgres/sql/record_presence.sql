INSERT INTO seat_presence
  (game_id, seat, node, streams, absent_since_ms, refreshed_at, refreshed_at_ms)
VALUES ($1, $2, $3, $4, $5, now(), $6)
ON CONFLICT (game_id, seat, node) DO UPDATE SET
  streams = EXCLUDED.streams, absent_since_ms = EXCLUDED.absent_since_ms,
  refreshed_at = now(), refreshed_at_ms = EXCLUDED.refreshed_at_ms
