"""Issue 35's attacks on the log's integrity (items 10 and 11), from outside.

Runs a plylog binary (a release build for figures) on a fresh SQLite file,
with grpcio and Python's sqlite3 to change stored bytes between runs:

    .venv/bin/pip install -r examples/python/requirements.txt
    .venv/bin/python scripts/attacks_issue35_integrity.py snapshot-flips target/release/plylog
    .venv/bin/python scripts/attacks_issue35_integrity.py verify-flips target/release/plylog

- snapshot-flips: games of several kinds (a timed m,n,k game, Pop Out,
  Othello, gomoku) played with a snapshot every 4 events; everything a
  client reads of them (GetGame at every sequence, GetReplay with every
  position) is recorded, then for each of `--flips` seeded one-byte changes
  to a snapshot row the server is started cold and read again. Counts the
  answers that changed, the calls that failed, and the panics in the
  server's log.
- verify-flips: the same games; `--flips` seeded one-bit changes to stored
  event payloads, each followed by `plylog verify` on the file. Counts the
  changes verify missed (exit code 0).

Every figure is printed on one line, with the seed.
"""

import argparse
import os
import random
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

import grpc

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from attacks_issue35 import stubs  # noqa: E402

svc, svc_grpc, game = stubs()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """The binary serving `db` until stopped; its log kept in a file."""

    def __init__(self, binary, db, log):
        self.port = free_port()
        self.log = open(log, "ab")
        self.process = subprocess.Popen(
            [binary, "--listen", f"127.0.0.1:{self.port}", "--database-url", f"sqlite://{db}",
             "--no-seat-tokens", "--snapshot-every", "4"],
            stdout=self.log, stderr=subprocess.STDOUT,
        )
        self.channel = grpc.insecure_channel(f"127.0.0.1:{self.port}")
        grpc.channel_ready_future(self.channel).result(timeout=30)
        self.stub = svc_grpc.GameServiceStub(self.channel)

    def stop(self):
        self.channel.close()
        self.process.terminate()
        self.process.wait(timeout=30)
        self.log.close()


def place(row, col):
    return game.Move(place=game.Place(row=row, col=col))


def drop(col):
    return game.Move(drop=game.Drop(column=col))


def pop(col):
    return game.Move(pop=game.Pop(column=col))


def seats():
    return [game.Seat(player_id="ann", symbol="X"), game.Seat(player_id="bob", symbol="O")]


def play_games(stub):
    """Creates and plays the games; returns their ids."""
    timed = svc.CreateGameRequest(
        game_id="timed", rules=game.RuleSet(mnk=game.MnkRules(rows=5, cols=5, k=5)), seats=seats(),
        time_control=game.TimeControl(per_move={"seconds": 2592000}),
    )
    popout = svc.CreateGameRequest(
        game_id="popout", seats=seats(),
        rules=game.RuleSet(connect_four=game.ConnectFourRules(pop_out=True)),
    )
    othello = svc.CreateGameRequest(game_id="othello", seats=seats(), rules=game.RuleSet(othello=game.OthelloRules()))
    gomoku = svc.CreateGameRequest(game_id="gomoku", seats=seats(), rules=game.RuleSet(gomoku=game.GomokuRules()))
    for request in (timed, popout, othello, gomoku):
        stub.CreateGame(request)
    moves = {
        "timed": [place(i // 5, i % 5) for i in range(9)],
        "popout": [drop(0), drop(1), drop(0), drop(1), pop(0), drop(2), drop(3), pop(1), drop(4)],
        "gomoku": [place(7, i) if n % 2 == 0 else place(9, i) for n, i in enumerate(range(9))],
    }
    for game_id, seq in moves.items():
        for n, move in enumerate(seq):
            stub.SubmitMove(svc.SubmitMoveRequest(game_id=game_id, seat=n % 2, move=move))
    for n in range(9):
        legal = stub.ListLegalMoves(svc.ListLegalMovesRequest(game_id="othello"))
        state = stub.GetGame(svc.GetGameRequest(game_id="othello")).game
        stub.SubmitMove(svc.SubmitMoveRequest(
            game_id="othello", seat=state.position.seat_to_move, move=legal.moves[0]))
    return ["timed", "popout", "othello", "gomoku"]


def answers(stub, ids):
    """Everything read of the games, as text; a failed call as its code."""
    seen = []
    for game_id in ids:
        try:
            last = stub.GetGame(svc.GetGameRequest(game_id=game_id)).game.last_sequence
        except grpc.RpcError as error:
            seen.append(f"{game_id}: {error.code()}")
            continue
        for at in range(1, last + 1):
            try:
                seen.append(str(stub.GetGame(svc.GetGameRequest(game_id=game_id, at_sequence=at))))
            except grpc.RpcError as error:
                seen.append(f"{game_id}@{at}: {error.code()}")
        try:
            seen.append(str(stub.GetReplay(svc.GetReplayRequest(game_id=game_id, position_every=1))))
        except grpc.RpcError as error:
            seen.append(f"{game_id} replay: {error.code()}")
    return seen


def setup(binary, work):
    db = os.path.join(work, "plylog.db")
    server = Server(binary, db, os.path.join(work, "setup.log"))
    ids = play_games(server.stub)
    truth = answers(server.stub, ids)
    time.sleep(0.5)  # snapshots are saved in the background: let the last land
    server.stop()
    return db, ids, truth


def write(db, sql, params):
    """Runs one statement on the SQLite file behind the server's back."""
    conn = sqlite3.connect(db)
    conn.execute(sql, params)
    conn.commit()
    conn.close()


def snapshot_flips(args):
    work = tempfile.mkdtemp(prefix="plylog-integrity-")
    db, ids, truth = setup(args.binary, work)
    rng = random.Random(args.seed)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT game_id, payload FROM snapshots").fetchall()
    conn.close()
    changed = failed = panics = 0
    log = os.path.join(work, "flips.log")
    for _ in range(args.flips):
        game_id, payload = rows[rng.randrange(len(rows))]
        at = rng.randrange(len(payload))
        bad = bytearray(payload)
        bad[at] ^= rng.randrange(1, 256)
        write(db, "UPDATE snapshots SET payload = ? WHERE game_id = ?", (bytes(bad), game_id))
        server = Server(args.binary, db, log)
        seen = answers(server.stub, ids)
        server.stop()
        failed += sum(1 for a in seen if "StatusCode." in a)
        changed += int(seen != truth)
        write(db, "UPDATE snapshots SET payload = ? WHERE game_id = ?", (payload, game_id))
    with open(log, "rb") as f:
        panics = f.read().count(b"panicked")
    print(f"snapshot-flips seed {args.seed}: {args.flips} one-byte changes to {len(rows)} snapshot rows: "
          f"{changed} changed what a client reads, {failed} calls failed, {panics} panics in the server log")
    shutil.rmtree(work)


def verify_flips(args):
    work = tempfile.mkdtemp(prefix="plylog-integrity-")
    db, _, _ = setup(args.binary, work)
    rng = random.Random(args.seed)
    conn = sqlite3.connect(db)
    rows = conn.execute("SELECT game_id, sequence, payload FROM events").fetchall()
    conn.close()
    clean = subprocess.run([args.binary, "verify", "--database-url", f"sqlite://{db}"], capture_output=True)
    assert clean.returncode == 0, clean.stdout
    missed = 0
    for _ in range(args.flips):
        game_id, sequence, payload = rows[rng.randrange(len(rows))]
        bad = bytearray(payload)
        bad[rng.randrange(len(bad))] ^= 1 << rng.randrange(8)
        update = "UPDATE events SET payload = ? WHERE game_id = ? AND sequence = ?"
        write(db, update, (bytes(bad), game_id, sequence))
        verified = subprocess.run([args.binary, "verify", "--database-url", f"sqlite://{db}", game_id],
                                  capture_output=True)
        missed += int(verified.returncode == 0)
        write(db, update, (payload, game_id, sequence))
    print(f"verify-flips seed {args.seed}: {args.flips} one-bit changes to {len(rows)} event payloads: "
          f"verify missed {missed}")
    shutil.rmtree(work)


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("attack", choices=["snapshot-flips", "verify-flips"])
    parser.add_argument("binary")
    parser.add_argument("--flips", type=int)
    parser.add_argument("--seed", type=int, default=35)
    args = parser.parse_args()
    if args.flips is None:
        args.flips = 126 if args.attack == "snapshot-flips" else 300
    {"snapshot-flips": snapshot_flips, "verify-flips": verify_flips}[args.attack](args)


if __name__ == "__main__":
    main()
