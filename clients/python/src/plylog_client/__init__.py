"""Helpers for calling plylog from Python.

plylog refuses a call with a status code and a message, plus details: a
`google.rpc.ErrorInfo` whose `reason` is the name of a
`plylog.v1.ErrorReason` (`CELL_OCCUPIED`, `NOT_YOUR_TURN`, ...), a
`google.rpc.BadRequest` naming the bad fields, a `google.rpc.RetryInfo` on
UNAVAILABLE. These read them from a `grpc.RpcError` (grpcio, through
grpcio-status) or from a `connectrpc.errors.ConnectError` (the Connect
client of `plylog.v1.game_service_connect`):

    try:
        stub.SubmitMove(request, metadata=seat_metadata(token))
    except grpc.RpcError as error:
        if error_reason(error) == "CELL_OCCUPIED":
            ...
"""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version
from typing import TypeVar

import grpc
from google.protobuf.message import Message
from google.rpc import error_details_pb2
from grpc_status import rpc_status

__all__ = ["__version__", "error_detail", "error_info", "error_reason", "seat_metadata"]

try:
    __version__ = version("plylog-client")
except PackageNotFoundError:  # imported from a source tree, not installed
    __version__ = "0+unknown"

M = TypeVar("M", bound=Message)


def seat_metadata(token: str) -> list[tuple[str, str]]:
    """The metadata that presents a seat's token: `authorization: Bearer <token>`.

    For grpcio's `metadata=`; `dict(seat_metadata(token))` makes the headers
    of a Connect call.
    """
    return [("authorization", f"Bearer {token}")]


def error_detail(error: BaseException, message_type: type[M]) -> M | None:
    """The first detail of type `message_type` (e.g. `error_details_pb2.BadRequest`)
    that the refusal `error` carries, or None.

    `error` is a `grpc.RpcError` from a call or a `ConnectError`; anything
    else (a call that failed without a status, another exception) has none.
    """
    name = message_type.DESCRIPTOR.full_name
    if isinstance(error, grpc.RpcError):
        if not isinstance(error, grpc.Call):
            return None
        try:
            status = rpc_status.from_call(error)
        except ValueError:  # a status detail that disagrees with the call's code
            return None
        for detail in status.details if status is not None else ():
            if detail.Is(message_type.DESCRIPTOR):
                message = message_type()
                detail.Unpack(message)
                return message
        return None
    # connectrpc's ErrorDetail: the type's name and the message's bytes.
    for detail in getattr(error, "details", None) or ():
        if getattr(detail, "type_name", None) == name:
            return message_type.FromString(detail.message_bytes)
    return None


def error_info(error: BaseException) -> error_details_pb2.ErrorInfo | None:
    """The `google.rpc.ErrorInfo` of a refusal (domain `plylog.v1`), or None."""
    return error_detail(error, error_details_pb2.ErrorInfo)


def error_reason(error: BaseException) -> str | None:
    """The reason of a refusal, an `ErrorReason` name such as `CELL_OCCUPIED`,
    or None when the error carries no `ErrorInfo`.

    `plylog.v1.game_service_pb2.ErrorReason.Value(reason)` gives the enum's
    number.
    """
    info = error_info(error)
    return info.reason if info is not None and info.reason else None
