SELECT
  bool_or(streams > 0 AND refreshed_at > now() - make_interval(secs => $3)),
  max(CASE WHEN streams > 0 THEN refreshed_at_ms ELSE absent_since_ms END)
FROM seat_presence WHERE game_id = $1 AND seat = $2 AND node <> $4
