"""What reply compression costs, seen by the clients that ask for it.

grpcio and grpcurl offer gzip on every call, so a server that compresses
every reply they accept makes them pay for it. This measures, from
Python's grpcio (its default channel) and from grpcurl, against a running
`plylog serve` started with --no-seat-tokens:

- GetGame of a 200x200 game of 10,000 moves (k = 200, so it never ends);
- GetReplay of that game, one step per page, in the default view;
- GetGame of a 3x3 game (a small reply);
- SubmitMove on a 200x200 game (a small reply, a durable move).

    .venv/bin/python scripts/compression_figures.py 127.0.0.1:50051 [grpcurl]

Prints one line per figure: the mean milliseconds per call over the calls
made, and the reply size grpcio saw (uncompressed). Run it against two
servers (before and after a change) in the same minute: the machine's
load moves the absolute figures, not their ratio.
"""

import importlib
import json
import pathlib
import subprocess
import sys
import tempfile
import time
import uuid

import grpc
from grpc_tools import protoc

PROTO = pathlib.Path(__file__).resolve().parents[1] / "proto"


def stubs():
    """Compiles plylog's protos into a temporary directory and imports them."""
    out = tempfile.mkdtemp(prefix="plylog-stubs-")
    include = pathlib.Path(protoc.__file__).parent / "_proto"
    files = [str(p.relative_to(PROTO)) for p in (PROTO / "plylog" / "v1").glob("*.proto")]
    if protoc.main(["protoc", f"-I{PROTO}", f"-I{include}", f"--python_out={out}", f"--grpc_python_out={out}", *files]):
        sys.exit("protoc failed")
    sys.path.insert(0, out)
    return (
        importlib.import_module("plylog.v1.game_service_pb2"),
        importlib.import_module("plylog.v1.game_service_pb2_grpc"),
        importlib.import_module("plylog.v1.game_pb2"),
    )


def timed(calls, call):
    """Mean milliseconds of `call()` over `calls` calls, after 5 unmeasured ones."""
    for _ in range(5):
        call()
    start = time.perf_counter()
    for _ in range(calls):
        call()
    return (time.perf_counter() - start) * 1000 / calls


def main(address, with_grpcurl):
    service, service_grpc, game = stubs()
    client = service_grpc.GameServiceStub(grpc.insecure_channel(address))
    seats = [game.Seat(player_id="a", symbol="X"), game.Seat(player_id="b", symbol="O")]

    def create(rows, cols, k):
        game_id = f"cmp-{uuid.uuid4().hex[:8]}"
        client.CreateGame(
            service.CreateGameRequest(game_id=game_id, rules=game.RuleSet(mnk=game.MnkRules(rows=rows, cols=cols, k=k)), seats=seats)
        )
        return game_id

    def place(game_id, seat, cell):
        return client.SubmitMove(
            service.SubmitMoveRequest(
                game_id=game_id, seat=seat, move=game.Move(place=game.Place(row=cell // 200, col=cell % 200))
            )
        )

    big = create(200, 200, 200)
    for ply in range(10_000):
        place(big, ply % 2, ply)
    small = create(3, 3, 3)
    moves = create(200, 200, 200)
    counter = iter(range(40_000))

    get_big = lambda: client.GetGame(service.GetGameRequest(game_id=big))
    replay_page = lambda: client.GetReplay(service.GetReplayRequest(game_id=big, page_size=1))
    get_small = lambda: client.GetGame(service.GetGameRequest(game_id=small))

    def submit():
        ply = next(counter)
        return place(moves, ply % 2, ply)

    figures = [
        ("grpcio GetGame 200x200, 10,000 moves", 100, get_big),
        ("grpcio GetReplay, one step", 200, replay_page),
        ("grpcio GetGame 3x3", 500, get_small),
        ("grpcio SubmitMove", 500, submit),
    ]
    for name, calls, call in figures:
        size = call().ByteSize()
        print(f"{name}: {timed(calls, call):.3f} ms/call, reply {size} bytes")

    if with_grpcurl:
        def grpcurl(method, body):
            return lambda: subprocess.run(
                ["grpcurl", "-plaintext", "-d", json.dumps(body), address, f"plylog.v1.GameService/{method}"],
                check=True,
                stdout=subprocess.DEVNULL,
            )

        for name, call in [
            ("grpcurl GetGame 200x200, 10,000 moves", grpcurl("GetGame", {"game_id": big})),
            ("grpcurl GetGame 3x3", grpcurl("GetGame", {"game_id": small})),
        ]:
            print(f"{name}: {timed(20, call):.1f} ms/call (a process each)")


if __name__ == "__main__":
    main(sys.argv[1], len(sys.argv) > 2 and sys.argv[2] == "grpcurl")
