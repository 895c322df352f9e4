WITH forgotten AS (
    DELETE FROM cluster_nodes WHERE expires_at < now() - interval '1 hour'),
me AS (
    INSERT INTO cluster_nodes (node, address, expires_at)
    VALUES ($1, $2, now() + make_interval(secs => $3 / 1000.0))
    ON CONFLICT (node) DO UPDATE SET address = EXCLUDED.address, expires_at = EXCLUDED.expires_at
    RETURNING node),
live AS (
    SELECT node FROM cluster_nodes WHERE expires_at > now() AND node <> $1
    UNION ALL SELECT node FROM me),
placed AS (
    SELECT DISTINCT ON (s.slot) s.slot, l.node
    FROM slot_leases s CROSS JOIN live l
    WHERE s.slot % $6 = $7
    ORDER BY s.slot,
      ('x' || encode(substring(sha256(convert_to(l.node || '/' || s.slot, 'UTF8')) FROM 1 FOR 8),
        'hex'))::bit(64)::bigint DESC,
      l.node),
held AS (
    SELECT * FROM unnest($4::integer[], $5::bigint[]) AS h(slot, epoch)),
targets AS (
    SELECT s.slot FROM slot_leases s JOIN placed p ON p.slot = s.slot AND p.node = $1
    WHERE s.node IS NULL OR s.node = $1 OR s.expires_at <= now()
    ORDER BY s.slot
    FOR UPDATE OF s),
renewed AS (
    UPDATE slot_leases s SET expires_at = now() + make_interval(secs => $3 / 1000.0), address = $2
    FROM held h, targets t
    WHERE s.slot = h.slot AND s.epoch = h.epoch AND s.node = $1 AND s.expires_at > now()
      AND t.slot = s.slot
    RETURNING s.slot, s.epoch),
acquired AS (
    UPDATE slot_leases s SET node = $1, address = $2, epoch = s.epoch + 1,
      expires_at = now() + make_interval(secs => $3 / 1000.0)
    FROM targets t
    WHERE t.slot = s.slot
      AND NOT (s.node IS NOT DISTINCT FROM $1 AND s.expires_at > now()
        AND EXISTS (SELECT 1 FROM held h WHERE h.slot = s.slot AND h.epoch = s.epoch))
    RETURNING s.slot, s.epoch),
mine AS (
    SELECT slot, epoch FROM renewed UNION ALL SELECT slot, epoch FROM acquired)
SELECT s.slot, mine.slot IS NOT NULL AS mine, coalesce(mine.epoch, s.epoch) AS epoch,
  CASE WHEN mine.slot IS NULL AND s.node IS NOT NULL AND s.node <> $1 AND s.expires_at > now()
    THEN s.address END AS address
FROM slot_leases s LEFT JOIN mine ON mine.slot = s.slot
WHERE s.slot % $6 = $7
ORDER BY s.slot
