"""Issue 35's attacks on time controls and heavy reads, from outside.

Runs against a plylog server (a release build for figures), with grpcio:

    .venv/bin/pip install -r examples/python/requirements.txt
    plylog --listen 127.0.0.1:50051 --database-url sqlite:///tmp/a/plylog.db --no-seat-tokens &
    .venv/bin/python scripts/attacks_issue35.py self-play 127.0.0.1:50051 --games 1 --db /tmp/a/plylog.db
    .venv/bin/python scripts/attacks_issue35.py fischer 127.0.0.1:50051
    .venv/bin/python scripts/attacks_issue35.py nanos 127.0.0.1:50051
    .venv/bin/python scripts/attacks_issue35.py replay-load 127.0.0.1:50051

- self-play: games on 1000x1000 boards with `per_move` (0.001 s by default)
  and EXPIRY_POLICY_RANDOM_MOVE, nobody playing; events appended per second
  and the database's growth per minute (its file and WAL) over `--seconds`.
- fischer: 30 days each plus 30 days a move, 400 moves at once; the
  largest clock after them.
- nanos: a per-move limit of {seconds: 1, nanos: 2000000000}.
- replay-load: an 8,000-move 1000x1000 game replayed (its last page, every
  position) by 32 clients at once, while another game's GetGame and
  SubmitMove are timed, first alone, then under the replays.

It generates the stubs from proto/ as examples/python/error_details.py
does. Every figure is printed on one line.
"""

import argparse
import importlib
import os
import pathlib
import statistics
import sys
import tempfile
import threading
import time
import uuid

import grpc
from grpc_tools import protoc

PROTO = pathlib.Path(__file__).resolve().parents[1] / "proto"


def stubs():
    """Compiles plylog's protos and imports the service stubs."""
    out = tempfile.mkdtemp(prefix="plylog-stubs-")
    include = pathlib.Path(protoc.__file__).parent / "_proto"
    files = [str(p.relative_to(PROTO)) for p in (PROTO / "plylog" / "v1").glob("*.proto")]
    code = protoc.main(
        ["protoc", f"-I{PROTO}", f"-I{include}", f"--python_out={out}", f"--grpc_python_out={out}", *files]
    )
    if code != 0:
        sys.exit(f"protoc failed with {code}")
    sys.path.insert(0, out)
    return (
        importlib.import_module("plylog.v1.game_service_pb2"),
        importlib.import_module("plylog.v1.game_service_pb2_grpc"),
        importlib.import_module("plylog.v1.game_pb2"),
    )


service, service_grpc, game = stubs()
from google.protobuf import duration_pb2  # noqa: E402 (after the stubs' path)

SEATS = [game.Seat(player_id="alice", symbol="X"), game.Seat(player_id="bob", symbol="O")]


def client(address):
    return service_grpc.GameServiceStub(grpc.insecure_channel(address))


def create(stub, game_id, rows, cols, k, time_control=None):
    return stub.CreateGame(
        service.CreateGameRequest(
            game_id=game_id,
            rules=game.RuleSet(mnk=game.MnkRules(rows=rows, cols=cols, k=k)),
            seats=SEATS,
            time_control=time_control,
        )
    )


def place(stub, game_id, ply, cols=1000):
    return stub.SubmitMove(
        service.SubmitMoveRequest(
            game_id=game_id,
            seat=ply % 2,
            move=game.Move(place=game.Place(row=ply // cols, col=ply % cols)),
        )
    )


def last_sequence(stub, game_id):
    return stub.GetGame(service.GetGameRequest(game_id=game_id)).game.last_sequence


def db_bytes(path):
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def self_play(args):
    stub = client(args.address)
    seconds, nanos = divmod(round(args.per_move * 1e9), 10**9)
    tc = game.TimeControl(
        per_move=duration_pb2.Duration(seconds=seconds, nanos=nanos),
        on_expiry=game.EXPIRY_POLICY_RANDOM_MOVE,
    )
    ids = [f"self-{uuid.uuid4().hex[:8]}" for _ in range(args.games)]
    for game_id in ids:
        try:
            create(stub, game_id, 1000, 1000, 5, tc)
        except grpc.RpcError as e:
            print(f"per_move {args.per_move} s refused: {e.code().name}: {e.details()}")
            return
    start_events = sum(last_sequence(stub, g) for g in ids)
    start_bytes = db_bytes(args.db)
    started = time.monotonic()
    time.sleep(args.seconds)
    elapsed = time.monotonic() - started
    events = sum(last_sequence(stub, g) for g in ids) - start_events
    grown = db_bytes(args.db) - start_bytes
    ended = [
        stub.GetGame(service.GetGameRequest(game_id=g)).game.position.outcome.reason for g in ids
    ]
    print(
        f"{args.games} games, per_move {args.per_move} s, random moves, nobody playing: "
        f"{events / elapsed:.1f} events/s, {grown / 1e6 / elapsed * 60:.2f} MB/min over {elapsed:.0f} s; "
        f"end reasons {sorted(set(game.EndReason.Name(r) for r in ended))}"
    )


def fischer(args):
    stub = client(args.address)
    month = duration_pb2.Duration(seconds=30 * 24 * 3600)
    game_id = f"fischer-{uuid.uuid4().hex[:8]}"
    create(stub, game_id, 1000, 1000, 5, game.TimeControl(initial=month, increment=month))
    for ply in range(args.moves):
        reply = place(stub, game_id, ply)
    clocks = reply.game.position.clocks
    days = max(r.seconds for r in clocks.remaining) / 86400
    print(f"30 days + 30 days a move, after {args.moves} moves: the largest clock holds {days:,.0f} days")


def nanos(args):
    stub = client(args.address)
    tc = game.TimeControl(per_move=duration_pb2.Duration(seconds=1, nanos=2_000_000_000))
    try:
        created = create(stub, f"nanos-{uuid.uuid4().hex[:8]}", 3, 3, 3, tc)
    except grpc.RpcError as e:
        print(f"per_move {{seconds: 1, nanos: 2000000000}}: {e.code().name}: {e.details()}")
        return
    per_move = created.game.time_control.per_move
    print(f"per_move {{seconds: 1, nanos: 2000000000}} accepted as {per_move.seconds}.{per_move.nanos:09d} s")


def quantiles(samples):
    samples = sorted(samples)
    pick = lambda q: samples[min(len(samples) - 1, int(q * len(samples)))] * 1000  # noqa: E731
    return f"p50 {pick(0.5):.1f} ms, p99 {pick(0.99):.1f} ms, max {samples[-1] * 1000:.1f} ms ({len(samples)} calls)"


def timed_calls(stub, game_id, seconds, ply):
    """GetGame and SubmitMove on `game_id`, one after the other, for
    `seconds`; their latencies and the next ply."""
    gets, moves = [], []
    until = time.monotonic() + seconds
    while time.monotonic() < until:
        t = time.monotonic()
        stub.GetGame(service.GetGameRequest(game_id=game_id))
        gets.append(time.monotonic() - t)
        t = time.monotonic()
        place(stub, game_id, ply)
        moves.append(time.monotonic() - t)
        ply += 1
    return gets, moves, ply


def replay_load(args):
    stub = client(args.address)
    big = f"big-{uuid.uuid4().hex[:8]}"
    other = f"other-{uuid.uuid4().hex[:8]}"
    create(stub, big, 1000, 1000, 1000)
    for ply in range(args.moves):
        place(stub, big, ply)
    create(stub, other, 1000, 1000, 1000)
    last = last_sequence(stub, big)
    gets, moves, ply = timed_calls(stub, other, args.quiet, 0)
    print(f"alone: GetGame {quantiles(gets)}; SubmitMove {quantiles(moves)}")
    stop = threading.Event()
    counts = {"ok": 0, "refused": 0}
    lock = threading.Lock()

    def replayer():
        # A channel per client, as separate clients would have.
        own = client(args.address)
        while not stop.is_set():
            try:
                own.GetReplay(
                    # The page token of a replay page is its first sequence.
                    service.GetReplayRequest(game_id=big, page_token=str(last - args.page + 1)),
                    timeout=60,
                )
                outcome = "ok"
            except grpc.RpcError as e:
                if e.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                    raise
                outcome = "refused"
            with lock:
                counts[outcome] += 1

    threads = [threading.Thread(target=replayer) for _ in range(args.clients)]
    for t in threads:
        t.start()
    time.sleep(2)
    gets, moves, ply = timed_calls(stub, other, args.seconds, ply)
    stop.set()
    for t in threads:
        t.join()
    print(
        f"under {args.clients} clients replaying the last {args.page} steps (every position) of a "
        f"{args.moves}-move 1000x1000 game: GetGame {quantiles(gets)}; SubmitMove {quantiles(moves)}; "
        f"replays answered {counts['ok']}, refused or timed out {counts['refused']}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("self-play")
    p.add_argument("address")
    p.add_argument("--games", type=int, default=1)
    p.add_argument("--per-move", type=float, default=0.001, help="seconds")
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--db", required=True, help="the server's SQLite file")
    p.set_defaults(run=self_play)
    p = commands.add_parser("fischer")
    p.add_argument("address")
    p.add_argument("--moves", type=int, default=400)
    p.set_defaults(run=fischer)
    p = commands.add_parser("nanos")
    p.add_argument("address")
    p.set_defaults(run=nanos)
    p = commands.add_parser("replay-load")
    p.add_argument("address")
    p.add_argument("--moves", type=int, default=8000)
    p.add_argument("--clients", type=int, default=32)
    p.add_argument("--page", type=int, default=30, help="steps replayed, up to the last")
    p.add_argument("--quiet", type=float, default=10, help="seconds timed alone")
    p.add_argument("--seconds", type=float, default=30, help="seconds timed under the replays")
    p.set_defaults(run=replay_load)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
