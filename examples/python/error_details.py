"""Reading plylog's error details from Python.

plylog answers every refusal with a gRPC status code plus a
google.rpc.ErrorInfo whose `reason` is a plylog.v1.ErrorReason name (and a
BadRequest naming bad fields, a RetryInfo on UNAVAILABLE). The code and
message come with grpcio; the details need grpcio-status
(`rpc_status.from_call`), which also brings the google.rpc messages.

    python3 -m venv .venv
    .venv/bin/pip install -r examples/python/requirements.txt
    .venv/bin/python examples/python/error_details.py 127.0.0.1:50051

It generates the plylog stubs from proto/ into a temporary directory,
creates a tic-tac-toe game, plays a move, plays on the same cell again and
prints what the refusal says. The last line is the reason.
"""

import importlib
import pathlib
import sys
import tempfile
import uuid

import grpc
from google.rpc import error_details_pb2
from grpc_status import rpc_status
from grpc_tools import protoc

PROTO = pathlib.Path(__file__).resolve().parents[2] / "proto"


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


def main(address):
    service, service_grpc, game = stubs()
    client = service_grpc.GameServiceStub(grpc.insecure_channel(address))
    game_id = f"py-{uuid.uuid4().hex[:8]}"
    created = client.CreateGame(
        service.CreateGameRequest(
            game_id=game_id,
            rules=game.RuleSet(mnk=game.MnkRules(rows=3, cols=3, k=3)),
            seats=[game.Seat(player_id="alice", symbol="X"), game.Seat(player_id="bob", symbol="O")],
        )
    )
    # Each seat's token goes in the metadata of its moves (none when the
    # server runs with --no-seat-tokens).
    token = created.seat_tokens[0] if created.seat_tokens else None
    credentials = [("authorization", f"Bearer {token}")] if token else []
    centre = game.Move(place=game.Place(row=1, col=1))
    client.SubmitMove(service.SubmitMoveRequest(game_id=game_id, seat=0, move=centre), metadata=credentials)
    second = created.seat_tokens[1] if created.seat_tokens else None
    try:
        client.SubmitMove(
            service.SubmitMoveRequest(game_id=game_id, seat=1, move=centre),
            metadata=[("authorization", f"Bearer {second}")] if second else [],
        )
    except grpc.RpcError as error:
        print("code:", error.code().name)
        print("message:", error.details())
        status = rpc_status.from_call(error)
        if status is None:
            sys.exit("the refusal carried no google.rpc.Status details")
        for detail in status.details:
            if detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                info = error_details_pb2.ErrorInfo()
                detail.Unpack(info)
                print("domain:", info.domain)
                print("reason:", info.reason)
                # The same reasons, as the enum a client can switch on.
                print("enum value:", service.ErrorReason.Value(info.reason))
        return
    sys.exit("the second move on the same cell was accepted")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "127.0.0.1:50051")
