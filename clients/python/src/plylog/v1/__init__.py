"""plylog.v1, generated from proto/plylog/v1/ (see generate.py).

- `game_pb2`, `game_service_pb2`: the messages and enums (with `.pyi` stubs)
- `game_service_pb2_grpc`: `GameServiceStub`, for grpcio
- `game_service_connect`: `GameServiceClientSync` and `GameServiceClient`,
  over the Connect protocol (the `connect` extra: connectrpc)
"""
