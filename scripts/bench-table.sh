#!/usr/bin/env bash
# Measures the issue-15 performance table with `plylog bench`: each row
# three rounds, one run per round, every play row beside the no-op
# handler measured in the same run (its ratio is what to compare).
#
#   scripts/bench-table.sh BINARY OUTDIR [ROUNDS]
#
# BINARY is a release plylog; OUTDIR gets one JSON or text file per run
# and summary.md (medians). BENCH_ONLY=play measures only the play rows
# (no fan-out, no cold loads): a few minutes a round instead of ten.
# BENCH_SERVER=<binary> serves the play and fan-out rows with another
# build (an older commit's, say) while BINARY's load generator measures
# it, so two builds are measured by one tool (`bench cold` runs
# BINARY's own server, in its process).
# PostgreSQL rows need DATABASE_URL pointing at a server where this
# script may create and drop the database plylog_bench (default
# postgres://postgres@127.0.0.1:5432/test).
set -euo pipefail
bin=$(realpath "$1"); out=$2; rounds=${3:-3}
server_bin=$(realpath "${BENCH_SERVER:-$1}")
secs=${BENCH_SECS:-5}
pg_admin=${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/test}
pg_url=${pg_admin%/*}/plylog_bench
mkdir -p "$out"; out=$(realpath "$out")
work=$(mktemp -d); trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT
port=50151; url=http://127.0.0.1:$port

. "$(dirname "$0")/bench-common.sh"

serve() { # serve NAME ARGS...: a fresh server on a fresh database
  local name=$1; shift
  "$server_bin" serve --listen 127.0.0.1:$port --no-seat-tokens "$@" >"$work/$name.log" 2>&1 &
  server=$!
  wait_up
}

play_row() { # play_row NAME SERVER-ARGS -- BENCH-ARGS
  local name=$1 round=$2; shift 2
  local sargs=() bargs=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do sargs+=("$1"); shift; done
  shift; bargs=("$@")
  case "${sargs[*]}" in *postgres*) fresh_pg ;; *) rm -f "$work"/bench.db* ;; esac
  serve "$name" "${sargs[@]}"
  "$bin" bench play --url "$url" --secs "$secs" --json "${bargs[@]}" >"$out/$name.r$round.json"
  stop
}

for round in $(seq "$rounds"); do
  lite=(--database-url "sqlite://$work/bench.db")
  play_row sqlite-g1 "$round" "${lite[@]}" -- --slots 1
  play_row sqlite-g64 "$round" "${lite[@]}" -- --slots 64
  play_row sqlite-g64-ids "$round" "${lite[@]}" -- --slots 64 --request-ids
  play_row sqlite-normal-g1 "$round" "${lite[@]}" --sqlite-synchronous-normal -- --slots 1
  play_row sqlite-normal-g64 "$round" "${lite[@]}" --sqlite-synchronous-normal -- --slots 64
  play_row pg-g1 "$round" --database-url "$pg_url" -- --slots 1
  play_row pg-g64 "$round" --database-url "$pg_url" -- --slots 64
  [ "${BENCH_ONLY:-}" = play ] && continue
  rm -f "$work"/bench.db*
  serve follow "${lite[@]}" --max-streams-per-game 1000
  "$bin" bench follow --url "$url" --followers 1000 >"$out/follow-1000.r$round.txt"
  stop
  rm -f "$work"/bench.db*
  serve follow "${lite[@]}" --max-streams-per-game 10000 --max-streams 20000
  "$bin" bench follow --url "$url" --followers 10000 >"$out/follow-10000.r$round.txt"
  stop
  rm -f "$work"/cold.db*
  "$bin" bench cold --database-url "sqlite://$work/cold.db" >"$out/cold-sqlite.r$round.txt"
  fresh_pg
  "$bin" bench cold --database-url "$pg_url" >"$out/cold-pg.r$round.txt"
done
psql "$pg_admin" -qc 'DROP DATABASE IF EXISTS plylog_bench' >/dev/null || true

python3 - "$out" <<'PY' | tee "$out/summary.md"
import glob, json, os, re, statistics, sys
out = sys.argv[1]
med = statistics.median
def runs(name, ext):
    return sorted(glob.glob(os.path.join(out, f"{name}.r*.{ext}")))
def play(name):
    rs = [json.load(open(f)) for f in runs(name, "json")]
    if not rs:
        return None
    t = [r["targets"][0] for r in rs]
    return dict(cps=med(x["callsPerSec"] for x in t), p50=med(x["p50Ms"] for x in t),
                ratio=med(r["ratio"] for r in rs),
                noop=med(r["targets"][1]["callsPerSec"] for r in rs),
                noop_p50=med(r["targets"][1]["p50Ms"] for r in rs), n=len(rs))
print(f"rounds: {len(runs('sqlite-g64', 'json'))}; medians\n")
print("| target | G=1 moves/s (p50 ms) | G=1 ÷ no-op | G=64 moves/s (p50 ms) | G=64 ÷ no-op |")
print("|---|---|---|---|---|")
g1 = play("sqlite-g1")
g64 = play("sqlite-g64")
if g1 and g64:
    print(f"| no-op Health/Check, same run (calls/s) | {g1['noop']:,.0f} ({g1['noop_p50']:.3f}) | 1 | {g64['noop']:,.0f} ({g64['noop_p50']:.3f}) | 1 |")
for label, a, b in [("SQLite, default durability", "sqlite-g1", "sqlite-g64"),
                    ("same, request_id + expected_sequence", None, "sqlite-g64-ids"),
                    ("SQLite, --sqlite-synchronous-normal", "sqlite-normal-g1", "sqlite-normal-g64"),
                    ("PostgreSQL", "pg-g1", "pg-g64")]:
    x = play(a) if a else None
    y = play(b)
    cell = lambda r: f"{r['cps']:,.0f} ({r['p50']:.3f})" if r else ""
    ratio = lambda r: f"{r['ratio']:.3f}" if r else ""
    print(f"| {label} | {cell(x)} | {ratio(x)} | {cell(y)} | {ratio(y)} |")
def text(name, pattern):
    vals = []
    for f in runs(name, "txt"):
        m = re.search(pattern, open(f).read())
        if m:
            vals.append([float(v) for v in m.groups()])
    return [med(v[i] for v in vals) for i in range(len(vals[0]))] if vals else None
print()
for n in ("1000", "10000"):
    f = text(f"follow-{n}", r"after the writer's ack, ms: p50 ([\d.]+), p99 ([\d.]+), max ([\d.]+)")
    w = text(f"follow-{n}", r"writer's SubmitMove, ms: p50 ([\d.]+), p99 ([\d.]+)")
    if f:
        print(f"fan-out, {int(n):,} followers: p50 {f[0]:.2f} ms, p99 {f[1]:.2f} ms, max {f[2]:.2f} ms; writer p50 {w[0]:.2f} ms")
for db in ("sqlite", "pg"):
    c = text(f"cold-{db}", r"\(cold\), ms: p50 ([\d.]+), p99 ([\d.]+)")
    wm = text(f"cold-{db}", r"\(warm\), ms: p50 ([\d.]+)")
    if c:
        print(f"cold load, 225 moves, {db}: p50 {c[0]:.3f} ms, p99 {c[1]:.3f} ms (warm p50 {wm[0]:.3f} ms)")
PY
