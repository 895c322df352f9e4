WITH c AS (
    SELECT * FROM unnest($17::text[], $18::bigint[], $19::integer[], $20::text[],
        $21::bytea[], $22::bytea[], $23::text[], $24::bytea[], $27::bigint[],
        $28::bigint[], $30::bytea[], $38::integer[]) WITH ORDINALITY
      AS c(game_id, created_at_ms, status, request_id, fingerprint, hashes, event_type,
        payload, wake_at_ms, absent_since_ms, chain, lifecycle, ord)),
created AS (
    INSERT INTO games (game_id, created_at_ms, last_sequence, status, create_request_id,
      create_fingerprint, seat_token_hashes, wake_at_ms, absent_since_ms, updated_at_ms, tagged)
    SELECT game_id, created_at_ms, 1, status, request_id, fingerprint, hashes, wake_at_ms,
      absent_since_ms, created_at_ms, true FROM c
    ON CONFLICT DO NOTHING
    RETURNING game_id, pk),
tagged AS (
    INSERT INTO game_tags (tag, game_pk)
    SELECT t.tag, created.pk FROM unnest($34::text[], $35::text[]) AS t(game_id, tag)
    JOIN created ON created.game_id = t.game_id
    ON CONFLICT DO NOTHING),
a AS (
    SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::integer[],
        $5::boolean[], $6::bytea[], $7::text[], $8::bytea[], $9::bigint[], $10::bigint[],
        $25::bigint[], $26::bigint[], $31::text[], $32::integer[], $33::bigint[], $36::bigint[])
      AS a(game_id, expected, next, status, set_hashes, hashes, request_id, fingerprint,
        first_sequence, last_sequence, wake_at_ms, absent_since_ms, fence_node, slot, epoch,
        updated_at_ms)),
fenced_in AS (
    SELECT a.game_id FROM a JOIN slot_leases l ON l.slot = a.slot AND l.epoch = a.epoch
      AND l.node = a.fence_node AND l.expires_at > now()
    ORDER BY l.slot
    FOR SHARE OF l),
fenced_out AS (
    SELECT a.game_id FROM a
    WHERE a.slot IS NOT NULL AND a.game_id NOT IN (SELECT game_id FROM fenced_in)),
moved AS (
    UPDATE games g SET last_sequence = a.next, status = a.status,
      wake_at_ms = a.wake_at_ms, absent_since_ms = a.absent_since_ms,
      updated_at_ms = coalesce(a.updated_at_ms, g.updated_at_ms),
      seat_token_hashes = CASE WHEN a.set_hashes THEN a.hashes ELSE g.seat_token_hashes END
    FROM a WHERE g.game_id = a.game_id AND g.last_sequence = a.expected
      AND (a.slot IS NULL OR a.game_id IN (SELECT game_id FROM fenced_in))
    RETURNING g.game_id, a.next, a.request_id, a.fingerprint, a.first_sequence,
      a.last_sequence),
written AS (
    SELECT c.game_id, 1::bigint AS sequence, c.event_type, c.payload,
      c.created_at_ms AS recorded_at_ms, c.chain, c.lifecycle, 0 AS part, c.ord
    FROM c JOIN created ON created.game_id = c.game_id
    UNION ALL
    SELECT e.game_id, e.sequence, e.event_type, e.payload, e.recorded_at_ms, e.chain,
      e.lifecycle, 1, e.ord
    FROM unnest($12::text[], $13::bigint[], $14::text[], $15::bytea[], $16::bigint[],
        $29::bytea[], $37::integer[]) WITH ORDINALITY
      AS e(game_id, sequence, event_type, payload, recorded_at_ms, chain, lifecycle, ord)
    JOIN moved ON moved.game_id = e.game_id),
counted AS (
    SELECT count(*) AS n FROM written),
head AS (
    UPDATE feed_head SET position = position + counted.n FROM counted
    WHERE counted.n > 0
    RETURNING feed_head.position - counted.n AS before),
inserted AS (
    INSERT INTO events (game_id, sequence, event_type, event_version, payload, recorded_at_ms,
      chain, position, lifecycle)
    SELECT w.game_id, w.sequence, w.event_type, $11, w.payload, w.recorded_at_ms, w.chain,
      head.before + row_number() OVER (ORDER BY w.part, w.ord), w.lifecycle
    FROM written w CROSS JOIN head),
requested AS (
    INSERT INTO requests (game_id, request_id, fingerprint, first_sequence, last_sequence)
    SELECT game_id, request_id, fingerprint, first_sequence, last_sequence
    FROM moved WHERE request_id IS NOT NULL),
wrote AS (
    SELECT game_id, next, 'moved' AS outcome FROM moved
    UNION ALL SELECT game_id, 1, 'created' FROM created)
SELECT wrote.game_id, wrote.outcome FROM wrote
UNION ALL SELECT game_id, 'fenced' FROM fenced_out
