#!/usr/bin/env bash
# Profiles one row of the issue-15 table on this machine: where the CPU
# goes (every process, so PostgreSQL's backends and the load generator
# show beside plylog) and where a call waits (system calls per thread,
# and on PostgreSQL what its sessions wait on).
#
#   scripts/profile-row.sh BINARY OUTDIR ROW [SECS]
#
# BINARY serves the row and `BINARY bench` drives it; a build with frame
# pointers gives call graphs through plylog and its libraries:
#   RUSTFLAGS="-C force-frame-pointers=yes" CARGO_PROFILE_RELEASE_DEBUG=line-tables-only \
#     cargo build --release --bin plylog
# ROW is sqlite-g1, sqlite-g64, pg-g1, pg-g64 (`bench play`, 1 or 64
# slots, on SQLite with default durability or on PostgreSQL) or replay
# (`bench replay --events-only`, SQLite) or follow (`bench follow`: 10,000
# followers of one game, 100 moves, SQLite). SECS (5) is the length of
# each recording.
# The workload runs three times: once under `perf record -a` (samples
# of every CPU at 999 Hz with call graphs), once under `perf trace -s`
# (the server's system calls per thread, with their total time), and
# for PostgreSQL once more while pg_stat_activity is sampled every 10 ms.
# OUTDIR gets report.md and the raw perf.data. Needs perf (linux-perf),
# psql, and DATABASE_URL as for scripts/bench-table.sh.
set -euo pipefail
bin=$(realpath "$1"); out=$2; row=$3; secs=${4:-5}
pg_admin=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
pg_url=${pg_admin%/*}/plylog_bench
mkdir -p "$out"; out=$(realpath "$out")
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port=50161; url=http://127.0.0.1:$port
report=$out/report.md
. "$(dirname "$0")/bench-common.sh"

case $row in
  sqlite-g1 | pg-g1) slots=1 ;;
  sqlite-g64 | pg-g64) slots=64 ;;
  replay | follow) slots= ;;
  *) echo "unknown row $row" >&2; exit 2 ;;
esac
case $row in pg-*) db=$pg_url ;; *) db=sqlite://$work/bench.db ;; esac

serve() { # a fresh server on a fresh database
  case $db in postgres*) fresh_pg ;; *) rm -f "$work"/bench.db* ;; esac
  local extra=()
  [ "$row" = follow ] && extra=(--max-streams 20000 --max-streams-per-game 10000)
  "$bin" serve --listen 127.0.0.1:$port --no-seat-tokens --database-url "$db" "${extra[@]}" \
    >"$work/serve.log" 2>&1 &
  server=$!
  wait_up
}

# Starts the workload in the background: a play row runs SECS + 4 s in
# all, a replay 400 rounds of both events-only reads after its game is
# played, a fan-out 100 moves once its followers are subscribed.
# `settle` waits until it is in its measured phase.
load() {
  if [ -n "$slots" ]; then
    "$bin" bench play --url "$url" --slots "$slots" --secs $((secs + 3)) --warmup-secs 1 \
      --no-baseline --seed 15 >"$work/bench.out" 2>&1 &
  elif [ "$row" = follow ]; then
    "$bin" bench follow --url "$url" --followers 10000 --moves 100 --seed 15 >"$work/bench.out" 2>&1 &
  else
    "$bin" bench replay --url "$url" --events-only --rounds 400 --seed 15 >"$work/bench.out" 2>&1 &
  fi
  bench=$!
}

settle() {
  if [ -n "$slots" ]; then
    sleep 2
  else # the game is played or the followers subscribe first
    for _ in $(seq 600); do
      grep -q "played in\|caught up" "$work/bench.out" 2>/dev/null && return 0
      [ -d /proc/$bench ] || break
      sleep 0.1
    done
  fi
}

# top N COMMAND...: the first N lines of a perf report, without comments.
top() {
  local n=$1; shift
  "$@" 2>/dev/null | grep -v '^#' | grep -v '^$' | head -"$n" || true
}

# Lets the workload end by itself (so it prints its figures), then stops
# the server.
finish() { wait "$bench" || true; stop; }

{
  echo "# profile of $row, $(date -u +%FT%TZ), $(git -C "$(dirname "$0")" rev-parse --short HEAD 2>/dev/null)"
  echo
  echo "vmstat during the first recording (us sy id wa st):"
} >"$report"

# 1. CPU: every process, with call graphs.
serve; load; settle
vmstat 1 "$secs" >"$work/vmstat" &
vmstat=$!
perf record -a -g --call-graph fp -F 999 -o "$out/perf.data" -- sleep "$secs" 2>"$work/perf.err"
wait "$vmstat" || true
cp "$work/bench.out" "$out/bench-1.out"
finish
awk 'NR > 2 { print "    " $13, $14, $15, $16, $17 }' "$work/vmstat" >>"$report"
{
  echo
  echo "## CPU by process (share of all samples on both CPUs; idle is the kernel's idle task)"
  echo
  echo '```'
  perf script -i "$out/perf.data" -F pid,comm 2>/dev/null |
    awk -v server="$server" -v bench="$bench" '
      { n++; name = $NF == server ? "plylog serve" : $NF == bench ? "plylog bench" : $NF == 0 ? "idle" : $1
        if (name == "postgres") name = "postgres (all backends)"; c[name]++ }
      END { for (k in c) printf "%6.1f%%  %s\n", 100 * c[k] / n, k }' | sort -rn | head -8 || true
  echo '```'
  echo
  echo "## the server: inclusive share of its own samples (2% and more)"
  echo
  echo '```'
  top 45 perf report -i "$out/perf.data" --pid "$server" --children --sort sym --stdio -g none --percent-limit 2
  echo '```'
  echo
  echo "## the server: self time, top 25"
  echo
  echo '```'
  top 25 perf report -i "$out/perf.data" --pid "$server" --no-children --sort dso,sym --stdio -g none
  echo '```'
} >>"$report"

# 2. Waits: the server's system calls per thread.
serve; load; settle
perf trace -s -p "$server" -o "$work/trace" -- sleep "$secs" 2>/dev/null || true
finish
{
  echo
  echo "## the server's system calls per thread over ${secs} s (perf trace -s; calls, total ms, mean ms)"
  echo
  echo '```'
  top 60 awk '/\(/ || $2 ~ /^[0-9]+$/ && $1 !~ /^-/' "$work/trace"
  echo '```'
  echo
  echo "bench under perf trace:"
  sed 's/^/    /' "$work/bench.out"
} >>"$report"

# 3. PostgreSQL: what its sessions wait on, sampled every 10 ms, and the
# transactions and WAL flushes per move.
if [ "${db%%:*}" = postgres ]; then
  serve; load; settle
  stats="SELECT xact_commit + xact_rollback FROM pg_stat_database WHERE datname = 'plylog_bench'"
  before=$(psql "$pg_admin" -Atc "$stats"); wal_before=$(psql "$pg_admin" -Atc "SELECT wal_sync FROM pg_stat_wal")
  psql "$pg_admin" -Atq >"$work/waits" <<SQL
CREATE TEMP TABLE w (state text, wtype text, wevent text);
DO \$\$ BEGIN
  FOR i IN 1..$((secs * 100)) LOOP
    PERFORM pg_stat_clear_snapshot();
    INSERT INTO w SELECT coalesce(state, '-'), coalesce(wait_event_type, 'CPU'), coalesce(wait_event, '-')
      FROM pg_stat_activity WHERE datname = 'plylog_bench' AND backend_type = 'client backend'
      AND pid <> pg_backend_pid();
    PERFORM pg_sleep(0.01);
  END LOOP;
END \$\$;
SELECT count(*), state, wtype, wevent FROM w GROUP BY 2, 3, 4 ORDER BY 1 DESC;
SQL
  after=$(psql "$pg_admin" -Atc "$stats"); wal_after=$(psql "$pg_admin" -Atc "SELECT wal_sync FROM pg_stat_wal")
  finish
  {
    echo
    echo "## PostgreSQL sessions of plylog, sampled every 10 ms for ${secs} s (samples, state, wait type, wait event)"
    echo
    echo '```'
    top 20 tr '|' ' ' <"$work/waits"
    echo '```'
    echo
    echo "transactions: $((after - before)); WAL flushes (fsync): $((wal_after - wal_before)); over about ${secs} s"
    echo
    echo "bench while sampled:"
    sed 's/^/    /' "$work/bench.out"
  } >>"$report"
  psql "$pg_admin" -qc 'DROP DATABASE IF EXISTS plylog_bench' >/dev/null || true
fi
echo "wrote $report"
