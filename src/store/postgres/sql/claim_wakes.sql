UPDATE games g SET wake_at_ms = $2 FROM (
  SELECT game_id, wake_at_ms AS due FROM games
  WHERE wake_at_ms IS NOT NULL AND wake_at_ms <= $1
    AND ($4::integer[] IS NULL OR slot = ANY($4))
  ORDER BY wake_at_ms, game_id LIMIT $3 FOR UPDATE SKIP LOCKED) d
WHERE g.game_id = d.game_id RETURNING g.game_id, d.due
