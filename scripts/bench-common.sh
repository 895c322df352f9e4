# Helpers that scripts/bench-table.sh and scripts/profile-row.sh share;
# sourced, not run. Both set `port` (the server's loopback port) and
# `pg_admin` (a PostgreSQL URL where they may create and drop the
# database plylog_bench) before calling them, and keep the server they
# start in `server`.

# Waits up to 10 s for the server to accept on 127.0.0.1:$port.
wait_up() {
  for _ in $(seq 100); do
    (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && return 0
    sleep 0.1
  done
  echo "server did not come up" >&2; return 1
}

# Stops the server started last.
stop() { kill "$server"; wait "$server" 2>/dev/null || true; }

# Drops and creates the database plylog_bench.
fresh_pg() {
  psql "$pg_admin" -qc 'DROP DATABASE IF EXISTS plylog_bench' -c 'CREATE DATABASE plylog_bench' >/dev/null
}
