"""A whole game of tic-tac-toe against plylog, with the plylog-client package.

    python example.py [host:port]                   # over gRPC (grpcio)
    python example.py --connect [host:port]         # over the Connect protocol, binary
    python example.py --connect --json [host:port]  # ... with JSON messages

It needs the package installed (`pip install plylog-client`, with the
`connect` extra for --connect), not this repository: it creates a game,
follows its events on a stream while the two seats play (each with its
own token), has a move on a taken cell refused and prints the refusal's
reason, then reads the game's whole history and its final board. The
address is the server's, by default 127.0.0.1:50051.
"""

import argparse
import os
import sys
import threading
import uuid

import plylog
import plylog_client
from plylog.v1 import game_pb2, game_service_pb2
from plylog_client import error_reason, seat_metadata

# Every call has a deadline, and the followed stream too: nothing waits
# forever on a server that stopped answering.
CALL_SECONDS = 10
STREAM_SECONDS = 30

# (seat, row, col): X takes the top row; O's second try is on a taken cell.
MOVES = [(0, 0, 0), (1, 1, 1), (0, 0, 1), (1, 0, 1), (1, 2, 2), (0, 0, 2)]


class Grpc:
    """The calls over gRPC, with grpcio's GameServiceStub."""

    name = "gRPC"

    def __init__(self, address):
        import grpc
        from plylog.v1 import game_service_pb2_grpc

        self.errors = grpc.RpcError
        self.stub = game_service_pb2_grpc.GameServiceStub(grpc.insecure_channel(address))

    def create_game(self, request):
        return self.stub.CreateGame(request, timeout=CALL_SECONDS)

    def get_game(self, request):
        return self.stub.GetGame(request, timeout=CALL_SECONDS)

    def submit_move(self, request, token):
        return self.stub.SubmitMove(request, metadata=seat_metadata(token), timeout=CALL_SECONDS)

    def stream_events(self, request):
        """The stream's messages, and how to end it early."""
        call = self.stub.StreamEvents(request, timeout=STREAM_SECONDS)
        return call, call.cancel

    def code(self, error):
        return error.code().name


class Connect:
    """The calls over the Connect protocol, with connectrpc's GameServiceClientSync."""

    def __init__(self, address, json):
        from connectrpc.compat import google_protobuf_json_codec
        from connectrpc.errors import ConnectError
        from plylog.v1.game_service_connect import GameServiceClientSync

        self.name = "Connect (JSON)" if json else "Connect (binary)"
        self.errors = ConnectError
        options = {"codec": google_protobuf_json_codec()} if json else {}
        self.client = GameServiceClientSync(f"http://{address}", timeout_ms=CALL_SECONDS * 1000, **options)

    def create_game(self, request):
        return self.client.create_game(request)

    def get_game(self, request):
        return self.client.get_game(request)

    def submit_move(self, request, token):
        return self.client.submit_move(request, headers=dict(seat_metadata(token)))

    def stream_events(self, request):
        stream = self.client.stream_events(request, timeout_ms=STREAM_SECONDS * 1000)
        return stream, stream.close

    def code(self, error):
        return error.code.name


def follow(api, game_id, seen, failures):
    """Collects the game's events from a followed stream until a move ends it."""
    stream, stop = api.stream_events(game_service_pb2.StreamEventsRequest(game_id=game_id, follow=True))
    try:
        for message in stream:
            if message.WhichOneof("kind") != "event":
                continue  # the caught-up marker, heartbeats
            event = message.event
            seen.append(event)
            if event.WhichOneof("kind") == "game_ended" or event.move_played.HasField("outcome"):
                break
    except Exception as error:  # reported by the main thread
        failures.append(error)
    finally:
        stop()


def play(api):
    # Where `plylog` came from: the installed package, not a source tree.
    print(f"package: plylog-client {plylog_client.__version__} at {os.path.dirname(os.path.dirname(plylog.__file__))}")
    print(f"transport: {api.name}")
    game_id = f"py-{uuid.uuid4().hex[:8]}"
    created = api.create_game(
        game_service_pb2.CreateGameRequest(
            game_id=game_id,
            rules=game_pb2.RuleSet(mnk=game_pb2.MnkRules(rows=3, cols=3, k=3)),
            seats=[game_pb2.Seat(player_id="alice", symbol="X"), game_pb2.Seat(player_id="bob", symbol="O")],
        )
    )
    tokens = list(created.seat_tokens)
    if len(tokens) != 2:
        sys.exit(f"expected a token per seat, got {len(tokens)} (a server with --no-seat-tokens?)")
    print(f"created: sequence {created.game.last_sequence}, {len(tokens)} seat tokens")

    seen, failures = [], []
    follower = threading.Thread(target=follow, args=(api, game_id, seen, failures), daemon=True)
    follower.start()

    symbols = "XO"
    for seat, row, col in MOVES:
        move = game_pb2.Move(place=game_pb2.Place(row=row, col=col))
        request = game_service_pb2.SubmitMoveRequest(game_id=game_id, seat=seat, move=move)
        try:
            reply = api.submit_move(request, tokens[seat])
        except api.errors as error:
            print(f"{symbols[seat]} ({row}, {col}): refused: {api.code(error)} {error_reason(error)}")
            continue
        print(f"{symbols[seat]} ({row}, {col}): sequence {reply.game.last_sequence}")

    follower.join(STREAM_SECONDS + 5)
    if follower.is_alive():
        sys.exit("the followed stream never saw the game end")
    if failures:
        sys.exit(f"the followed stream failed: {failures[0]!r}")
    print("followed:", " ".join(f"{e.sequence}:{e.WhichOneof('kind')}" for e in seen))

    history, caught_up = [], None
    stream, _ = api.stream_events(game_service_pb2.StreamEventsRequest(game_id=game_id))
    for message in stream:
        if message.WhichOneof("kind") == "event":
            history.append(message.event.sequence)
        elif message.WhichOneof("kind") == "caught_up":
            caught_up = message.caught_up.sequence
    print(f"history: {len(history)} events, caught up at {caught_up}")

    game = api.get_game(game_service_pb2.GetGameRequest(game_id=game_id)).game
    outcome = game.position.outcome
    status = game_pb2.GameStatus.Name(game.position.status)
    if outcome.HasField("win"):
        line = " ".join(f"({c.row}, {c.col})" for c in outcome.win.line)
        print(f"outcome: {status}, seat {outcome.win.seat} ({symbols[outcome.win.seat]}) on {line}")
    else:
        print(f"outcome: {status}")
    for row in game.position.board.text:
        print(f"board: {row}")


def main():
    parser = argparse.ArgumentParser(description="A whole game of tic-tac-toe against plylog.")
    parser.add_argument("address", nargs="?", default="127.0.0.1:50051", help="the server's host:port")
    parser.add_argument("--connect", action="store_true", help="call over the Connect protocol (connectrpc)")
    parser.add_argument("--json", action="store_true", help="with --connect: JSON messages, not binary")
    args = parser.parse_args()
    play(Connect(args.address, args.json) if args.connect else Grpc(args.address))


if __name__ == "__main__":
    main()
